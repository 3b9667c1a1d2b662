"""Transcripts and the response cache: exact replays and no API key anywhere."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import LLMAgent, LLMProviderError, env_kwargs_for
from acdb_gym.core.ladders.shipped import get_level

PROVIDERS = ("openai", "anthropic")
TRUTH = get_level("v0", "L0").instance(0).dag


def run(agent: LLMAgent, variant: str = "llm_raw") -> Any:
    env = gym.make("ACDB-L0-v0", **env_kwargs_for(variant))  # type: ignore[arg-type]
    return run_episode(env, agent, manifest_index=0)


def agent_for(provider: str, server: Any, **kwargs: Any) -> LLMAgent:
    options: dict[str, Any] = {"timeout": 5.0, "backoff": 0.01, **kwargs}
    return LLMAgent(
        kwargs.pop("variant", "llm_raw"),
        provider=provider,  # type: ignore[arg-type]
        model="test-model",
        base_url=server.base_url(provider),
        **{k: v for k, v in options.items() if k != "variant"},
    )


def all_text(directory: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(directory.rglob("*")) if p.is_file())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cached_rerun_makes_no_http_call_and_reproduces_the_episode(
    fake: SimpleNamespace, provider: str, tmp_path: Path
) -> None:
    script = fake.Script(
        [
            fake.Reply((fake.Call("intervene", {"variable": "X1", "value": 2.0}),)),
            fake.Reply((fake.Call("intervene", {"variable": "X9", "value": 2.0}),)),  # an error
            fake.Reply((fake.Call("correlation", {"i": "X0", "j": "X1"}),)),
            fake.Reply(
                (
                    fake.Call(
                        "independence_test",
                        {"i": "X0", "j": "X2", "conditioning_set": ["X1"], "regime": 1},
                    ),
                )
            ),
            fake.submit_reply(TRUTH.edges()[:4], undirected=TRUTH.edges()[4:]),
        ]
    )
    server = fake.serve(script)
    cache = tmp_path / "cache"
    first = run(
        agent_for(provider, server, api_key=fake.KEY, cache_dir=cache, variant="llm_stats"),
        "llm_stats",
    )
    calls = len(server.requests)
    assert calls == 5 and first.extra["cache_hits"] == 0

    second = run(
        agent_for(provider, server, api_key=fake.KEY, cache_dir=cache, variant="llm_stats"),
        "llm_stats",
    )

    assert len(server.requests) == calls
    assert second.score == first.score and second.trajectory == first.trajectory
    assert second.extra["cache_hits"] == second.extra["llm_calls"] == 5
    for key in ("tokens_in", "tokens_out", "llm_calls", "temperature_applied"):
        assert second.extra[key] == first.extra[key]
    entries = list(cache.rglob("*.json"))
    assert len(entries) == 5
    assert all(json.loads(p.read_text())["request"]["model"] == "test-model" for p in entries)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cache_replays_a_temperature_refusal_without_http(
    fake: SimpleNamespace, provider: str, tmp_path: Path
) -> None:
    def behave(request: Any) -> Any:
        if "temperature" in request.body:
            return fake.Fault(
                "status", 400, body={"error": {"message": "temperature is not supported"}}
            )
        return fake.submit_reply([(0, 1)])

    server = fake.serve(behave)
    first = run(agent_for(provider, server, api_key=fake.KEY, cache_dir=tmp_path))
    second = run(agent_for(provider, server, api_key=fake.KEY, cache_dir=tmp_path))

    assert len(server.requests) == 2
    assert second.score == first.score and second.trajectory == first.trajectory
    assert first.extra["temperature_applied"] is second.extra["temperature_applied"] is False
    assert second.extra["cache_hits"] == 1 and second.extra["retries"] == 0


def test_cached_episode_replays_without_an_api_key(
    fake: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake.serve(fake.competent(TRUTH))
    first = run(agent_for("openai", server, api_key=fake.KEY, cache_dir=tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    replay = LLMAgent("llm_raw", provider="openai", model="test-model", cache_dir=tmp_path)

    assert run(replay).score == first.score
    assert len(server.requests) == 2
    with pytest.raises(ValueError, match=r"no API key for provider 'openai'.*OPENAI_API_KEY"):
        LLMAgent("llm_raw", provider="openai", model="test-model")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_api_key_from_the_environment_is_sent_but_never_recorded(
    fake: SimpleNamespace, provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", fake.KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake.KEY)
    server = fake.serve(fake.competent(TRUTH))
    transcript = tmp_path / "transcript.jsonl"
    agent = agent_for(provider, server, transcript_path=transcript, cache_dir=tmp_path / "cache")

    run(agent)

    sent = [
        r.headers.get("authorization", "") + r.headers.get("x-api-key", "") for r in server.requests
    ]
    assert all(fake.KEY in header for header in sent)  # the key did reach the server
    assert transcript.stat().st_size > 1000
    assert fake.KEY not in all_text(tmp_path)
    assert fake.KEY not in repr(agent) and fake.KEY not in json.dumps(agent.config)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_key_echoed_by_the_server_is_redacted(
    fake: SimpleNamespace, provider: str, tmp_path: Path
) -> None:
    echo = {
        "error": {"message": f"Incorrect API key provided: {fake.KEY}", "type": "invalid_api_key"}
    }
    server = fake.serve(lambda request: fake.Fault("status", 401, body=echo))
    transcript = tmp_path / "transcript.jsonl"
    agent = agent_for(
        provider, server, api_key=fake.KEY, transcript_path=transcript, cache_dir=tmp_path
    )

    with pytest.raises(LLMProviderError) as caught:
        run(agent)

    assert "Incorrect API key provided: [REDACTED]" in str(caught.value)
    assert fake.KEY not in str(caught.value) and fake.KEY not in repr(caught.value.args)
    assert (
        caught.value.__cause__ is None and caught.value.__context__ is None
    ) or fake.KEY not in str(caught.value.__context__)
    assert fake.KEY not in all_text(tmp_path)
    assert caught.value.status_code == 401 and not caught.value.transient
