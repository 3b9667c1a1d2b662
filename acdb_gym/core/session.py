"""The observe–intervene–submit session of one instance (DESIGN §5).

A :class:`Session` is the only way an agent touches an :class:`~acdb_gym.core.worlds.instance.Instance`:
it returns read-only copies of data, never the graph or the weights, and it refuses invalid
requests without changing any state or consuming budget.

>>> from acdb_gym.core.ladders.shipped import LADDERS
>>> session = Session(LADDERS["v0"]["L0"].instance(0))
>>> session.observe().shape
(500, 5)
>>> session.intervene(2, 1.0)[:, 2].tolist()[:3]
[1.0, 1.0, 1.0]
>>> session.budget_remaining == session.budget - 1
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from acdb_gym.core import statistic_tools, stats
from acdb_gym.core.graphs import ADMG, DAG, PAG, PDAG
from acdb_gym.core.scoring import ScoreReport, SubmissionTypeError, check_submission, score
from acdb_gym.core.types import FloatArray, is_integer, readonly
from acdb_gym.core.worlds.checks import check_target, check_value
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.core.worlds.sampler import sampler_for
from acdb_gym.core.worlds.soft import InterventionKind

__all__ = [
    "BudgetExhaustedError",
    "Experiment",
    "Regime",
    "Session",
    "SessionError",
    "SessionSealedError",
]

Regime = int | Literal["observational"] | None
"""Which data a statistics tool uses: ``None``/``"observational"`` or an experiment index."""


class SessionError(RuntimeError):
    """Base class of the session's protocol errors."""


class BudgetExhaustedError(SessionError):
    """An intervention was requested with no budget left."""


class SessionSealedError(SessionError):
    """The session was used after ``submit_graph``."""


@dataclass(frozen=True)
class Experiment:
    """One performed intervention on ``target`` with ``value`` and its samples (read-only):
    ``do(X_target = value)`` when ``kind`` is ``"hard"``, else the soft intervention ``kind``
    (:mod:`acdb_gym.core.worlds.soft`)."""

    index: int
    target: int
    value: float
    samples: FloatArray
    kind: InterventionKind = "hard"


class Session:
    """Budgeted access to one hidden instance.

    Args:
        instance: the hidden world.
        rng: generator for intervention samples; defaults to the instance's own intervention
            stream, so the same instance and the same requests give the same data.
    """

    def __init__(self, instance: Instance, rng: np.random.Generator | None = None) -> None:
        self._instance = instance
        self._rng = instance.intervention_rng() if rng is None else rng
        # Plain attributes for the intervention hot path (the properties read these too).
        self._sampler = sampler_for(instance.scm)
        self._n_nodes = instance.n_nodes
        self._n_int = instance.spec.n_int
        self._budget = instance.budget
        self._allowed = instance.intervention_targets
        self._row_shape = (self._n_int, self._n_nodes)
        # Experiment k: _targets[k], _values[k], _samples[k] (Experiment objects on request).
        self._targets: list[int] = []
        self._values: list[float] = []
        self._samples: list[FloatArray] = []
        self._kinds: list[InterventionKind] = []
        self._report: ScoreReport | None = None
        self._submission: PDAG | ADMG | PAG | None = None
        self._tool_calls = 0

    # ------------------------------------------------------------------ public state
    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        return self._n_nodes

    @property
    def n_obs(self) -> int:
        """Rows of the observational sample."""
        return self._instance.spec.n_obs

    @property
    def n_int(self) -> int:
        """Rows per intervention."""
        return self._n_int

    @property
    def budget(self) -> int:
        """The initial intervention budget ``B = |I*| + slack``."""
        return self._budget

    @property
    def budget_remaining(self) -> int:
        """Interventions still allowed."""
        return self._budget - len(self._targets)

    @property
    def interventions_used(self) -> int:
        """Interventions performed so far."""
        return len(self._targets)

    @property
    def tool_calls(self) -> int:
        """Successful statistics-tool calls so far."""
        return self._tool_calls

    @property
    def experiments(self) -> tuple[Experiment, ...]:
        """Performed interventions, in order."""
        return tuple(self._experiment(k) for k in range(len(self._targets)))

    @property
    def targets(self) -> tuple[int, ...]:
        """Intervened nodes, in order (repeats kept)."""
        return tuple(self._targets)

    @property
    def kinds(self) -> tuple[InterventionKind, ...]:
        """The kind of each performed intervention, in order."""
        return tuple(self._kinds)

    @property
    def sealed(self) -> bool:
        """True once a graph was submitted."""
        return self._report is not None

    @property
    def report(self) -> ScoreReport | None:
        """The score, once sealed."""
        return self._report

    @property
    def submission(self) -> PDAG | ADMG | PAG | None:
        """The submitted graph, once sealed (a DAG is kept as its fully directed PDAG)."""
        return self._submission

    def __repr__(self) -> str:
        return (
            f"Session(d={self.n_nodes}, budget={self.budget}, "
            f"used={self.interventions_used}, sealed={self.sealed})"
        )

    # ------------------------------------------------------------------ data
    def observe(self) -> FloatArray:
        """The observational sample ``(n_obs, d)``, as a read-only copy."""
        self._check_open()
        return readonly(self._instance.d_obs.copy())

    def intervene(
        self,
        var: int,
        value: float,
        *,
        kind: InterventionKind = "hard",
        out: FloatArray | None = None,
    ) -> FloatArray:
        """Draw ``n_int`` fresh samples under ``do(X_var = value)`` and spend one unit of budget.

        Args:
            var: the target node.
            value: the value it is set to (a finite real number).
            kind: ``"hard"`` (``do(X_var = value)``, the default), or a soft intervention that
                keeps ``X_var``'s mechanism: ``"shift"`` adds ``value`` to it, ``"scale"``
                multiplies its noise by ``clip(|value|, 0.1, 10)``
                (:mod:`acdb_gym.core.worlds.soft`).
            out: a writable C-contiguous float64 ``(n_int, d)`` array, owned by the caller, to
                draw the samples into (the Gymnasium env draws straight into its observation
                block this way). The session keeps it as the experiment's samples (and hands
                it out read-only), so the caller must never write to it again.

        Returns:
            The samples: a read-only copy, or ``out`` itself when it is given. Either way
            :attr:`experiments` records them.

        Raises:
            SessionSealedError: after ``submit_graph``.
            ValueError: ``var`` out of range or without an experiment on a level that restricts
                the targets (``Instance.intervention_targets``), ``value`` not finite, an unknown
                ``kind``, a soft ``kind`` on measured data, or a bad ``out``.
            BudgetExhaustedError: no budget left.

        An invalid request changes nothing: no budget, no random draws, ``out`` untouched.
        """
        if self._report is not None:
            self._check_open()
        if type(var) is not int:
            var = self._check_node(var, "var")
        else:
            check_target(var, self._n_nodes)
        if self._allowed is not None and var not in self._allowed:
            raise ValueError(self._no_experiment(var))
        if type(value) is not float:
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise ValueError(f"value must be a real number, got {value!r}")
            value = float(value)
        check_value(value)
        targets = self._targets
        if len(targets) >= self._budget:
            raise BudgetExhaustedError(
                f"intervention budget of {self._budget} is spent; cannot intervene on X{var}"
            )
        if out is not None and (
            out.shape != self._row_shape
            or out.dtype != np.float64
            or not (flags := out.flags).writeable
            or not flags.c_contiguous
        ):
            raise ValueError(
                f"out must be a writable C-contiguous float64 array of shape {self._row_shape}"
            )
        if kind == "hard":
            samples = self._sampler.draw(var, value, self._n_int, self._rng, out)
        elif kind == "shift" or kind == "scale":
            # Measured data refuse a soft kind before drawing anything.
            samples = self._instance.scm.sample_soft(
                kind, var, value, self._n_int, self._rng, out=out
            )
        else:
            raise ValueError(f"kind must be 'hard', 'shift' or 'scale', got {kind!r}")
        self._kinds.append(kind)
        self._samples.append(samples)
        self._values.append(value)
        targets.append(var)
        return readonly(samples.copy()) if out is None else samples

    def _no_experiment(self, var: int) -> str:
        allowed = sorted(self._allowed or ())
        if not allowed:
            return f"X{var} has no experiment: no intervention is possible on this level"
        listed = ", ".join(f"X{v}" for v in allowed)
        return f"X{var} has no experiment on this level; experiments exist for {listed}"

    @property
    def intervention_targets(self) -> frozenset[int] | None:
        """The nodes an intervention may target, or None when any node may be."""
        return self._allowed

    def _experiment(self, index: int) -> Experiment:
        return Experiment(
            index,
            self._targets[index],
            self._values[index],
            self._samples_of(index),
            self._kinds[index],
        )

    def _samples_of(self, index: int) -> FloatArray:
        samples = self._samples[index]
        samples.flags.writeable = False
        return samples

    # ------------------------------------------------------------------ statistics tools
    def run_tool(
        self, name: str, arguments: Mapping[str, Any], *, regime: Regime = None
    ) -> statistic_tools.ToolResult:
        """Call the registered statistics tool ``name`` (:mod:`acdb_gym.core.statistic_tools`).

        Args:
            name: the tool, e.g. ``"partial_correlation"``.
            arguments: its fields but ``regime``: ``{"i": 0, "j": 1, "cond": (2,)}``.
            regime: the data: ``None``/``"observational"`` or an experiment index.

        Returns:
            The tool's ``(statistic, p_value)``.

        Raises:
            SessionSealedError: after ``submit_graph``.
            ValueError: an unknown tool, missing or unexpected arguments, a bad node, ``cond``
                entry or regime, or whatever the tool rejects (naming the value).
        """
        tool = statistic_tools.get_tool(name)
        if "regime" not in tool.fields and regime is not None:
            raise ValueError(f"{name} always uses the observational data, got regime {regime!r}")
        data = self._regime_data(regime)
        result = tool.compute(data, **self._check_tool_arguments(tool, arguments))
        self._tool_calls += 1
        return result

    def correlation(self, i: int, j: int, *, regime: Regime = None) -> float:
        """Pearson correlation of ``X_i`` and ``X_j``."""
        data = self._regime_data(regime)
        result = stats.correlation(data, self._check_node(i, "i"), self._check_node(j, "j"))
        self._tool_calls += 1
        return result

    def partial_correlation(
        self, i: int, j: int, cond: Sequence[int] = (), *, regime: Regime = None
    ) -> float:
        """Partial correlation of ``X_i`` and ``X_j`` given ``X_cond``."""
        data = self._regime_data(regime)
        result = stats.partial_correlation(
            data, self._check_node(i, "i"), self._check_node(j, "j"), self._check_cond(cond)
        )
        self._tool_calls += 1
        return result

    def independence_test(
        self,
        i: int,
        j: int,
        cond: Sequence[int] = (),
        *,
        alpha: float = statistic_tools.INDEPENDENCE_ALPHA,
        regime: Regime = None,
    ) -> stats.IndependenceTest:
        """Fisher-z test of ``X_i ⊥ X_j | X_cond``: statistic, p-value and decision."""
        data = self._regime_data(regime)
        result = stats.fisher_z_test(
            data,
            self._check_node(i, "i"),
            self._check_node(j, "j"),
            self._check_cond(cond),
            alpha=alpha,
        )
        self._tool_calls += 1
        return result

    def _check_tool_arguments(
        self, tool: statistic_tools.StatisticTool, arguments: Mapping[str, Any]
    ) -> dict[str, Any]:
        expected = [field for field in tool.fields if field != "regime"]
        if not isinstance(arguments, Mapping) or sorted(arguments) != sorted(expected):
            got = sorted(arguments) if isinstance(arguments, Mapping) else arguments
            raise ValueError(f"{tool.name} takes the arguments {expected}, got {got!r}")
        # Checked in the order of the fields, as the typed methods above check theirs.
        return {
            field: (
                self._check_cond(arguments[field])
                if field == "cond"
                else self._check_node(arguments[field], field)
            )
            for field in expected
        }

    # ------------------------------------------------------------------ submission
    def submit_graph(
        self,
        graph: PDAG | DAG | ADMG | PAG,
        *,
        stated: Sequence[PDAG | DAG | None] | None = None,
    ) -> ScoreReport:
        """Validate, score and seal. Invalid graphs raise ValueError and leave the session open.

        An :class:`~acdb_gym.core.graphs.admg.ADMG` (bidirected edges) or a
        :class:`~acdb_gym.core.graphs.admg.PAG` (circle marks) is accepted on a level with
        hidden confounders only; a causally sufficient level refuses it (DESIGN §6.3).
        ``stated`` holds the graph the agent held before each experiment (None where it stated
        none), from which the report's ``anytime_f1`` is computed (DESIGN §6).
        """
        self._check_open()
        if self._instance.latent_truth is None or not isinstance(graph, ADMG | PAG):
            if isinstance(graph, ADMG | PAG):
                raise SubmissionTypeError(
                    f"this level is causally sufficient: a {type(graph).__name__} (bidirected "
                    "edges or circle marks) cannot be scored here; submit a PDAG or a DAG"
                )
            graph = check_submission(graph, self._n_nodes)
        elif graph.n_nodes != self._n_nodes:
            raise ValueError(
                f"submission has {graph.n_nodes} nodes but the true graph has {self._n_nodes}"
            )
        report = score(
            self._instance,
            graph,
            interventions_used=self.interventions_used,
            targets=self.targets,
            stated=stated,
            budget=self.budget,
        )
        self._submission = graph
        self._report = report
        return report

    # ------------------------------------------------------------------ validation
    def _check_open(self) -> None:
        if self._report is not None:
            raise SessionSealedError("the session is sealed: a graph was already submitted")

    def _check_node(self, node: object, name: str) -> int:
        if not is_integer(node):
            raise ValueError(f"{name} must be an integer node index, got {node!r}")
        if not 0 <= int(node) < self.n_nodes:
            raise ValueError(f"{name} must be in [0, {self.n_nodes}), got {node}")
        return int(node)

    def _check_cond(self, cond: Sequence[int]) -> tuple[int, ...]:
        return tuple(self._check_node(c, "cond entry") for c in cond)

    def _regime_data(self, regime: Regime) -> FloatArray:
        self._check_open()
        if regime is None or regime == "observational":
            return self._instance.d_obs
        if isinstance(regime, bool) or not isinstance(regime, int | np.integer):
            raise ValueError(
                f"regime must be 'observational' or an experiment index, got {regime!r}"
            )
        if not 0 <= int(regime) < len(self._targets):
            raise ValueError(
                f"regime must be an experiment index in [0, {len(self._targets)}), got {regime}"
            )
        return self._samples_of(int(regime))
