"""Unit tests without HTTP: tools, argument parsing, prompts, records, configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from acdb_gym.agents.llm import INVALID_ACTION, LLMAgent, build_tools, env_kwargs_for
from acdb_gym.agents.llm.conversation import Request, ToolResult
from acdb_gym.agents.llm.parsing import ToolCallError, parse_tool_arguments
from acdb_gym.agents.llm.prompts import format_matrix, format_statistic, session_prompt, task_prompt
from acdb_gym.agents.llm.providers import (
    AnthropicAdapter,
    OpenAIAdapter,
    parse_retry_after,
)
from acdb_gym.agents.llm.records import Redactor, ResponseCache, canonical_json
from acdb_gym.core.graphs import PDAG
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv

STATS_TOOLS = (
    "intervene",
    "correlation",
    "partial_correlation",
    "independence_test",
    "submit_graph",
)


def parse(name: str, arguments: Any, n_experiments: int = 0) -> actions.Action:
    return parse_tool_arguments(
        name, arguments, offered=STATS_TOOLS, n_nodes=4, n_experiments=n_experiments
    )


@pytest.mark.parametrize(
    ("variant", "panel", "names"),
    [
        ("llm_raw", "active", ["intervene", "submit_graph"]),
        ("llm_raw", "observational", ["submit_graph"]),
        ("llm_stats", "active", list(STATS_TOOLS)),
        ("llm_stats", "observational", list(STATS_TOOLS[1:])),
        ("llm_corr_obs", "observational", ["submit_graph"]),
    ],
)
def test_tools_per_variant_and_panel(variant: Any, panel: Any, names: list[str]) -> None:
    tools = build_tools(variant, panel=panel, n_nodes=3)
    assert [tool.name for tool in tools] == names
    for tool in tools:
        assert tool.parameters["type"] == "object" and tool.parameters["required"]
        assert json.loads(json.dumps(tool.to_dict())) == tool.to_dict()
    submit = tools[-1].parameters["properties"]["directed_edges"]
    assert submit["items"]["items"]["enum"] == ["X0", "X1", "X2"]


def test_env_kwargs_for_each_variant() -> None:
    assert env_kwargs_for("llm_raw") == {"tools": "raw"}
    assert env_kwargs_for("llm_stats") == {"tools": "stats"}
    assert env_kwargs_for("llm_corr_obs") == {"panel": "observational", "tools": "raw"}
    with pytest.raises(ValueError, match=r"variant must be one of .* got 'llm_fancy'"):
        env_kwargs_for("llm_fancy")  # type: ignore[arg-type]


def test_parse_valid_calls() -> None:
    assert parse("intervene", {"variable": "X3", "value": -2}) == actions.Intervene(3, -2.0)
    assert parse("correlation", {"i": "X0", "j": "X1"}) == actions.Correlation(0, 1, None)
    assert parse("correlation", {"i": "X0", "j": "X1", "regime": 2}, n_experiments=2) == (
        actions.Correlation(0, 1, 1)
    )
    assert parse(
        "independence_test", {"i": "X0", "j": "X1", "conditioning_set": ["X3", "X2"]}
    ) == actions.IndependenceTest(0, 1, (3, 2), None)
    submitted = parse(
        "submit_graph", {"directed_edges": [["X0", "X1"]], "undirected_edges": [["X3", "X2"]]}
    )
    assert submitted == actions.Submit(PDAG.from_edges(4, directed=[(0, 1)], undirected=[(2, 3)]))


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("fly", {}, "unknown tool 'fly'"),
        ("intervene", [1, 2], "the arguments of intervene must be a JSON object, got list [1, 2]"),
        ("intervene", {"variable": "X0", "value": 1, "why": "x"}, "unexpected argument(s) ['why']"),
        ("intervene", {"variable": "X4", "value": 1}, "got 'X4'"),
        ("intervene", {"variable": "X0", "value": True}, "value must be a number, got bool True"),
        ("intervene", {"variable": "X0", "value": -10000.5}, "got -10000.5"),
        ("correlation", {"i": "X1", "j": "X1"}, "i and j must be different variables, got X1"),
        ("correlation", {"i": "X0", "j": "X1", "regime": 1}, "there is no regime 1"),
        ("correlation", {"i": "X0", "j": "X1", "regime": "0"}, "regime must be an integer"),
        (
            "partial_correlation",
            {"i": "X0", "j": "X1"},
            "missing required argument(s) ['conditioning_set']",
        ),
        (
            "partial_correlation",
            {"i": "X0", "j": "X1", "conditioning_set": ["X1"]},
            "must not contain i or j, got ['X1']",
        ),
        (
            "partial_correlation",
            {"i": "X0", "j": "X1", "conditioning_set": "X2"},
            "conditioning_set must be a list",
        ),
        (
            "submit_graph",
            {"directed_edges": [["X0"]], "undirected_edges": []},
            "must be a pair [a, b]",
        ),
        (
            "submit_graph",
            {"directed_edges": [["X0", "X1"]], "undirected_edges": [["X1", "X0"]]},
            "pairs both directed and undirected",
        ),
        (
            "submit_graph",
            {"directed_edges": [["X0", "X1"], ["X1", "X2"], ["X2", "X0"]], "undirected_edges": []},
            "directed cycle",
        ),
    ],
)
def test_parse_errors_name_the_bad_value(name: str, arguments: Any, message: str) -> None:
    with pytest.raises(ToolCallError) as caught:
        parse(name, arguments)
    assert message in str(caught.value)


def test_invalid_action_is_rejected_by_every_variant() -> None:
    for kwargs in (
        {"tools": "raw"},
        {"tools": "stats"},
        {"tools": "stats", "panel": "observational"},
    ):
        env = ACDBEnv("L0", **kwargs)  # type: ignore[arg-type]
        env.reset(options={"manifest_index": 0})
        assert env.action_space.contains(INVALID_ACTION)
        _, _, terminated, _, info = env.step(INVALID_ACTION)
        assert "error" in env.details() and not terminated and env.invalid_actions == 1
        assert info["invalid_actions"] == 1


def test_prompts() -> None:
    data = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.5]])
    assert format_matrix(data, ["X0", "X1"]).splitlines()[1] == "1.000,2.000"
    raw = session_prompt(
        "llm_raw", observational=data, panel="active", budget=2, max_steps=16, n_int=50
    )
    assert "Intervention budget: 2 interventions, each returning 50 samples" in raw
    assert raw.endswith("2.000,2.500")
    probe = session_prompt(
        "llm_corr_obs", observational=data, panel="observational", budget=0, max_steps=16, n_int=50
    )
    assert (
        "X0: 1.000, X1: 1.607" in probe
        and "X0,X1\n1.000,0.933\n0.933,1.000" in probe
        and "5.000" not in probe
    )
    observational = task_prompt("llm_stats", panel="observational", n_nodes=2)
    assert "Interventions are not available" in observational and "intervene(" not in observational
    assert "statistics on the observational data." in observational
    assert "regime k" in task_prompt("llm_stats", panel="active", n_nodes=2)


def test_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_adapters_survive_odd_responses() -> None:
    openai = OpenAIAdapter(api_key=None, base_url=None, timeout=1.0)
    empty = openai.parse_reply({"choices": []}, id_prefix="call_3")
    assert empty.tool_calls == () and empty.assistant_message["content"]
    no_id = openai.parse_reply(
        {"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": "{"}}]}}]},
        id_prefix="call_3",
    )
    call = no_id.tool_calls[0]
    assert call.id == "call_3_0" and call.arguments is None and call.argument_error
    echoed = no_id.assistant_message["tool_calls"][0]["function"]["arguments"]
    assert json.loads(echoed) == {"unparsable_arguments": "{"}
    anthropic = AnthropicAdapter(api_key=None, base_url=None, timeout=1.0)
    reply = anthropic.parse_reply(
        {
            "content": [{"type": "tool_use", "name": "f", "input": "oops"}],
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 4, "output_tokens": 2},
        },
        id_prefix="call_0",
    )
    assert reply.tool_calls[0].argument_error and reply.usage.tokens_in == 7
    payload = anthropic.build_payload(
        Request(
            model="m",
            system="s",
            session="hello",
            history=[],
            tools=[],
            temperature=None,
            max_tokens=5,
        )
    )
    assert "temperature" not in payload
    result = anthropic._result_block(ToolResult("bad", True, "toolu_1"))
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "bad",
        "is_error": True,
    }


def test_redactor_and_cache_key() -> None:
    redact = Redactor(['sk-abc/def"ghi', None, "EMPTY"])
    assert redact(json.dumps({"k": 'sk-abc/def"ghi'})) == '{"k": "[REDACTED]"}'
    assert redact("EMPTY") == "EMPTY"
    payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    reordered = {"messages": [{"content": "hi", "role": "user"}], "model": "m"}
    assert ResponseCache.key("openai", payload) == ResponseCache.key("openai", reordered)
    assert ResponseCache.key("openai", payload) != ResponseCache.key("anthropic", payload)
    assert canonical_json(payload).startswith('{"messages":[')


def test_cache_round_trip(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, Redactor([]))
    assert cache.get("ab" * 32) is None
    cache.put("ab" * 32, {"response": {"x": 1}})
    assert cache.get("ab" * 32) == {"key": "ab" * 32, "response": {"x": 1}}
    (tmp_path / "ab" / f"{'ab' * 32}.json").write_text("{truncated")
    assert cache.get("ab" * 32) is None
    assert not list(tmp_path.rglob(".tmp-*"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"provider": "mistral"}, "provider must be one of ['openai', 'anthropic'], got 'mistral'"),
        ({"model": ""}, "model must be a non-empty string"),
        ({"temperature": -1.0}, "temperature must be None or a finite number >= 0, got -1.0"),
        ({"timeout": 0.0}, "timeout must be a positive number of seconds, got 0.0"),
        ({"max_retries": -1}, "max_retries must be an integer >= 0, got -1"),
        ({"backoff": float("nan")}, "backoff must be a number of seconds >= 0, got nan"),
        ({"max_tokens": 0}, "max_tokens must be a positive integer, got 0"),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    options: dict[str, Any] = {"provider": "openai", "model": "m", "api_key": "k", **kwargs}
    with pytest.raises(ValueError) as caught:
        LLMAgent("llm_raw", **options)
    assert message in str(caught.value)
    with pytest.raises(ValueError, match="variant must be one of"):
        LLMAgent("gpt", provider="openai", model="m", api_key="k")  # type: ignore[arg-type]


def test_act_before_reset_raises() -> None:
    agent = LLMAgent("llm_raw", provider="anthropic", model="m", api_key="k")
    with pytest.raises(RuntimeError, match=r"call reset\(\) before act\(\)"):
        agent.act({}, {})


def test_generated_statistics_tools_keep_their_wire_text() -> None:
    """The schemas, prompt line and result texts generated from the specs, pinned as they
    were written by hand before the specs existed."""
    names = ["X0", "X1", "X2"]
    tools = {tool.name: tool for tool in build_tools("llm_stats", panel="active", n_nodes=3)}
    regime = {
        "type": "integer",
        "minimum": 0,
        "description": (
            "Which data to use: 0 = the observational data (default); k = the samples of your "
            "k-th intervention (numbered 1, 2, ... in the order you made them)."
        ),
    }
    pair = {
        "i": {"type": "string", "enum": names, "description": "The first variable."},
        "j": {
            "type": "string",
            "enum": names,
            "description": "The second variable (different from i).",
        },
    }
    assert tools["correlation"].to_dict() == {
        "name": "correlation",
        "description": (
            "Pearson correlation r of two variables, with the Fisher-z p-value of the test r = 0."
        ),
        "parameters": {
            "type": "object",
            "properties": {**pair, "regime": regime},
            "required": ["i", "j"],
            "additionalProperties": False,
        },
    }
    assert tools["partial_correlation"].parameters == {
        "type": "object",
        "properties": {
            **pair,
            "conditioning_set": {
                "type": "array",
                "items": {"type": "string", "enum": names},
                "uniqueItems": True,
                "description": "Variables to condition on (may be empty; must not contain i or j).",
            },
            "regime": regime,
        },
        "required": ["i", "j", "conditioning_set"],
        "additionalProperties": False,
    }
    assert tools["independence_test"].parameters == tools["partial_correlation"].parameters
    assert (
        "- correlation, partial_correlation and independence_test compute statistics on the "
        "observational data (regime 0) or on the samples of your k-th intervention (regime k).\n"
    ) in task_prompt("llm_stats", panel="active", n_nodes=3)
    partial = actions.PartialCorrelation(0, 2, (1, 3), 1)
    assert format_statistic(partial, statistic=0.123456, p_value=0.0412, regime_text="R") == (
        "partial_correlation(X0, X2 | X1, X3) on R: r = 0.1235, p = 0.0412"
    )
    with pytest.raises(TypeError, match="not a statistics action"):
        format_statistic(actions.Intervene(0, 1.0), statistic=0.0, p_value=1.0, regime_text="R")


def test_a_conditioning_set_longer_than_d_is_refused_by_its_length() -> None:
    """The bound is checked before any entry is read, so a 200k-entry list costs nothing; a
    repeated entry is named (the check is one pass over the list)."""
    offered = ("partial_correlation", "submit_graph")
    arguments = {"i": "X0", "j": "X1", "conditioning_set": ["bogus"] + ["X2"] * 200_000}
    with pytest.raises(ToolCallError, match=r"at most 3 entries \(d - 2\), got 200001"):
        parse_tool_arguments(
            "partial_correlation", arguments, offered=offered, n_nodes=5, n_experiments=0
        )
    repeated = {"i": "X0", "j": "X1", "conditioning_set": ["X3", "X2", "X3"]}
    with pytest.raises(ToolCallError, match=r"lists \['X3'\] more than once"):
        parse_tool_arguments(
            "partial_correlation", repeated, offered=offered, n_nodes=5, n_experiments=0
        )
