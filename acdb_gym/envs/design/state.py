"""The estimator state of one design episode (:class:`DesignState`), built from data alone, and
the orientation rule's detectable shift for a level's worlds (DESIGN §8, "The design env's
estimator").

Both design envs (:mod:`acdb_gym.envs.design.env`, :mod:`acdb_gym.envs.design.vector`), the RL
agent on ``ACDBEnv`` and the headroom and replay tools (:mod:`acdb_gym.baselines.headroom`) keep
their estimate in it, so they orient by the same code.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery import greedy_interventional_search
from acdb_gym.discovery.orientation import DETECTABLE_SHIFT, OrientationRule
from acdb_gym.envs.design.cache import summary_of

__all__ = [
    "BIC_PENALTY",
    "DETECTABLE_SHIFTS",
    "SHIFT_CLIP",
    "DesignState",
    "detectable_shift_for",
]

BIC_PENALTY = 2.0
"""The ``"bic"`` estimator's penalty multiplier (``bic_active``'s default)."""

DETECTABLE_SHIFTS: dict[str, float] = {
    "linear_gaussian": DETECTABLE_SHIFT,
    "linear_nongaussian": DETECTABLE_SHIFT,
    "nonlinear": 0.25,
}
"""The shift (observational sds) a test must be able to see before its finding nothing orients
an edge (the ``"power"`` rule), by family, at a 3-sd intervention: about the 10th percentile of
a true child's mean shift on the development worlds (linear families 0.8-1.7 by level,
nonlinear 0.2-0.4; DESIGN §8). Fitted worlds use the nonlinear value."""

SHIFT_CLIP = 10.0


def detectable_shift_for(spec: LevelSpec, shift: float) -> float:
    """The ``"power"`` rule's detectable shift for a level's worlds under a ``shift``-sd
    intervention: :data:`DETECTABLE_SHIFTS` of its family (fitted worlds: the nonlinear
    value), scaled by ``|shift| / 3`` (exact for linear worlds)."""
    family = "nonlinear" if spec.fit != "none" else spec.family
    return DETECTABLE_SHIFTS.get(family, DETECTABLE_SHIFT) * abs(shift) / 3.0


class DesignState:
    """The estimator state of one design episode, built from data alone.

    It holds what :class:`InterventionDesignEnv` derives from the observational sample and the
    experiments so far (means, standard deviations, correlations, the starting graph, the
    current estimate, the per-experiment shifts) and encodes the flat observation. It never
    sees the hidden instance, so an agent acting through
    :class:`~acdb_gym.envs.acdb_env.ACDBEnv` can rebuild the design env's observation from the
    same data (given the same starting graph, e.g. ``pc_cpdag(observational)``).

    Args:
        observational: observational samples, shape ``(n_obs, d)``.
        start: the estimator's starting graph over ``d`` nodes (PC's CPDAG, the true CPDAG, or
            the ``"bic"`` estimator's graph of the observational data).
        shift: intervention value in observational standard deviations above the mean.
        alpha: significance level of the orientation tests.
        rule: how a test that finds no shift is read
            (:data:`~acdb_gym.discovery.orientation.OrientationRule`; default ``"power"``:
            only when it had the power to see ``detectable_shift``).
        detectable_shift: the shift the ``"power"`` rule asks a test to be able to see.
        pooled: the ``"bic"`` estimator: every estimate is the interventional essential graph
            of a greedy search on the BIC of all data pooled (warm-started from the last),
            and the shift tests only feed the observation's shift features.
    """

    def __init__(
        self,
        observational: ArrayLike,
        start: PDAG,
        *,
        shift: float = 3.0,
        alpha: float = 0.01,
        rule: OrientationRule = "power",
        detectable_shift: float = DETECTABLE_SHIFT,
        pooled: bool = False,
    ) -> None:
        data = np.asarray(observational, dtype=np.float64)
        if data.ndim != 2 or data.shape[1] != start.n_nodes:
            raise ValueError(
                f"observational must have shape (n_obs, {start.n_nodes}), got {data.shape}"
            )
        self.n_nodes = start.n_nodes
        self.shift = float(shift)
        self.alpha = float(alpha)
        self.rule: OrientationRule = rule
        self.detectable_shift = float(detectable_shift)
        self.pooled = bool(pooled)
        self._data = data
        # Everything derived from the sample alone is computed once per sample (an RL run
        # resets on the same instances again and again); the orienter is this episode's copy.
        summary = summary_of(data, start, self.alpha, rule, self.detectable_shift)
        self._mean = summary.mean
        self._sd = summary.sd
        self._corr = summary.correlations
        self._start = start
        self._orienter = summary.orienter.copy()
        self._shifts = np.zeros((self.n_nodes, self.n_nodes), dtype=np.float32)
        self._experiments: list[tuple[int, np.ndarray]] = []
        self._before: list[PDAG] = []
        self._pooled_estimate: PDAG | None = None
        self._pooled_dag: DAG | None = None

    @property
    def start(self) -> PDAG:
        """The estimator's starting graph."""
        return self._start

    @property
    def estimate(self) -> PDAG:
        """The current estimate: the starting graph with edges at intervened nodes oriented by
        the shift tests, closed under Meek's rules (the starting graph before any experiment);
        with ``pooled``, the pooled search's interventional essential graph."""
        if not self._experiments:
            return self._start
        if self._pooled_estimate is not None:
            return self._pooled_estimate
        return self._orienter.graph

    @property
    def targets(self) -> tuple[int, ...]:
        """Intervened nodes, in order (repeats kept)."""
        return tuple(target for target, _ in self._experiments)

    @property
    def stated(self) -> tuple[PDAG, ...]:
        """The estimate held before each experiment, in order (what the anytime F1 reads)."""
        return tuple(self._before)

    def intervention_value(self, target: int) -> float:
        """The value of ``do(X_target = mean + shift * sd)`` (observational mean and sd)."""
        return float(self._mean[target] + self.shift * self._sd[target])

    def add_experiment(self, target: int, samples: ArrayLike) -> None:
        """Record the samples of an intervention on ``target`` and update the estimate."""
        if not 0 <= target < self.n_nodes:
            raise ValueError(f"target must be in [0, {self.n_nodes}), got {target}")
        values = np.asarray(samples, dtype=np.float64)
        self._before.append(self.estimate)
        shift = np.abs(values.mean(axis=0) - self._mean) / np.where(self._sd > 0, self._sd, 1.0)
        shift[target] = 0.0
        self._shifts[target] = np.minimum(shift, SHIFT_CLIP) / SHIFT_CLIP
        self._experiments.append((int(target), values))
        if not self.pooled:
            self._orienter.add(target, values)
            return
        # Searched at once, warm-started from the last search, so the estimate never depends
        # on when it is read.
        result = greedy_interventional_search(
            self._data, self._experiments, penalty=BIC_PENALTY, start=self._pooled_dag
        )
        self._pooled_dag, self._pooled_estimate = result.dag, result.essential_graph

    def observation(self, *, budget_remaining: int, budget: int) -> np.ndarray:
        """The flat observation (see :class:`InterventionDesignEnv`); the budget fraction is
        ``budget_remaining / budget``, or 0 when ``budget`` is 0."""
        estimate = self.estimate
        n, cells, start = self.n_nodes, self.n_nodes**2, self._corr.size
        # Written in place: correlations, graph (1 directed, 0.5 undirected: exact in float32),
        # intervened flags, shifts, budget fraction.
        out = np.empty(start + 2 * cells + n + 1, dtype=np.float32)
        out[:start] = self._corr
        graph = out[start : start + cells].reshape(n, n)
        graph[...] = estimate.directed
        graph += np.float32(0.5) * estimate.undirected
        start += cells
        out[start : start + n] = 0.0
        out[[start + target for target, _ in self._experiments]] = 1.0
        start += n
        out[start : start + cells] = self._shifts.ravel()
        out[-1] = budget_remaining / budget if budget else 0.0
        return out
