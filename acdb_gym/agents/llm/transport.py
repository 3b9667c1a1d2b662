"""The HTTP side shared by both provider adapters: SDK clients (sync and async) with the SDK's
own retries off, and SDK failures translated into :class:`TransientAPIError` (worth retrying)
or :class:`RejectedRequestError` (not), with the key redacted."""

from __future__ import annotations

import email.utils
import functools
import json
import math
import ssl
import time
from collections.abc import Mapping
from typing import Any

from .records import Redactor

__all__ = [
    "RejectedRequestError",
    "SDKAdapter",
    "TransientAPIError",
    "parse_retry_after",
    "shared_ssl_context",
]

JSONDict = dict[str, Any]

_TRANSIENT_STATUS = frozenset({408, 409, 429})
"""Retryable 4xx statuses; every 5xx (including Anthropic's 529 overloaded) is retryable too."""


class TransientAPIError(Exception):
    """A failure worth retrying: rate limit, server error, timeout or dropped connection.

    Attributes:
        status_code: the HTTP status, or None when no response arrived.
        retry_after: seconds the server asked to wait (``retry-after``/``retry-after-ms``).
    """

    def __init__(self, message: str, *, status_code: int | None, retry_after: float | None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after


class RejectedRequestError(Exception):
    """The server refused the request (4xx other than 408/409/429); retrying will not help.

    Attributes:
        status_code: the HTTP status, or None when the request was never sent.
    """

    def __init__(self, message: str, *, status_code: int | None) -> None:
        super().__init__(message)
        self.status_code = status_code


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date).

    >>> parse_retry_after({"retry-after": "0"}), parse_retry_after({"retry-after-ms": "1500"})
    (0.0, 1.5)
    >>> parse_retry_after({}) is None
    True
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        text = lowered.get(name)
        if text is None:
            continue
        try:
            seconds = float(text) * scale
        except ValueError:
            try:
                date = email.utils.parsedate_to_datetime(text)
            except (TypeError, ValueError):
                continue
            seconds = date.timestamp() - time.time()
        if math.isfinite(seconds):
            return max(seconds, 0.0)
    return None


def _classify_status(status: int, message: str, headers: Mapping[str, str]) -> Exception:
    if status in _TRANSIENT_STATUS or status >= 500:
        return TransientAPIError(
            f"HTTP {status}: {message}", status_code=status, retry_after=parse_retry_after(headers)
        )
    return RejectedRequestError(f"HTTP {status}: {message}", status_code=status)


def _decode_body(text: str, status: int) -> JSONDict:
    try:
        body = json.loads(text)
    except ValueError:
        raise TransientAPIError(
            f"HTTP {status} response is not JSON: {text[:200]!r}",
            status_code=status,
            retry_after=None,
        ) from None
    if not isinstance(body, dict):
        raise TransientAPIError(
            f"HTTP {status} response is not a JSON object: {text[:200]!r}",
            status_code=status,
            retry_after=None,
        )
    return body


def _missing_key(provider: str, env_var: str) -> RejectedRequestError:
    return RejectedRequestError(
        f"no API key for {provider}: pass api_key= or set {env_var}", status_code=None
    )


def _translate(error: Exception, sdk: Any, *, timeout: float, redact: Redactor) -> Exception:
    """Map an exception of the ``openai`` or ``anthropic`` SDK (same class names in both) to
    :class:`TransientAPIError` or :class:`RejectedRequestError`, with the key redacted."""
    if isinstance(error, sdk.APIStatusError):
        return _classify_status(error.status_code, redact(error.message), error.response.headers)
    if isinstance(error, sdk.APITimeoutError):
        return TransientAPIError(
            f"request timed out after {timeout:g} s", status_code=None, retry_after=None
        )
    if isinstance(error, sdk.APIConnectionError):
        cause = error.__cause__ or error
        return TransientAPIError(
            redact(f"connection error: {type(cause).__name__}: {cause}"),
            status_code=None,
            retry_after=None,
        )
    return RejectedRequestError(redact(f"{type(error).__name__}: {error}"), status_code=None)


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One default TLS context per process for every SDK client. Building one loads the CA
    bundle (about 0.1 s); each SDK client would otherwise build its own, which dominated the
    cost of starting an episode when many run at once."""
    return ssl.create_default_context()


class SDKAdapter:
    """What both SDK adapters share: the key, URL and timeout, a lazily built client with the
    SDK's own retries off, the key-redacting error translation, and closing."""

    provider: str
    _key_variable: str

    def __init__(self, *, api_key: str | None, base_url: str | None, timeout: float) -> None:
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._redact = Redactor([api_key])
        self._client: Any = None
        self._async_client: Any = None

    def _client_options(self) -> dict[str, Any]:
        """The SDK client's arguments: retries are this package's (``max_retries`` 0)."""
        return {
            "api_key": self._api_key,
            "base_url": self._base_url,
            "timeout": self._timeout,
            "max_retries": 0,
        }

    def _new_client(self, *, asynchronous: bool) -> Any:
        raise NotImplementedError

    def _get_client(self) -> Any:
        if self._client is None:
            if self._api_key is None:
                raise _missing_key(self.provider, self._key_variable)
            self._client = self._new_client(asynchronous=False)
        return self._client

    def _get_async_client(self) -> Any:
        if self._async_client is None:
            if self._api_key is None:
                raise _missing_key(self.provider, self._key_variable)
            self._async_client = self._new_client(asynchronous=True)
        return self._async_client

    def _request(
        self, sdk: Any, base_error: type[Exception], create: Any, **kwargs: Any
    ) -> JSONDict:
        """Call ``create(**kwargs)`` (a ``with_raw_response`` method) and decode the body;
        ``base_error`` is the SDK's root exception class."""
        try:
            http = create(**kwargs).http_response
            text, status = http.read().decode("utf-8", errors="replace"), http.status_code
        except base_error as error:
            failure = _translate(error, sdk, timeout=self._timeout, redact=self._redact)
        else:
            return _decode_body(text, status)
        raise failure  # outside the handler: no chained SDK exception (it holds the request)

    async def _arequest(
        self, sdk: Any, base_error: type[Exception], create: Any, **kwargs: Any
    ) -> JSONDict:
        """:meth:`_request` with an async ``create``."""
        try:
            http = (await create(**kwargs)).http_response
            text, status = (await http.aread()).decode("utf-8", errors="replace"), http.status_code
        except base_error as error:
            failure = _translate(error, sdk, timeout=self._timeout, redact=self._redact)
        else:
            return _decode_body(text, status)
        raise failure

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        if self._async_client is not None:
            await self._async_client.close()
            self._async_client = None
