"""The interventional BIC on a mechanism class's features: a score that knows the generator's
functions (DESIGN §7, "Frontier ladder": the reachability reference).

:class:`~acdb_gym.discovery.bic_search.InterventionalBIC` regresses every node linearly on its
parents, which is the right model for the linear families and the wrong one for the nonlinear
family (DESIGN §3.1), whose mechanisms are sums of per-parent shapes (``tanh``, ``sin``,
``softplus``, ``square`` of ``2x``, or ``x * x``) or small tanh networks. :class:`FeatureBIC` is
the same decomposable score with each parent replaced by a group of **features**, the parent's
value passed through every function of a dictionary (:data:`CLASS_FEATURES`): node ``j`` with
parents ``P`` is a least-squares regression on the ``m |P|`` feature columns of ``P`` with an
intercept, fitted on the pooled rows of every regime in which ``j`` was not intervened, and

    score_j(P) = loglik_j(P) - penalty * (m |P| + 2) * log(n_j) / 2.

With the one feature ``identity`` it equals ``InterventionalBIC`` (up to the last bits). The
search is :func:`~acdb_gym.discovery.bic_search.hill_climb`'s; the result is the
interventional essential graph of the best DAG for the intervened targets, as for
``bic_active``. Every move is scored from one centred scatter matrix per node over all feature
columns: adding parent ``i`` to ``P`` is a ``m x m`` solve on the scatter's Schur complement on
``P``'s columns; removing one is a solve on ``P``'s columns without it.

>>> rng = np.random.default_rng(0)
>>> x0 = rng.normal(size=3000)
>>> x1 = x0**2 + 0.3 * rng.normal(size=3000)  # no linear correlation with x0
>>> data = np.column_stack([x0, x1])
>>> linear = FeatureBIC(data, [], features=("identity",))
>>> shaped = FeatureBIC(data, [], features=CLASS_FEATURES["nonlinear"])
>>> bool(linear.local_score(1, [0]) < linear.local_score(1, []))  # the linear score misses it
True
>>> bool(shaped.local_score(1, [0]) > shaped.local_score(1, []))  # the class's features see it
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import DAG, essential_graph
from acdb_gym.core.types import BoolMatrix, FloatArray
from acdb_gym.discovery._common import as_data_matrix, check_experiment, checked_node
from acdb_gym.discovery.bic_search import ScoreSearchResult, hill_climb

__all__ = [
    "CLASS_FEATURES",
    "FEATURES",
    "FeatureBIC",
    "class_interventional_search",
    "feature_columns",
]

FEATURES: Final = ("identity", "tanh", "sin", "softplus", "square")
"""The feature functions a :class:`FeatureBIC` may use: ``x``, and the nonlinear family's four
per-parent shapes (``tanh(2x)``, ``sin(2x)``, ``softplus(2x)``, ``x * x``; DESIGN §3.1)."""

CLASS_FEATURES: Final[dict[str, tuple[str, ...]]] = {
    "linear_gaussian": ("identity",),
    "linear_nongaussian": ("identity",),
    "nonlinear": FEATURES,
}
"""Each SCM family's mechanism class as features: linear for the linear families; for the
nonlinear family the identity and its shape dictionary (its tanh networks are not additive;
their main effects are what these features fit)."""

_MIN_ROWS: Final = 3
_RIDGE: Final = 1e-9
"""Relative ridge on each feature block, so collinear features (``x`` and ``softplus(2x)``
for large ``x``) never make a solve singular."""


def feature_columns(values: FloatArray, features: Sequence[str]) -> FloatArray:
    """``(n, d * m)``: every column of ``values`` ``(n, d)`` through each of the ``m`` features,
    node-major (columns ``j * m .. j * m + m - 1`` belong to node ``j``).

    Raises:
        ValueError: an unknown feature name.
    """
    blocks = []
    for name in features:
        if name == "identity":
            blocks.append(values)
        elif name == "tanh":
            blocks.append(np.tanh(2.0 * values))
        elif name == "sin":
            blocks.append(np.sin(2.0 * values))
        elif name == "softplus":
            blocks.append(np.logaddexp(0.0, 2.0 * values))
        elif name == "square":
            blocks.append(values * values)
        else:
            raise ValueError(f"feature must be one of {list(FEATURES)}, got {name!r}")
    stacked = np.stack(blocks, axis=-1)  # (n, d, m)
    return stacked.reshape(values.shape[0], -1)


class FeatureBIC:
    """The decomposable interventional BIC with each parent entered through ``features``.

    Args:
        observational: observational samples, shape ``(n_obs, d)``.
        experiments: ``(target, samples)`` pairs, samples ``(n_int, d)``; the rows of an
            experiment on ``t`` count for every node but ``t`` (a hard or soft intervention
            changes ``t``'s mechanism and no other).
        features: names from :data:`FEATURES` (at least one, no repeats).
        penalty: multiplier of the BIC penalty; positive and finite.

    Raises:
        ValueError: bad data, a target outside ``[0, d)``, a node with fewer than 3 rows where
            it was not intervened, unknown or repeated features, or a bad penalty.
    """

    def __init__(
        self,
        observational: ArrayLike,
        experiments: Sequence[tuple[int, ArrayLike]],
        *,
        features: Sequence[str] = ("identity",),
        penalty: float = 1.0,
    ) -> None:
        if not (np.isfinite(penalty) and penalty > 0):
            raise ValueError(f"penalty must be positive and finite, got {penalty}")
        names = tuple(features)
        if not names or len(set(names)) != len(names) or not set(names) <= set(FEATURES):
            raise ValueError(f"features must be distinct names from {list(FEATURES)}, got {names}")
        obs = as_data_matrix(observational, "observational")
        d = obs.shape[1]
        regimes: list[tuple[int | None, FloatArray]] = [(None, obs)]
        regimes += [check_experiment(item, index, d) for index, item in enumerate(experiments)]
        self.features = names
        self.penalty = float(penalty)
        self.targets: tuple[int, ...] = tuple(t for t, _ in regimes[1:] if t is not None)
        self._m = len(names)
        self._counts, self._scatter = self._statistics(regimes, d)

    def _statistics(
        self, regimes: Sequence[tuple[int | None, FloatArray]], d: int
    ) -> tuple[FloatArray, FloatArray]:
        """Row counts ``(d,)`` and, per node, the centred scatter ``(d, F + 1, F + 1)`` of all
        ``F = d * m`` feature columns and the node's own value (last)."""
        width = d * self._m
        counts = np.zeros(d)
        sums = np.zeros((d, width + 1))
        products = np.zeros((d, width + 1, width + 1))
        for target, data in regimes:
            columns = feature_columns(data, self.features)
            block = columns.T @ columns
            totals = columns.sum(axis=0)
            for node in range(d):
                if node == target:
                    continue
                own = data[:, node]
                counts[node] += data.shape[0]
                sums[node, :width] += totals
                sums[node, width] += own.sum()
                products[node, :width, :width] += block
                cross = columns.T @ own
                products[node, :width, width] += cross
                products[node, width, :width] += cross
                products[node, width, width] += own @ own
        short = np.flatnonzero(counts < _MIN_ROWS)
        if short.size:
            node = int(short[0])
            raise ValueError(
                f"X{node} needs at least {_MIN_ROWS} rows in which it is not intervened, "
                f"got {int(counts[node])}"
            )
        means = sums / counts[:, None]
        scatter = products - counts[:, None, None] * means[:, :, None] * means[:, None, :]
        return counts, scatter

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        return int(self._counts.size)

    def _columns(self, parents: Sequence[int]) -> np.ndarray:
        m = self._m
        return np.array([p * m + f for p in parents for f in range(m)], dtype=np.int64)

    def _rss(self, node: int, parents: Sequence[int]) -> float:
        scatter = self._scatter[node]
        rss = float(scatter[-1, -1])
        if len(parents):
            columns = self._columns(parents)
            block = scatter[np.ix_(columns, columns)]
            ridge = _RIDGE * np.trace(block) / columns.size
            cross = scatter[columns, -1]
            rss -= float(cross @ np.linalg.solve(block + ridge * np.eye(columns.size), cross))
        return rss

    def _term(self, node: int, rss: FloatArray | float, n_parents: int) -> FloatArray:
        n = self._counts[node]
        floor = 1e-12 * self._scatter[node, -1, -1] / n
        variance = np.maximum(np.asarray(rss, dtype=float) / n, floor)
        loglik = -0.5 * n * (np.log(2.0 * np.pi * variance) + 1.0)
        return np.asarray(
            loglik - self.penalty * 0.5 * np.log(n) * (self._m * n_parents + 2), dtype=float
        )

    def local_score(self, node: int, parents: Sequence[int] | np.ndarray) -> float:
        """Score term of ``node`` with parent set ``parents``.

        Raises:
            ValueError: a node or parent outside ``[0, d)``, or ``node`` among its parents.
        """
        node = checked_node(node, self.n_nodes)
        chosen = sorted({checked_node(int(p), self.n_nodes) for p in np.asarray(parents).ravel()})
        if node in chosen:
            raise ValueError(f"X{node} cannot be its own parent")
        return float(self._term(node, self._rss(node, chosen), len(chosen)))

    def score(self, dag: DAG) -> float:
        """Total score of ``dag``.

        Raises:
            ValueError: ``dag`` has a different number of nodes.
        """
        if dag.n_nodes != self.n_nodes:
            raise ValueError(f"dag must have {self.n_nodes} nodes, got {dag.n_nodes}")
        return float(sum(self.local_score(j, dag.parents(j)) for j in range(self.n_nodes)))

    def move_gains(self, node: int, parents: BoolMatrix) -> tuple[FloatArray, FloatArray]:
        """Score changes of adding or removing each single parent of ``node`` (the protocol of
        :func:`~acdb_gym.discovery.bic_search.hill_climb`; ``-inf`` where a move does not
        apply)."""
        node = checked_node(node, self.n_nodes)
        mask = np.asarray(parents, dtype=np.bool_)
        if mask.shape != (self.n_nodes,):
            raise ValueError(f"parents must be a mask of shape ({self.n_nodes},), got {mask.shape}")
        current = [int(p) for p in np.flatnonzero(mask)]
        base = float(self._term(node, self._rss(node, current), len(current)))
        add = self._add_gains(node, current, mask) - base
        remove = np.full(self.n_nodes, -np.inf)
        for parent in current:
            rest = [p for p in current if p != parent]
            remove[parent] = float(self._term(node, self._rss(node, rest), len(rest))) - base
        return add, remove

    def _add_gains(self, node: int, current: list[int], mask: BoolMatrix) -> FloatArray:
        """The score of ``node`` with each candidate parent added (``-inf`` for non-candidates),
        from the Schur complement of the node's scatter on the current parents' columns."""
        scatter = self._scatter[node]
        if current:
            columns = self._columns(current)
            block = scatter[np.ix_(columns, columns)]
            ridge = _RIDGE * np.trace(block) / columns.size
            solved = np.linalg.solve(block + ridge * np.eye(columns.size), scatter[columns, :])
            partial = scatter - scatter[:, columns] @ solved
        else:
            partial = scatter
        d, m = self.n_nodes, self._m
        candidates = ~mask
        candidates[node] = False
        nodes = np.flatnonzero(candidates)
        scores = np.full(d, -np.inf)
        if not nodes.size:
            return scores
        index = nodes[:, None] * m + np.arange(m)[None, :]  # (c, m)
        blocks = partial[index[:, :, None], index[:, None, :]]  # (c, m, m)
        cross = partial[index, -1]  # (c, m)
        traces = np.trace(blocks, axis1=1, axis2=2) / m
        scale = np.maximum(traces, 1e-300) * _RIDGE
        regularized = blocks + scale[:, None, None] * np.eye(m)[None]
        solved = np.linalg.solve(regularized, cross[:, :, None])[:, :, 0]
        rss = partial[-1, -1] - np.einsum("cm,cm->c", cross, solved)
        scores[nodes] = self._term(node, rss, len(current) + 1)
        return scores


def class_interventional_search(
    observational: ArrayLike,
    experiments: Sequence[tuple[int, ArrayLike]],
    *,
    features: Sequence[str],
    penalty: float = 1.0,
    start: DAG | None = None,
    tabu_steps: int = 30,
    restarts: int = 3,
) -> ScoreSearchResult:
    """The interventional essential graph of the DAG that maximises :class:`FeatureBIC`.

    Args:
        observational: observational samples ``(n_obs, d)``.
        experiments: ``(target, samples)`` pairs.
        features: the mechanism class as feature names (:data:`CLASS_FEATURES`).
        penalty: the BIC penalty multiplier.
        start: initial DAG of the search (default: the empty graph).
        tabu_steps, restarts: see :func:`~acdb_gym.discovery.bic_search.hill_climb`.

    Raises:
        ValueError: as :class:`FeatureBIC` and ``hill_climb``.
    """
    score = FeatureBIC(observational, experiments, features=features, penalty=penalty)
    dag = hill_climb(score, start=start, tabu_steps=tabu_steps, restarts=restarts)
    targets = tuple(sorted(set(score.targets)))
    return ScoreSearchResult(dag, essential_graph(dag, targets), score.score(dag), targets)
