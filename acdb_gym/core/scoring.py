"""The scoring contract of the benchmark (DESIGN §6): :class:`ScoreReport` and :func:`score`.

Everything is computed on boolean adjacency matrices; rewards, sweeps and reports call
:func:`score` and never re-implement any part of it.

>>> truth = DAG.from_edges(3, [(0, 2), (1, 2)])
>>> report = score(truth, PDAG.from_edges(3, directed=[(0, 2)], undirected=[(1, 2)]))
>>> report.directed_f1, report.shd, report.shd_unresolved
(0.6666666666666666, 1, 1)
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol

import numpy as np

from acdb_gym.core.anytime import anytime_area, anytime_of, directed_f1_of
from acdb_gym.core.graphs import (
    ADMG,
    DAG,
    PAG,
    PDAG,
    cpdag,
    essential_graph,
    minimum_intervention_set,
)
from acdb_gym.core.latent_scoring import LatentTruth, latent_scores, prf
from acdb_gym.core.types import BoolMatrix

__all__ = [
    "LATENT_SCORE_FIELDS",
    "SCORE_FIELDS",
    "InstanceLike",
    "ScoreReport",
    "SubmissionTypeError",
    "anytime_area",
    "check_submission",
    "directed_f1_of",
    "report_from_counts",
    "score",
]


class SubmissionTypeError(TypeError, ValueError):
    """A submission that is neither a :class:`PDAG` nor a :class:`DAG`.

    A ``TypeError`` for :func:`score` and a ``ValueError`` for the session, which refuses every
    invalid submission with a ``ValueError`` (and stays open).
    """


class InstanceLike(Protocol):
    """What :func:`score` reads from an ``Instance``: the true DAG and the minimum set ``I*``."""

    @property
    def dag(self) -> DAG:
        """The true causal graph."""
        ...

    @property
    def i_star(self) -> frozenset[int]:
        """The minimum intervention set."""
        ...


@dataclass(frozen=True, eq=False)
class ScoreReport:
    """Every number of the scoring contract (DESIGN §6) for one submission.

    The field names are the columns of every results file. Precision, recall, F1, the
    efficiency and the anytime F1 are in ``[0, 1]``; the SHD fields are counts of node pairs.
    ``anytime_f1`` is NaN when it is undefined: experiments were spent but the agent stated no
    graph with the first (DESIGN §6, "Anytime F1"); two reports are equal when every field is,
    NaN counting as equal to NaN.
    """

    skeleton_precision: float
    skeleton_recall: float
    skeleton_f1: float
    compelled_precision: float
    compelled_recall: float
    compelled_f1: float
    directed_precision: float
    directed_recall: float
    directed_f1: float
    shd: int
    shd_extra: int
    shd_missing: int
    shd_reversed: int
    shd_unresolved: int
    interventions_used: int
    i_star_size: int
    efficiency: float
    essential_f1: float
    anytime_f1: float
    bidirected_precision: float | None = None
    bidirected_recall: float | None = None
    bidirected_f1: float | None = None
    pag_arrowhead_precision: float | None = None
    pag_arrowhead_recall: float | None = None
    pag_arrowhead_f1: float | None = None
    pag_tail_precision: float | None = None
    pag_tail_recall: float | None = None
    pag_tail_f1: float | None = None
    shd_mistyped: int | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScoreReport):
            return NotImplemented
        return all(_same_value(getattr(self, name), getattr(other, name)) for name in _ALL_FIELDS)

    def __hash__(self) -> int:
        return hash(tuple(_hashable(getattr(self, name)) for name in _ALL_FIELDS))

    def to_dict(self) -> dict[str, float | int]:
        """The fields as a plain dict, in declaration order (the results-file column order).

        The latent-level fields (:data:`LATENT_SCORE_FIELDS`) appear only on a latent level,
        so the rows of a causally sufficient level keep exactly :data:`SCORE_FIELDS`.
        """
        values = {field.name: getattr(self, field.name) for field in fields(self)}
        return {name: value for name, value in values.items() if value is not None}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> ScoreReport:
        """The report of :meth:`to_dict`'s dict (an env's ``info["score"]``): the inverse of
        :meth:`to_dict`; keys that are no field are ignored.

        >>> report = ScoreReport.from_dict(score(DAG.empty(2), PDAG.empty(2)).to_dict())
        >>> report.directed_f1, report.is_latent
        (1.0, False)

        Raises:
            KeyError: a field of :data:`SCORE_FIELDS` is missing.
        """
        missing = [name for name in SCORE_FIELDS if name not in values]
        if missing:
            raise KeyError(f"a score needs every field of SCORE_FIELDS; missing {missing}")
        return cls(**{name: values[name] for name in _ALL_FIELDS if name in values})

    def __getitem__(self, name: str) -> Any:
        """A field by name, as when scores were dicts (``result.score["directed_f1"]``).

        Deprecated: read the attribute (``result.score.directed_f1``).
        """
        if name not in _ALL_FIELDS or getattr(self, name) is None:
            raise KeyError(name)
        warnings.warn(
            f'score["{name}"] is deprecated: a score is a ScoreReport, read score.{name}',
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, name)

    @property
    def is_latent(self) -> bool:
        """Whether the report scores a world with hidden confounders (DESIGN §6.3)."""
        return self.shd_mistyped is not None


def _same_value(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _hashable(value: object) -> object:
    return "nan" if isinstance(value, float) and math.isnan(value) else value


_ALL_FIELDS = tuple(field.name for field in fields(ScoreReport))
SCORE_FIELDS: tuple[str, ...] = _ALL_FIELDS[: _ALL_FIELDS.index("bidirected_precision")]
"""The report's field names, in order: the score columns of every results file."""
LATENT_SCORE_FIELDS: tuple[str, ...] = _ALL_FIELDS[len(SCORE_FIELDS) :]
"""The further columns of a latent level's rows (DESIGN §6.3)."""


def score(
    truth: DAG | InstanceLike | LatentTruth,
    submission: PDAG | DAG | ADMG | PAG,
    *,
    interventions_used: int | None = None,
    targets: Iterable[int] = (),
    i_star_size: int | None = None,
    stated: Sequence[PDAG | DAG | None] | None = None,
    budget: int | None = None,
) -> ScoreReport:
    """Score a submitted graph against the true DAG (DESIGN §6).

    Notation: ``E`` are the true DAG's edges, ``C_d`` / ``C_u`` the directed / undirected edges
    of its CPDAG, ``S_d`` / ``S_u`` the submission's directed / undirected edges.

    Precision, recall and F1 (every family): precision = TP / |predicted|, recall = TP / |truth|,
    F1 = 2PR / (P + R). Conventions: an empty predicted set gives precision 0, an empty truth set
    gives recall 0, and F1 is 0 when P + R = 0 — except that when both sets are empty,
    P = R = F1 = 1. (So on a true graph with no edges, a submission of only undirected edges
    scores skeleton F1 0 but directed and compelled F1 1: it predicts no direction.)

    - **skeleton**: truth = the unordered pairs of ``E``; predicted = the unordered pairs of
      ``S_d ∪ S_u`` (direction ignored).
    - **compelled**: truth = ``C_d``; predicted = the edges of ``S_d`` whose pair is not in
      ``C_u``. Orienting a reversible edge either way is neither rewarded nor punished; leaving a
      compelled edge undirected is a false negative; a reversed compelled edge is one false
      positive and one false negative; a directed edge between non-adjacent nodes is a false
      positive.
    - **directed**: truth = ``E``; predicted = ``S_d``. An undirected edge predicts no direction,
      so it is never a true or false positive here.
    - **SHD**: over the union of the true and the submitted adjacencies, each unordered pair
      costs at most 1: ``extra`` (submitted, not in the truth), ``missing`` (in the truth, not
      submitted), ``reversed`` (true ``a -> b``, submitted ``b -> a``) or ``unresolved`` (true
      ``a -> b``, submitted ``a - b``). A pair submitted with the true direction costs 0.
      ``shd`` is the sum of the four counts; it is 0 iff the submission is exactly the DAG.
    - **efficiency**: ``η = 1`` if ``interventions_used <= |I*|`` (including 0 interventions),
      else ``|I*| / interventions_used`` (so 0 when ``|I*| = 0`` and any intervention was used).
    - **essential_f1** (v1): the compelled F1 with the CPDAG replaced by the interventional
      essential graph of the distinct ``targets``: truth = its directed edges; predicted = the
      edges of ``S_d`` whose pair is not undirected in it. With no targets it equals
      ``compelled_f1``.
    - **anytime_f1**: :func:`anytime_area` of the directed F1 of each graph in ``stated`` (one
      per experiment, the graph held before its result; None where none was stated), the
      submission's directed F1 and ``budget``. With no intervention it is the directed F1;
      with interventions and ``stated`` None (or its first entry None) it is NaN.

    Args:
        truth: the true :class:`DAG`, or an ``Instance`` (anything with ``.dag`` and
            ``.i_star``).
        submission: the submitted :class:`PDAG`; a :class:`DAG` is taken as fully directed.
        interventions_used: interventions spent; defaults to ``len(targets)``.
        targets: the intervened nodes in order; repeats count once for ``essential_f1`` and
            every time for the default ``interventions_used``.
        i_star_size: ``|I*|``. Defaults to ``len(truth.i_star)`` for an ``Instance`` (a
            different value is an error) and to ``len(minimum_intervention_set(truth))`` for a
            bare DAG.
        stated: the graphs the agent held before each experiment (``interventions_used``
            entries), for ``anytime_f1``.
        budget: the episode's budget ``B`` for ``anytime_f1``; defaults to the instance's
            ``budget`` (else ``interventions_used``).

    Returns:
        A :class:`ScoreReport`.

    Raises:
        TypeError: ``truth`` or ``submission`` has the wrong type.
        ValueError: the submission's node count differs from the truth's; a target is out of
            range; ``interventions_used`` or ``i_star_size`` is negative, not an integer, or
            (for ``i_star_size``) disagrees with the instance.

    A world with hidden confounders (a :class:`~acdb_gym.core.latent_scoring.LatentTruth`, or an
    instance whose ``latent_truth`` is not None) is scored by :func:`score_latent` instead.
    """
    latent = truth if isinstance(truth, LatentTruth) else getattr(truth, "latent_truth", None)
    if latent is not None:
        report = score_latent(
            truth,
            latent,
            submission,
            interventions_used=interventions_used,
            targets=targets,
            i_star_size=i_star_size,
        )
        return _with_anytime(report, latent.admg.directed, truth, stated, budget)
    if isinstance(submission, ADMG | PAG):
        raise SubmissionTypeError(
            f"this world is causally sufficient: a {type(submission).__name__} cannot be scored "
            "against it; submit a PDAG or a DAG"
        )
    assert not isinstance(truth, LatentTruth)
    dag, star = _truth_parts(truth, i_star_size)
    graph = check_submission(submission, dag.n_nodes)
    target_list = _checked_targets(targets, dag.n_nodes)
    used = len(target_list) if interventions_used is None else _count_arg(interventions_used)

    adjacency = dag.adjacency
    s_dir, s_und = graph.directed, graph.undirected
    true_pairs = np.triu(adjacency | adjacency.T)
    sub_pairs = np.triu(s_dir | s_dir.T | s_und)
    base = cpdag(dag)
    essential = essential_graph(dag, sorted(set(target_list))) if target_list else base

    skeleton = prf(_n(true_pairs & sub_pairs), _n(sub_pairs), _n(true_pairs))
    compelled = _oriented_prf(base, s_dir)
    directed = prf(_n(adjacency & s_dir), _n(s_dir), _n(adjacency))
    extra = _n(sub_pairs & ~true_pairs)
    missing = _n(true_pairs & ~sub_pairs)
    reversed_ = _n(adjacency & s_dir.T)  # a DAG has at most one direction per pair
    unresolved = _n(adjacency & s_und)
    return report_from_counts(
        skeleton,
        compelled,
        directed,
        extra=extra,
        missing=missing,
        reversed_=reversed_,
        unresolved=unresolved,
        used=used,
        star=star,
        essential_f1=_oriented_prf(essential, s_dir)[2],
        anytime_f1=anytime_of(adjacency, directed[2], used, truth, stated, budget),
    )


PRF = tuple[float, float, float]


def report_from_counts(
    skeleton: PRF,
    compelled: PRF,
    directed: PRF,
    *,
    extra: int,
    missing: int,
    reversed_: int,
    unresolved: int,
    used: int,
    star: int,
    essential_f1: float,
    anytime_f1: float,
) -> ScoreReport:
    """A sufficient world's report from its counts (DESIGN §6): :func:`score`'s (many at once:
    :func:`~acdb_gym.core.many_scores.score_rows`)."""
    return ScoreReport(
        skeleton_precision=skeleton[0],
        skeleton_recall=skeleton[1],
        skeleton_f1=skeleton[2],
        compelled_precision=compelled[0],
        compelled_recall=compelled[1],
        compelled_f1=compelled[2],
        directed_precision=directed[0],
        directed_recall=directed[1],
        directed_f1=directed[2],
        shd=extra + missing + reversed_ + unresolved,
        shd_extra=extra,
        shd_missing=missing,
        shd_reversed=reversed_,
        shd_unresolved=unresolved,
        interventions_used=used,
        i_star_size=star,
        efficiency=1.0 if used <= star else star / used,
        essential_f1=essential_f1,
        anytime_f1=anytime_f1,
    )


def _with_anytime(
    report: ScoreReport,
    truth_directed: BoolMatrix,
    truth: object,
    stated: Sequence[PDAG | DAG | None] | None,
    budget: int | None,
) -> ScoreReport:
    value = anytime_of(
        truth_directed, report.directed_f1, report.interventions_used, truth, stated, budget
    )
    return replace(report, anytime_f1=value)


def score_latent(
    truth: object,
    latent: LatentTruth,
    submission: PDAG | DAG | ADMG | PAG,
    *,
    interventions_used: int | None = None,
    targets: Iterable[int] = (),
    i_star_size: int | None = None,
) -> ScoreReport:
    """Score a submission against a world with hidden confounders (DESIGN §6.3).

    The structural fields are :func:`~acdb_gym.core.latent_scoring.latent_scores`'s (skeleton
    against the MAG, directed and SHD against the ADMG, compelled against the PAG's directed
    edges, plus the bidirected and PAG-mark fields). ``essential_f1`` equals ``compelled_f1``:
    the PAG is not refined by the experiments. ``i_star_size`` defaults to the instance's
    ``|I*|`` (or, for a bare :class:`LatentTruth`, the minimum intervention set of the ADMG's
    directed part), and ``efficiency`` is computed from it as on every level.

    Raises:
        SubmissionTypeError: the submission is none of the four graph types.
        ValueError: the submission's node count differs, or an argument is invalid.
    """
    admg = latent.admg
    n_nodes = admg.n_nodes
    if isinstance(submission, DAG):
        submission = submission.to_pdag()
    if not isinstance(submission, PDAG | ADMG | PAG):
        raise SubmissionTypeError(
            f"submission must be a PDAG, a DAG, an ADMG or a PAG, got {type(submission).__name__}"
        )
    if submission.n_nodes != n_nodes:
        raise ValueError(
            f"submission has {submission.n_nodes} nodes but the true graph has {n_nodes}"
        )
    target_list = _checked_targets(targets, n_nodes)
    used = len(target_list) if interventions_used is None else _count_arg(interventions_used)
    if isinstance(truth, LatentTruth):
        default_star = len(minimum_intervention_set(DAG(admg.directed)))
    else:
        default_star = len(getattr(truth, "i_star"))  # noqa: B009 - an Instance
    if i_star_size is None:
        star = default_star
    else:
        star = _count_arg(i_star_size, "i_star_size")
        if not isinstance(truth, LatentTruth) and star != default_star:
            raise ValueError(
                f"i_star_size = {i_star_size} disagrees with the instance's |I*| = {default_star}"
            )
    values = latent_scores(latent, submission)
    structural: dict[str, Any] = {name: values[name] for name in _ALL_FIELDS if name in values}
    return ScoreReport(
        **structural,
        interventions_used=used,
        i_star_size=star,
        efficiency=1.0 if used <= star else star / used,
        essential_f1=float(values["compelled_f1"]),
        anytime_f1=float(values["directed_f1"]) if used == 0 else math.nan,
    )


# --------------------------------------------------------------------------- metric helpers


def _n(mask: BoolMatrix) -> int:
    return int(np.count_nonzero(mask))


def _oriented_prf(reference: PDAG, submitted: BoolMatrix) -> tuple[float, float, float]:
    """P/R/F1 of the submitted directions against the directed edges of ``reference``, ignoring
    submitted directions on pairs that ``reference`` leaves undirected."""
    predicted = submitted & ~reference.undirected
    true_positives = _n(predicted & reference.directed)
    return prf(true_positives, _n(predicted), _n(reference.directed))


# --------------------------------------------------------------------------- argument checks


def _truth_parts(truth: DAG | InstanceLike, i_star_size: int | None) -> tuple[DAG, int]:
    if isinstance(truth, DAG):
        if i_star_size is None:
            return truth, len(minimum_intervention_set(truth))
        return truth, _count_arg(i_star_size, "i_star_size")
    dag = getattr(truth, "dag", None)
    if not isinstance(dag, DAG) or not hasattr(truth, "i_star"):
        raise TypeError(
            f"truth must be a DAG or an Instance (with .dag and .i_star), got {type(truth)!r}"
        )
    star = len(truth.i_star)
    if i_star_size is not None and _count_arg(i_star_size, "i_star_size") != star:
        raise ValueError(f"i_star_size = {i_star_size} disagrees with the instance's |I*| = {star}")
    return dag, star


def check_submission(submission: object, n_nodes: int) -> PDAG:
    """``submission`` as a :class:`PDAG` over ``n_nodes`` nodes (a :class:`DAG` fully directed).

    Raises:
        SubmissionTypeError: it is neither a PDAG nor a DAG.
        ValueError: it has another number of nodes.
    """
    if isinstance(submission, DAG):
        submission = submission.to_pdag()
    if not isinstance(submission, PDAG):
        raise SubmissionTypeError(
            f"submission must be a PDAG or a DAG, got {type(submission).__name__}"
        )
    if submission.n_nodes != n_nodes:
        raise ValueError(
            f"submission has {submission.n_nodes} nodes but the true DAG has {n_nodes}"
        )
    return submission


def _checked_targets(targets: Iterable[int], n_nodes: int) -> list[int]:
    checked = []
    for target in targets:
        index = _int_arg(target, "targets entries")
        if not 0 <= index < n_nodes:
            raise ValueError(f"targets must be node indices in [0, {n_nodes}), got {index}")
        checked.append(index)
    return checked


def _int_arg(value: Any, name: str) -> int:
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def _count_arg(value: Any, name: str = "interventions_used") -> int:
    number = _int_arg(value, name)
    if number < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {number}")
    return number
