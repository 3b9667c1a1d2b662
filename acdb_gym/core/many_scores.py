"""Many DAG submissions scored against one truth in one pass (DESIGN §6, "Scoring many draws").

The random baseline submits 100 random DAGs per job (DESIGN §9); scoring them one
:func:`~acdb_gym.core.scoring.score` call at a time repeats the same checks and conversions a
hundred times. :func:`score_dags` counts every draw's true and false positives on the stacked
adjacency matrices at once and builds each draw's :class:`~acdb_gym.core.scoring.ScoreReport`
from those counts with the contract's own formulas, so every report equals ``score(truth,
DAG(adjacency))`` field for field, to the last bit.

>>> from acdb_gym.core.graphs import DAG
>>> from acdb_gym.core.scoring import score
>>> truth = DAG.from_edges(3, [(0, 2), (1, 2)])
>>> draws = np.zeros((2, 3, 3), dtype=bool)
>>> draws[0, 0, 2] = draws[1, 2, 1] = True
>>> [report.directed_f1 for report in score_dags(truth, draws)]
[0.6666666666666666, 0.0]
>>> score_dags(truth, draws)[1] == score(truth, DAG(draws[1]))
True
"""

from __future__ import annotations

import numpy as np

from acdb_gym.core.graphs import DAG, cpdag, minimum_intervention_set
from acdb_gym.core.latent_scoring import prf
from acdb_gym.core.scoring import InstanceLike, ScoreReport, report_from_counts

__all__ = ["score_dags"]


def score_dags(truth: DAG | InstanceLike, adjacencies: np.ndarray) -> list[ScoreReport]:
    """The reports of DAG submissions made without any experiment, one per draw.

    Args:
        truth: the true :class:`DAG`, or an instance (``.dag`` and ``.i_star``) of a causally
            sufficient world (``latent_truth`` None or absent).
        adjacencies: boolean ``(k, d, d)``; ``adjacencies[i]`` is the i-th submitted DAG's
            adjacency (``[a, b]`` true for ``a -> b``). Acyclicity is the caller's promise
            (a draw over a random order is acyclic by construction); it does not change the
            counts.

    Returns:
        ``k`` reports; the i-th equals ``score(truth, DAG(adjacencies[i]))``.

    Raises:
        ValueError: ``adjacencies`` is not a boolean ``(k, d, d)`` array over the truth's
            nodes, or the truth has hidden confounders (score those one by one).
    """
    if getattr(truth, "latent_truth", None) is not None:
        raise ValueError("score_dags scores causally sufficient worlds; this one has latents")
    dag = truth if isinstance(truth, DAG) else truth.dag
    star = len(minimum_intervention_set(dag) if isinstance(truth, DAG) else truth.i_star)
    draws = np.asarray(adjacencies)
    d = dag.n_nodes
    if draws.dtype != np.bool_ or draws.ndim != 3 or draws.shape[1:] != (d, d):
        raise ValueError(
            f"adjacencies must be a boolean (k, {d}, {d}) array, got {draws.dtype} {draws.shape}"
        )
    if not len(draws):
        return []
    adjacency = dag.adjacency
    base = cpdag(dag)
    upper = np.triu(np.ones((d, d), dtype=np.bool_))
    true_pairs = np.triu(adjacency | adjacency.T)
    sub_pairs = (draws | draws.transpose(0, 2, 1)) & upper
    compelled_predicted = draws & ~base.undirected

    def count(masks: np.ndarray) -> list[int]:
        return masks.reshape(len(draws), -1).sum(axis=1).tolist()

    n_true_pairs = int(np.count_nonzero(true_pairs))
    n_true_edges = int(np.count_nonzero(adjacency))
    n_compelled = int(np.count_nonzero(base.directed))
    shared_pairs = count(sub_pairs & true_pairs)
    n_sub_pairs = count(sub_pairs)
    compelled_hits = count(compelled_predicted & base.directed)
    n_compelled_predicted = count(compelled_predicted)
    directed_hits = count(draws & adjacency)
    n_edges = count(draws)
    reversed_ = count(draws & adjacency.T)
    reports = []
    for i in range(len(draws)):
        skeleton = prf(shared_pairs[i], n_sub_pairs[i], n_true_pairs)
        compelled = prf(compelled_hits[i], n_compelled_predicted[i], n_compelled)
        directed = prf(directed_hits[i], n_edges[i], n_true_edges)
        reports.append(
            report_from_counts(
                skeleton,
                compelled,
                directed,
                extra=n_sub_pairs[i] - shared_pairs[i],
                missing=n_true_pairs - shared_pairs[i],
                reversed_=reversed_[i],
                unresolved=0,
                used=0,
                star=star,
                essential_f1=compelled[2],
                anytime_f1=float(directed[2]),
            )
        )
    return reports
