"""Shared fixtures for the discovery tests: a small linear Gaussian SCM toolkit.

Tests run with ``--import-mode=importlib``, so this module cannot be imported by name; the
helpers reach the tests through the ``sem`` fixture instead.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG


def random_dag(n_nodes: int, edge_prob: float, rng: np.random.Generator) -> DAG:
    """A DAG whose forward pairs (in a random order) are edges with probability ``edge_prob``."""
    order = rng.permutation(n_nodes)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    for a in range(n_nodes):
        for b in range(a + 1, n_nodes):
            if rng.random() < edge_prob:
                adjacency[order[a], order[b]] = True
    return DAG(adjacency)


def random_weights(dag: DAG, rng: np.random.Generator) -> np.ndarray:
    """Weights of magnitude U[0.5, 2] with a random sign on the edges of ``dag``."""
    magnitude = rng.uniform(0.5, 2.0, size=dag.adjacency.shape)
    sign = rng.choice([-1.0, 1.0], size=dag.adjacency.shape)
    return np.where(dag.adjacency, magnitude * sign, 0.0)


def sample_sem(
    weights: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
    *,
    do: dict[int, float] | None = None,
) -> np.ndarray:
    """Samples of ``X_j = sum_i W[i, j] X_i + e_j`` (e ~ N(0, 1)), optionally under ``do``.

    A hard intervention cuts the target's incoming weights and replaces its noise by the value.
    """
    weights = np.array(weights, dtype=np.float64)
    noise = rng.normal(size=(n_samples, weights.shape[0]))
    for target, value in (do or {}).items():
        weights[:, target] = 0.0
        noise[:, target] = value
    # Row convention: X = X W + E, so X = E (I - W)^{-1}.
    return noise @ np.linalg.inv(np.eye(weights.shape[0]) - weights)


@pytest.fixture(scope="session")
def sem() -> SimpleNamespace:
    """The helpers above: ``sem.random_dag``, ``sem.random_weights``, ``sem.sample``."""
    return SimpleNamespace(random_dag=random_dag, random_weights=random_weights, sample=sample_sem)
