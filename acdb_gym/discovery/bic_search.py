"""Greedy search on the interventional Gaussian BIC, from observational plus interventional data.

The score is the Gaussian BIC for single-node hard interventions that GIES uses (Hauser &
Bühlmann 2012): every node ``j`` is a linear regression on its parents with an intercept and
Gaussian noise, fitted on the pooled rows of every regime in which ``j`` was *not* intervened
(a hard intervention replaces ``j``'s mechanism, so the rows where ``j`` was set carry no
information about it). The score decomposes over nodes::

    BIC(G) = sum_j [ loglik_j(Pa_G(j)) - penalty * (|Pa_G(j)| + 2) * log(n_j) / 2 ]

with ``n_j`` the number of rows in which ``j`` was not a target.

Only the score is GIES's; the search is not (the real GIES, a greedy search over
interventional essential graphs, is measured against this one in
``benchmarks/bic_search_vs_gies.py``). It is a greedy hill climb over DAGs (:func:`hill_climb`:
add, delete or reverse one edge, always the best-scoring move), a tabu phase that may take
worsening moves to leave a plateau or local optimum (never revisiting a DAG), and a few restarts
from randomly perturbed copies of the best DAG, keeping the best DAG seen. The result is
returned as the interventional essential graph of that DAG for the intervened targets
(:func:`acdb_gym.core.graphs.essential_graph`): what the data can identify about the DAG, so
orientations the score cannot tell apart stay undirected.

Every move is scored in closed form. For node ``j`` with parents ``P`` and scatter matrix ``S``
of its rows, ``RSS(P) = S_jj - S_jP S_PP^{-1} S_Pj``; the Schur complement of ``S`` on ``P``
gives the RSS of every ``P + {i}`` at once, and the inverse of ``S`` on ``P + {j}`` the RSS of
every ``P - {i}``. A move changes one or two parent sets, so only those columns are rescored.

>>> rng = np.random.default_rng(0)
>>> x0 = rng.normal(size=2000)
>>> x1 = x0 + rng.normal(size=2000)
>>> x2 = x1 + rng.normal(size=2000)
>>> result = greedy_interventional_search(np.column_stack([x0, x1, x2]), [])
>>> result.essential_graph.undirected_edges()
[(0, 1), (1, 2)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import DAG, PDAG, essential_graph, has_directed_path, reachability
from acdb_gym.core.types import BoolMatrix, FloatArray
from acdb_gym.discovery._common import as_data_matrix, check_experiment, checked_node

__all__ = [
    "DecomposableScore",
    "InterventionalBIC",
    "ScoreSearchResult",
    "greedy_interventional_search",
    "hill_climb",
]

_MIN_GAIN = 1e-9
"""Moves must improve the score by more than this (BIC is flat within equivalence classes)."""

_MIN_ROWS = 3
"""Each node needs this many rows where it was not intervened (a mean and a variance)."""

_MIN_VARIANCE = 1e-12
"""Relative floor for residual scatters, so that exact fits do not give ``log(0)``."""


class DecomposableScore(Protocol):
    """What :func:`hill_climb` needs of a score: its size, a DAG's total and the gains of
    single-parent moves (:class:`InterventionalBIC`;
    :class:`~acdb_gym.discovery.class_bic.FeatureBIC`)."""

    @property
    def n_nodes(self) -> int:
        """Number of variables."""
        ...

    def score(self, dag: DAG) -> float:
        """The total score of ``dag``."""
        ...

    def move_gains(self, node: int, parents: BoolMatrix) -> tuple[FloatArray, FloatArray]:
        """``(add, remove)`` gains of each single parent of ``node``."""
        ...


class InterventionalBIC:
    """The decomposable Gaussian BIC for observational data plus single-node hard interventions.

    Args:
        observational: observational samples, shape ``(n_obs, d)``.
        experiments: ``(target, samples)`` pairs, samples of shape ``(n_int, d)``. Rows of
            experiment ``(t, ...)`` count for every node but ``t``. Repeated targets are pooled.
        penalty: multiplier of the BIC penalty ``log(n_j) / 2`` per parameter; positive and
            finite (1 is the BIC).

    Raises:
        ValueError: a bad penalty, samples of the wrong shape or with non-finite values, a
            target outside ``[0, d)``, or a node with fewer than 3 rows in which it was not
            intervened.

    >>> data = np.random.default_rng(1).normal(size=(100, 2))
    >>> score = InterventionalBIC(data, [])
    >>> score.local_score(1, [0]) < score.local_score(1, [])  # an independent parent costs
    True
    """

    def __init__(
        self,
        observational: ArrayLike,
        experiments: Sequence[tuple[int, ArrayLike]],
        *,
        penalty: float = 1.0,
    ) -> None:
        if not (np.isfinite(penalty) and penalty > 0):
            raise ValueError(f"penalty must be positive and finite, got {penalty}")
        obs = as_data_matrix(observational, "observational")
        n_nodes = obs.shape[1]
        checked = [check_experiment(item, i, n_nodes) for i, item in enumerate(experiments)]
        self.penalty = float(penalty)
        self.targets: tuple[int, ...] = tuple(t for t, _ in checked)
        """The target of every experiment, in order (repeats kept)."""
        regimes: list[tuple[int | None, FloatArray]] = [(None, obs), *checked]
        self._counts, self._scatter = _node_statistics(regimes, n_nodes)
        self._log_n = np.log(self._counts)

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        return int(self._counts.size)

    def rows_for(self, node: int) -> int:
        """Number of rows that count for ``node`` (those where it was not intervened)."""
        return int(self._counts[checked_node(node, self.n_nodes)])

    def local_score(self, node: int, parents: Sequence[int] | np.ndarray) -> float:
        """BIC term of ``node`` with parent set ``parents``.

        Raises:
            ValueError: a node or parent outside ``[0, d)``, or ``node`` among its parents.
        """
        node = checked_node(node, self.n_nodes)
        chosen = np.unique(np.asarray(parents, dtype=np.int64))
        for parent in chosen:
            checked_node(int(parent), self.n_nodes)
        if node in chosen:
            raise ValueError(f"X{node} cannot be its own parent")
        scatter = self._scatter[node]
        rss = scatter[node, node]
        if chosen.size:
            block = scatter[np.ix_(chosen, chosen)]
            cross = scatter[chosen, node]
            rss -= float(cross @ np.linalg.lstsq(block, cross, rcond=None)[0])
        return float(self._terms(node, np.array([rss]), int(chosen.size))[0])

    def score(self, dag: DAG) -> float:
        """Total score of ``dag`` (the sum of its local scores).

        Raises:
            ValueError: ``dag`` has a different number of nodes.
        """
        if dag.n_nodes != self.n_nodes:
            raise ValueError(f"dag must have {self.n_nodes} nodes, got {dag.n_nodes}")
        return float(sum(self.local_score(j, dag.parents(j)) for j in range(self.n_nodes)))

    def move_gains(self, node: int, parents: BoolMatrix) -> tuple[FloatArray, FloatArray]:
        """Score changes of adding or removing each single parent of ``node``.

        Args:
            node: the child.
            parents: boolean mask of its current parents, shape ``(d,)``.

        Returns:
            ``(add, remove)``: ``add[i]`` is the gain of adding ``i`` (``-inf`` where ``i`` is
            ``node``, already a parent, or perfectly explained by the parents); ``remove[i]``
            the gain of removing parent ``i`` (``-inf`` where ``i`` is not a parent).

        Raises:
            ValueError: ``node`` outside ``[0, d)`` or a mask of the wrong shape.
        """
        node = checked_node(node, self.n_nodes)
        parents = np.asarray(parents, dtype=np.bool_)
        if parents.shape != (self.n_nodes,):
            raise ValueError(
                f"parents must be a mask of shape ({self.n_nodes},), got {parents.shape}"
            )
        scatter = self._scatter[node]
        current = np.flatnonzero(parents)
        add = np.full(self.n_nodes, -np.inf)
        remove = np.full(self.n_nodes, -np.inf)
        if current.size:
            block_inv = np.linalg.pinv(scatter[np.ix_(current, current)])
            partial = scatter - scatter[:, current] @ block_inv @ scatter[current, :]
        else:
            partial = scatter
        rss = partial[node, node]
        base = self._terms(node, np.array([rss]), current.size)[0]
        diag = np.diag(partial)
        candidates = ~parents
        candidates[node] = False
        floor = _MIN_VARIANCE * scatter.diagonal()
        candidates &= diag > floor
        with np.errstate(divide="ignore", invalid="ignore"):
            rss_add = rss - partial[:, node] ** 2 / diag
        add[candidates] = self._terms(node, rss_add[candidates], current.size + 1) - base
        if current.size:
            family = np.append(current, node)
            inverse = np.linalg.pinv(scatter[np.ix_(family, family)])
            k_jj = inverse[-1, -1]
            k_ij = inverse[:-1, -1]
            k_ii = np.diag(inverse)[:-1]
            with np.errstate(divide="ignore", invalid="ignore"):
                rss_remove = 1.0 / (k_jj - k_ij**2 / k_ii)
            remove[current] = self._terms(node, rss_remove, current.size - 1) - base
        return add, remove

    def _terms(self, node: int, rss: FloatArray, n_parents: int) -> FloatArray:
        """Local scores of ``node`` for residual sums of squares ``rss`` with ``n_parents``."""
        n = self._counts[node]
        floor = _MIN_VARIANCE * self._scatter[node, node, node] / n
        variance = np.maximum(rss / n, floor)
        loglik = -0.5 * n * (np.log(2.0 * np.pi * variance) + 1.0)
        return loglik - self.penalty * 0.5 * self._log_n[node] * (n_parents + 2)


def _node_statistics(
    regimes: Sequence[tuple[int | None, FloatArray]], n_nodes: int
) -> tuple[FloatArray, FloatArray]:
    """Row counts ``(d,)`` and centred scatter matrices ``(d, d, d)`` of each node's rows."""
    counts = np.zeros(n_nodes)
    sums = np.zeros((n_nodes, n_nodes))
    products = np.zeros((n_nodes, n_nodes, n_nodes))
    for target, data in regimes:
        keep = np.ones(n_nodes, dtype=np.bool_)
        if target is not None:
            keep[target] = False
        counts[keep] += data.shape[0]
        sums[keep] += data.sum(axis=0)
        products[keep] += data.T @ data
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


@dataclass(frozen=True)
class ScoreSearchResult:
    """What :func:`greedy_interventional_search` found.

    Attributes:
        dag: the highest-scoring DAG the search visited.
        essential_graph: its interventional essential graph for the experiments' targets.
        score: its score.
        targets: the distinct intervened nodes, ascending.
    """

    dag: DAG
    essential_graph: PDAG
    score: float
    targets: tuple[int, ...]


def hill_climb(
    score: DecomposableScore,
    *,
    start: DAG | None = None,
    tabu_steps: int = 30,
    tabu_tenure: int = 5,
    restarts: int = 3,
    seed: int = 0,
) -> DAG:
    """Greedy search over DAGs with a tabu phase and perturbed restarts.

    One climb applies the best single-edge addition, removal or reversal until none improves
    the score, then takes up to ``tabu_steps`` further best moves even if they worsen it (never
    revisiting a DAG, never touching a pair moved in the last ``tabu_tenure`` steps), restarting
    that count whenever a new best DAG is found. Each of the ``restarts`` further climbs starts from the best DAG so far
    with a few random edges reversed, removed or added. Ties between moves go to the lowest
    ``(kind, tail, head)`` (kinds ordered add, remove, reverse), and the perturbations draw from
    ``seed``, so the result is deterministic.

    Args:
        score: the score to maximise.
        start: the initial DAG (default: the empty graph).
        tabu_steps: worsening moves allowed in a row after the last improvement; ``>= 0``.
        tabu_tenure: how many recent moves make their node pair tabu; ``>= 0``.
        restarts: perturbed restarts after the first climb; ``>= 0``.
        seed: seed of the perturbations.

    Returns:
        The best DAG visited.

    Raises:
        ValueError: a negative ``tabu_steps``, ``tabu_tenure`` or ``restarts``, or ``start`` of
            the wrong size.
    """
    for name, value in (("tabu_steps", tabu_steps), ("tabu_tenure", tabu_tenure)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if restarts < 0:
        raise ValueError(f"restarts must be >= 0, got {restarts}")
    n = score.n_nodes
    if start is not None and start.n_nodes != n:
        raise ValueError(f"start must have {n} nodes, got {start.n_nodes}")
    adjacency = np.zeros((n, n), dtype=np.bool_) if start is None else start.adjacency.copy()
    best = _climb(_SearchState(score, adjacency), tabu_steps, tabu_tenure)
    best_score = score.score(DAG(best))
    rng = np.random.default_rng(seed)
    for _ in range(restarts):
        state = _SearchState(score, _perturb(best, rng))
        candidate = _climb(state, tabu_steps, tabu_tenure)
        candidate_score = score.score(DAG(candidate))
        if candidate_score > best_score + _MIN_GAIN:
            best, best_score = candidate, candidate_score
    return DAG(best)


def _climb(state: _SearchState, tabu_steps: int, tabu_tenure: int) -> BoolMatrix:
    """One greedy climb with a tabu phase from ``state``; returns the best adjacency seen.

    No DAG is visited twice, so zero-gain reversals inside an equivalence class cannot cycle.
    """
    best, best_total = state.adjacency.copy(), 0.0
    visited = {state.adjacency.tobytes()}
    total, stale = 0.0, 0
    recent: list[tuple[int, int]] = []
    while True:
        gain, move = state.best_move(recent[-tabu_tenure:] if tabu_tenure else [], visited)
        if move is None or (gain <= _MIN_GAIN and stale >= tabu_steps):
            return best
        state.apply(move)
        visited.add(state.adjacency.tobytes())
        total += gain
        recent.append((min(move[1:]), max(move[1:])))
        if total > best_total + _MIN_GAIN:
            best, best_total, stale = state.adjacency.copy(), total, 0
        else:
            stale += 1


def _perturb(adjacency: BoolMatrix, rng: np.random.Generator) -> BoolMatrix:
    """A copy of ``adjacency`` with about a fifth of its edges reversed or removed and as many
    random edges added, keeping it acyclic."""
    perturbed = adjacency.copy()
    n = adjacency.shape[0]
    edges = np.argwhere(adjacency)
    count = max(1, len(edges) // 5)
    for tail, head in edges[rng.permutation(len(edges))[:count]]:
        perturbed[tail, head] = False
        if rng.random() < 0.5 and not has_directed_path(perturbed, tail, head):
            perturbed[head, tail] = True
    for _ in range(count):
        tail, head = (int(v) for v in rng.choice(n, size=2, replace=False))
        free = not (perturbed[tail, head] or perturbed[head, tail])
        if free and not has_directed_path(perturbed, head, tail):
            perturbed[tail, head] = True
    return perturbed


_ADD, _REMOVE, _REVERSE = 0, 1, 2
Move = tuple[int, int, int]
"""``(kind, tail, head)`` of the edge ``tail -> head`` being added, removed or reversed."""


class _SearchState:
    """The current DAG with cached move gains for every column (private to :func:`hill_climb`)."""

    def __init__(self, score: DecomposableScore, adjacency: BoolMatrix) -> None:
        self.score = score
        self.adjacency = adjacency
        n = adjacency.shape[0]
        self.add_gain = np.empty((n, n))
        self.remove_gain = np.empty((n, n))
        for node in range(n):
            self._refresh(node)

    def _refresh(self, node: int) -> None:
        add, remove = self.score.move_gains(node, self.adjacency[:, node])
        self.add_gain[:, node] = add
        self.remove_gain[:, node] = remove

    def best_move(
        self, tabu: Sequence[tuple[int, int]], visited: set[bytes]
    ) -> tuple[float, Move | None]:
        """The best legal move to an unvisited DAG and its gain (``None``: no such move)."""
        adjacency = self.adjacency
        reach = reachability(adjacency)
        adjacent = adjacency | adjacency.T
        # i -> j may be added unless j already reaches i; i -> j may be reversed unless a
        # longer path i -> c ~> j exists (counted through the children c of i).
        can_add = ~adjacent & ~reach.T
        np.fill_diagonal(can_add, False)
        detour = (adjacency.astype(np.float32) @ reach.astype(np.float32)) > 0
        can_reverse = adjacency & ~detour
        gains = np.stack(
            [
                np.where(can_add, self.add_gain, -np.inf),
                np.where(adjacency, self.remove_gain, -np.inf),
                np.where(can_reverse, self.remove_gain + self.add_gain.T, -np.inf),
            ]
        )
        for a, b in tabu:
            gains[:, a, b] = gains[:, b, a] = -np.inf
        gains[np.isnan(gains)] = -np.inf
        for flat in np.argsort(-gains.ravel(), kind="stable"):
            gain = float(gains.flat[flat])
            if not np.isfinite(gain):
                break
            kind, tail, head = (int(v) for v in np.unravel_index(flat, gains.shape))
            if _moved(adjacency, (kind, tail, head)).tobytes() not in visited:
                return gain, (kind, tail, head)
        return -np.inf, None

    def apply(self, move: Move) -> None:
        """Apply ``move`` and rescore the columns whose parent sets changed."""
        kind, tail, head = move
        self.adjacency = _moved(self.adjacency, move)
        if kind == _REVERSE:
            self._refresh(tail)
        self._refresh(head)


def _moved(adjacency: BoolMatrix, move: Move) -> BoolMatrix:
    """A copy of ``adjacency`` with ``move`` applied."""
    kind, tail, head = move
    result = adjacency.copy()
    result[tail, head] = kind == _ADD
    if kind == _REVERSE:
        result[head, tail] = True
    return result


def greedy_interventional_search(
    observational: ArrayLike,
    experiments: Sequence[tuple[int, ArrayLike]],
    *,
    penalty: float = 1.0,
    start: DAG | None = None,
    tabu_steps: int = 30,
    restarts: int = 3,
) -> ScoreSearchResult:
    """Estimate the interventional essential graph by maximising the interventional BIC.

    Builds :class:`InterventionalBIC` from the data, runs :func:`hill_climb` (from ``start``,
    default the empty graph) and returns the best DAG with its interventional essential graph
    for the distinct targets of ``experiments``.

    Args:
        observational: observational samples, shape ``(n_obs, d)``.
        experiments: ``(target, samples)`` pairs of single-node hard interventions.
        penalty: BIC penalty multiplier (see :class:`InterventionalBIC`).
        start: initial DAG of the search.
        tabu_steps: see :func:`hill_climb`.
        restarts: see :func:`hill_climb`.

    Returns:
        A :class:`ScoreSearchResult`.

    Raises:
        ValueError: as :class:`InterventionalBIC` and :func:`hill_climb`.
    """
    score = InterventionalBIC(observational, experiments, penalty=penalty)
    dag = hill_climb(score, start=start, tabu_steps=tabu_steps, restarts=restarts)
    targets = tuple(sorted(set(score.targets)))
    return ScoreSearchResult(dag, essential_graph(dag, targets), score.score(dag), targets)
