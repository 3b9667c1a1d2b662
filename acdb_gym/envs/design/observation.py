"""The design env's flat observation as a value: its length and its decoded parts.

Shared by the env (:mod:`acdb_gym.envs.design.env`), which encodes it, and the graph
observation (:mod:`acdb_gym.envs.design.graph_obs`), which rebuilds its features from it; it
sits below both so neither imports the other back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import PDAG

__all__ = ["DesignObservation", "observation_size"]


def observation_size(n_nodes: int) -> int:
    """Length ``M + 2 d^2 + d + 1`` of the design env's flat observation for ``d = n_nodes``."""
    return n_nodes * (n_nodes - 1) // 2 + 2 * n_nodes * n_nodes + n_nodes + 1


@dataclass(frozen=True)
class DesignObservation:
    """A decoded design-env observation (the inverse of :meth:`DesignState.observation` for
    everything agents need).

    Attributes:
        correlations: observational correlations, upper triangle, row-major.
        estimate: the current estimate as a PDAG.
        intervened: boolean ``(d,)``, True where the node was intervened on.
        shifts: ``(d, d)`` standardized mean shifts, clipped to 10 and divided by 10.
        budget_fraction: remaining budget / budget (0 when no intervention is allowed).
    """

    correlations: np.ndarray
    estimate: PDAG
    intervened: np.ndarray
    shifts: np.ndarray
    budget_fraction: float

    @classmethod
    def decode(cls, observation: ArrayLike, n_nodes: int | None = None) -> DesignObservation:
        """Split a flat observation of the design env for ``n_nodes`` variables (inferred from
        the observation's length when None)."""
        flat = np.asarray(observation, dtype=np.float32).ravel()
        if n_nodes is None:
            n_nodes = next(d for d in range(1, flat.size + 2) if observation_size(d) >= flat.size)
        if flat.size != observation_size(n_nodes):
            raise ValueError(
                f"observation for d={n_nodes} must have {observation_size(n_nodes)} entries, "
                f"got {flat.size}"
            )
        d, m = n_nodes, n_nodes * (n_nodes - 1) // 2
        graph = flat[m : m + d * d].reshape(d, d)
        undirected = np.isclose(graph, 0.5) & np.isclose(graph.T, 0.5)
        estimate = PDAG(np.isclose(graph, 1.0), undirected)
        rest = flat[m + d * d :]
        return cls(
            correlations=flat[:m].copy(),
            estimate=estimate,
            intervened=rest[:d] > 0.5,
            shifts=rest[d : d + d * d].reshape(d, d).copy(),
            budget_fraction=float(rest[-1]),
        )

    @property
    def action_mask(self) -> np.ndarray:
        """The env's :meth:`~InterventionDesignEnv.action_masks` during an episode:
        interventions while budget remains, "stop" always."""
        d = self.intervened.size
        mask = np.zeros(d + 1, dtype=bool)
        mask[:d] = self.budget_fraction > 0
        mask[d] = True
        return mask
