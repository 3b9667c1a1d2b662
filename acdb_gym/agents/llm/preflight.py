"""Checks that an LLM agent can work at all, made once before a sweep runs any of its jobs.

A sweep of LLM jobs that cannot work (the ``[llm]`` extra missing, no API key, a server that is
not there) should stop at once with the reason, not run every job into the same failure.
:func:`check_llm_ready` checks, in order and without sending any model request: that a key is
configured, that the provider's SDK imports, and that the endpoint accepts a TCP connection
(unless a response cache that holds entries may answer the run alone).
Each failure is an :class:`LLMNotReadyError` whose message says what to do.
"""

from __future__ import annotations

import importlib
import os
import socket
import warnings
from pathlib import Path
from urllib.parse import urlsplit

from .agent import API_KEY_ENV
from .providers import PROVIDERS

__all__ = ["DEFAULT_ENDPOINTS", "INSTALL_HINT", "LLMNotReadyError", "check_llm_ready"]

INSTALL_HINT = "pip install 'acdb_gym[llm]'"

DEFAULT_ENDPOINTS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
"""Where each SDK sends requests when neither ``base_url`` nor its environment variable is set."""

_BASE_URL_ENV: dict[str, str] = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


class LLMNotReadyError(RuntimeError):
    """An LLM agent cannot work in this environment; the message says why and what to do."""


def check_llm_ready(
    provider: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    cache_dir: object | None = None,
    timeout: float = 5.0,
) -> None:
    """Raise :class:`LLMNotReadyError` unless an agent of ``provider`` could send requests.

    Args:
        provider: ``"openai"`` or ``"anthropic"``.
        base_url: the server the agent will use (None: the provider's own API).
        api_key: the key the agent will use (None: read from the environment, as the agent does).
        cache_dir: the response cache; with one, a missing key is allowed (a rerun may be
            answered from the cache alone), as the agent allows it, and when it holds entries
            an unreachable endpoint is only a warning (a replay with the server down).
        timeout: seconds to wait for the endpoint's TCP connection.
    """
    if provider not in PROVIDERS:
        raise LLMNotReadyError(f"unknown provider {provider!r}; choose from {list(PROVIDERS)}")
    # Cheapest first: the key is an environment lookup, the SDK import takes a second or two.
    key = api_key if api_key is not None else os.environ.get(API_KEY_ENV[provider])
    if not key and base_url is None and cache_dir is None:
        # Only the OpenAI provider's clients talk to local OpenAI-compatible servers.
        hint = " (or pass --base-url for a local OpenAI-compatible server)"
        raise LLMNotReadyError(
            f"no API key for provider {provider!r}: set {API_KEY_ENV[provider]}"
            + (hint if provider == "openai" else "")
        )
    try:
        importlib.import_module(provider)
    except ImportError:
        raise LLMNotReadyError(
            f"the {provider} provider needs the {provider!r} package, which is not installed: "
            f"{INSTALL_HINT}"
        ) from None
    try:
        _check_endpoint(_endpoint(provider, base_url), timeout)
    except LLMNotReadyError as error:
        # A replay: a cache that holds entries may answer every request with the server down
        # (a request it misses then fails its job, as any unanswered request does).
        if cache_dir is None or not _holds_entries(Path(str(cache_dir))):
            raise
        warnings.warn(
            f"{error}; replaying from the response cache {cache_dir} (a request it does not "
            "hold fails its job)",
            stacklevel=2,
        )


def _holds_entries(directory: Path) -> bool:
    return directory.is_dir() and any(directory.glob("*/*.json"))


def _endpoint(provider: str, base_url: str | None) -> str:
    return base_url or os.environ.get(_BASE_URL_ENV[provider]) or DEFAULT_ENDPOINTS[provider]


def _check_endpoint(url: str, timeout: float) -> None:
    """A TCP connection to the URL's host and port, or a clear error naming the URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMNotReadyError(f"base URL {url!r} is not an http(s) URL")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise LLMNotReadyError(f"base URL {url!r} has an invalid port") from None
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise LLMNotReadyError(
            f"cannot connect to {parts.scheme}://{parts.hostname}:{port} ({url}): {reason}"
        ) from None
