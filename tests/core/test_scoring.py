"""Tests for acdb_gym.core.scoring: hand-computed cases, conventions and invariants."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acdb_gym.core.graphs import (
    DAG,
    PDAG,
    cpdag,
    essential_graph,
    find_cycle,
    minimum_intervention_set,
)
from acdb_gym.core.scoring import ScoreReport, SubmissionTypeError, check_submission, score
from acdb_gym.core.types import Edge

FIELD_ORDER = [
    "skeleton_precision",
    "skeleton_recall",
    "skeleton_f1",
    "compelled_precision",
    "compelled_recall",
    "compelled_f1",
    "directed_precision",
    "directed_recall",
    "directed_f1",
    "shd",
    "shd_extra",
    "shd_missing",
    "shd_reversed",
    "shd_unresolved",
    "interventions_used",
    "i_star_size",
    "efficiency",
    "essential_f1",
    "anytime_f1",
]
PRF_FAMILIES = ("skeleton", "compelled", "directed")

# G: 0 -> 1 -> 2 <- 3. CPDAG: 1 -> 2 <- 3 compelled (v-structure), 0 - 1 reversible.
# Covered edges: only 0 -> 1, so |I*| = 1.
G = DAG.from_edges(4, [(0, 1), (1, 2), (3, 2)])
CHAIN = DAG.from_edges(3, [(0, 1), (1, 2)])  # CPDAG fully undirected
COLLIDER = DAG.from_edges(3, [(0, 2), (1, 2)])  # CPDAG fully directed, |I*| = 0
EMPTY3 = DAG.empty(3)


def sub(n: int, directed: Sequence[Edge] = (), undirected: Sequence[Edge] = ()) -> PDAG:
    return PDAG.from_edges(n, directed=directed, undirected=undirected)


def prf(p: float, r: float, f: float) -> tuple[float, float, float]:
    return p, r, f


ONES = prf(1, 1, 1)
ZEROS = prf(0, 0, 0)

# name: (truth, submission, skeleton, compelled, directed, (extra, missing, reversed,
# unresolved), essential_f1 with no targets). Every number below is worked out by hand in the
# comment beside it.
HAND_CASES = {
    # The oracle: everything perfect.
    "oracle": (G, G.to_pdag(), ONES, ONES, ONES, (0, 0, 0, 0), 1.0),
    # Nothing submitted: truth sets non-empty, predicted empty ⇒ P = R = F1 = 0; 3 missing.
    "empty_submission": (G, PDAG.empty(4), ZEROS, ZEROS, ZEROS, (0, 3, 0, 0), 0.0),
    # 1 -> 2 reversed. Compelled: pred {2->1, 3->2} (0->1 sits on a C_u pair), truth
    # {1->2, 3->2}: TP 1 ⇒ 1/2 each. Directed: pred 3, truth 3, TP 2 ⇒ 2/3 each.
    "reversed_compelled": (
        G,
        sub(4, [(0, 1), (2, 1), (3, 2)]),
        ONES,
        prf(1 / 2, 1 / 2, 1 / 2),
        prf(2 / 3, 2 / 3, 2 / 3),
        (0, 0, 1, 0),
        1 / 2,
    ),
    # 1 - 2 left undirected, reversible 0 - 1 reversed. Compelled: pred {3->2} ⇒ P 1, R 1/2,
    # F1 2/3. Directed: pred {1->0, 3->2}, TP 1 ⇒ P 1/2, R 1/3, F1 = (1/3)/(5/6) = 2/5.
    "unresolved_and_reversed_reversible": (
        G,
        sub(4, [(1, 0), (3, 2)], [(1, 2)]),
        ONES,
        prf(1, 1 / 2, 2 / 3),
        prf(1 / 2, 1 / 3, 2 / 5),
        (0, 0, 1, 1),
        2 / 3,
    ),
    # 3 -> 2 missing, 0 -> 3 extra. Skeleton: pairs {01, 12, 03} vs {01, 12, 23}: 2/3 each.
    # Compelled: pred {1->2, 0->3} vs {1->2, 3->2}: 1/2 each. Directed: TP 2 of 3 ⇒ 2/3 each.
    "extra_and_missing": (
        G,
        sub(4, [(0, 1), (1, 2), (0, 3)]),
        prf(2 / 3, 2 / 3, 2 / 3),
        prf(1 / 2, 1 / 2, 1 / 2),
        prf(2 / 3, 2 / 3, 2 / 3),
        (1, 1, 0, 0),
        1 / 2,
    ),
    # The CPDAG: compelled perfect; directed pred {1->2, 3->2} ⇒ P 1, R 2/3, F1 4/5.
    "cpdag": (
        G,
        cpdag(G),
        ONES,
        ONES,
        prf(1, 2 / 3, 4 / 5),
        (0, 0, 0, 1),
        1.0,
    ),
    # The DAG plus an undirected extra edge 0 - 2: skeleton P 3/4, R 1, F1 = (3/2)/(7/4) = 6/7;
    # an undirected edge predicts no direction, so compelled and directed stay perfect.
    "extra_undirected": (
        G,
        sub(4, [(0, 1), (1, 2), (3, 2)], [(0, 2)]),
        prf(3 / 4, 1, 6 / 7),
        ONES,
        ONES,
        (1, 0, 0, 0),
        1.0,
    ),
    # Collider left fully undirected: compelled truth {0->2, 1->2}, pred empty ⇒ 0.
    "collider_undirected": (
        COLLIDER,
        sub(3, [], [(0, 2), (1, 2)]),
        ONES,
        ZEROS,
        ZEROS,
        (0, 0, 0, 2),
        0.0,
    ),
    # Chain left undirected: compelled truth and pred both empty ⇒ 1; directed pred empty ⇒ 0.
    "chain_undirected": (
        CHAIN,
        sub(3, [], [(0, 1), (1, 2)]),
        ONES,
        ONES,
        ZEROS,
        (0, 0, 0, 2),
        1.0,
    ),
    # A Markov-equivalent DAG 0 <- 1 <- 2: compelled neither rewards nor punishes it (both
    # empty ⇒ 1); directed and SHD count both edges as reversed.
    "chain_equivalent_reversed": (
        CHAIN,
        sub(3, [(1, 0), (2, 1)]),
        ONES,
        ONES,
        ZEROS,
        (0, 0, 2, 0),
        1.0,
    ),
    # Empty truth, empty submission: every family both-empty ⇒ 1.
    "both_empty": (EMPTY3, PDAG.empty(3), ONES, ONES, ONES, (0, 0, 0, 0), 1.0),
    # Empty truth, one undirected edge: skeleton pred 1, truth 0 ⇒ 0; compelled and directed
    # are both-empty ⇒ 1 (the convention rewards predicting no direction on an empty graph).
    "empty_truth_undirected_edge": (
        EMPTY3,
        sub(3, [], [(0, 1)]),
        ZEROS,
        ONES,
        ONES,
        (1, 0, 0, 0),
        1.0,
    ),
    # Empty truth, one directed edge: every predicted set has one FP, truth empty ⇒ 0.
    "empty_truth_directed_edge": (
        EMPTY3,
        sub(3, [(0, 1)]),
        ZEROS,
        ZEROS,
        ZEROS,
        (1, 0, 0, 0),
        0.0,
    ),
}


@pytest.mark.parametrize("name", list(HAND_CASES))
def test_hand_cases(name: str) -> None:
    truth, submission, skeleton, compelled, directed, shd_parts, essential = HAND_CASES[name]
    report = score(truth, submission)
    for family, expected in zip(PRF_FAMILIES, (skeleton, compelled, directed), strict=True):
        got = tuple(getattr(report, f"{family}_{m}") for m in ("precision", "recall", "f1"))
        assert got == pytest.approx(expected, abs=1e-12), family
    extra, missing, reversed_, unresolved = shd_parts
    assert (report.shd_extra, report.shd_missing) == (extra, missing)
    assert (report.shd_reversed, report.shd_unresolved) == (reversed_, unresolved)
    assert report.shd == sum(shd_parts)
    assert report.essential_f1 == pytest.approx(essential, abs=1e-12)
    assert report.interventions_used == 0
    assert report.efficiency == 1.0


def test_i_star_sizes_of_the_hand_graphs() -> None:
    assert score(G, G).i_star_size == 1
    assert score(CHAIN, CHAIN).i_star_size == 1
    assert score(COLLIDER, COLLIDER).i_star_size == 0
    assert score(EMPTY3, EMPTY3).i_star_size == 0


def test_directed_precision_can_exceed_skeleton_precision() -> None:
    # An undirected extra edge lowers skeleton precision but not directed precision.
    report = score(G, sub(4, [(0, 1), (1, 2), (3, 2)], [(0, 2)]))
    assert report.directed_precision == 1.0
    assert report.skeleton_precision == pytest.approx(3 / 4)


# --------------------------------------------------------------------------- essential_f1


@pytest.mark.parametrize(
    ("truth", "submission", "targets", "expected"),
    [
        # Intervening on X0 orients 0 -> 1: the essential graph is G itself.
        # pred {0->1, 2->1, 3->2} vs G: TP 2 of 3 ⇒ 2/3.
        (G, sub(4, [(0, 1), (2, 1), (3, 2)]), (0,), 2 / 3),
        # pred {1->2, 3->2} vs 3 edges: P 1, R 2/3 ⇒ 4/5 (the CPDAG misses what X0 revealed).
        (G, cpdag(G), (0,), 4 / 5),
        # pred {1->0, 3->2}: TP 1 ⇒ P 1/2, R 1/3 ⇒ 2/5.
        (G, sub(4, [(1, 0), (3, 2)], [(1, 2)]), (0, 0), 2 / 5),
        # Intervening on X3 or X2 reveals nothing new: the essential graph is the CPDAG.
        (G, cpdag(G), (3, 2), 1.0),
        # Chain with target X2: 1 -> 2 oriented, 0 - 1 stays undirected. Undirected
        # submission: pred empty, truth {1->2} ⇒ 0.
        (CHAIN, sub(3, [], [(0, 1), (1, 2)]), (2,), 0.0),
        # Markov-equivalent reversal: pred {2->1} (1->0 is on an undirected pair) ⇒ 0.
        (CHAIN, sub(3, [(1, 0), (2, 1)]), (2,), 0.0),
        # Chain with target X1: both edges oriented; submission 0 -> 1 only ⇒ P 1, R 1/2.
        (CHAIN, sub(3, [(0, 1)]), (1,), 2 / 3),
    ],
)
def test_essential_f1_hand_cases(
    truth: DAG, submission: PDAG, targets: tuple[int, ...], expected: float
) -> None:
    report = score(truth, submission, targets=targets)
    assert report.essential_f1 == pytest.approx(expected, abs=1e-12)
    assert report.interventions_used == len(targets)


# --------------------------------------------------------------------------- efficiency


@pytest.mark.parametrize(
    ("truth", "kwargs", "used", "i_star", "efficiency"),
    [
        # |I*| = 2 (two disjoint covered edges), used 1 < |I*| ⇒ 1.
        (DAG.from_edges(4, [(0, 1), (2, 3)]), {"targets": (0,)}, 1, 2, 1.0),
        # used = |I*| = 1 ⇒ 1.
        (G, {"targets": (0,)}, 1, 1, 1.0),
        # used 0 ⇒ 1.
        (G, {}, 0, 1, 1.0),
        # used 4 > |I*| = 1 ⇒ 1/4.
        (G, {"interventions_used": 4}, 4, 1, 0.25),
        # repeats count: targets (0, 0) ⇒ used 2 ⇒ 1/2.
        (G, {"targets": (0, 0)}, 2, 1, 0.5),
        # an explicit count overrides len(targets).
        (G, {"targets": (0, 0), "interventions_used": 3}, 3, 1, 1 / 3),
        # |I*| = 0: no interventions ⇒ 1, any interventions ⇒ 0.
        (COLLIDER, {}, 0, 0, 1.0),
        (COLLIDER, {"targets": (2, 0)}, 2, 0, 0.0),
        # i_star_size given explicitly for a bare DAG.
        (G, {"interventions_used": 5, "i_star_size": 2}, 5, 2, 0.4),
    ],
)
def test_efficiency(truth: DAG, kwargs: dict, used: int, i_star: int, efficiency: float) -> None:
    report = score(truth, truth, **kwargs)
    assert report.interventions_used == used
    assert report.i_star_size == i_star
    assert report.efficiency == pytest.approx(efficiency, abs=1e-15)


@given(used=st.integers(0, 50), star=st.integers(0, 50))
def test_efficiency_formula(used: int, star: int) -> None:
    report = score(COLLIDER, COLLIDER, interventions_used=used, i_star_size=star)
    assert report.efficiency == (1.0 if used <= star else star / used)
    assert 0.0 <= report.efficiency <= 1.0


# --------------------------------------------------------------------------- truth as Instance


@dataclass(frozen=True)
class FakeInstance:
    dag: DAG
    i_star: frozenset[int]


def test_instance_like_truth_uses_its_i_star() -> None:
    instance = FakeInstance(G, frozenset({0, 2, 3}))
    report = score(instance, G, targets=(0, 1, 2, 3, 1, 2))
    assert report.i_star_size == 3
    assert report.efficiency == pytest.approx(0.5)
    assert report.directed_f1 == 1.0
    assert score(instance, G, i_star_size=3).i_star_size == 3


def test_instance_i_star_mismatch_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"i_star_size = 1 disagrees .* \|I\*\| = 3"):
        score(FakeInstance(G, frozenset({0, 2, 3})), G, i_star_size=1)


# --------------------------------------------------------------------------- report object


def test_report_fields_and_to_dict() -> None:
    report = score(G, cpdag(G), targets=(0,))
    # The latent-level fields follow the contract's and are left out of a sufficient row.
    assert [f.name for f in fields(ScoreReport)][: len(FIELD_ORDER)] == FIELD_ORDER
    as_dict = report.to_dict()
    assert list(as_dict) == FIELD_ORDER
    assert as_dict["shd"] == 1 and isinstance(as_dict["shd"], int)
    assert as_dict["directed_f1"] == pytest.approx(0.8)
    assert ScoreReport(**as_dict) == report  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        report.shd = 0  # type: ignore[misc]


def test_dag_submission_equals_its_pdag() -> None:
    submission = DAG.from_edges(4, [(1, 0), (2, 1), (0, 3)])
    assert score(G, submission, targets=(1,)) == score(G, submission.to_pdag(), targets=(1,))


# --------------------------------------------------------------------------- errors


def test_size_mismatch_names_both_sizes() -> None:
    with pytest.raises(ValueError, match="submission has 3 nodes but the true DAG has 4"):
        score(G, PDAG.empty(3))
    with pytest.raises(ValueError, match="submission has 5 nodes but the true DAG has 4"):
        score(FakeInstance(G, frozenset({0})), DAG.empty(5))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"targets": (0, 4)}, r"targets must be node indices in \[0, 4\), got 4"),
        ({"targets": (-1,)}, r"targets must be node indices in \[0, 4\), got -1"),
        ({"targets": (1.0,)}, r"targets entries must be an integer, got 1.0"),
        ({"interventions_used": -2}, r"interventions_used must be a non-negative integer, got -2"),
        ({"interventions_used": 1.5}, r"interventions_used must be an integer, got 1.5"),
        ({"i_star_size": -1}, r"i_star_size must be a non-negative integer, got -1"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        score(G, G, **kwargs)


def test_bad_types() -> None:
    with pytest.raises(TypeError, match="truth must be a DAG or an Instance"):
        score(G.adjacency, G)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="submission must be a PDAG or a DAG"):
        score(G, G.adjacency)  # type: ignore[arg-type]


def test_one_submission_check_for_score_and_session() -> None:
    """check_submission is what score and the session both run: a wrong type is a TypeError for
    score's callers and a ValueError for the session's, with one message."""
    assert check_submission(G, 4) == G.to_pdag()
    pdag = PDAG.empty(4)
    assert check_submission(pdag, 4) is pdag
    with pytest.raises(SubmissionTypeError, match="a PDAG or a DAG, got ndarray") as caught:
        check_submission(G.adjacency, 4)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    with pytest.raises(ValueError, match="submission has 4 nodes but the true DAG has 3"):
        check_submission(pdag, 3)


# --------------------------------------------------------------------------- properties

CODES_RANDOM = ("none", "none", "forward", "backward", "undirected")
CODES_NEAR_TRUTH = ("same",) * 6 + ("none", "forward", "backward", "undirected")


@st.composite
def dags(draw: st.DrawFn, max_nodes: int = 8) -> DAG:
    n = draw(st.integers(1, max_nodes))
    order = draw(st.permutations(range(n)))
    pairs = list(itertools.combinations(range(n), 2))
    present = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    adjacency = np.zeros((n, n), dtype=bool)
    for (a, b), keep in zip(pairs, present, strict=True):
        adjacency[order[a], order[b]] = keep
    return DAG(adjacency)


@st.composite
def submissions(draw: st.DrawFn, dag: DAG) -> PDAG:
    """Any valid PDAG over dag's nodes: random, or a few edits away from the truth."""
    n = dag.n_nodes
    codes = draw(st.sampled_from([CODES_RANDOM, CODES_NEAR_TRUTH]))
    directed = np.zeros((n, n), dtype=bool)
    undirected = np.zeros((n, n), dtype=bool)
    for a, b in itertools.combinations(range(n), 2):
        code = draw(st.sampled_from(codes))
        if code == "same":
            directed[a, b], directed[b, a] = dag.adjacency[a, b], dag.adjacency[b, a]
        elif code == "forward":
            directed[a, b] = True
        elif code == "backward":
            directed[b, a] = True
        elif code == "undirected":
            undirected[a, b] = undirected[b, a] = True
    # Break directed cycles by un-orienting one edge of each.
    while (cycle := find_cycle(directed)) is not None:
        a, b = cycle[0], cycle[1]
        directed[a, b] = False
        undirected[a, b] = undirected[b, a] = True
    return PDAG(directed, undirected)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[DAG, PDAG, list[int]]:
    dag = draw(dags())
    submission = draw(submissions(dag))
    targets = draw(st.lists(st.integers(0, dag.n_nodes - 1), max_size=5))
    return dag, submission, targets


def _reference_prf(true_edges: set, predicted: set) -> tuple[float, float, float]:
    if not true_edges and not predicted:
        return 1.0, 1.0, 1.0
    tp = len(true_edges & predicted)
    p = tp / len(predicted) if predicted else 0.0
    r = tp / len(true_edges) if true_edges else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _reference_score(dag: DAG, submission: PDAG, targets: list[int]) -> dict[str, float]:
    """A deliberately naive, pair-by-pair reading of DESIGN §6."""
    true_edges = set(dag.edges())
    sub_directed = set(submission.directed_edges())
    sub_undirected = set(submission.undirected_edges())
    sub_undirected |= {(b, a) for a, b in sub_undirected}
    out: dict[str, float] = {}

    def pairs(edges: set) -> set:
        return {frozenset(e) for e in edges}

    def oriented(reference_graph: PDAG) -> tuple[float, float, float]:
        undirected_pairs = pairs(set(reference_graph.undirected_edges()))
        predicted = {e for e in sub_directed if frozenset(e) not in undirected_pairs}
        return _reference_prf(set(reference_graph.directed_edges()), predicted)

    skeleton = _reference_prf(pairs(true_edges), pairs(sub_directed | sub_undirected))
    compelled = oriented(cpdag(dag))
    directed = _reference_prf(true_edges, sub_directed)
    counts = dict.fromkeys(("extra", "missing", "reversed", "unresolved"), 0)
    for a, b in itertools.combinations(range(dag.n_nodes), 2):
        truth = (a, b) if (a, b) in true_edges else (b, a) if (b, a) in true_edges else None
        got: tuple[int, int] | str | None
        if (a, b) in sub_undirected:
            got = "undirected"
        elif (a, b) in sub_directed:
            got = (a, b)
        elif (b, a) in sub_directed:
            got = (b, a)
        else:
            got = None
        if truth is None and got is not None:
            counts["extra"] += 1
        elif truth is not None and got is None:
            counts["missing"] += 1
        elif truth is not None and got == "undirected":
            counts["unresolved"] += 1
        elif truth is not None and got != truth:
            counts["reversed"] += 1
    for family, values in zip(PRF_FAMILIES, (skeleton, compelled, directed), strict=True):
        for metric, value in zip(("precision", "recall", "f1"), values, strict=True):
            out[f"{family}_{metric}"] = value
    for key, value in counts.items():
        out[f"shd_{key}"] = value
    out["essential_f1"] = oriented(essential_graph(dag, targets))[2]
    return out


@pytest.mark.slow
@settings(max_examples=250, deadline=None)
@given(worlds())
def test_matches_naive_reference(world: tuple[DAG, PDAG, list[int]]) -> None:
    dag, submission, targets = world
    report = score(dag, submission, targets=targets).to_dict()
    for key, value in _reference_score(dag, submission, targets).items():
        assert report[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.slow
@settings(max_examples=250, deadline=None)
@given(worlds())
def test_general_invariants(world: tuple[DAG, PDAG, list[int]]) -> None:
    dag, submission, targets = world
    report = score(dag, submission, targets=targets)
    for family in PRF_FAMILIES:
        for metric in ("precision", "recall", "f1"):
            assert 0.0 <= getattr(report, f"{family}_{metric}") <= 1.0
    assert 0.0 <= report.essential_f1 <= 1.0
    assert 0.0 <= report.efficiency <= 1.0
    assert report.shd == (
        report.shd_extra + report.shd_missing + report.shd_reversed + report.shd_unresolved
    )
    assert min(report.shd_extra, report.shd_missing, report.shd_reversed) >= 0
    assert (report.shd == 0) == (submission == dag.to_pdag())
    # Counting identities linking SHD to the P/R families.
    n_true = dag.n_edges
    n_directed = int(submission.directed.sum())
    n_pairs = n_directed + len(submission.undirected_edges())
    correct_direction = n_true - report.shd_missing - report.shd_reversed - report.shd_unresolved
    if n_true:
        assert report.skeleton_recall * n_true == pytest.approx(n_true - report.shd_missing)
        assert report.directed_recall * n_true == pytest.approx(correct_direction)
        # A correct direction is a correct adjacency.
        assert report.directed_recall <= report.skeleton_recall
    if n_pairs:
        assert report.skeleton_precision * n_pairs == pytest.approx(n_true - report.shd_missing)
        assert n_pairs == n_true - report.shd_missing + report.shd_extra
    if n_directed:
        assert report.directed_precision * n_directed == pytest.approx(correct_direction)
    if submission.is_fully_directed:
        assert report.directed_precision <= report.skeleton_precision
        assert report.directed_recall <= report.skeleton_recall
        assert report.directed_f1 <= report.skeleton_f1
        assert report.shd_unresolved == 0
    assert report.interventions_used == len(targets)
    assert report.i_star_size == len(minimum_intervention_set(dag))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(worlds())
def test_essential_without_targets_is_compelled(world: tuple[DAG, PDAG, list[int]]) -> None:
    dag, submission, _ = world
    report = score(dag, submission)
    assert report.essential_f1 == report.compelled_f1


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(dags(), st.data())
def test_perfect_submissions(dag: DAG, data: st.DataObject) -> None:
    targets = data.draw(st.lists(st.integers(0, dag.n_nodes - 1), max_size=5))
    # The true DAG: everything perfect, for any targets.
    oracle = score(dag, dag, targets=targets)
    assert oracle.shd == 0
    assert oracle.skeleton_f1 == oracle.compelled_f1 == oracle.directed_f1 == 1.0
    assert oracle.essential_f1 == 1.0
    # The CPDAG: skeleton and compelled perfect; SHD counts exactly its undirected edges.
    base = cpdag(dag)
    report = score(dag, base, targets=targets)
    assert report.skeleton_f1 == report.compelled_f1 == 1.0
    assert report.shd == report.shd_unresolved == len(base.undirected_edges())
    # The interventional essential graph of the targets: essential_f1 perfect.
    essential = essential_graph(dag, targets)
    report = score(dag, essential, targets=targets)
    assert report.essential_f1 == report.skeleton_f1 == report.compelled_f1 == 1.0


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(worlds(), st.randoms(use_true_random=False))
def test_relabeling_nodes_changes_nothing(
    world: tuple[DAG, PDAG, list[int]], rnd: random.Random
) -> None:
    dag, submission, targets = world
    n = dag.n_nodes
    perm = list(range(n))
    rnd.shuffle(perm)
    inverse = np.argsort(perm)  # new index of old node v is perm[v]; inverse maps back

    def relabel(matrix: np.ndarray) -> np.ndarray:
        return matrix[np.ix_(inverse, inverse)]

    dag2 = DAG(relabel(dag.adjacency))
    submission2 = PDAG(relabel(submission.directed), relabel(submission.undirected))
    targets2 = [perm[t] for t in targets]
    assert dag2.edges() == sorted((perm[a], perm[b]) for a, b in dag.edges())
    assert score(dag2, submission2, targets=targets2) == score(dag, submission, targets=targets)


def test_inputs_are_not_modified() -> None:
    submission = sub(4, [(1, 0)], [(1, 2)])
    before = (submission.directed.copy(), submission.undirected.copy(), G.adjacency.copy())
    score(G, submission, targets=[0, 1])
    np.testing.assert_array_equal(submission.directed, before[0])
    np.testing.assert_array_equal(submission.undirected, before[1])
    np.testing.assert_array_equal(G.adjacency, before[2])


# --------------------------------------------------------------------------- anytime F1


def test_anytime_f1_by_hand() -> None:
    """G's edges 0->1, 1->2, 3->2. Experiment 1 is preceded by the empty graph (F1 0), experiment
    2 by 1->2 alone (P 1, R 1/3, F1 0.5); the submission is G itself (F1 1). Budget 4: the curve
    is 0, 0.5, 1, 1, 1 and its mean 0.7."""
    half = PDAG.from_edges(4, directed=[(1, 2)])
    report = score(G, G, targets=(1, 0), stated=[PDAG.empty(4), half], budget=4, i_star_size=1)
    assert report.anytime_f1 == pytest.approx(0.7)
    assert report.efficiency == 0.5  # the paper's eta: |I*| = 1 of 2 used
    # Stopping after one experiment with the half graph keeps its F1 flat: 0, 0.5 x 4 = 0.4.
    capped = score(G, half, targets=(1,), stated=[PDAG.empty(4)], budget=4, i_star_size=1)
    assert capped.anytime_f1 == pytest.approx(0.4)
    assert capped.anytime_f1 < report.anytime_f1
    assert capped.efficiency == 1.0 > report.efficiency


def test_anytime_f1_without_experiments_is_the_directed_f1_and_none_when_unstated() -> None:
    submission = PDAG.from_edges(4, directed=[(0, 1)], undirected=[(1, 2)])
    plain = score(G, submission)
    assert plain.anytime_f1 == plain.directed_f1
    unstated = score(G, submission, targets=(1,))
    assert math.isnan(unstated.anytime_f1)
    assert math.isnan(score(G, submission, targets=(1,), stated=[None]).anytime_f1)
    assert "anytime_f1" in unstated.to_dict()
    # NaN marks "undefined": two reports of the same episode are still equal, and hash alike.
    twin = score(G, submission, targets=(1,))
    assert twin == unstated and hash(twin) == hash(unstated)
    assert twin != plain
    with pytest.raises(ValueError, match="one graph"):
        score(G, submission, targets=(1, 2), stated=[None])


def test_a_report_read_back_from_its_dict_is_the_same_report() -> None:
    """``info["score"]`` is a report's dict; run_episode reads it back once, NaN included."""
    truth = DAG.from_edges(3, [(0, 2), (1, 2)])
    report = score(truth, PDAG.from_edges(3, directed=[(0, 2)]), interventions_used=1)
    assert math.isnan(report.anytime_f1)
    again = ScoreReport.from_dict({**report.to_dict(), "_extra": 1})
    assert again == report and not again.is_latent
    with pytest.raises(KeyError, match="missing \\['shd'\\]"):
        ScoreReport.from_dict({k: v for k, v in report.to_dict().items() if k != "shd"})
    with pytest.warns(DeprecationWarning, match="read score.directed_f1"):
        assert report["directed_f1"] == report.directed_f1
    with pytest.raises(KeyError):
        report["shd_mistyped"]  # a latent field of a causally sufficient world
