"""Thinking mode: text before a tool call, extended thinking and reasoning effort on the wire."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import LLMAgent, env_kwargs_for
from acdb_gym.core.ladders.shipped import get_level

TRUTH = get_level("v0", "L0").instance(0).dag


def env() -> Any:
    return gym.make("ACDB-L0-v0", panel="active", **env_kwargs_for("llm_raw"))


def tool_choice(request: Any) -> str:
    choice = request.body["tool_choice"]
    return choice if isinstance(choice, str) else choice["type"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_text_turns_are_bounded_steps_with_tool_choice_auto_until_used(
    fake: SimpleNamespace, provider: str
) -> None:
    thought = fake.Reply(text="X0 looks like a source; I will test it.")
    script = fake.Script(
        [
            thought,
            fake.Reply((fake.Call("intervene", {"variable": "X0", "value": 2.0}),)),
            thought,
            thought,  # over the bound: an invalid reply
            fake.submit_reply(TRUTH.edges()),
        ]
    )
    server = fake.serve(script)
    result = run_episode(env(), fake.agent(server, provider, text_turns=2), manifest_index=0)
    assert result.steps == 5 and result.score.directed_f1 == 1.0
    assert [tool_choice(r) for r in server.requests] == (
        ["auto"] * 3 + (["required"] * 2 if provider == "openai" else ["any"] * 2)
    )
    stats = result.extra
    assert stats["text_turns"] == 2 and stats["invalid_tool_calls"] == 1
    # The model sees its text echoed, then the note; the over-bound reply gets the error.
    shown = [r.last_results for r in server.requests[1:]]
    assert shown[0][0][0].startswith("Noted. 1 more text-only reply allowed")
    assert shown[2][0][0].startswith("Noted. No text-only replies are left")
    assert shown[3][0][0].startswith("Error") and "tool" in shown[3][0][0]


def test_anthropic_extended_thinking_is_sent_and_its_blocks_go_back_verbatim(
    fake: SimpleNamespace,
) -> None:
    script = fake.Script(
        [
            fake.Reply(
                (fake.Call("intervene", {"variable": "X0", "value": 2.0}),),
                thinking="Intervening on X0 orients its edges.",
            ),
            fake.submit_reply(TRUTH.edges()),
        ]
    )
    server = fake.serve(script)
    agent = fake.agent(server, "anthropic", thinking_budget=2048, max_tokens=8192)
    result = run_episode(env(), agent, manifest_index=0)
    assert result.score.directed_f1 == 1.0
    first, second = (r.body for r in server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] == 8192
    assert first["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    echoed = second["messages"][1]["content"][0]
    assert echoed == server.responses[0]["content"][0]
    assert echoed["type"] == "thinking" and echoed["signature"]


def test_openai_reasoning_effort_is_sent(fake: SimpleNamespace) -> None:
    server = fake.serve(fake.competent(TRUTH))
    agent = fake.agent(server, "openai", reasoning_effort="high")
    run_episode(env(), agent, manifest_index=0)
    assert all(r.body["reasoning_effort"] == "high" for r in server.requests)
    assert all(r.body["tool_choice"] == "required" for r in server.requests)
    assert agent.config["reasoning_effort"] == "high"


def test_a_thinking_model_that_refuses_temperature_gets_none(fake: SimpleNamespace) -> None:
    def refuse_temperature(request: Any) -> Any:
        if "temperature" in request.body:
            return fake.Fault(
                "status",
                status=400,
                body={"error": {"message": "temperature may only be 1 with thinking"}},
            )
        return fake.competent(TRUTH)(request)

    server = fake.serve(refuse_temperature)
    agent = fake.agent(server, "anthropic", thinking_budget=1024, temperature=0.0)
    result = run_episode(env(), agent, manifest_index=0)
    assert result.score.directed_f1 == 1.0
    assert result.extra["temperature_applied"] is False
    assert "temperature" in server.requests[0].body
    assert all("temperature" not in r.body and "thinking" in r.body for r in server.requests[1:])


@pytest.mark.parametrize(
    ("provider", "kwargs", "message"),
    [
        ("openai", {"thinking_budget": 2048}, "use reasoning_effort"),
        ("anthropic", {"reasoning_effort": "low"}, "use thinking_budget"),
        ("anthropic", {"thinking_budget": 512}, r"\[1024, max_tokens"),
        ("anthropic", {"thinking_budget": 4096, "max_tokens": 4096}, "got 4096"),
        ("openai", {"text_turns": -1}, "text_turns must be"),
        ("openai", {"reasoning_effort": ""}, "non-empty string"),
    ],
)
def test_bad_thinking_options_are_refused(provider: str, kwargs: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LLMAgent(
            "llm_raw",
            provider=provider,  # type: ignore[arg-type]
            model="m",
            base_url="http://127.0.0.1:9",
            **kwargs,
        )
