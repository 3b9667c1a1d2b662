"""The LLM variants, their function tools and the parser that turns a model's tool call back
into a typed action. The statistics tools' schemas and parsing are generated from their specs
(:mod:`acdb_gym.core.tools`).

Variables are named ``X0 .. X{d-1}`` in every tool. ``regime`` numbers the data a statistic is
computed on as the env's action space does: 0 is the observational sample, ``k`` the ``k``-th
intervention of the episode.

>>> [tool.name for tool in build_tools("llm_raw", panel="active", n_nodes=3)]
['intervene', 'submit_graph']
>>> parse_tool_arguments("intervene", {"variable": "X2", "value": 1.5},
...                      offered=("intervene", "submit_graph"), n_nodes=3, n_experiments=0)
Intervene(var=2, value=1.5)
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Mapping
from typing import Any, Literal, get_args

import numpy as np

from acdb_gym.core import tools as tool_specs
from acdb_gym.core.graphs import ADMG, PAG, PDAG
from acdb_gym.core.tools import TOOLS_RAW, TOOLS_STATS, StatisticTool
from acdb_gym.core.types import PANEL_ACTIVE, PANEL_OBSERVATIONAL, Panel
from acdb_gym.envs.acdb_env import STEP_LIMITS
from acdb_gym.envs.actions import VALUE_BOUND, Action, Intervene, Submit, action_class

from .conversation import ToolSpec

__all__ = [
    "HYPOTHESIS_ARGUMENTS",
    "VARIANTS",
    "ToolCallError",
    "Variant",
    "build_tools",
    "env_kwargs_for",
    "node_index",
    "parse_tool_arguments",
    "statistics_tool_names",
    "variable_names",
]

Variant = Literal["llm_raw", "llm_stats", "llm_corr_obs"]
VARIANTS: tuple[str, ...] = get_args(Variant)


def statistics_tool_names() -> tuple[str, ...]:
    """The tools offered only by ``llm_stats``: every registered statistics tool."""
    return tuple(tool.name for tool in tool_specs.statistics_tools())


_NAME = re.compile(r"X(?:0|[1-9][0-9]*)")
"""A variable name as the schemas list it: ASCII ``X``, then ASCII decimal digits without a
leading zero (``\\d`` would also take Arabic-Indic or fullwidth digits)."""
_MAX_SHOWN = 120
"""Longest rendering of a bad value inside an error message."""


class ToolCallError(ValueError):
    """A tool call that cannot be executed; its message is shown to the model as the result."""


def check_variant(variant: str) -> None:
    """Raise ValueError unless ``variant`` is one of :data:`VARIANTS`."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")


def env_kwargs_for(variant: Variant) -> dict[str, Any]:
    """The :class:`~acdb_gym.envs.acdb_env.ACDBEnv` keyword arguments a variant runs with.

    ``llm_raw`` and ``llm_stats`` run on either panel (the caller adds ``panel=``);
    ``llm_corr_obs`` is observational only.

    >>> env_kwargs_for("llm_stats")
    {'tools': 'stats', 'max_steps': 32}
    >>> env_kwargs_for("llm_corr_obs")
    {'panel': 'observational', 'tools': 'raw', 'max_steps': 16}
    """
    check_variant(variant)
    if variant == "llm_stats":
        return {"tools": TOOLS_STATS, "max_steps": STEP_LIMITS[TOOLS_STATS]}
    if variant == "llm_corr_obs":
        return {
            "panel": PANEL_OBSERVATIONAL,
            "tools": TOOLS_RAW,
            "max_steps": STEP_LIMITS[TOOLS_RAW],
        }
    return {"tools": TOOLS_RAW, "max_steps": STEP_LIMITS[TOOLS_RAW]}


def variable_names(n_nodes: int) -> list[str]:
    """``["X0", ..., "X{d-1}"]``."""
    return [f"X{v}" for v in range(n_nodes)]


def node_index(name: Any, n_nodes: int) -> int | None:
    """The index of ``name`` when it is exactly one of :func:`variable_names`, else None.

    The one parser of variable names for every path that takes them from outside (the LLM
    agents, inspect, MCP): no surrounding whitespace, no Unicode digits, no leading zeros, and
    no name longer than the longest listed one (so no digit string reaches ``int`` that
    Python's 4,300-digit limit would refuse).

    >>> node_index("X2", 3), node_index("X3", 3), node_index(" X0", 3), node_index("X\u0661", 3)
    (2, None, None, None)
    """
    if not isinstance(name, str) or len(name) > len(f"X{max(n_nodes - 1, 0)}"):
        return None
    if _NAME.fullmatch(name) is None:
        return None
    index = int(name[1:])
    return index if index < n_nodes else None


# --------------------------------------------------------------------------- tool specs


HYPOTHESIS_ARGUMENTS = ("hypothesis_directed_edges", "hypothesis_undirected_edges")
"""The arguments ``intervene`` requires when the agent states hypotheses (``state_hypothesis``):
the model's current graph, in ``submit_graph``'s format."""


def build_tools(
    variant: Variant,
    *,
    panel: Panel,
    n_nodes: int,
    state_hypothesis: bool = False,
    latent: bool = False,
) -> tuple[ToolSpec, ...]:
    """The tools a variant offers in a panel, in a fixed order.

    ``intervene`` is offered only by ``llm_raw``/``llm_stats`` in the active panel; the
    statistics tools (every registered one) only by ``llm_stats``; ``submit_graph`` always.
    With ``state_hypothesis``, ``intervene`` also requires the model's current graph
    (:data:`HYPOTHESIS_ARGUMENTS`); every tool is otherwise the same. With ``latent`` (a level
    with hidden confounders) ``submit_graph`` also takes ``bidirected_edges``.
    """
    check_variant(variant)
    names = variable_names(n_nodes)
    tools: list[ToolSpec] = []
    if variant != "llm_corr_obs" and panel == PANEL_ACTIVE:
        tool = _intervene_tool(names)
        tools.append(_with_hypothesis(tool, names) if state_hypothesis else tool)
    if variant == "llm_stats":
        tools.extend(_statistics_tool(spec, names) for spec in tool_specs.statistics_tools())
    tools.append(_submit_tool(names, latent=latent))
    return tuple(tools)


def _variable_schema(names: list[str], description: str) -> dict[str, Any]:
    return {"type": "string", "enum": names, "description": description}


def _regime_schema() -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 0,
        "description": (
            "Which data to use: 0 = the observational data (default); k = the samples of your "
            "k-th intervention (numbered 1, 2, ... in the order you made them)."
        ),
    }


def _intervene_tool(names: list[str]) -> ToolSpec:
    return ToolSpec(
        name="intervene",
        description=(
            "Perform a perfect hard intervention do(variable = value): the variable is set to "
            "value in every sample, which cuts it off from its own causes, and the other "
            "variables respond through the hidden causal model. Returns fresh samples of all "
            "variables. Costs one unit of the intervention budget."
        ),
        parameters={
            "type": "object",
            "properties": {
                "variable": _variable_schema(names, "The variable to intervene on."),
                "value": {
                    "type": "number",
                    "minimum": -VALUE_BOUND,
                    "maximum": VALUE_BOUND,
                    "description": (
                        f"The value to set it to, in [{-VALUE_BOUND:g}, {VALUE_BOUND:g}]."
                    ),
                },
            },
            "required": ["variable", "value"],
            "additionalProperties": False,
        },
    )


def _statistics_tool(spec: StatisticTool, names: list[str]) -> ToolSpec:
    """The function tool of a statistics tool, from its spec's argument kinds."""
    properties: dict[str, Any] = {}
    if "pair" in spec.arguments:
        properties["i"] = _variable_schema(names, "The first variable.")
        properties["j"] = _variable_schema(names, "The second variable (different from i).")
    else:
        properties["i"] = _variable_schema(names, "The variable.")
    if "cond" in spec.arguments:
        excluded = "i or j" if "pair" in spec.arguments else "i"
        properties["conditioning_set"] = {
            "type": "array",
            "items": {"type": "string", "enum": names},
            "uniqueItems": True,
            "description": (
                f"Variables to condition on (may be empty; must not contain {excluded})."
            ),
        }
    if "regime" in spec.arguments:
        properties["regime"] = _regime_schema()
    return ToolSpec(
        name=spec.name,
        description=spec.description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": [key for key in properties if key != "regime"],
            "additionalProperties": False,
        },
    )


def _edges_schema(names: list[str], description: str) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {
            "type": "array",
            "items": {"type": "string", "enum": names},
            "minItems": 2,
            "maxItems": 2,
        },
        "description": description,
    }


def _with_hypothesis(tool: ToolSpec, names: list[str]) -> ToolSpec:
    """``intervene`` that also takes the model's current graph (both edge lists required)."""
    directed, undirected = HYPOTHESIS_ARGUMENTS
    parameters = dict(tool.parameters)
    parameters["properties"] = {
        **tool.parameters["properties"],
        directed: _edges_schema(
            names,
            "Your current hypothesis, before this experiment: directed edges [cause, effect].",
        ),
        undirected: _edges_schema(
            names, "Your current hypothesis: undirected edges [a, b] (direction still open)."
        ),
    }
    parameters["required"] = [*tool.parameters["required"], directed, undirected]
    description = (
        f"{tool.description} Also state your current hypothesis of the whole graph, before "
        "seeing this experiment's result, as in submit_graph; it is recorded for analysis only "
        "and does not change the experiment or your score."
    )
    return ToolSpec(name=tool.name, description=description, parameters=parameters)


def _submit_tool(names: list[str], *, latent: bool = False) -> ToolSpec:
    def edges(description: str) -> dict[str, Any]:
        return _edges_schema(names, description)

    description = (
        "Submit your final causal graph; this ends the episode. List each pair of directly "
        "connected variables once: in directed_edges as [cause, effect] when you have "
        "determined the direction, otherwise in undirected_edges as [a, b]. Leave out pairs "
        "that are not directly connected. Directed edges must not form a cycle."
    )
    properties = {
        "directed_edges": edges("Directed edges [cause, effect], e.g. [['X0', 'X2']]."),
        "undirected_edges": edges("Undirected edges [a, b] (direction left open)."),
    }
    if latent:
        description += (
            " List a pair that only shares a hidden common cause (no directed edge between "
            "them) in bidirected_edges as [a, b]."
        )
        properties["bidirected_edges"] = edges(
            "Bidirected edges [a, b]: a and b share a hidden common cause."
        )
    return ToolSpec(
        name="submit_graph",
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    )


# --------------------------------------------------------------------------- parsing


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
