"""score_dags (acdb_gym/core/many_scores.py): many DAG submissions scored in one pass, each
report equal to score()'s, field for field."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, random_order_dag
from acdb_gym.core.ladders.custom import regenerate_instance
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.many_scores import score_dags
from acdb_gym.core.scoring import score


def _draws(n_nodes: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack(
        [random_order_dag(n_nodes, n_edges="uniform", rng=rng).adjacency for _ in range(count)]
    )


@pytest.mark.parametrize("n_nodes", [1, 2, 5, 9])
def test_every_report_equals_the_one_score_gives(n_nodes: int) -> None:
    rng = np.random.default_rng(n_nodes)
    for _ in range(5):
        truth = random_order_dag(n_nodes, n_edges="uniform", rng=rng)
        draws = _draws(n_nodes, 40, int(rng.integers(1000)))
        draws[0] = False  # the empty graph
        draws[1] = truth.adjacency  # the truth itself
        reports = score_dags(truth, draws)
        assert len(reports) == len(draws)
        for report, draw in zip(reports, draws, strict=True):
            expected = score(truth, DAG(draw))
            assert report == expected
            assert report.to_dict() == expected.to_dict()  # the same types (int counts)
            assert [type(v) for v in report.to_dict().values()] == [
                type(v) for v in expected.to_dict().values()
            ]


def test_an_instance_is_scored_with_its_own_minimum_set() -> None:
    level = get_level("v1", "L2")
    instance = regenerate_instance(level.spec, level.manifest_seed(0))
    draws = _draws(instance.dag.n_nodes, 20, 3)
    assert score_dags(instance, draws) == [score(instance, DAG(draw)) for draw in draws]


def test_no_draws_give_no_reports_and_bad_input_is_refused() -> None:
    truth = DAG.from_edges(3, [(0, 1)])
    assert score_dags(truth, np.zeros((0, 3, 3), dtype=bool)) == []
    with pytest.raises(ValueError, match=r"boolean \(k, 3, 3\)"):
        score_dags(truth, np.zeros((2, 4, 4), dtype=bool))
    with pytest.raises(ValueError, match=r"boolean \(k, 3, 3\)"):
        score_dags(truth, np.zeros((2, 3, 3), dtype=np.int8))


def test_a_world_with_latents_is_refused() -> None:
    level = get_level("v1-latent", "L1")
    instance = regenerate_instance(level.spec, level.manifest_seed(0))
    assert instance.latent_truth is not None
    with pytest.raises(ValueError, match="latents"):
        score_dags(instance, _draws(instance.dag.n_nodes, 2, 0))


@pytest.mark.parametrize("n_nodes", [1, 2, 4, 6, 9])
def test_score_rows_equals_score_on_every_row(n_nodes: int) -> None:
    """score_rows against score(): PDAG submissions (random directed and undirected parts),
    each with its own truth and target set, every field to the last bit and typed alike."""
    from acdb_gym.core.graphs import PDAG, cpdag, essential_graph
    from acdb_gym.core.many_scores import GraphRows, report_of_row, score_rows

    rng = np.random.default_rng(100 + n_nodes)
    truths, submissions, targets = [], [], []
    for _ in range(60):
        truth = random_order_dag(n_nodes, n_edges="uniform", rng=rng)
        order = rng.permutation(n_nodes)
        rank = np.empty(n_nodes, dtype=int)
        rank[order] = np.arange(n_nodes)
        pairs = np.triu(rng.random((n_nodes, n_nodes)) < 0.5, 1)
        pairs = pairs | pairs.T
        undirected_pair = np.triu(rng.random((n_nodes, n_nodes)) < 0.3, 1)
        undirected_pair = (undirected_pair | undirected_pair.T) & pairs
        directed = pairs & ~undirected_pair & (rank[:, None] < rank[None, :])
        choice = rng.integers(4)
        if choice == 0:
            directed, undirected_pair = truth.adjacency.copy(), np.zeros_like(pairs)
        elif choice == 1:
            graph = cpdag(truth)
            directed, undirected_pair = graph.directed.copy(), graph.undirected.copy()
        truths.append(truth)
        submissions.append(PDAG(directed, undirected_pair))
        targets.append([int(t) for t in rng.integers(n_nodes, size=rng.integers(0, 4))])
    essentials = [
        essential_graph(t, sorted(set(ts))) for t, ts in zip(truths, targets, strict=True)
    ]
    bases = [cpdag(t) for t in truths]
    star = np.array([int(rng.integers(0, 3)) for _ in truths])
    anytime = rng.random(len(truths))
    table = score_rows(
        np.stack([t.adjacency for t in truths]),
        GraphRows(np.stack([b.directed for b in bases]), np.stack([b.undirected for b in bases])),
        GraphRows(
            np.stack([e.directed for e in essentials]), np.stack([e.undirected for e in essentials])
        ),
        GraphRows(
            np.stack([s.directed for s in submissions]),
            np.stack([s.undirected for s in submissions]),
        ),
        used=np.array([len(ts) for ts in targets]),
        star=star,
        anytime_f1=anytime,
    )
    for i, truth in enumerate(truths):
        expected = score(
            truth, submissions[i], targets=targets[i], i_star_size=int(star[i])
        ).to_dict()
        expected["anytime_f1"] = float(anytime[i])
        got = report_of_row(table[i]).to_dict()
        assert got == expected
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]
        assert table[i].tobytes() == np.array([float(v) for v in expected.values()]).tobytes()


def test_prf_columns_and_anytime_areas_equal_their_one_row_twins() -> None:
    """Every count triple up to 12 and random anytime curves: the array twins of prf and
    anytime_area give the same floats, to the last bit."""
    from acdb_gym.core.anytime import anytime_area, anytime_areas
    from acdb_gym.core.latent_scoring import prf, prf_columns

    grid = np.array([(t, p, n) for p in range(13) for n in range(13) for t in range(min(p, n) + 1)])
    columns = prf_columns(grid[:, 0], grid[:, 1], grid[:, 2])
    for row, (t, p, n) in enumerate(grid.tolist()):
        assert tuple(float(column[row]) for column in columns) == prf(t, p, n)
    rng = np.random.default_rng(5)
    used = rng.integers(0, 6, size=200)
    curves = rng.random((200, 6))
    final, budget = rng.random(200), rng.integers(0, 5, size=200)
    areas = anytime_areas(curves, used, final, budget)
    for i in range(200):
        expected = anytime_area(curves[i, : used[i]].tolist(), float(final[i]), int(budget[i]))
        assert areas[i].tobytes() == np.float64(expected).tobytes()
