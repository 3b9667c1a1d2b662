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

from dataclasses import dataclass, fields

import numpy as np

from acdb_gym.core.graphs import DAG, cpdag, minimum_intervention_set
from acdb_gym.core.latent_scoring import prf_columns
from acdb_gym.core.scoring import SCORE_FIELDS, InstanceLike, ScoreReport
from acdb_gym.core.types import BoolMatrix, FloatArray, IntArray

__all__ = ["GraphRows", "report_of_row", "score_dags", "score_rows"]


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
    k = len(draws)
    base = cpdag(dag)
    truths = GraphRows(_rows_of(base.directed, k), _rows_of(base.undirected, k))
    table = score_rows(
        _rows_of(dag.adjacency, k),
        truths,
        truths,  # no experiment: the essential graph is the CPDAG
        GraphRows(draws, np.zeros_like(draws)),
        used=np.zeros(k, dtype=np.int64),
        star=np.full(k, star, dtype=np.int64),
        anytime_f1=np.full(k, np.nan),
    )
    table[:, SCORE_FIELDS.index("anytime_f1")] = table[:, SCORE_FIELDS.index("directed_f1")]
    return [report_of_row(row) for row in table]


def _rows_of(matrix: BoolMatrix, k: int) -> BoolMatrix:
    """``matrix`` as ``k`` stacked rows (a read-only broadcast view, no copy)."""
    rows: BoolMatrix = np.broadcast_to(matrix, (k, *matrix.shape))
    return rows


@dataclass(frozen=True)
class GraphRows:
    """``k`` graphs over ``d`` nodes as stacked boolean matrices (row ``i`` is graph ``i``).

    Attributes:
        directed: ``(k, d, d)``, ``[i, a, b]`` for ``a -> b`` in graph ``i``.
        undirected: ``(k, d, d)``, symmetric per graph (``a - b``).
    """

    directed: BoolMatrix
    undirected: BoolMatrix


def score_rows(
    adjacency: BoolMatrix,
    cpdags: GraphRows,
    essentials: GraphRows,
    submissions: GraphRows,
    *,
    used: IntArray,
    star: IntArray,
    anytime_f1: FloatArray,
) -> FloatArray:
    """The reports of ``k`` PDAG submissions, each against its own causally sufficient truth,
    as one ``(k, len(SCORE_FIELDS))`` float table (columns in :data:`SCORE_FIELDS` order).

    Row ``i`` holds, bit for bit, the values of ``score(truth_i, submission_i,
    interventions_used=used[i], targets=T_i)`` (counts as floats) with ``anytime_f1``
    replaced by ``anytime_f1[i]``, where the caller passes what ``score`` derives from the
    truth: its adjacency, its CPDAG and the interventional essential graph of the distinct
    targets ``T_i`` (the CPDAG when there are none). The counts of every row are taken on the
    stacked matrices at once and every ratio with the contract's formulas (:func:`prf`'s
    operations in its order, on arrays), so no Python runs per row; a design env's stopping
    worlds are scored this way.

    Args:
        adjacency: ``(k, d, d)`` true DAGs.
        cpdags: their CPDAGs.
        essentials: their interventional essential graphs for each row's targets.
        submissions: the submitted PDAGs (valid: acyclic, undirected part symmetric).
        used: interventions spent per row (``interventions_used``).
        star: ``|I*|`` per row.
        anytime_f1: the ``anytime_f1`` column.
    """
    s_dir, s_und = submissions.directed, submissions.undirected
    upper = np.triu(np.ones(adjacency.shape[-2:], dtype=np.bool_))
    true_pairs = (adjacency | adjacency.transpose(0, 2, 1)) & upper
    sub_pairs = (s_dir | s_dir.transpose(0, 2, 1) | s_und) & upper
    compelled = s_dir & ~cpdags.undirected
    essential = s_dir & ~essentials.undirected
    # Every count of every row in one pass: (k, 14) counts of the masks below, in this order.
    counts = np.count_nonzero(
        np.stack(
            [
                true_pairs & sub_pairs,  # 0: shared pairs
                compelled & cpdags.directed,
                adjacency & s_dir,
                essential & essentials.directed,
                sub_pairs,  # 4: predicted
                compelled,
                s_dir,
                essential,
                true_pairs,  # 8: true
                cpdags.directed,
                adjacency,
                essentials.directed,
                adjacency & s_dir.transpose(0, 2, 1),  # 12: reversed
                adjacency & s_und,  # 13: unresolved
            ],
            axis=1,
        ).reshape(len(adjacency), 14, -1),
        axis=2,
    ).T
    # Skeleton, compelled, directed and essential P/R/F1 in one pass over stacked counts.
    precision, recall, f1 = prf_columns(counts[0:4], counts[4:8], counts[8:12])
    shared, n_sub_pairs, n_true_pairs = counts[0], counts[4], counts[8]
    extra, missing = n_sub_pairs - shared, n_true_pairs - shared
    reversed_, unresolved = counts[12], counts[13]
    with np.errstate(divide="ignore", invalid="ignore"):
        efficiency = np.where(used <= star, 1.0, star / np.maximum(used, 1))
    columns: dict[str, np.ndarray] = {}
    for row, prefix in enumerate(("skeleton", "compelled", "directed")):
        columns[f"{prefix}_precision"] = precision[row]
        columns[f"{prefix}_recall"] = recall[row]
        columns[f"{prefix}_f1"] = f1[row]
    columns |= {
        "shd": extra + missing + reversed_ + unresolved,
        "shd_extra": extra,
        "shd_missing": missing,
        "shd_reversed": reversed_,
        "shd_unresolved": unresolved,
        "interventions_used": used,
        "i_star_size": star,
        "efficiency": efficiency,
        "essential_f1": f1[3],
        "anytime_f1": anytime_f1,
    }
    assert tuple(columns) == SCORE_FIELDS
    return np.stack([np.asarray(column, dtype=np.float64) for column in columns.values()], axis=1)


_INT_FIELDS = frozenset(field.name for field in fields(ScoreReport) if field.type in ("int", int))


def report_of_row(row: FloatArray) -> ScoreReport:
    """The :class:`~acdb_gym.core.scoring.ScoreReport` of one row of :func:`score_rows`'s
    table: the count fields as ``int``, the rest as ``float``, as :func:`score` types them."""
    values = {
        name: int(value) if name in _INT_FIELDS else float(value)
        for name, value in zip(SCORE_FIELDS, row.tolist(), strict=True)
    }
    return ScoreReport(**values)  # type: ignore[arg-type]
