"""Fault injection through the local server: retries, backoff, timeouts, temperature fallback."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import LLMAgent, LLMProviderError, env_kwargs_for

PROVIDERS = ("openai", "anthropic")
TIMEOUT = 0.4


def run(agent: LLMAgent) -> Any:
    return run_episode(gym.make("ACDB-L0-v0", **env_kwargs_for("llm_raw")), agent, manifest_index=0)


def faults(fake: SimpleNamespace) -> dict[str, Any]:
    return {
        "429": fake.Fault("status", 429, headers={"retry-after": "0"}),
        "500": fake.Fault("status", 500),
        "529": fake.Fault(
            "status",
            529,
            body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ),
        "hang": fake.Fault("hang", hang_s=3.0),
        "drop": fake.Fault("drop"),
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_two_rate_limits_then_success(fake: SimpleNamespace, provider: str) -> None:
    rate_limited = fake.Fault("status", 429, headers={"retry-after": "0"})
    server = fake.serve(fake.Script([rate_limited, rate_limited, fake.submit_reply([(0, 1)])]))
    start = time.perf_counter()
    result = run(fake.agent(server, provider, timeout=TIMEOUT, backoff=30.0))  # retry-after wins

    # Two 30-s backoffs would take 60 s; retry-after 0 takes none (a wide margin for load).
    assert time.perf_counter() - start < 30.0
    assert result.steps == 1 and result.score.directed_precision == 1.0
    assert result.extra["retries"] == 2 and result.extra["llm_calls"] == 1
    assert len(server.requests) == 3
    assert server.requests[0].body == server.requests[2].body


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind", ["500", "529", "hang", "drop"])
def test_one_transient_failure_is_retried(fake: SimpleNamespace, provider: str, kind: str) -> None:
    server = fake.serve(fake.Script([faults(fake)[kind], fake.submit_reply([(0, 1)])]))
    result = run(fake.agent(server, provider, timeout=TIMEOUT))

    assert result.steps == 1 and result.extra["retries"] == 1
    assert len(server.requests) == 2


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind", ["429", "500", "hang", "drop"])
def test_persistent_failure_raises_provider_error(
    fake: SimpleNamespace, provider: str, kind: str
) -> None:
    fault = faults(fake)[kind]
    server = fake.serve(lambda request: fault)
    agent = fake.agent(server, provider, timeout=TIMEOUT, max_retries=1)

    with pytest.raises(LLMProviderError, match="retries exhausted after 2 attempt") as caught:
        run(agent)

    error = caught.value
    assert error.transient and error.attempts == 2 and error.provider == provider
    assert error.status_code == (None if kind in ("hang", "drop") else int(kind))
    assert len(server.requests) == 2
    if kind == "hang":
        assert "timed out" in str(error)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_refused_request_is_not_retried(fake: SimpleNamespace, provider: str) -> None:
    body = {
        "error": {"message": "model 'test-model' does not exist", "type": "invalid_request_error"}
    }
    server = fake.serve(lambda request: fake.Fault("status", 404, body=body))

    with pytest.raises(LLMProviderError, match="request refused after 1 attempt") as caught:
        run(fake.agent(server, provider, timeout=TIMEOUT))

    assert not caught.value.transient and caught.value.status_code == 404
    assert "does not exist" in str(caught.value)
    assert len(server.requests) == 1


def temperature_refusing(fake: SimpleNamespace) -> Any:
    """A server whose model refuses ``temperature`` (as OpenAI reasoning models do)."""
    body = {
        "error": {
            "message": "Unsupported parameter: 'temperature' is not supported with this model.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_parameter",
        }
    }
    script = fake.Script(
        [
            fake.Reply((fake.Call("intervene", {"variable": "X2", "value": 1.0}),)),
            fake.submit_reply([(0, 1)]),
        ]
    )

    def behave(request: Any) -> Any:
        if "temperature" in request.body:
            return fake.Fault("status", 400, body=body)
        return script(request)

    return behave


@pytest.mark.parametrize("provider", PROVIDERS)
def test_temperature_dropped_when_the_server_refuses_it(
    fake: SimpleNamespace, provider: str
) -> None:
    server = fake.serve(temperature_refusing(fake))
    agent = fake.agent(server, provider, timeout=TIMEOUT)

    result = run(agent)

    assert result.steps == 2
    assert result.extra["temperature_applied"] is False and result.extra["retries"] == 1
    assert [("temperature" in r.body) for r in server.requests] == [True, False, False]
    assert server.requests[0].body["temperature"] == 0.0
    # remembered for the agent's next episode: no second refusal
    server.behaviour = temperature_refusing(fake)
    again = run(agent)
    assert again.extra["temperature_applied"] is False and again.extra["retries"] == 0
    assert len(server.requests) == 5


@pytest.mark.parametrize("provider", PROVIDERS)
def test_temperature_none_is_not_sent(fake: SimpleNamespace, provider: str) -> None:
    server = fake.serve(fake.Script([fake.submit_reply([])]))
    result = run(fake.agent(server, provider, timeout=TIMEOUT, temperature=None))

    assert "temperature" not in server.requests[0].body
    assert result.extra["temperature_applied"] is False
