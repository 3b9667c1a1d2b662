"""Malformed tool calls: each becomes an error result the model sees, and costs one step."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import env_kwargs_for

PROVIDERS = ("openai", "anthropic")

# (case id, reply factory, text the model must be shown, results expected)
CASES: list[tuple[str, Any, str, int]] = [
    (
        "unknown_tool",
        lambda f: f.Reply((f.Call("do_magic", {"variable": "X0"}),)),
        "unknown tool 'do_magic'; the available tools are ['intervene', 'submit_graph']",
        1,
    ),
    (
        "bad_json",
        lambda f: f.Reply((f.Call("intervene", '{"variable": "X0", "value": '),)),
        "Error: the arguments of intervene are not valid JSON",
        1,
    ),
    (
        "wrong_types",
        lambda f: f.Reply((f.Call("intervene", {"variable": 0, "value": 2.0}),)),
        "variable must be a variable name X0..X4 (a string), got int 0",
        1,
    ),
    (
        "value_is_a_string",
        lambda f: f.Reply((f.Call("intervene", {"variable": "X1", "value": "high"}),)),
        "value must be a number, got str 'high'",
        1,
    ),
    (
        "variable_out_of_range",
        lambda f: f.Reply((f.Call("intervene", {"variable": "X7", "value": 1.0}),)),
        "variable must be a variable name X0..X4, got 'X7'",
        1,
    ),
    (
        "value_out_of_bounds",
        lambda f: f.Reply((f.Call("intervene", {"variable": "X0", "value": 1e6}),)),
        "value must be a finite number in [-10000, 10000], got 1000000.0",
        1,
    ),
    (
        "missing_argument",
        lambda f: f.Reply((f.Call("intervene", {"variable": "X0"}),)),
        "intervene is missing required argument(s) ['value']",
        1,
    ),
    (
        "cyclic_graph",
        lambda f: f.Reply(
            (
                f.Call(
                    "submit_graph",
                    {"directed_edges": [["X0", "X1"], ["X1", "X0"]], "undirected_edges": []},
                ),
            )
        ),
        "invalid graph: pairs directed both ways: X0 <-> X1",
        1,
    ),
    (
        "no_tool_call",
        lambda f: f.Reply(text="X0 probably causes X1."),
        "Error: your reply did not call a tool",
        1,
    ),
    (
        "two_tool_calls",
        lambda f: f.Reply(
            (
                f.Call("intervene", {"variable": "X0", "value": 1.0}),
                f.Call("intervene", {"variable": "X1", "value": 1.0}),
            )
        ),
        "Error: your reply made 2 tool calls; call exactly one tool per turn",
        2,
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("case", "make_reply", "shown", "n_results"), CASES, ids=[c[0] for c in CASES]
)
def test_malformed_call_is_an_error_result_that_costs_a_step(
    fake: SimpleNamespace, provider: str, case: str, make_reply: Any, shown: str, n_results: int
) -> None:
    server = fake.serve(fake.Script([make_reply(fake), fake.submit_reply([(0, 1)])]))
    agent = fake.agent(server, provider)
    env = gym.make("ACDB-L0-v0", **env_kwargs_for("llm_raw"))

    result = run_episode(env, agent, manifest_index=0)

    assert result.steps == 2 and result.invalid_actions == 1 and result.interventions == 0
    assert result.trajectory[0].error is not None and result.trajectory[1].error is None
    assert result.extra["invalid_tool_calls"] == 1
    results = server.requests[1].last_results
    assert len(results) == n_results
    for text, is_error, call_id in results:
        assert is_error
        assert shown in text, text
        assert "Steps remaining: 15." in text
        assert (call_id is None) == (case == "no_tool_call")
    # the model sees the agent's message, not the env's message about the placeholder action
    assert "i and j must differ" not in server.requests[1].raw_text
    assert "not available with tools='raw'" not in server.requests[1].raw_text
