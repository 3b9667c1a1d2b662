"""Brute-force oracles for the graph tests.

Nothing here imports ``acdb_gym``: these functions recompute equivalence classes from their
definitions (enumerate every orientation of a skeleton) so they can be held against the fast
algorithms in ``acdb_gym.core.graphs``. They are meant for small graphs (``m <= ~16`` edges).

An orientation of a skeleton with edge pairs ``pairs[e] = (lo, hi)``, ``lo < hi``, is a boolean
vector ``bits`` with ``bits[e]`` True iff the edge points ``lo -> hi``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

MAX_ENUMERATED_EDGES = 16


def random_dag_matrix(rng: np.random.Generator, n_nodes: int, n_edges: int) -> np.ndarray:
    """A DAG with exactly ``n_edges`` edges chosen uniformly among the forward pairs of a random
    node order (so node indices say nothing about the order)."""
    order = rng.permutation(n_nodes)
    forward = [(order[a], order[b]) for a in range(n_nodes) for b in range(a + 1, n_nodes)]
    if not 0 <= n_edges <= len(forward):
        raise ValueError(f"n_edges must be in [0, {len(forward)}], got {n_edges}")
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    for index in rng.choice(len(forward), size=n_edges, replace=False):
        i, j = forward[index]
        adjacency[i, j] = True
    return adjacency


def skeleton_pairs(adjacency: np.ndarray) -> np.ndarray:
    """The skeleton's edges as an ``(m, 2)`` array of ``(lo, hi)`` rows, ``lo < hi``."""
    skeleton = np.triu(adjacency | adjacency.T)
    return np.argwhere(skeleton)


def orientation_of(adjacency: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """The orientation bits of ``adjacency`` over ``pairs``."""
    return adjacency[pairs[:, 0], pairs[:, 1]].astype(np.bool_)


def all_orientations(n_edges: int) -> np.ndarray:
    """Every orientation of ``n_edges`` edges: a ``(2**n_edges, n_edges)`` boolean array."""
    codes = np.arange(2**n_edges, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_edges)) & 1).astype(np.bool_)


def adjacency_batch(bits: np.ndarray, pairs: np.ndarray, n_nodes: int) -> np.ndarray:
    """``(B, n, n)`` adjacency matrices of a batch of orientations."""
    batch = np.zeros((bits.shape[0], n_nodes, n_nodes), dtype=np.bool_)
    lo, hi = pairs[:, 0], pairs[:, 1]
    batch[:, lo, hi] = bits
    batch[:, hi, lo] = ~bits
    return batch


def is_acyclic_batch(batch: np.ndarray) -> np.ndarray:
    """For each adjacency matrix of the batch: True iff it has no directed cycle.

    Transitive closure by repeated squaring; a cycle puts a node in its own closure.
    """
    n_nodes = batch.shape[-1]
    reach = batch.astype(np.float32)
    covered_length = 1
    while covered_length < n_nodes:
        reach = np.minimum(reach + reach @ reach, 1.0)
        covered_length *= 2
    return ~np.diagonal(reach, axis1=1, axis2=2).any(axis=1)


def unshielded_triples(adjacency: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Rows ``(edge_a, a_points_up, edge_b, b_points_up)`` for every unshielded triple
    ``i - j - k`` (``i < k`` non-adjacent); ``edge_a`` joins ``i, j``, ``edge_b`` joins ``k, j``.

    ``a_points_up`` is True when ``j`` is the ``hi`` end of ``edge_a``: then the edge points
    into ``j`` iff its bit is True.
    """
    skeleton = adjacency | adjacency.T
    index = {(int(lo), int(hi)): e for e, (lo, hi) in enumerate(pairs)}
    rows = []
    for j in range(skeleton.shape[0]):
        neighbours = np.flatnonzero(skeleton[j])
        for i, k in itertools.combinations(neighbours.tolist(), 2):
            if skeleton[i, k]:
                continue
            edge_a = index[(min(i, j), max(i, j))]
            edge_b = index[(min(k, j), max(k, j))]
            rows.append((edge_a, j > i, edge_b, j > k))
    return np.asarray(rows, dtype=np.int64).reshape(-1, 4)


def collider_batch(bits: np.ndarray, triples: np.ndarray) -> np.ndarray:
    """``(B, T)``: whether each unshielded triple is a collider (v-structure) in each
    orientation."""
    into_a = bits[:, triples[:, 0]] == triples[:, 1].astype(np.bool_)
    into_b = bits[:, triples[:, 2]] == triples[:, 3].astype(np.bool_)
    return into_a & into_b


@dataclass(frozen=True)
class EquivalenceClass:
    """All DAGs Markov equivalent to ``truth``, found by enumerating every orientation of its
    skeleton and keeping the acyclic ones with the same v-structures (Verma & Pearl 1990).

    Attributes:
        truth: the DAG's adjacency matrix.
        pairs: the skeleton's edges, ``(m, 2)``.
        truth_bits: the DAG's own orientation, ``(m,)``.
        members: orientation bits of every member, ``(K, m)`` (the DAG itself included).
    """

    truth: np.ndarray
    pairs: np.ndarray
    truth_bits: np.ndarray
    members: np.ndarray

    @classmethod
    def enumerate(cls, adjacency: np.ndarray) -> EquivalenceClass:
        adjacency = np.asarray(adjacency, dtype=np.bool_)
        pairs = skeleton_pairs(adjacency)
        if len(pairs) > MAX_ENUMERATED_EDGES:
            raise ValueError(f"too many edges to enumerate: {len(pairs)}")
        truth_bits = orientation_of(adjacency, pairs)
        candidates = all_orientations(len(pairs))
        triples = unshielded_triples(adjacency, pairs)
        truth_colliders = collider_batch(truth_bits[None, :], triples)
        same = (collider_batch(candidates, triples) == truth_colliders).all(axis=1)
        candidates = candidates[same]
        acyclic = is_acyclic_batch(adjacency_batch(candidates, pairs, adjacency.shape[0]))
        return cls(adjacency, pairs, truth_bits, candidates[acyclic])

    @property
    def n_nodes(self) -> int:
        return int(self.truth.shape[0])

    def member_matrices(self) -> np.ndarray:
        """Adjacency matrices of all members, ``(K, n, n)``."""
        return adjacency_batch(self.members, self.pairs, self.n_nodes)

    def contains(self, adjacency: np.ndarray) -> bool:
        """True iff ``adjacency`` is one of the members."""
        adjacency = np.asarray(adjacency, dtype=np.bool_)
        if not np.array_equal(adjacency | adjacency.T, self.truth | self.truth.T):
            return False
        bits = orientation_of(adjacency, self.pairs)
        return bool((self.members == bits).all(axis=1).any())

    def incident_edges(self, targets: Iterable[int]) -> np.ndarray:
        """Mask over edges with at least one endpoint in ``targets``."""
        hit = np.zeros(self.n_nodes, dtype=np.bool_)
        hit[list(targets)] = True
        return hit[self.pairs[:, 0]] | hit[self.pairs[:, 1]]

    def interventional_members(self, targets: Iterable[int]) -> np.ndarray:
        """Members that orient every edge incident to a target as ``truth`` does: the
        interventional Markov equivalence class for single-node hard interventions on
        ``targets`` plus observational data (Hauser & Bühlmann 2012)."""
        incident = self.incident_edges(targets)
        agree = (self.members[:, incident] == self.truth_bits[incident]).all(axis=1)
        return self.members[agree]

    def essential_matrices(self, targets: Iterable[int] = ()) -> tuple[np.ndarray, np.ndarray]:
        """``(directed, undirected)`` of the (interventional) essential graph: an edge is
        directed iff every member of the class orients it the same way."""
        return self.summarize(self.interventional_members(targets))

    def closure_matrices(self, directed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(directed, undirected)`` summarizing the members that contain every edge of
        ``directed``: the maximally oriented graph given that background knowledge."""
        matrices = self.member_matrices()
        keep = (matrices | ~np.asarray(directed, dtype=np.bool_)).all(axis=(1, 2))
        return self.summarize(self.members[keep])

    def summarize(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(directed, undirected)``: an edge is directed iff all ``members`` agree on it."""
        if len(members) == 0:
            raise ValueError("no member of the class is consistent with the constraints")
        n = self.n_nodes
        directed = np.zeros((n, n), dtype=np.bool_)
        undirected = np.zeros((n, n), dtype=np.bool_)
        all_up = members.all(axis=0)
        all_down = (~members).all(axis=0)
        for (lo, hi), up, down in zip(self.pairs, all_up, all_down, strict=True):
            if up:
                directed[lo, hi] = True
            elif down:
                directed[hi, lo] = True
            else:
                undirected[lo, hi] = undirected[hi, lo] = True
        return directed, undirected

    def is_verifying(self, targets: Iterable[int]) -> bool:
        """True iff intervening on ``targets`` leaves ``truth`` alone in its class."""
        return len(self.interventional_members(targets)) == 1

    def minimum_verifying_size(self) -> int:
        """Size of a smallest verifying target set, by search over subsets in size order."""
        differs = self.members != self.truth_bits
        others = differs[differs.any(axis=1)]
        if len(others) == 0:
            return 0
        for size in range(1, self.n_nodes + 1):
            for subset in itertools.combinations(range(self.n_nodes), size):
                incident = self.incident_edges(subset)
                if (others & incident).any(axis=1).all():
                    return size
        raise AssertionError("intervening on every node always verifies")
