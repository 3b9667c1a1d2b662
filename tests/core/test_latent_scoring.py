"""Latent-level scoring (DESIGN §6.3) against a pair-by-pair reference written from the text.

The reference reads every graph as a dict of endpoint marks (``">"``, ``"-"``, ``"o"``) keyed
by ordered pairs and recomputes every field with sets and loops over node pairs; it shares no
code with :mod:`acdb_gym.core.latent_scoring` but the MAG/PAG constructions, which
``test_admg.py`` checks against brute force.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from acdb_gym.core.graphs import ADMG, DAG, PAG, PDAG, latent_projection, mag
from acdb_gym.core.latent_scoring import latent_truth
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS, SCORE_FIELDS, SubmissionTypeError, score
from tests.core._graph_oracles import random_dag_matrix

Marks = dict[tuple[int, int], str]


def _marks(graph: PDAG | ADMG | PAG) -> Marks:
    """``marks[(i, j)]``: the mark at ``j`` on the edge between ``i`` and ``j``."""
    out: Marks = {}
    if isinstance(graph, PAG):
        for i, j in itertools.permutations(range(graph.n_nodes), 2):
            if graph.adjacent[i, j]:
                out[(i, j)] = graph.mark(i, j)
        return out
    if isinstance(graph, PDAG):
        for i, j in graph.undirected_edges():
            out[(i, j)] = out[(j, i)] = "o"
        for i, j in graph.directed_edges():
            out[(i, j)], out[(j, i)] = ">", "-"
        return out
    for i, j in graph.directed_edges():
        out[(i, j)] = ">"
        out.setdefault((j, i), "-")
    for i, j in graph.bidirected_edges():
        out[(i, j)] = out[(j, i)] = ">"
    return out


def _prf(tp: int, predicted: int, true: int) -> tuple[float, float, float]:
    if predicted == 0 and true == 0:
        return (1.0, 1.0, 1.0)
    p = tp / predicted if predicted else 0.0
    r = tp / true if true else 0.0
    return (p, r, 2 * p * r / (p + r) if p + r else 0.0)


def _set_prf(predicted: set, true: set) -> tuple[float, float, float]:
    return _prf(len(predicted & true), len(predicted), len(true))


def _directed(marks: Marks) -> set[tuple[int, int]]:
    return {(i, j) for (i, j), m in marks.items() if m == ">" and marks[(j, i)] == "-"}


def _reference(
    admg: ADMG, truth_mag: ADMG, truth_pag: PAG, submission: PDAG | ADMG | PAG
) -> dict[str, float]:
    p = admg.n_nodes
    pag_marks = _marks(truth_pag)
    own = _marks(submission)
    fully_marked = isinstance(submission, ADMG) or (
        isinstance(submission, PDAG) and not submission.undirected_edges()
    )
    if fully_marked:
        as_admg = (
            submission
            if isinstance(submission, ADMG)
            else ADMG(submission.directed, np.zeros_like(submission.directed))
        )
        ancestral = _marks(mag(as_admg))
    else:
        ancestral = own
    if isinstance(submission, ADMG):
        s_dir = set(submission.directed_edges())
        s_bi = {frozenset(e) for e in submission.bidirected_edges()}
    else:
        s_dir = _directed(own)
        s_bi = {frozenset((i, j)) for (i, j), m in own.items() if m == ">" and own[(j, i)] == ">"}
    t_dir = set(admg.directed_edges())
    t_bi = {frozenset(e) for e in admg.bidirected_edges()}
    out: dict[str, float] = {}

    def put(name: str, values: tuple[float, float, float]) -> None:
        for suffix, value in zip(("precision", "recall", "f1"), values, strict=True):
            out[f"{name}_{suffix}"] = value

    mag_pairs = {frozenset(e) for e in truth_mag.directed_edges() + truth_mag.bidirected_edges()}
    put("skeleton", _set_prf({frozenset(e) for e in ancestral}, mag_pairs))
    put("directed", _set_prf(s_dir, t_dir))
    put("bidirected", _set_prf(s_bi, t_bi))
    circled = {frozenset(e) for e, m in pag_marks.items() if m == "o"}
    put(
        "compelled",
        _set_prf(
            {e for e in _directed(ancestral) if frozenset(e) not in circled}, _directed(pag_marks)
        ),
    )
    for name, symbol in (("pag_arrowhead", ">"), ("pag_tail", "-")):
        predicted = {e for e, m in ancestral.items() if m == symbol and pag_marks.get(e, "") != "o"}
        put(name, _set_prf(predicted, {e for e, m in pag_marks.items() if m == symbol}))
    counts = dict.fromkeys(("extra", "missing", "reversed", "unresolved", "mistyped"), 0)
    for i, j in itertools.combinations(range(p), 2):
        t_state = ((i, j) in t_dir, (j, i) in t_dir, frozenset((i, j)) in t_bi)
        s_state = ((i, j) in s_dir, (j, i) in s_dir, frozenset((i, j)) in s_bi)
        t_adj, s_adj = any(t_state), (i, j) in own
        if not t_adj and not s_adj:
            continue
        if not t_adj:
            counts["extra"] += 1
        elif not s_adj:
            counts["missing"] += 1
        elif t_state == s_state:
            continue
        elif t_state in ((True, False, False), (False, True, False)) and s_state == (
            t_state[1],
            t_state[0],
            False,
        ):
            counts["reversed"] += 1
        elif not any(s_state):
            counts["unresolved"] += 1
        else:
            counts["mistyped"] += 1
    out["shd"] = sum(counts.values())
    out.update({f"shd_{k}": v for k, v in counts.items()})
    out["essential_f1"] = out["compelled_f1"]
    return out


def _random_admg(rng: np.random.Generator, p: int) -> ADMG:
    n_latent = int(rng.integers(0, 3))
    n = p + n_latent
    adjacency = random_dag_matrix(rng, n, int(rng.integers(0, n * (n - 1) // 2 + 1)))
    return latent_projection(DAG(adjacency), latent=range(p, n))


def _random_pag(rng: np.random.Generator, p: int) -> PAG:
    adjacent = np.triu(rng.random((p, p)) < 0.5, 1)
    adjacent = adjacent | adjacent.T
    kind = rng.integers(0, 3, size=(p, p))  # 0 arrowhead, 1 tail, 2 circle
    return PAG(adjacent, adjacent & (kind == 0), adjacent & (kind == 1))


def _random_pdag(rng: np.random.Generator, p: int) -> PDAG:
    adjacency = random_dag_matrix(rng, p, int(rng.integers(0, p * (p - 1) // 2 + 1)))
    undirected = adjacency & (rng.random((p, p)) < 0.3)
    undirected = undirected | undirected.T
    return PDAG(adjacency & ~undirected, undirected)


@pytest.mark.slow
def test_latent_scores_match_the_pair_by_pair_reference_on_random_admgs() -> None:
    rng = np.random.default_rng(2929)
    seen = {"true_bidirected": 0, "bidirected_hit": 0, "mistyped": 0}
    for case in range(1000):
        p = int(rng.integers(2, 6))
        truth = _random_admg(rng, p)
        latent = latent_truth(truth)
        submissions: list[PDAG | ADMG | PAG] = [
            truth,
            _random_admg(rng, p),
            _random_pdag(rng, p),
            _random_pag(rng, p),
            latent.pag,
        ]
        reports = [score(latent, submission).to_dict() for submission in submissions]
        truth_mag = mag(truth)
        for report, submission in zip(reports, submissions, strict=True):
            expected = _reference(truth, truth_mag, latent.pag, submission)
            for name, value in expected.items():
                assert report[name] == pytest.approx(value), (case, name, truth, submission)
        oracle = reports[0]
        assert all(oracle[name] == 1.0 for name in oracle if name.endswith("f1")), truth
        assert oracle["shd"] == 0
        seen["true_bidirected"] += int(bool(truth.bidirected_edges()))
        seen["bidirected_hit"] += int(0 < reports[1]["bidirected_f1"] < 1)
        seen["mistyped"] += int(reports[3]["shd_mistyped"])
    # The sample exercises confounding, partial bidirected hits and mistyped pairs.
    assert seen["true_bidirected"] > 150 and seen["bidirected_hit"] > 10, seen
    assert seen["mistyped"] > 100, seen


def test_latent_fields_appear_only_on_latent_worlds() -> None:
    dag = DAG.from_edges(3, [(0, 1), (1, 2)])
    assert tuple(score(dag, dag).to_dict()) == SCORE_FIELDS
    latent = latent_truth(ADMG.from_edges(3, directed=[(0, 1)], bidirected=[(1, 2)]))
    report = score(latent, latent.admg)
    assert tuple(report.to_dict()) == SCORE_FIELDS + LATENT_SCORE_FIELDS
    assert report.is_latent and not score(dag, dag).is_latent


def test_a_sufficient_world_refuses_bidirected_submissions() -> None:
    dag = DAG.from_edges(3, [(0, 1)])
    with pytest.raises(SubmissionTypeError, match="causally sufficient"):
        score(dag, ADMG.from_edges(3, bidirected=[(1, 2)]))
    latent = latent_truth(ADMG.from_edges(3, bidirected=[(1, 2)]))
    with pytest.raises(ValueError, match="4 nodes"):
        score(latent, PDAG.empty(4))
    with pytest.raises(SubmissionTypeError, match="PAG"):
        score(latent, "X0 -> X1")  # type: ignore[arg-type]
