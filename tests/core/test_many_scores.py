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
