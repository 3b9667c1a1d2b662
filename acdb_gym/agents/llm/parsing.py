"""The parser that turns a model's tool call back into a typed action, or a
:class:`ToolCallError` whose message the model is shown (DESIGN §9). One parser for every path
that takes tool calls from outside: the LLM agents, inspect and MCP. The statistics tools'
arguments are checked in the order of their specs' fields (:mod:`acdb_gym.core.statistic_tools`).

>>> parse_tool_arguments("intervene", {"variable": "X2", "value": 1.5},
...                      offered=("intervene", "submit_graph"), n_nodes=3, n_experiments=0)
Intervene(var=2, value=1.5)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from acdb_gym.core import statistic_tools as tool_specs
from acdb_gym.core.graphs import ADMG, PAG, PDAG
from acdb_gym.core.statistic_tools import StatisticTool
from acdb_gym.envs.actions import VALUE_BOUND, Action, Intervene, Submit, action_class

from .function_tools import HYPOTHESIS_ARGUMENTS, node_index

__all__ = ["ToolCallError", "parse_tool_arguments"]

_MAX_SHOWN = 120
"""Longest rendering of a bad value inside an error message."""


class ToolCallError(ValueError):
    """A tool call that cannot be executed; its message is shown to the model as the result."""


def parse_tool_arguments(
    name: str,
    arguments: Any,
    *,
    offered: Collection[str],
    n_nodes: int,
    n_experiments: int,
    state_hypothesis: bool = False,
    latent: bool = False,
) -> Action:
    """Turn one tool call into a typed action, or raise :class:`ToolCallError` saying why not.

    Args:
        name: the tool the model called.
        arguments: its decoded JSON arguments.
        offered: the tool names offered this episode.
        n_nodes: number of variables ``d``.
        n_experiments: interventions performed so far (valid regimes are ``0..n_experiments``).
        state_hypothesis: ``intervene`` requires :data:`HYPOTHESIS_ARGUMENTS` (a graph that is
            not valid makes the whole call invalid, as in ``submit_graph``).
        latent: ``submit_graph`` requires ``bidirected_edges`` too (a level with hidden
            confounders); with some, the graph is an ADMG (or a PAG when undirected edges are
            given as well, read as ``o-o``).

    Raises:
        ToolCallError: unknown tool, arguments that are not an object, missing or unexpected
            arguments, wrong types, variables or regimes out of range, a value outside
            ``[-VALUE_BOUND, VALUE_BOUND]`` (or one no float can hold), or an invalid graph.
            Nothing else escapes: any other failure to read the arguments (an overflow, a
            nesting too deep) is a :class:`ToolCallError` too, so it is an invalid step.
    """
    try:
        return _parse(
            name,
            arguments,
            offered=offered,
            n_nodes=n_nodes,
            n_experiments=n_experiments,
            state_hypothesis=state_hypothesis,
            latent=latent,
        )
    except ToolCallError:
        raise
    except (ValueError, OverflowError, RecursionError, TypeError) as error:
        raise ToolCallError(
            f"the arguments of {_show(name)} cannot be read ({type(error).__name__})"
        ) from None


def _parse(
    name: str,
    arguments: Any,
    *,
    offered: Collection[str],
    n_nodes: int,
    n_experiments: int,
    state_hypothesis: bool,
    latent: bool,
) -> Action:
    if name not in offered:
        raise ToolCallError(
            f"unknown tool {_show(name)}; the available tools are {sorted(offered)}"
        )
    if not isinstance(arguments, Mapping):
        raise ToolCallError(
            f"the arguments of {name} must be a JSON object, got {type(arguments).__name__} "
            f"{_show(arguments)}"
        )
    if name == "intervene":
        hypothesis_keys = HYPOTHESIS_ARGUMENTS if state_hypothesis else ()
        _check_keys(name, arguments, required=("variable", "value", *hypothesis_keys))
        hypothesis = _graph(arguments, n_nodes, *hypothesis_keys) if hypothesis_keys else None
        return Intervene(
            _variable(arguments["variable"], "variable", n_nodes),
            _value(arguments["value"]),
            hypothesis,
        )
    if name == "submit_graph":
        if latent:
            keys = ("directed_edges", "undirected_edges", "bidirected_edges")
            _check_keys(name, arguments, required=keys)
            return Submit(_mixed_graph(arguments, n_nodes))
        _check_keys(name, arguments, required=("directed_edges", "undirected_edges"))
        return Submit(_graph(arguments, n_nodes))
    return _statistics_call(tool_specs.get_tool(name), arguments, n_nodes, n_experiments)


def _statistics_call(
    spec: StatisticTool, arguments: Mapping[str, Any], n_nodes: int, n_experiments: int
) -> Action:
    """Check a statistics tool's arguments in the order of its fields; build its action."""
    cond_key = ("conditioning_set",) if "cond" in spec.arguments else ()
    optional = ("regime",) if "regime" in spec.arguments else ()
    _check_keys(spec.name, arguments, required=(*spec.node_fields, *cond_key), optional=optional)
    nodes = tuple(_variable(arguments[key], key, n_nodes) for key in spec.node_fields)
    if len(nodes) == 2 and nodes[0] == nodes[1]:
        raise ToolCallError(f"i and j must be different variables, got X{nodes[0]} for both")
    values: dict[str, Any] = dict(zip(spec.node_fields, nodes, strict=True))
    if optional:
        values["regime"] = _regime(arguments.get("regime", 0), n_experiments)
    if cond_key:
        values["cond"] = _conditioning_set(arguments["conditioning_set"], n_nodes, nodes)
    return action_class(spec.name)(**values)


def _show(value: Any) -> str:
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past 4,300 digits, a nesting too deep
        return f"<{type(value).__name__} too large to show>"
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _check_keys(
    tool: str,
    arguments: Mapping[str, Any],
    *,
    required: tuple[str, ...],
    optional: tuple[str, ...] = (),
) -> None:
    missing = [key for key in required if key not in arguments]
    if missing:
        raise ToolCallError(f"{tool} is missing required argument(s) {missing}")
    unexpected = sorted(str(key) for key in arguments if key not in (*required, *optional))
    if unexpected:
        raise ToolCallError(
            f"{tool} got unexpected argument(s) {unexpected}; it takes {[*required, *optional]}"
        )


def _variable(value: Any, field: str, n_nodes: int) -> int:
    expected = f"a variable name X0..X{n_nodes - 1}"
    if not isinstance(value, str):
        raise ToolCallError(
            f"{field} must be {expected} (a string), got {type(value).__name__} {_show(value)}"
        )
    index = node_index(value, n_nodes)
    if index is None:
        raise ToolCallError(f"{field} must be {expected}, got {_show(value)}")
    return index


def _value(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolCallError(f"value must be a number, got {type(value).__name__} {_show(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int no float can hold
        number = math.inf
    if not math.isfinite(number) or abs(number) > VALUE_BOUND:
        raise ToolCallError(
            f"value must be a finite number in [{-VALUE_BOUND:g}, {VALUE_BOUND:g}], "
            f"got {_show(value)}"
        )
    return number


def _regime(value: Any, n_experiments: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolCallError(f"regime must be an integer, got {type(value).__name__} {_show(value)}")
    if not 0 <= value <= n_experiments:
        done = (
            "no interventions have been made yet, so only regime 0 exists"
            if n_experiments == 0
            else f"regime must be in [0, {n_experiments}]"
        )
        raise ToolCallError(f"there is no regime {_show(value)}: {done}")
    return None if value == 0 else value - 1


def _conditioning_set(value: Any, n_nodes: int, pair: tuple[int, ...]) -> tuple[int, ...]:
    """The conditioning set, in one pass: its length is bounded by ``d - len(pair)`` (a longer
    list must repeat or clash) before any entry is read."""
    if not isinstance(value, list):
        raise ToolCallError(
            f"conditioning_set must be a list of variable names, got {type(value).__name__} "
            f"{_show(value)}"
        )
    most = max(n_nodes - len(pair), 0)
    if len(value) > most:
        raise ToolCallError(
            f"conditioning_set has at most {most} entries (d - {len(pair)}), got {len(value)}"
        )
    cond = tuple(_variable(item, "each conditioning_set entry", n_nodes) for item in value)
    clash = sorted({c for c in cond if c in pair})
    if clash:
        raise ToolCallError(
            f"conditioning_set must not contain {'i or j' if len(pair) == 2 else 'i'}, "
            f"got {[f'X{c}' for c in clash]}"
        )
    counts = Counter(cond)
    repeated = sorted(c for c, count in counts.items() if count > 1)
    if repeated:
        raise ToolCallError(f"conditioning_set lists {[f'X{c}' for c in repeated]} more than once")
    return cond


def _edges(value: Any, field: str, n_nodes: int) -> list[tuple[int, int]]:
    if not isinstance(value, list):
        raise ToolCallError(
            f"{field} must be a list of [a, b] pairs, got {type(value).__name__} {_show(value)}"
        )
    edges = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2:
            raise ToolCallError(
                f"each entry of {field} must be a pair [a, b] of variable names, got {_show(item)}"
            )
        where = f"each endpoint in {field}"
        edges.append((_variable(item[0], where, n_nodes), _variable(item[1], where, n_nodes)))
    return edges


def _graph(
    arguments: Mapping[str, Any],
    n_nodes: int,
    directed_key: str = "directed_edges",
    undirected_key: str = "undirected_edges",
) -> PDAG:
    directed = _edges(arguments[directed_key], directed_key, n_nodes)
    undirected = _edges(arguments[undirected_key], undirected_key, n_nodes)
    what = "graph" if directed_key == "directed_edges" else "hypothesis"
    try:
        return PDAG.from_edges(n_nodes, directed=directed, undirected=undirected)
    except ValueError as error:
        raise ToolCallError(f"invalid {what}: {error}") from None


def _mixed_graph(arguments: Mapping[str, Any], n_nodes: int) -> PDAG | ADMG | PAG:
    """``submit_graph``'s graph on a level with hidden confounders: a PDAG without bidirected
    edges, an ADMG with bidirected and no undirected ones, else a PAG (undirected as ``o-o``)."""
    pdag = _graph(arguments, n_nodes)
    bidirected = _edges(arguments["bidirected_edges"], "bidirected_edges", n_nodes)
    if not bidirected:
        return pdag
    b_matrix = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    for a, b in bidirected:
        if a == b:
            raise ToolCallError(f"invalid graph: bidirected edge X{a} <-> X{a} is a self-loop")
        b_matrix[a, b] = b_matrix[b, a] = True
    clash = b_matrix & pdag.skeleton()
    if clash.any():
        a, b = (int(v) for v in np.argwhere(clash)[0])
        raise ToolCallError(
            f"invalid graph: X{a} and X{b} are listed both as bidirected and as another edge"
        )
    directed = np.asarray(pdag.directed)
    if not pdag.undirected.any():
        return ADMG(directed, b_matrix)
    adjacent = np.asarray(pdag.skeleton()) | b_matrix
    return PAG(adjacent, directed | b_matrix, directed.T.copy())
