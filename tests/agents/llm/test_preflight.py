"""The checks made before any LLM job runs: package, key, endpoint."""

from __future__ import annotations

import socket
import sys
from types import SimpleNamespace

import pytest

from acdb_gym.agents.llm.preflight import LLMNotReadyError, check_llm_ready


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_live_local_server_passes(fake: SimpleNamespace, provider: str) -> None:
    server = fake.serve(lambda request: fake.Reply())
    check_llm_ready(provider, base_url=server.base_url(provider))
    assert server.requests == []  # the check sends no model request


@pytest.mark.parametrize(
    ("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_no_key_names_the_variable(
    provider: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(LLMNotReadyError, match=variable):
        check_llm_ready(provider)


def test_a_dead_endpoint_is_a_connection_error() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(LLMNotReadyError, match=r"cannot connect to http://127\.0\.0\.1:\d+"):
        check_llm_ready("openai", base_url=url, timeout=2.0)


def test_a_missing_sdk_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # `import anthropic` raises ImportError
    with pytest.raises(LLMNotReadyError, match=r"pip install 'acdb_gym\[llm\]'"):
        check_llm_ready("anthropic", api_key="k" * 20)


@pytest.mark.parametrize("url", ["ftp://host/v1", "not a url", "http://127.0.0.1:99999/v1"])
def test_a_malformed_url_is_named(url: str) -> None:
    with pytest.raises(LLMNotReadyError, match="base URL"):
        check_llm_ready("openai", base_url=url)


def test_only_the_openai_provider_is_pointed_at_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(LLMNotReadyError) as raised:
        check_llm_ready("anthropic")
    assert "--base-url" not in str(raised.value)
