"""The interventional BIC on a mechanism class's features (``discovery/class_bic.py``): equal to
the linear score with the identity feature, and able to see what the linear score cannot."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.ladders.custom import parse_level_spec
from acdb_gym.core.scoring import score
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.discovery import (
    CLASS_FEATURES,
    FeatureBIC,
    InterventionalBIC,
    class_interventional_search,
    greedy_interventional_search,
)
from acdb_gym.discovery.class_bic import FEATURES, feature_columns


def _data(seed: int = 0) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(600, 6))
    x[:, 1] += x[:, 0]
    x[:, 3] += x[:, 1] - x[:, 2]
    x[:, 5] += 0.5 * x[:, 3]
    experiment = rng.normal(size=(60, 6))
    experiment[:, 1] = 2.0
    experiment[:, 3] += 2.0 - experiment[:, 2]
    return x, [(1, experiment)]


def test_the_identity_feature_is_the_linear_interventional_bic() -> None:
    obs, experiments = _data()
    linear = InterventionalBIC(obs, experiments, penalty=2.0)
    feature = FeatureBIC(obs, experiments, features=("identity",), penalty=2.0)
    for node, parents in ((3, [1, 2]), (1, [0]), (0, []), (5, [0, 1, 2, 3, 4])):
        assert feature.local_score(node, parents) == pytest.approx(
            linear.local_score(node, parents), rel=1e-7
        )
    mask = np.zeros(6, dtype=bool)
    mask[[1, 4]] = True
    for a, b in zip(linear.move_gains(3, mask), feature.move_gains(3, mask), strict=True):
        finite = np.isfinite(a)
        assert np.array_equal(finite, np.isfinite(b))
        assert np.allclose(a[finite], b[finite], rtol=1e-6, atol=1e-6)
    one = greedy_interventional_search(obs, experiments, penalty=2.0)
    two = class_interventional_search(obs, experiments, features=("identity",), penalty=2.0)
    assert np.array_equal(one.dag.adjacency, two.dag.adjacency)


def test_the_move_gains_equal_the_local_scores() -> None:
    obs, experiments = _data(1)
    bic = FeatureBIC(obs, experiments, features=FEATURES)
    mask = np.zeros(6, dtype=bool)
    mask[[1]] = True
    add, remove = bic.move_gains(3, mask)
    base = bic.local_score(3, [1])
    assert add[2] == pytest.approx(bic.local_score(3, [1, 2]) - base, rel=1e-6)
    assert remove[1] == pytest.approx(bic.local_score(3, []) - base, rel=1e-6)
    assert add[3] == -np.inf and add[1] == -np.inf and remove[0] == -np.inf


def test_the_class_features_see_a_dependence_without_correlation() -> None:
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=3000)
    x1 = x0**2 + 0.3 * rng.normal(size=3000)
    data = np.column_stack([x0, x1])
    linear = FeatureBIC(data, [], features=("identity",))
    shaped = FeatureBIC(data, [], features=CLASS_FEATURES["nonlinear"])
    assert linear.local_score(1, [0]) < linear.local_score(1, [])
    assert shaped.local_score(1, [0]) > shaped.local_score(1, [])


def test_features_are_node_major_and_checked() -> None:
    values = np.array([[0.5, -1.0]])
    columns = feature_columns(values, ("identity", "square"))
    assert columns.tolist() == [[0.5, 0.25, -1.0, 1.0]]
    with pytest.raises(ValueError, match="feature must be one of"):
        feature_columns(values, ("cube",))
    with pytest.raises(ValueError, match="features must be distinct"):
        FeatureBIC(np.zeros((10, 2)), [], features=("identity", "identity"))
    with pytest.raises(ValueError, match="penalty"):
        FeatureBIC(np.zeros((10, 2)), [], penalty=0.0)
    with pytest.raises(ValueError, match="target must be in"):
        FeatureBIC(np.zeros((10, 2)), [(2, np.zeros((3, 2)))])


def test_on_a_nonlinear_world_the_class_beats_the_linear_score() -> None:
    # A frontier-sized nonlinear world (DESIGN §3.1) with experiments on I*: the mechanism
    # class's features recover far more of the graph than bic_active's linear score.
    spec = parse_level_spec(
        "d=12,k=14,n_obs=1000,n_int=200,slack=1,standardized=true,family=nonlinear"
    )
    gains = []
    for seed in range(300000, 300003):
        instance = generate_instance(spec, seed)
        rng = np.random.default_rng([seed, 1])
        obs = np.asarray(instance.d_obs)
        experiments = [
            (t, instance.scm.sample_do(t, float(obs[:, t].mean() + 4 * obs[:, t].std()), 200, rng))
            for t in sorted(instance.i_star)
        ]
        targets = [t for t, _ in experiments]
        shaped = class_interventional_search(
            obs, experiments, features=CLASS_FEATURES["nonlinear"]
        ).essential_graph
        linear = greedy_interventional_search(obs, experiments, penalty=2.0).essential_graph
        gains.append(
            score(instance, shaped, targets=targets).directed_f1
            - score(instance, linear, targets=targets).directed_f1
        )
    assert np.mean(gains) > 0.1
