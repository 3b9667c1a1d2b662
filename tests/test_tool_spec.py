"""A statistics tool added through its spec alone works everywhere a tool is used.

The throwaway ``covariance`` tool below is one function (standing in for one in
``core/stats.py``) and one :class:`StatisticTool`; registering it must give it an action kind,
a typed action, the env's dispatch, a render line, both providers' LLM tool schemas, a prompt
line, argument parsing and a place in the conformance fuzz plans, with nothing else written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.agents.llm import build_tools
from acdb_gym.agents.llm.conversation import Request
from acdb_gym.agents.llm.parsing import parse_tool_arguments
from acdb_gym.agents.llm.prompts import format_statistic, task_prompt
from acdb_gym.agents.llm.providers import AnthropicAdapter, OpenAIAdapter
from acdb_gym.core import stats
from acdb_gym.core.graphs import PDAG
from acdb_gym.core.statistic_tools import (
    StatisticTool,
    ToolResult,
    registered_tool,
    statistics_tools,
)
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.testing import check_acdb_env
from acdb_gym.testing.conformance import _random_plan

COVARIANCE_KIND = 5
"""The first kind after submit_graph."""


def covariance(data: Any, i: int, j: int) -> float:
    """The statistic, as it would be written in core/stats.py."""
    matrix = np.asarray(data, dtype=np.float64)
    return float(np.cov(matrix[:, i], matrix[:, j])[0, 1])


def _covariance_tool(data: Any, *, i: int, j: int) -> ToolResult:
    # cov = 0 exactly when r = 0: the Fisher-z test of r is the test of the covariance.
    return ToolResult(covariance(data, i, j), stats.fisher_z_test(data, i, j).p_value)


COVARIANCE = StatisticTool(
    name="covariance",
    arguments=("pair", "regime"),
    compute=_covariance_tool,
    description="Sample covariance of two variables, with the Fisher-z p-value of the test r = 0.",
    result_text=lambda statistic, p_value: f"cov = {statistic:.4f}, p = {p_value:.3g}",
)


@pytest.fixture
def with_covariance() -> Iterator[StatisticTool]:
    before = statistics_tools()
    with registered_tool(COVARIANCE) as spec:
        yield spec
    assert statistics_tools() == before


def test_registration_adds_an_action_kind_after_submit_graph(with_covariance: Any) -> None:
    assert actions.kind_names()[COVARIANCE_KIND - 1 :] == ("submit_graph", "covariance")
    action = actions.tool_action("covariance", 0, 2, regime=1)
    assert action[0] == COVARIANCE_KIND
    assert actions.action_space(4, 3).contains(action)
    typed = actions.decode(action, n_nodes=4)
    assert repr(typed) == "Covariance(i=0, j=2, regime=1)"
    assert actions.decode(actions.encode(typed), n_nodes=4) == typed
    # The benchmark's own kinds did not move.
    assert actions.submit(PDAG.empty(4))[0] == actions.ActionKind.SUBMIT_GRAPH == 4


def test_env_step_fills_tool_result_on_each_regime(with_covariance: Any) -> None:
    env = ACDBEnv("L1", tools="stats", render_mode="ansi")
    observation, _ = env.reset(seed=0)
    assert len(env.action_space.spaces) == 6

    observation, *_, info = env.step(actions.tool_action("covariance", 0, 3))
    data = observation["observational"]
    expected = [covariance(data, 0, 3), stats.fisher_z_test(data, 0, 3).p_value, 1.0]
    assert "error" not in info
    assert observation["tool_result"].tolist() == expected
    assert "last action: Covariance(i=0, j=3, regime=None)" in str(env.render())

    env.step(actions.intervene(1, 2.0))
    observation, *_ = env.step(actions.tool_action("covariance", 0, 3, regime=0))
    samples = observation["interventional"][0]
    assert observation["tool_result"][0] == covariance(samples, 0, 3)
    assert env.session.tool_calls == 2

    observation, *_, info = env.step(actions.tool_action("covariance", 2, 2))
    assert env.details()["error"] == "i and j must differ, got i = j = 2"
    assert info["invalid_actions"] == 1
    assert observation["tool_result"][2] == 0.0


def test_raw_env_rejects_the_new_tool(with_covariance: Any) -> None:
    env = ACDBEnv("L1", tools="raw")
    env.reset(seed=0)
    env.step(actions.tool_action("covariance", 0, 1))
    assert env.details()["error"] == "statistics tool Covariance is not available with tools='raw'"


def test_envs_made_before_registration_keep_their_action_space() -> None:
    env = ACDBEnv("L1", tools="stats")
    with registered_tool(COVARIANCE):
        assert len(env.action_space.spaces) == 5
        assert not env.action_space.contains(actions.tool_action("covariance", 0, 1))


def _payload_tools(adapter: Any, tools: Any) -> list[dict[str, Any]]:
    payload = adapter.build_payload(
        Request(
            model="m",
            system="s",
            session="u",
            history=(),
            tools=tools,
            temperature=None,
            max_tokens=16,
        )
    )
    result: list[dict[str, Any]] = payload["tools"]
    return result


def test_both_providers_offer_the_new_tool(with_covariance: Any) -> None:
    tools = build_tools("llm_stats", panel="active", n_nodes=3)
    assert [tool.name for tool in tools][-2:] == ["covariance", "submit_graph"]
    schema = {
        "type": "object",
        "properties": {
            "i": {
                "type": "string",
                "enum": ["X0", "X1", "X2"],
                "description": "The first variable.",
            },
            "j": {
                "type": "string",
                "enum": ["X0", "X1", "X2"],
                "description": "The second variable (different from i).",
            },
            "regime": tools[1].parameters["properties"]["regime"],
        },
        "required": ["i", "j"],
        "additionalProperties": False,
    }
    openai = _payload_tools(OpenAIAdapter(api_key="k", base_url=None, timeout=1.0), tools)
    assert openai[-2] == {
        "type": "function",
        "function": {
            "name": "covariance",
            "description": COVARIANCE.description,
            "parameters": schema,
        },
    }
    anthropic = _payload_tools(AnthropicAdapter(api_key="k", base_url=None, timeout=1.0), tools)
    assert anthropic[-2] == {
        "name": "covariance",
        "description": COVARIANCE.description,
        "input_schema": schema,
    }
    raw_tools = build_tools("llm_raw", panel="active", n_nodes=3)
    assert "covariance" not in [tool.name for tool in raw_tools]


def test_llm_prompt_parser_and_result_text_know_the_new_tool(with_covariance: Any) -> None:
    prompt = task_prompt("llm_stats", panel="active", n_nodes=3)
    assert "- correlation, partial_correlation, independence_test and covariance compute" in prompt
    offered = [tool.name for tool in build_tools("llm_stats", panel="active", n_nodes=3)]
    typed = parse_tool_arguments(
        "covariance", {"i": "X2", "j": "X0", "regime": 1}, offered=offered, n_nodes=3,
        n_experiments=1,
    )  # fmt: skip
    assert repr(typed) == "Covariance(i=2, j=0, regime=0)"
    text = format_statistic(typed, statistic=1.5, p_value=0.25, regime_text="intervention 1")
    assert text == "covariance(X2, X0) on intervention 1: cov = 1.5000, p = 0.25"


def test_conformance_check_fuzzes_the_new_tool(with_covariance: Any) -> None:
    env = gym.make("ACDB-L0-v0", tools="stats", render_mode="ansi")
    env.reset(seed=0)
    plan = _random_plan(env, seed=0, n_steps=60)
    assert any(int(action[0]) == COVARIANCE_KIND for action in plan)
    check_acdb_env(env, seed=0, n_random_steps=60)


def test_conformance_check_notices_a_missing_tool_kind(with_covariance: Any) -> None:
    class DropsLastKind(gym.ActionWrapper[Any, Any, Any]):
        def __init__(self, env: gym.Env[Any, Any]) -> None:
            super().__init__(env)
            self.action_space = gym.spaces.OneOf(env.action_space.spaces[:-1])  # type: ignore[attr-defined]

        def action(self, action: Any) -> Any:
            return action

    env = DropsLastKind(gym.make("ACDB-L0-v0", tools="stats"))
    with pytest.raises(AssertionError, match="action_space must have 6 kinds"):
        check_acdb_env(env, seed=0, n_random_steps=5)
