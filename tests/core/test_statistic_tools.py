"""The statistics-tool specs: the built-in table, spec validation and the registry."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from acdb_gym.core import statistic_tools, stats
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.statistic_tools import (
    BUILTIN_TOOLS,
    StatisticTool,
    ToolResult,
    get_tool,
    register_tool,
    registered_tool,
    statistics_tools,
    unregister_tool,
)
from acdb_gym.core.types import PANEL_ACTIVE, PANEL_OBSERVATIONAL, PANELS

DATA = LADDERS["v0"]["L1"].instance(0).d_obs


def _zero(data: Any, *, i: int, j: int) -> ToolResult:
    return ToolResult(0.0, 1.0)


def spec(**changes: Any) -> StatisticTool:
    fields: dict[str, Any] = {
        "name": "zero",
        "arguments": ("pair", "regime"),
        "compute": _zero,
        "description": "Always zero.",
        "result_text": lambda statistic, p_value: f"{statistic}",
        **changes,
    }
    return StatisticTool(**fields)


def test_builtin_tools_in_action_kind_order() -> None:
    assert statistics_tools() == BUILTIN_TOOLS
    assert [(tool.name, tool.action_name, tool.fields) for tool in BUILTIN_TOOLS] == [
        ("correlation", "Correlation", ("i", "j", "regime")),
        ("partial_correlation", "PartialCorrelation", ("i", "j", "cond", "regime")),
        ("independence_test", "IndependenceTest", ("i", "j", "cond", "regime")),
    ]


def test_builtin_tools_compute_what_the_env_always_reported() -> None:
    r = stats.correlation(DATA, 0, 3)
    assert get_tool("correlation").compute(DATA, i=0, j=3) == (
        r,
        stats.fisher_z_test(DATA, 0, 3).p_value,
    )
    partial = get_tool("partial_correlation").compute(DATA, i=0, j=3, cond=(1,))
    assert partial == (
        stats.partial_correlation(DATA, 0, 3, (1,)),
        stats.fisher_z_test(DATA, 0, 3, (1,)).p_value,
    )
    test = stats.fisher_z_test(DATA, 1, 2, (0, 3))
    result = get_tool("independence_test").compute(DATA, i=1, j=2, cond=(0, 3))
    assert result == (test.statistic, test.p_value)
    assert isinstance(result, ToolResult) and result.statistic == test.statistic


def test_result_texts() -> None:
    assert get_tool("correlation").result_text(0.123456, 0.0412) == "r = 0.1235, p = 0.0412"
    independence = get_tool("independence_test").result_text
    assert independence(-2.5, 0.01) == (
        "z = -2.500, p = 0.01; at alpha = 0.05: dependent (independence rejected)"
    )
    assert independence(0.1, 0.9).endswith("independent (independence not rejected)")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "Covariance"}, "a tool name must be snake_case, got 'Covariance'"),
        ({"name": "intervene"}, "'intervene' is an action of its own"),
        ({"arguments": ()}, "needs a non-empty tuple of arguments, got ()"),
        ({"arguments": ["pair"]}, "needs a non-empty tuple of arguments, got ['pair']"),
        ({"arguments": ("pair", "lag")}, "unknown argument kinds ['lag']"),
        ({"arguments": ("regime", "pair")}, "got ['regime', 'pair']"),
        ({"arguments": ("node", "pair")}, "got ['node', 'pair']"),
        ({"arguments": ("pair", "regime", "regime")}, "got ['pair', 'regime', 'regime']"),
        ({"description": ""}, "tool 'zero' needs an LLM-facing description"),
        ({"compute": 3}, "compute and result_text must be callable"),
        ({"arguments": ("pair", "cond")}, "compute must accept (data, i=, j=, cond=)"),
    ],
)
def test_bad_specs_name_what_is_wrong(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        spec(**changes)


def test_register_and_unregister() -> None:
    zero = spec()
    register_tool(zero)
    try:
        assert statistics_tools() == (*BUILTIN_TOOLS, zero)
        assert get_tool("zero") is zero
        with pytest.raises(ValueError, match="'zero' is already registered"):
            register_tool(spec())
    finally:
        unregister_tool("zero")
    assert statistics_tools() == BUILTIN_TOOLS
    with pytest.raises(ValueError, match=r"unknown statistics tool 'zero'; the tools are \["):
        get_tool("zero")
    with pytest.raises(ValueError, match="unknown statistics tool 'zero'"):
        unregister_tool("zero")


def test_builtin_tools_stay_registered() -> None:
    with pytest.raises(ValueError, match="'correlation' is a built-in statistics tool"):
        unregister_tool("correlation")
    with pytest.raises(ValueError, match="register_tool needs a StatisticTool, got 'zero'"):
        register_tool("zero")  # type: ignore[arg-type]


def test_registered_tool_restores_the_registry_after_an_error() -> None:
    with pytest.raises(RuntimeError), registered_tool(spec()):
        assert "zero" in [tool.name for tool in statistics_tools()]
        raise RuntimeError
    assert statistics_tools() == BUILTIN_TOOLS


def test_literal_values_are_listed_once() -> None:
    assert statistic_tools.TOOL_VARIANTS == ("raw", "stats")
    assert (statistic_tools.TOOLS_RAW, statistic_tools.TOOLS_STATS) == statistic_tools.TOOL_VARIANTS
    assert statistic_tools.ARGUMENT_KINDS == ("node", "pair", "cond", "regime")
    assert PANELS == ("active", "observational") == (PANEL_ACTIVE, PANEL_OBSERVATIONAL)
    node_tool = spec(arguments=("node",), compute=lambda data, *, i: ToolResult(np.nan, 1.0))
    assert node_tool.fields == ("i",) and node_tool.node_fields == ("i",)


def test_the_former_module_paths_are_the_renamed_modules_names() -> None:
    """``core.tools``, ``agents.llm.tools`` and ``envs.levels`` keep importing: the same
    objects as ``core.statistic_tools``, ``agents.llm.function_tools`` and
    ``envs.episode_rules``."""
    import importlib

    pairs = [
        ("acdb_gym.core.tools", "acdb_gym.core.statistic_tools"),
        ("acdb_gym.agents.llm.tools", "acdb_gym.agents.llm.function_tools"),
        ("acdb_gym.envs.levels", "acdb_gym.envs.episode_rules"),
    ]
    for former, current in pairs:
        old, new = importlib.import_module(former), importlib.import_module(current)
        assert old.__all__ == new.__all__ and len(new.__all__) > 3
        assert all(getattr(old, name) is getattr(new, name) for name in new.__all__)
