"""The prompts of the LLM agents and the text of every tool result (paper §4).

Each turn the model gets the task prompt (system), the session prompt (variable names, the
observational data as text, the budget and the step limit) and the full tool-call history.
The correlation-only probe (``llm_corr_obs``) gets only the sample standard deviations and the
correlation matrix rounded to three decimals.

>>> import numpy as np
>>> print(format_matrix(np.array([[1.0, -0.25], [0.5, 2.0]]), ["X0", "X1"]))
X0,X1
1.000,-0.250
0.500,2.000
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from acdb_gym.core.statistic_tools import INDEPENDENCE_ALPHA
from acdb_gym.core.types import PANEL_ACTIVE, Panel
from acdb_gym.envs.actions import VALUE_BOUND, Action, Intervene, ToolAction

from .function_tools import Variant, check_variant, statistics_tool_names, variable_names

__all__ = [
    "DATA_DECIMALS",
    "INDEPENDENCE_ALPHA",
    "format_intervention",
    "format_matrix",
    "format_statistic",
    "intervention_text",
    "multiple_calls_error",
    "no_tool_call_error",
    "real_names",
    "session_prompt",
    "status_line",
    "task_prompt",
    "world_options",
]

DATA_DECIMALS = 3
"""Decimals of every data matrix and of the correlation matrix shown to a model."""

# INDEPENDENCE_ALPHA, the significance level of the env's independence test, is defined with
# the tool's spec in acdb_gym.core.statistic_tools and re-exported here.


def format_matrix(data: np.ndarray, names: Sequence[str], decimals: int = DATA_DECIMALS) -> str:
    """A data matrix as CSV text with a header row of variable names."""
    rows = [",".join(names)]
    rows.extend(",".join(f"{value:.{decimals}f}" for value in row) for row in np.asarray(data))
    return "\n".join(rows)


def _names(nodes: Sequence[int]) -> str:
    return ", ".join(f"X{v}" for v in nodes)


# --------------------------------------------------------------------------- system prompts

_MODEL = (
    "A hidden linear-Gaussian structural causal model generated the data. Its causal graph is a "
    "directed acyclic graph over the variables {names}: each variable equals a weighted sum of "
    "its direct causes plus independent Gaussian noise. There are no hidden confounders and no "
    "feedback loops."
)

_LATENT_MODEL = (
    "A hidden linear structural causal model generated the data. Besides the variables {names} "
    "it has {latent} hidden variables that you never observe; each hidden variable is a common "
    "cause of exactly two observed variables that have no edge between them. Among the observed "
    "variables the causal graph is a directed acyclic graph: each variable equals a weighted sum "
    "of its direct causes, plus its hidden cause's effect if it has one, plus independent noise. "
    "A pair that shares a hidden cause is dependent without either causing the other; an "
    "intervention on one of them does not change the other."
)

_NONLINEAR_MODEL = (
    "A hidden structural causal model generated the data. Its causal graph is a directed acyclic "
    "graph over the variables {names}: each variable is a nonlinear function of its direct "
    "causes and independent noise (the functions are unknown and differ from variable to "
    "variable; each variable is standardized and its marginal made close to normal). There are "
    "no hidden confounders and no feedback loops."
)

_LATENT_NONLINEAR_MODEL = (
    "A hidden structural causal model generated the data. Besides the variables {names} it has "
    "{latent} hidden variables that you never observe; each hidden variable is a common cause of "
    "exactly two observed variables that have no edge between them. Among the observed variables "
    "the causal graph is a directed acyclic graph: each variable is a nonlinear function of its "
    "direct causes, its hidden cause if it has one, and independent noise (the functions are "
    "unknown). A pair that shares a hidden cause is dependent without either causing the other; "
    "an intervention on one of them does not change the other."
)

_REAL_MODEL = (
    "The data are real measurements, not a simulation. Their causal graph is taken to be a "
    "directed acyclic graph over the variables {names}: a consensus graph from the literature, "
    "which is what you are scored against. The mechanisms are unknown (not necessarily linear "
    "or Gaussian)."
)

_PAIR_MODEL = (
    "The data are real measurements of two quantities, {names}, not a simulation. One of them "
    "causes the other: the causal graph is either X0 -> X1 or X1 -> X0, as known from how the "
    "data arose. The mechanism is unknown (not necessarily linear or Gaussian)."
)

_REAL_INTERVENE = (
    "- intervene(variable, value) runs a real experiment: it returns new measurements of all "
    "variables taken under a real perturbation of that variable (a reagent that inhibits or "
    "activates its activity). It is not a perfect intervention do(variable = value): the "
    "variable is not set to a value, the reagent may change its activity rather than its "
    "measured level, and it may affect other variables too. Experiments exist only for "
    "{targets}; any other variable is refused as an invalid call. The value is ignored, except "
    "on a variable with two experiments, where a negative value runs the one that lowers its "
    "activity and any other value the one that raises it. Each experiment returns measurements "
    "you have not seen before and uses one unit of the intervention budget. Using more "
    "interventions than necessary lowers the efficiency score."
)

_LATENT_SCORING = (
    " Pairs you list in bidirected_edges (a shared hidden cause) are scored by their own F1 "
    "against the true confounded pairs."
)

_SCORING = (
    "Scoring: your submission is compared with the true graph. The main score is the F1 of your "
    "directed edges against the true directed edges; the F1 of the adjacencies (ignoring "
    "direction) and the structural Hamming distance are also reported. An undirected edge "
    "counts as an adjacency but not as a directed edge."
)


_HYPOTHESIS = (
    "- With every intervene call, also state your current hypothesis of the whole graph, before "
    "seeing that experiment's result, in hypothesis_directed_edges and "
    "hypothesis_undirected_edges (the format of submit_graph). It is recorded to study how you "
    "revise your beliefs; it does not change the experiment or your score."
)


def task_prompt(
    variant: Variant,
    *,
    panel: Panel,
    n_nodes: int,
    state_hypothesis: bool = False,
    latent: int = 0,
    real_data: bool = False,
    experiment_targets: Sequence[int] | None = None,
    nonlinear: bool = False,
) -> str:
    """The system prompt of a variant; with ``state_hypothesis`` (active panel), one more line
    asking for the current hypothesis with every intervention. With ``latent`` hidden
    confounders (a latent level) the model description says so, ``submit_graph`` names its
    ``bidirected_edges`` and the scoring line their F1. On measured data (``real_data``, the
    env's ``info["real_data"]``) the model is described as real measurements and interventions
    as real experiments (a cause-effect pair: one of two directions); ``experiment_targets``
    (``info["experiment_targets"]``) lists the only variables an intervention may target. On a
    level of the nonlinear family (``nonlinear``, the env's ``info["nonlinear"]``) the mechanisms
    are described as nonlinear. Without these options the prompt is unchanged."""
    check_variant(variant)
    names = f"X0..X{n_nodes - 1}"
    if variant == "llm_corr_obs":
        return _corr_obs_prompt(names, _model_text(names, latent, real_data, n_nodes, nonlinear))
    lines = [
        "You are the policy in an active causal discovery task.",
        "",
        _model_text(names, latent, real_data, n_nodes, nonlinear)
        + " Your goal is to recover the graph.",
        "",
        "How the session works:",
        "- Every turn, call exactly one tool. Every call, valid or not, uses one step. When the "
        "step limit is reached the episode ends and the empty graph is scored.",
    ]
    if panel == PANEL_ACTIVE and (experiment_targets is None or len(experiment_targets)):
        lines.append(_intervene_line(real_data, experiment_targets))
        if state_hypothesis:
            lines.append(_HYPOTHESIS)
    elif panel == PANEL_ACTIVE:
        lines.append("- Interventions are not available on this level: no experiment exists.")
    else:
        lines.append(
            "- Interventions are not available in this session: you have observational data only."
        )
    if variant == "llm_stats":
        lines.append(_statistics_line(panel))
    submit = (
        "submit_graph(directed_edges, undirected_edges, bidirected_edges)"
        if latent
        else "submit_graph(directed_edges, undirected_edges)"
    )
    lines += [
        f"- {submit} submits your answer and ends the episode.",
        "- Invalid calls are reported back to you as errors and still use a step.",
        "",
        _SCORING + (_LATENT_SCORING if latent else ""),
    ]
    return "\n".join(lines)


def world_options(info: Mapping[str, Any]) -> dict[str, Any]:
    """What :func:`task_prompt` says about the world, from an env's ``reset`` info: its hidden
    confounders (``latent``), whether its data are measured (``real_data``), the nodes an
    experiment exists for where the level restricts them (``experiment_targets``) and whether
    its mechanisms are nonlinear (``nonlinear``)."""
    targets = info.get("experiment_targets")
    return {
        "latent": int(info.get("latent", 0)),
        "real_data": bool(info.get("real_data", 0)),
        "experiment_targets": None if targets is None else [int(t) for t in targets],
        "nonlinear": bool(info.get("nonlinear", 0)),
    }


def _model_text(
    names: str, latent: int, real_data: bool, n_nodes: int, nonlinear: bool = False
) -> str:
    """The paragraph that says what generated the data."""
    if real_data and n_nodes == 2:
        return _PAIR_MODEL.format(names="X0 and X1")
    if real_data:
        return _REAL_MODEL.format(names=names)
    if latent:
        model = _LATENT_NONLINEAR_MODEL if nonlinear else _LATENT_MODEL
        return model.format(names=names, latent=latent)
    return (_NONLINEAR_MODEL if nonlinear else _MODEL).format(names=names)


def _intervene_line(real_data: bool, experiment_targets: Sequence[int] | None) -> str:
    """The task prompt's line about ``intervene``: a perfect intervention, or a real experiment,
    and the variables it may target when the level restricts them."""
    targets = None if experiment_targets is None else _names(sorted(experiment_targets))
    if real_data:
        return _REAL_INTERVENE.format(targets=targets)
    line = (
        "- intervene(variable, value) performs a perfect intervention do(variable = value): "
        "the variable is set to value in every sample and no longer depends on its causes; "
        "every other variable keeps its own mechanism. It returns fresh samples of all "
        "variables and uses one unit of the intervention budget. Using more interventions "
        "than necessary lowers the efficiency score."
    )
    if targets is not None:
        line += f" Interventions exist only for {targets}; any other variable is refused."
    return line


def _statistics_line(panel: Panel) -> str:
    """The task prompt's line about the statistics tools, listing every registered tool."""
    names = statistics_tool_names()
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    verb = "computes" if len(names) == 1 else "compute"
    where = (
        "observational data (regime 0) or on the samples of your k-th intervention (regime k)."
        if panel == PANEL_ACTIVE
        else "observational data."
    )
    return f"- {listed} {verb} statistics on the {where}"


def _corr_obs_prompt(names: str, model: str) -> str:
    return "\n".join(
        [
            "You are assisting with causal structure learning from summary statistics.",
            "",
            model,
            "You are given only the sample standard deviations and the correlation matrix of an "
            "observational sample: no raw data and no experiments.",
            "",
            "Correlation does not imply causation. A correlation between two variables can come "
            "from a direct causal link in either direction, from a common cause, or from a chain "
            "through other variables, and observational correlations alone often cannot reveal "
            "the direction of an edge. Include an edge only between variables that you judge to "
            "be directly connected. Give an edge a direction only when the data clearly support "
            "it; when you are uncertain, leave the edge undirected.",
            "",
            "Respond with a single call to submit_graph(directed_edges, undirected_edges); it "
            "ends the episode.",
            "",
            _SCORING,
        ]
    )


# --------------------------------------------------------------------------- session prompts


def session_prompt(
    variant: Variant,
    *,
    observational: np.ndarray,
    panel: Panel,
    budget: int,
    max_steps: int,
    n_int: int,
    real_names: Sequence[str] | None = None,
) -> str:
    """The static first user message of an episode.

    Args:
        variant: the LLM variant.
        observational: the observational sample ``(n_obs, d)``.
        panel: ``"active"`` or ``"observational"``.
        budget: interventions allowed (ignored in the observational panel).
        max_steps: the step limit.
        n_int: samples returned by each intervention.
        real_names: each variable's real name (the ``named`` option on a real topology), given
            in a line after the variables; the tools keep ``X0 ..``. None (the default) names
            nothing, as the benchmark's protocol requires.
    """
    check_variant(variant)
    data = np.asarray(observational, dtype=np.float64)
    n_obs, n_nodes = data.shape
    names = variable_names(n_nodes)
    lines = [f"Variables (d = {n_nodes}): {', '.join(names)}"]
    if real_names is not None:
        if len(real_names) != n_nodes:
            raise ValueError(f"real_names must name {n_nodes} variables, got {len(real_names)}")
        pairs = ", ".join(f"{name} = {real}" for name, real in zip(names, real_names, strict=True))
        lines.append(f"The variables are measured quantities of a real system: {pairs}.")
    if variant == "llm_corr_obs":
        return "\n".join(
            [*lines, f"Step limit: {max_steps} tool calls.", "", *_summary_lines(data, names)]
        )
    if panel == PANEL_ACTIVE:
        lines.append(
            f"Intervention budget: {budget} interventions, each returning {n_int} samples; "
            f"values must lie in [{-VALUE_BOUND:g}, {VALUE_BOUND:g}]."
        )
    else:
        lines.append("Interventions: not available (observational panel).")
    lines += [
        f"Step limit: {max_steps} tool calls.",
        "",
        f"Observational data: {n_obs} samples, one row per sample (CSV, rounded to "
        f"{DATA_DECIMALS} decimals):",
        format_matrix(data, names),
    ]
    return "\n".join(lines)


def _summary_lines(data: np.ndarray, names: list[str]) -> list[str]:
    std = data.std(axis=0, ddof=1)
    corr = np.corrcoef(data, rowvar=False)
    return [
        f"Observational sample size: {data.shape[0]}",
        "",
        "Sample standard deviations:",
        ", ".join(f"{name}: {value:.3f}" for name, value in zip(names, std, strict=True)),
        "",
        "Correlation matrix (rounded to 3 decimals):",
        format_matrix(corr, names, decimals=3),
    ]


# --------------------------------------------------------------------------- tool results


def status_line(*, budget_remaining: int, steps_remaining: int, panel: Panel) -> str:
    """The budget and step counters appended to every tool result."""
    if panel == PANEL_ACTIVE:
        return f"[Budget remaining: {budget_remaining}. Steps remaining: {steps_remaining}.]"
    return f"[Steps remaining: {steps_remaining}.]"


def format_intervention(
    action: Intervene, *, experiment: int, samples: np.ndarray, real: bool = False
) -> str:
    """The result of a valid intervention: its regime number and its samples as text (a real
    experiment, on measured data, is named as one rather than as ``do()``)."""
    names = variable_names(samples.shape[1])
    what = intervention_text(action.var, action.value, real=real)
    return (
        f"Intervention {experiment} (use regime={experiment} in statistics tools): "
        f"{what}. {samples.shape[0]} samples (CSV, rounded to "
        f"{DATA_DECIMALS} decimals):\n{format_matrix(samples, names)}"
    )


def intervention_text(var: int, value: float, *, real: bool = False) -> str:
    """How a result names an intervention: ``do(X2 = 1.5)``, or on measured data ``the real
    experiment on X2 (value 1.5)``."""
    if real:
        return f"the real experiment on X{var} (value {value:g})"
    return f"do(X{var} = {value:g})"


def format_statistic(action: Action, *, statistic: float, p_value: float, regime_text: str) -> str:
    """The result of a valid statistics tool call as a sentence with numbers: the call, the
    data and the numbers as its spec words them (``correlation(X0, X1) on ...: r = ...``)."""
    if not isinstance(action, ToolAction):
        raise TypeError(f"not a statistics action: {action!r}")
    values = action.arguments
    call = ", ".join(f"X{values[name]}" for name in action.tool.node_fields)
    cond = values.get("cond", ())
    given = f" | {_names(cond)}" if cond else ""
    numbers = action.tool.result_text(statistic, p_value)
    return f"{action.tool.name}({call}{given}) on {regime_text}: {numbers}"


def no_tool_call_error(tool_names: Sequence[str]) -> str:
    """The error shown after a reply without a tool call."""
    return (
        "Error: your reply did not call a tool. Every turn you must call exactly one of "
        f"{list(tool_names)}. This turn used a step."
    )


def multiple_calls_error(n_calls: int) -> str:
    """The error shown for each call of a reply with more than one tool call."""
    return (
        f"Error: your reply made {n_calls} tool calls; call exactly one tool per turn. None of "
        "them was executed, and this turn used a step."
    )


def real_names(info: Mapping[str, Any]) -> list[str]:
    """The variables' real names from ``reset``'s ``info`` (``ACDBEnv(named=True)``).

    Raises:
        ValueError: the env was not made with ``named=True`` (its info has no names).
    """
    names = info.get("variable_names")
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError(
            "the named option needs an env made with named=True on a level over a real "
            "topology (its reset info then holds variable_names)"
        )
    return names
