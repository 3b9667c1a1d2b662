"""The LLM variants, the variables' names and their function tools (the parser that turns a
model's tool call back into a typed action is :mod:`acdb_gym.agents.llm.parsing`). The
statistics tools' schemas are generated from their specs (:mod:`acdb_gym.core.statistic_tools`).

Variables are named ``X0 .. X{d-1}`` in every tool. ``regime`` numbers the data a statistic is
computed on as the env's action space does: 0 is the observational sample, ``k`` the ``k``-th
intervention of the episode.

>>> [tool.name for tool in build_tools("llm_raw", panel="active", n_nodes=3)]
['intervene', 'submit_graph']
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from acdb_gym.core import statistic_tools as tool_specs
from acdb_gym.core.statistic_tools import TOOLS_RAW, TOOLS_STATS, StatisticTool
from acdb_gym.core.types import PANEL_ACTIVE, PANEL_OBSERVATIONAL, Panel
from acdb_gym.envs.actions import VALUE_BOUND

from .conversation import ToolSpec

__all__ = [
    "HYPOTHESIS_ARGUMENTS",
    "VARIANTS",
    "Variant",
    "build_tools",
    "env_kwargs_for",
    "node_index",
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


def check_variant(variant: str) -> None:
    """Raise ValueError unless ``variant`` is one of :data:`VARIANTS`."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")


def env_kwargs_for(variant: Variant) -> dict[str, Any]:
    """The :class:`~acdb_gym.envs.acdb_env.ACDBEnv` keyword arguments a variant runs with.

    ``llm_raw`` and ``llm_stats`` run on either panel (the caller adds ``panel=``);
    ``llm_corr_obs`` is observational only. The step limit is the env's default for the tools
    (:data:`~acdb_gym.envs.acdb_env.STEP_LIMITS`, raised to the budget + 1 on an instance
    whose budget would not fit), as for every other agent.

    >>> env_kwargs_for("llm_stats")
    {'tools': 'stats'}
    >>> env_kwargs_for("llm_corr_obs")
    {'panel': 'observational', 'tools': 'raw'}
    """
    check_variant(variant)
    if variant == "llm_stats":
        return {"tools": TOOLS_STATS}
    if variant == "llm_corr_obs":
        return {"panel": PANEL_OBSERVATIONAL, "tools": TOOLS_RAW}
    return {"tools": TOOLS_RAW}


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
