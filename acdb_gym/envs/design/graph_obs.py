"""The size-free observation of the design env: per-node and per-pair features, padded.

:class:`~acdb_gym.envs.design.env.InterventionDesignEnv` with ``observation="graph"`` returns a
dict of fixed-shape arrays padded to ``max_nodes`` (so that vectorized envs and replay buffers
can stack episodes of different ``d``) with a node mask saying which rows are real nodes, and an
``action_mask`` entry (TorchRL's ``ActionMask`` and RLlib read it from the observation). A
policy that treats the nodes as a set (attention or message passing over rows, masked by
``node_mask``) reads every level with one set of weights, whatever ``d``.

| key | shape | content |
|-----|-------|---------|
| ``nodes`` | ``(N, 8)`` | per node, see :data:`NODE_FEATURES` |
| ``pairs`` | ``(N, N, 6)`` | per ordered pair ``(i, j)``, see :data:`PAIR_FEATURES` |
| ``node_mask`` | ``(N,)`` | 1 for the ``d`` real nodes, 0 for padding |
| ``action_mask`` | ``(N + 1,)`` | 1 where the action is valid: ``i < d`` while budget remains, ``N`` (stop) always |
| ``budget`` | ``(3,)`` | remaining / budget, min(remaining / d, 1), 1 while an intervention is valid |

Padding rows and pairs are 0. ``N`` is ``max_nodes``; the action ``N`` is "stop" (in the flat
observation mode it is ``d``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from acdb_gym.envs.design.observation import DesignObservation

__all__ = [
    "DEFAULT_MAX_NODES",
    "NODE_FEATURES",
    "PAIR_FEATURES",
    "graph_action_mask",
    "graph_observation",
    "graph_observation_space",
]

DEFAULT_MAX_NODES = 64
"""Default padding size: every ladder level (d <= 30) and custom levels up to d = 64."""

NODE_FEATURES = (
    "intervened",
    "undirected_degree",
    "in_degree",
    "out_degree",
    "shift_caused",
    "shift_received",
    "budget_fraction",
    "remaining_per_node",
)
"""Per-node columns: 1 if intervened on; undirected, directed-in and directed-out degree in the
current estimate, each / (d - 1); the largest standardized shift this node's experiment caused
in another node and the largest it showed under another node's experiment (both in [0, 1], as
the flat observation scales them); remaining / budget; remaining / d."""

PAIR_FEATURES = ("directed_out", "directed_in", "undirected", "correlation", "shift_ij", "shift_ji")
"""Per-pair columns at ``[i, j]``: 1 for ``i -> j``; 1 for ``j -> i``; 1 for ``i - j``; the
observational correlation (0 on the diagonal); the shift of ``X_j`` under ``do(X_i)``; the shift
of ``X_i`` under ``do(X_j)``."""


def graph_observation_space(max_nodes: int) -> spaces.Dict:
    """The Dict space of :func:`graph_observation` for ``max_nodes`` rows."""
    n = max_nodes
    return spaces.Dict(
        {
            "nodes": spaces.Box(-1.0, 1.0, (n, len(NODE_FEATURES)), np.float32),
            "pairs": spaces.Box(-1.0, 1.0, (n, n, len(PAIR_FEATURES)), np.float32),
            "node_mask": spaces.Box(0, 1, (n,), np.int8),
            "action_mask": spaces.Box(0, 1, (n + 1,), np.int8),
            "budget": spaces.Box(0.0, 1.0, (3,), np.float32),
        }
    )


def graph_action_mask(
    n_nodes: int, max_nodes: int, *, can_intervene: bool, allowed: np.ndarray | None = None
) -> np.ndarray:
    """Boolean ``(max_nodes + 1,)``: the ``n_nodes`` real nodes (those ``allowed`` marks, when
    the level restricts the targets) while ``can_intervene``, and "stop" (index ``max_nodes``)
    always."""
    mask = np.zeros(max_nodes + 1, dtype=bool)
    mask[:n_nodes] = can_intervene if allowed is None else can_intervene & np.asarray(allowed)
    mask[max_nodes] = True
    return mask


def graph_observation(
    flat: np.ndarray,
    n_nodes: int,
    *,
    budget_remaining: int,
    can_intervene: bool,
    max_nodes: int | None = None,
    allowed: np.ndarray | None = None,
) -> dict[str, Any]:
    """Encode a flat design observation (:meth:`DesignState.observation`) as the graph dict.

    Args:
        flat: the flat observation for ``n_nodes`` variables.
        n_nodes: ``d``.
        budget_remaining: interventions left (0 in the observational panel).
        can_intervene: whether interventions are valid now (the env's ``action_masks()``).
        max_nodes: padding size (``n_nodes`` when None: no padding).
        allowed: boolean ``(n_nodes,)``, the nodes an experiment exists for where the level
            restricts the targets; None allows every node.

    Raises:
        ValueError: ``n_nodes`` above ``max_nodes``.
    """
    n = n_nodes if max_nodes is None else max_nodes
    if n_nodes > n:
        raise ValueError(f"d = {n_nodes} exceeds max_nodes = {n}; pass a larger max_nodes")
    decoded = DesignObservation.decode(flat, n_nodes)
    d = n_nodes
    nodes = np.zeros((n, len(NODE_FEATURES)), dtype=np.float32)
    pairs = np.zeros((n, n, len(PAIR_FEATURES)), dtype=np.float32)
    directed = decoded.estimate.directed.astype(np.float32)
    undirected = decoded.estimate.undirected.astype(np.float32)
    shifts = decoded.shifts.astype(np.float32)
    scale = 1.0 / max(d - 1, 1)
    nodes[:d, 0] = decoded.intervened
    nodes[:d, 1] = undirected.sum(axis=1) * scale
    nodes[:d, 2] = directed.sum(axis=0) * scale
    nodes[:d, 3] = directed.sum(axis=1) * scale
    nodes[:d, 4] = shifts.max(axis=1, initial=0.0)
    nodes[:d, 5] = shifts.max(axis=0, initial=0.0)
    nodes[:d, 6] = decoded.budget_fraction
    nodes[:d, 7] = min(budget_remaining / d, 1.0)
    pairs[:d, :d, 0] = directed
    pairs[:d, :d, 1] = directed.T
    pairs[:d, :d, 2] = undirected
    pairs[:d, :d, 3] = _correlation_matrix(decoded.correlations, d)
    pairs[:d, :d, 4] = shifts
    pairs[:d, :d, 5] = shifts.T
    node_mask = np.zeros(n, dtype=np.int8)
    node_mask[:d] = 1
    action_mask = graph_action_mask(d, n, can_intervene=can_intervene, allowed=allowed).astype(
        np.int8
    )
    # Nothing here may depend on the padding size, or a padded and an unpadded view of the
    # same state would read differently.
    budget = np.array(
        [decoded.budget_fraction, nodes[0, 7], float(can_intervene)], dtype=np.float32
    )
    return {
        "nodes": nodes,
        "pairs": pairs,
        "node_mask": node_mask,
        "action_mask": action_mask,
        "budget": budget,
    }


def _correlation_matrix(upper: np.ndarray, n_nodes: int) -> np.ndarray:
    """The symmetric correlation matrix (zero diagonal) from its row-major upper triangle."""
    matrix = np.zeros((n_nodes, n_nodes), dtype=np.float32)
    rows, cols = np.triu_indices(n_nodes, 1)
    matrix[rows, cols] = upper
    matrix[cols, rows] = upper
    return matrix
