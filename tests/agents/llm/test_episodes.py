"""End-to-end episodes: the real SDKs against a local scripted model server."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.agents.base import Agent, run_episode
from acdb_gym.agents.llm import env_kwargs_for
from acdb_gym.core.graphs import DAG, cpdag
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.statistic_tools import StatisticTool, ToolResult, registered_tool

PROVIDERS = ("openai", "anthropic")
INSTANCE = get_level("v0", "L0").instance(0)
"""ACDB-L0-v0 manifest instance 0 (d = 5, 8 edges, budget 3): the tests' tiny world."""
TRUTH: DAG = INSTANCE.dag


def make_env(variant: str, panel: str = "active") -> gym.Env[Any, Any]:
    kwargs = env_kwargs_for(variant)  # type: ignore[arg-type]
    kwargs.setdefault("panel", panel)
    return gym.make("ACDB-L0-v0", **kwargs)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("variant", "panel"),
    [
        ("llm_raw", "active"),
        ("llm_stats", "active"),
        ("llm_raw", "observational"),
        ("llm_corr_obs", "observational"),
    ],
)
def test_competent_policy_recovers_the_true_graph(
    fake: SimpleNamespace, provider: str, variant: str, panel: str, tmp_path: Path
) -> None:
    server = fake.serve(fake.competent(TRUTH))
    agent = fake.agent(server, provider, variant, transcript_path=tmp_path / "t.jsonl")
    assert isinstance(agent, Agent)

    result = run_episode(make_env(variant, panel), agent, manifest_index=0)

    assert result.score.directed_f1 == 1.0
    assert result.invalid_actions == 0
    intervened = panel == "active" and variant != "llm_corr_obs"
    assert result.steps == (2 if intervened else 1)
    assert result.interventions == (1 if intervened else 0)
    assert result.extra["llm_calls"] == len(server.requests) == result.steps
    assert result.extra["tokens_in"] > 0 and result.extra["tokens_out"] == 17 * result.steps
    assert result.extra["temperature_applied"] is True
    first = server.requests[0]
    assert first.body["temperature"] == 0.0
    if intervened:
        text, is_error, call_id = server.requests[1].last_results[0]
        assert not is_error and call_id is not None
        assert "do(X0 = 3)" in text and "X0,X1,X2,X3,X4\n3.000," in text
        assert "Budget remaining: 2" in text
    # the true graph is never in anything sent to the model; the check finds it in the reply
    for request in server.requests:
        assert fake.leaked_edges(request.raw_text, TRUTH) == []
    assert fake.leaked_edges(json.dumps(server.responses[-1]), TRUTH) == TRUTH.edges()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_wire_protocol_one_required_tool_call(fake: SimpleNamespace, provider: str) -> None:
    server = fake.serve(fake.competent(TRUTH))
    run_episode(make_env("llm_stats"), fake.agent(server, provider, "llm_stats"), manifest_index=0)

    body = server.requests[0].body
    if provider == "openai":
        assert body["parallel_tool_calls"] is False and body["tool_choice"] == "required"
        assert body["messages"][0]["role"] == "system"
        assert server.requests[0].path == "/v1/chat/completions"
    else:
        assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
        assert "active causal discovery" in server.requests[0].system
        assert server.requests[0].path == "/v1/messages"
    assert server.requests[0].tool_names == [
        "intervene",
        "correlation",
        "partial_correlation",
        "independence_test",
        "submit_graph",
    ]
    # the second request replays the first reply and its result as a tool-use / result pair
    second = server.requests[1].body["messages"]
    if provider == "openai":
        assert second[2]["role"] == "assistant" and second[2]["tool_calls"][0]["id"] == "call_1_0"
        assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call_1_0"
    else:
        assert second[1]["role"] == "assistant" and second[1]["content"][1]["id"] == "toolu_1_0"
        assert second[2]["content"][0]["tool_use_id"] == "toolu_1_0"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_session_prompt_carries_data_budget_and_step_limit(
    fake: SimpleNamespace, provider: str
) -> None:
    server = fake.serve(fake.Script([fake.submit_reply([])]))
    env = make_env("llm_raw")
    result = run_episode(env, fake.agent(server, provider, "llm_raw"), manifest_index=0)

    session = server.requests[0].session
    assert "Variables (d = 5): X0, X1, X2, X3, X4" in session
    assert "Intervention budget: 3 interventions" in session and "Step limit: 16" in session
    observational = INSTANCE.d_obs
    assert f"{observational[0, 0]:.3f},{observational[0, 1]:.3f}" in session
    assert session.count("\n") >= observational.shape[0]
    assert result.steps == 1 and result.score.skeleton_f1 == 0.0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_correlation_probe_sees_only_correlations_and_stds(
    fake: SimpleNamespace, provider: str
) -> None:
    server = fake.serve(
        fake.Script([fake.submit_reply([], undirected=cpdag(TRUTH).undirected_edges())])
    )
    env = make_env("llm_corr_obs")
    result = run_episode(env, fake.agent(server, provider, "llm_corr_obs"), manifest_index=0)

    request = server.requests[0]
    assert request.tool_names == ["submit_graph"]
    assert "Correlation does not imply causation" in request.system
    assert "leave the edge undirected" in request.system
    data = INSTANCE.d_obs
    assert "Correlation matrix (rounded to 3 decimals):" in request.session
    assert "Sample standard deviations:" in request.session
    assert f"{data[0, 0]:.3f}" not in request.session  # no raw data
    assert len(request.session.splitlines()) < 20
    assert result.steps == 1 and result.score.directed_f1 == 0.0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_correlation_probe_keeps_going_after_a_wrong_call(
    fake: SimpleNamespace, provider: str
) -> None:
    intervene = fake.Reply((fake.Call("intervene", {"variable": "X0", "value": 1.0}),))
    server = fake.serve(fake.Script([intervene, fake.submit_reply(TRUTH.edges())]))
    result = run_episode(
        make_env("llm_corr_obs"),
        fake.agent(server, provider, "llm_corr_obs"),
        manifest_index=0,
    )

    text, is_error, _ = server.requests[1].last_results[0]
    assert is_error and "unknown tool 'intervene'" in text and "['submit_graph']" in text
    assert result.steps == 2 and result.invalid_actions == 1 and result.interventions == 0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_statistics_tools_report_numbers(fake: SimpleNamespace, provider: str) -> None:
    script = fake.Script(
        [
            fake.Reply((fake.Call("intervene", {"variable": "X3", "value": -2.5}),)),
            fake.Reply((fake.Call("correlation", {"i": "X0", "j": "X1"}),)),
            fake.Reply(
                (
                    fake.Call(
                        "partial_correlation",
                        {"i": "X0", "j": "X1", "conditioning_set": ["X2"], "regime": 1},
                    ),
                )
            ),
            fake.Reply(
                (fake.Call("independence_test", {"i": "X2", "j": "X4", "conditioning_set": []}),)
            ),
            fake.submit_reply([], undirected=[(0, 1)]),
        ]
    )
    server = fake.serve(script)
    result = run_episode(
        make_env("llm_stats"), fake.agent(server, provider, "llm_stats"), manifest_index=0
    )

    texts = [request.last_results[0][0] for request in server.requests[1:]]
    assert "Intervention 1 (use regime=1" in texts[0] and "do(X3 = -2.5)" in texts[0]
    assert texts[1].startswith("correlation(X0, X1) on the observational data (n = 500): r = ")
    assert ", p = " in texts[1]
    assert texts[2].startswith(
        "partial_correlation(X0, X1 | X2) on intervention 1, do(X3 = -2.5) (n = 100)"
    )
    assert texts[3].startswith("independence_test(X2, X4) on the observational data")
    assert "at alpha = 0.05: " in texts[3] and "z = " in texts[3]
    assert "Steps remaining: 28." in texts[3]
    assert result.invalid_actions == 0 and result.steps == 5


@pytest.mark.parametrize("provider", PROVIDERS)
def test_env_errors_reach_the_model(fake: SimpleNamespace, provider: str) -> None:
    intervene = fake.Reply((fake.Call("intervene", {"variable": "X1", "value": 1.0}),))
    server = fake.serve(fake.Script([intervene] * 4 + [fake.submit_reply([])]))
    result = run_episode(
        make_env("llm_raw"), fake.agent(server, provider, "llm_raw"), manifest_index=0
    )

    text, is_error, _ = server.requests[4].last_results[0]
    assert is_error and text.startswith("Error: intervention budget of 3 is spent")
    assert result.interventions == 3 and result.invalid_actions == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_step_limit_ends_an_episode_of_errors(fake: SimpleNamespace, provider: str) -> None:
    server = fake.serve(lambda request: fake.Reply(text="thinking..."))
    result = run_episode(
        make_env("llm_raw"), fake.agent(server, provider, "llm_raw"), manifest_index=0
    )

    assert result.truncated and result.steps == 16 and result.invalid_actions == 16
    assert len(server.requests) == 16
    assert result.extra["invalid_tool_calls"] == 16


def test_transcript_records_requests_responses_and_results(
    fake: SimpleNamespace, tmp_path: Path
) -> None:
    server = fake.serve(fake.competent(TRUTH))
    path = tmp_path / "episodes" / "one.jsonl"
    agent = fake.agent(server, "openai", "llm_raw", transcript_path=path)
    run_episode(make_env("llm_raw"), agent, manifest_index=0)

    events = [json.loads(line) for line in path.read_text().splitlines()]
    kinds = [event["event"] for event in events]
    assert kinds == [
        "episode_start",
        "request",
        "response",
        "reply",
        "action",
        "tool_result",
        "request",
        "response",
        "reply",
        "action",
    ]
    requests = [e for e in events if e["event"] == "request"]
    assert [r["payload"] for r in requests] == [r.body for r in server.requests]
    responses = [e for e in events if e["event"] == "response"]
    assert [r["raw"] for r in responses] == server.responses
    assert all(r["latency_s"] >= 0 and r["cached"] is False for r in responses)
    assert events[-2]["totals"]["llm_calls"] == 2

    agent.transcript_path = tmp_path / "two.jsonl"  # the sweep sets it per episode
    run_episode(make_env("llm_raw"), agent, manifest_index=0)
    assert agent.transcript_path.exists()
    assert len(path.read_text().splitlines()) == len(events)


def test_agent_refuses_an_env_of_another_variant(fake: SimpleNamespace) -> None:
    server = fake.serve(fake.competent(TRUTH))
    with pytest.raises(ValueError, match="llm_stats needs an env with tools='stats'"):
        run_episode(
            make_env("llm_raw"),
            fake.agent(server, "openai", "llm_stats"),
            manifest_index=0,
        )
    assert server.requests == []


def test_correlation_probe_plays_the_same_in_both_panels(fake: SimpleNamespace) -> None:
    def script() -> Any:
        intervene = fake.Reply((fake.Call("intervene", {"variable": "X0", "value": 1.0}),))
        return fake.Script([intervene, fake.submit_reply([(0, 1)])])

    bodies = []
    for panel in ("observational", "active"):
        server = fake.serve(script())
        env = gym.make("ACDB-L0-v0", panel=panel, tools="raw")
        result = run_episode(env, fake.agent(server, "openai", "llm_corr_obs"), manifest_index=0)
        assert result.interventions == 0 and result.steps == 2
        bodies.append([request.body for request in server.requests])
    assert bodies[0] == bodies[1]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_registered_statistics_tool_is_offered_and_answered(
    fake: SimpleNamespace, provider: str
) -> None:
    spread = StatisticTool(
        name="mean_difference",
        arguments=("pair",),
        compute=lambda data, *, i, j: ToolResult(float(np.mean(data[:, i] - data[:, j])), 1.0),
        description="Mean of X_i - X_j.",
        result_text=lambda statistic, p_value: f"mean = {statistic:.2f}",
    )
    script = fake.Script(
        [
            fake.Reply((fake.Call("mean_difference", {"i": "X0", "j": "X1"}),)),
            fake.submit_reply([]),
        ]
    )
    server = fake.serve(script)
    with registered_tool(spread):
        result = run_episode(
            make_env("llm_stats"),
            fake.agent(server, provider, "llm_stats"),
            manifest_index=0,
        )
    offered = server.requests[0].body["tools"]
    names = [
        tool["name"] if provider == "anthropic" else tool["function"]["name"] for tool in offered
    ]
    assert names[-2:] == ["mean_difference", "submit_graph"]
    expected = float(np.mean(INSTANCE.d_obs[:, 0] - INSTANCE.d_obs[:, 1]))
    text = server.requests[1].last_results[0][0]
    assert text.startswith(
        f"mean_difference(X0, X1) on the observational data (n = 500): mean = {expected:.2f}\n"
    )
    assert result.invalid_actions == 0 and result.steps == 2
