"""Scoring against a world with hidden confounders (DESIGN §6.3).

The truth of a latent level is an ADMG over the observed nodes (the latent projection), with its
MAG and the PAG of the MAG's Markov equivalence class (:mod:`acdb_gym.core.graphs.admg`). A
submission is read as a set of endpoint marks:

* a :class:`~acdb_gym.core.graphs.PDAG` or :class:`~acdb_gym.core.graphs.DAG`: ``i -> j`` is a
  tail at ``i`` and an arrowhead at ``j``; an undirected ``i - j`` asserts an adjacency and no
  mark (two circles);
* an :class:`~acdb_gym.core.graphs.admg.ADMG`: directed edges as above, ``i <-> j`` two
  arrowheads (a bow ``i -> j`` plus ``i <-> j`` has an arrowhead at both ends);
* a :class:`~acdb_gym.core.graphs.admg.PAG`: its marks as they are.

:func:`latent_parts` turns it into the submitted directed edges ``D`` (tail, arrowhead),
bidirected edges ``B`` (two arrowheads), adjacencies ``A`` and marks, and :func:`score_latent`
computes every field of :class:`~acdb_gym.core.scoring.ScoreReport` from them (the fields are
defined in :func:`~acdb_gym.core.scoring.score`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from acdb_gym.core.graphs import ADMG, DAG, PAG, PDAG, LatentTruth, latent_truth, mag
from acdb_gym.core.types import BoolMatrix, FloatArray, IntArray

__all__ = [
    "LatentTruth",
    "SubmittedMarks",
    "ancestral_parts",
    "latent_parts",
    "latent_scores",
    "latent_truth",
    "pdag_view",
    "prf",
    "prf_columns",
]


@dataclass(frozen=True, eq=False)
class SubmittedMarks:
    """A submission as boolean matrices over the observed nodes.

    Attributes:
        directed: ``directed[i, j]`` iff a tail at ``i`` and an arrowhead at ``j``.
        bidirected: symmetric, an arrowhead at both ends.
        adjacent: symmetric, every asserted adjacency.
        arrowhead: ``arrowhead[i, j]`` iff an arrowhead at ``j`` on the edge ``i *-* j``.
        tail: ``tail[i, j]`` iff a tail at ``j`` on the edge ``i *-* j``.
    """

    directed: BoolMatrix
    bidirected: BoolMatrix
    adjacent: BoolMatrix
    arrowhead: BoolMatrix
    tail: BoolMatrix


def latent_parts(submission: PDAG | DAG | ADMG | PAG) -> SubmittedMarks:
    """The :class:`SubmittedMarks` of a submission (module docstring).

    Raises:
        TypeError: ``submission`` is none of the four graph types.
    """
    if isinstance(submission, DAG):
        submission = submission.to_pdag()
    if isinstance(submission, PDAG):
        directed = np.array(submission.directed)
        bidirected = np.zeros_like(directed)
        adjacent = np.array(submission.skeleton())
        return SubmittedMarks(directed, bidirected, adjacent, directed.copy(), directed.T.copy())
    if isinstance(submission, ADMG):
        directed = np.array(submission.directed)
        bidirected = np.array(submission.bidirected)
        arrowhead = directed | bidirected
        tail = directed.T & ~arrowhead
        return SubmittedMarks(directed, bidirected, np.array(submission.skeleton), arrowhead, tail)
    if isinstance(submission, PAG):
        arrowhead = np.array(submission.arrowhead)
        tail = np.array(submission.tail)
        return SubmittedMarks(
            tail.T & arrowhead,
            arrowhead & arrowhead.T,
            np.array(submission.adjacent),
            arrowhead,
            tail,
        )
    raise TypeError(
        f"submission must be a PDAG, a DAG, an ADMG or a PAG, got {type(submission).__name__}"
    )


def _n(mask: BoolMatrix) -> int:
    return int(np.count_nonzero(mask))


def prf(true_positives: int, n_predicted: int, n_true: int) -> tuple[float, float, float]:
    """Precision, recall and F1 with the contract's empty-set conventions (DESIGN §6)."""
    if n_predicted == 0 and n_true == 0:
        return 1.0, 1.0, 1.0
    precision = true_positives / n_predicted if n_predicted else 0.0
    recall = true_positives / n_true if n_true else 0.0
    total = precision + recall
    f1 = 2.0 * precision * recall / total if total > 0 else 0.0
    return precision, recall, f1


def prf_columns(
    true_positives: IntArray, n_predicted: IntArray, n_true: IntArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`prf` of every entry of the count arrays at once, bit for bit: the same divisions
    and products in the same order (an integer quotient is correctly rounded either way) and
    the same empty-set conventions."""
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(n_predicted > 0, true_positives / np.maximum(n_predicted, 1), 0.0)
        recall = np.where(n_true > 0, true_positives / np.maximum(n_true, 1), 0.0)
        total = precision + recall
        f1 = np.where(total > 0, 2.0 * precision * recall / np.where(total > 0, total, 1.0), 0.0)
    empty = (n_predicted == 0) & (n_true == 0)
    return np.where(empty, 1.0, precision), np.where(empty, 1.0, recall), np.where(empty, 1.0, f1)


def ancestral_parts(submission: PDAG | DAG | ADMG | PAG) -> SubmittedMarks:
    """The marks of the submission's MAG when it is fully marked (a DAG, a PDAG without
    undirected edges or an ADMG: :func:`~acdb_gym.core.graphs.admg.mag` of it), else of the
    submission as it is (a PAG, or a PDAG with undirected edges)."""
    if isinstance(submission, PDAG) and submission.is_fully_directed:
        submission = submission.to_dag()
    if isinstance(submission, DAG):
        submission = ADMG.from_dag(submission)
    if isinstance(submission, ADMG):
        return latent_parts(mag(submission))
    return latent_parts(submission)


def latent_scores(
    truth: LatentTruth, submission: PDAG | DAG | ADMG | PAG
) -> dict[str, float | int]:
    """The structural fields of a latent-level :class:`~acdb_gym.core.scoring.ScoreReport`.

    ``D``, ``B``, ``A`` are the submission's own (:func:`latent_parts`); ``D'``, ``A'`` and the
    marks are those of its MAG when it is fully marked (:func:`ancestral_parts`), so that
    submitting the true ADMG scores 1 on every field.

    * skeleton P/R/F1: ``A'`` against the MAG's adjacencies;
    * directed P/R/F1 against the ADMG's directed edges (predicted: ``D``);
    * bidirected P/R/F1 against the ADMG's bidirected pairs (predicted: ``B``);
    * compelled P/R/F1 against the PAG's edges ``i -> j`` (the directed edges identifiable from
      the observational distribution); predicted: ``D'`` less the pairs the PAG leaves with a
      circle at either end;
    * PAG arrowhead and tail P/R/F1 (Colombo et al. 2012's mark precision and recall):
      endpoints with that mark in the submission against endpoints with that mark in the PAG;
      a submitted mark where the PAG has a circle is neither rewarded nor punished;
    * SHD against the ADMG: each unordered pair in either graph costs at most 1: ``extra``,
      ``missing``, ``reversed`` (true ``a -> b`` only, submitted ``b -> a`` only),
      ``unresolved`` (an adjacency submitted without ``D`` or ``B`` on it where the truth has an
      edge) or ``mistyped`` (any other difference of the edge set on the pair).
    """
    marks = latent_parts(submission)
    ancestral = ancestral_parts(submission)
    admg, pag = truth.admg, truth.pag
    t_dir, t_bi = admg.directed, admg.bidirected
    t_adj = np.asarray(admg.skeleton)
    s_dir, s_bi, s_adj = marks.directed, marks.bidirected, marks.adjacent
    upper = np.triu(np.ones_like(t_adj), 1)

    mag_pairs = truth.mag_adjacent & upper
    sub_pairs = s_adj & upper
    anc_pairs = ancestral.adjacent & upper
    skeleton = prf(_n(mag_pairs & anc_pairs), _n(anc_pairs), _n(mag_pairs))
    directed = prf(_n(t_dir & s_dir), _n(s_dir), _n(t_dir))
    bidirected = prf(_n(t_bi & s_bi & upper), _n(s_bi & upper), _n(t_bi & upper))
    pag_directed = pag.tail.T & pag.arrowhead
    circle = pag.adjacent & ~pag.arrowhead & ~pag.tail
    unresolved_pairs = circle | circle.T
    predicted = ancestral.directed & ~unresolved_pairs
    compelled = prf(_n(predicted & pag_directed), _n(predicted), _n(pag_directed))
    heads = ancestral.arrowhead & ~circle
    tails = ancestral.tail & ~circle
    arrow = prf(_n(heads & pag.arrowhead), _n(heads), _n(pag.arrowhead))
    tail = prf(_n(tails & pag.tail), _n(tails), _n(pag.tail))

    both = t_adj & s_adj & upper
    same = (s_dir == t_dir) & (s_dir.T == t_dir.T) & (s_bi == t_bi)
    flipped = t_dir & ~t_dir.T & ~t_bi & s_dir.T & ~s_dir & ~s_bi
    reversed_ = both & (flipped | flipped.T)
    unmarked = both & ~s_dir & ~s_dir.T & ~s_bi
    counts = {
        "extra": _n(sub_pairs & ~t_adj),
        "missing": _n(t_adj & upper & ~s_adj),
        "reversed": _n(reversed_),
        "unresolved": _n(unmarked),
        "mistyped": _n(both & ~same & ~reversed_ & ~unmarked),
    }
    values: dict[str, float | int] = {}
    for name, triple in (
        ("skeleton", skeleton),
        ("compelled", compelled),
        ("directed", directed),
        ("bidirected", bidirected),
        ("pag_arrowhead", arrow),
        ("pag_tail", tail),
    ):
        for suffix, value in zip(("precision", "recall", "f1"), triple, strict=True):
            values[f"{name}_{suffix}"] = value
    values["shd"] = sum(counts.values())
    for name, count in counts.items():
        values[f"shd_{name}"] = count
    return values


def pdag_view(graph: PDAG | ADMG | PAG) -> PDAG:
    """A submission as a PDAG, for what draws or replays PDAGs (rendering, revision records):
    its directed edges ``D``, its adjacencies without ``D`` or ``B`` as undirected edges, and no
    bidirected edge. A PAG whose directed edges close a cycle keeps its adjacencies only."""
    if isinstance(graph, PDAG):
        return graph
    marks = latent_parts(graph)
    rest = marks.adjacent & ~marks.bidirected
    try:
        return PDAG(marks.directed, rest & ~marks.directed & ~marks.directed.T)
    except ValueError:
        return PDAG(np.zeros_like(rest), rest)
