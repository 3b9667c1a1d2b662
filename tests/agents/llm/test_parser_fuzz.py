"""Fuzz the LLM tool-call parser with random JSON: it returns a valid action or raises
ToolCallError, never anything else, and every action it returns encodes into the env's space."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acdb_gym.agents.llm.parsing import ToolCallError, parse_tool_arguments
from acdb_gym.envs import actions

EXAMPLES = int(os.environ.get("ACDB_FUZZ_EXAMPLES", "15")) * 40
TOOLS = ("intervene", "correlation", "partial_correlation", "independence_test", "submit_graph")
N_NODES, MAX_INTERVENTIONS = 6, 7
SPACE = actions.action_space(N_NODES, MAX_INTERVENTIONS)

_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
    st.text(max_size=6), st.sampled_from(["X0", "X5", "X6", "x1", "X-1", "X01", " X2", "1"]),
)  # fmt: skip
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_edge = st.lists(st.sampled_from(["X0", "X1", "X2", "X3", "X4", "X5", "X9", 3, None]),
                 max_size=3)  # fmt: skip
_arguments = st.one_of(
    _json,
    st.fixed_dictionaries(
        {},
        optional={
            "variable": _scalar, "value": _scalar, "i": _scalar, "j": _scalar, "regime": _scalar,
            "conditioning_set": st.lists(_scalar, max_size=4),
            "directed_edges": st.lists(_edge, max_size=5),
            "undirected_edges": st.lists(_edge, max_size=5),
        },
    ),
)  # fmt: skip


_name = st.sampled_from([f"X{v}" for v in range(N_NODES)])


@st.composite
def _maybe_bad(draw: st.DrawFn, good: st.SearchStrategy[Any]) -> Any:
    """Mostly ``good``; one time in eight, any JSON scalar."""
    return draw(_scalar) if draw(st.integers(0, 7)) == 0 else draw(good)


_maybe_bad_name = _maybe_bad(_name)


@st.composite
def _near_valid(draw: st.DrawFn) -> tuple[str, Any]:
    """A call that is valid more often than not, with one field sometimes garbled."""
    name = draw(st.sampled_from(TOOLS))
    if name == "intervene":
        value = draw(_maybe_bad(st.floats(-100, 100)))
        return name, {"variable": draw(_maybe_bad_name), "value": value}
    if name == "submit_graph":
        pair = st.lists(_name, min_size=2, max_size=2)
        return name, {
            "directed_edges": draw(_maybe_bad(st.lists(pair, max_size=4))),
            "undirected_edges": draw(_maybe_bad(st.lists(pair, max_size=2))),
        }
    arguments: dict[str, Any] = {"i": draw(_maybe_bad_name), "j": draw(_maybe_bad_name)}
    if draw(st.booleans()):
        arguments["regime"] = draw(_maybe_bad(st.integers(0, MAX_INTERVENTIONS)))
    if name != "correlation":
        arguments["conditioning_set"] = draw(st.lists(_maybe_bad_name, max_size=3))
    return name, arguments


_calls = st.one_of(
    _near_valid(), st.tuples(st.text(max_size=12) | st.sampled_from(TOOLS), _arguments)
)
OUTCOMES = {"action": 0, "error": 0}


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(_calls, st.integers(0, MAX_INTERVENTIONS))
def _fuzz(call: tuple[str, Any], n_experiments: int) -> None:
    name, arguments = call
    try:
        action = parse_tool_arguments(
            name, arguments, offered=TOOLS, n_nodes=N_NODES, n_experiments=n_experiments
        )
    except ToolCallError as error:
        assert str(error)  # the model is told why
        OUTCOMES["error"] += 1
        return
    OUTCOMES["action"] += 1
    encoded = actions.encode(action, n_nodes=N_NODES)
    assert SPACE.contains(encoded), (name, arguments, action)


@pytest.mark.slow
def test_parser_never_crashes_on_random_json() -> None:
    _fuzz()
    # Both outcomes are exercised, so the assertions above ran on real actions too.
    assert OUTCOMES["action"] > EXAMPLES // 10 and OUTCOMES["error"] > EXAMPLES // 10
