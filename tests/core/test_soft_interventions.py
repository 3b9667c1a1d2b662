"""Soft interventions: what a shift and a scale do to the samples of every family, and the
session's ``kind`` argument."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.session import BudgetExhaustedError, Session
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.soft import (
    INTERVENTION_KINDS,
    episode_kinds,
    sample_soft,
    scale_factor,
)

FAMILY_LEVELS = {
    "linear_gaussian": ("v1", "L2"),
    "linear_nongaussian": ("v1-nongaussian", "L2"),
    "nonlinear": ("v1-nonlinear", "L2"),
}


def _instance(family: str, index: int = 0):  # type: ignore[no-untyped-def]
    ladder, level = FAMILY_LEVELS[family]
    return ALL_LADDERS[ladder][level].instance(index)


def _target_with_parents_and_children(instance) -> int:  # type: ignore[no-untyped-def]
    adjacency = np.asarray(instance.dag.adjacency)
    both = np.flatnonzero(adjacency.any(axis=0) & adjacency.any(axis=1))
    assert both.size, "the test needs a node with parents and children"
    return int(both[0])


@pytest.mark.parametrize("family", sorted(FAMILY_LEVELS))
def test_a_shift_moves_the_target_by_delta_and_leaves_its_parents_alone(family: str) -> None:
    instance = _instance(family)
    scm = instance.scm
    target = _target_with_parents_and_children(instance)
    n, delta = 4000, 1.75
    base = scm.sample(n, np.random.default_rng(3))
    shifted = sample_soft(scm, "shift", target, delta, n, np.random.default_rng(3))
    # Same generator state: the target column is the observational one plus delta, row by row.
    np.testing.assert_allclose(shifted[:, target] - base[:, target], delta, atol=1e-9)
    untouched = [
        node
        for node in range(scm.n_nodes)
        if node != target and not _is_descendant(instance, target, node)
    ]
    assert set(instance.dag.parents(target)) <= set(untouched)
    assert np.array_equal(shifted[:, untouched], base[:, untouched])
    children = np.flatnonzero(np.asarray(instance.dag.adjacency)[target])
    assert not np.allclose(shifted[:, children], base[:, children])  # the shift propagates
    # On independent draws, too: the target's mean moved by delta (within 5 standard errors).
    fresh = sample_soft(scm, "shift", target, delta, n, np.random.default_rng(4))
    obs = scm.sample(n, np.random.default_rng(5))
    se = np.sqrt(2 * obs[:, target].var() / n)
    assert abs(fresh[:, target].mean() - obs[:, target].mean() - delta) < 5 * se
    for parent in instance.dag.parents(target):
        se = np.sqrt(2 * obs[:, parent].var() / n)
        assert abs(fresh[:, parent].mean() - obs[:, parent].mean()) < 5 * se


def _is_descendant(instance, source: int, node: int) -> bool:  # type: ignore[no-untyped-def]
    adjacency = np.asarray(instance.dag.adjacency)
    reached = adjacency[source].copy()
    frontier = reached.copy()
    while frontier.any():
        frontier = adjacency[frontier].any(axis=0) & ~reached
        reached |= frontier
    return bool(reached[node])


@pytest.mark.parametrize("family", sorted(FAMILY_LEVELS))
def test_a_scale_multiplies_the_targets_noise_by_the_documented_factor(family: str) -> None:
    instance = _instance(family)
    scm = instance.scm
    target = _target_with_parents_and_children(instance)
    n, value = 20000, -2.5
    factor = scale_factor(value)
    assert factor == 2.5
    base = scm.sample(n, np.random.default_rng(8))
    scaled = sample_soft(scm, "scale", target, value, n, np.random.default_rng(8))
    # X_t - f_t(pa_t) is the target's noise term: its spread grows by the factor exactly.
    residual_base = base[:, target] - _mechanism(instance, base, target)
    residual_scaled = scaled[:, target] - _mechanism(instance, scaled, target)
    np.testing.assert_allclose(residual_scaled, factor * residual_base, rtol=1e-9, atol=1e-9)
    for parent in instance.dag.parents(target):
        assert np.array_equal(scaled[:, parent], base[:, parent])


def _mechanism(instance, data: np.ndarray, target: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``X_t`` minus its noise term, read off the SCM (for the test's bookkeeping only)."""
    scm = instance.scm
    if hasattr(scm, "mechanisms"):
        mechanism = scm.mechanisms[target]
        raw = np.zeros(len(data)) if mechanism is None else mechanism(data)
        return np.asarray((raw - scm.loc[target]) / scm.scale[target])
    return np.asarray(data @ scm.weights[:, target])


def test_scale_changes_the_variances_of_a_chain_as_documented() -> None:
    """X0 -> X1 -> X2, unit weights and noise; scale X1's noise by 3: Var X1 = 1 + 9."""
    weights = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    scm = LinearGaussianSCM(weights, np.ones(3))
    data = sample_soft(scm, "scale", 1, 3.0, 200_000, np.random.default_rng(0))
    np.testing.assert_allclose(data.var(axis=0), [1.0, 10.0, 11.0], rtol=0.02)
    np.testing.assert_allclose(data.mean(axis=0), 0.0, atol=0.03)
    assert np.corrcoef(data[:, 0], data[:, 1])[0, 1] == pytest.approx(1 / np.sqrt(10), abs=0.01)
    shifted = sample_soft(scm, "shift", 1, 3.0, 200_000, np.random.default_rng(0))
    np.testing.assert_allclose(shifted.mean(axis=0), [0.0, 3.0, 3.0], atol=0.03)
    np.testing.assert_allclose(shifted.var(axis=0), [1.0, 2.0, 3.0], rtol=0.02)


@pytest.mark.parametrize("family", sorted(FAMILY_LEVELS))
@pytest.mark.parametrize("kind", ["shift", "scale"])
def test_same_seed_gives_bit_identical_soft_samples(family: str, kind: str) -> None:
    scm = _instance(family).scm
    first = sample_soft(scm, kind, 1, 2.0, 50, np.random.default_rng(11))  # type: ignore[arg-type]
    second = sample_soft(scm, kind, 1, 2.0, 50, np.random.default_rng(11))  # type: ignore[arg-type]
    assert np.array_equal(first, second)
    out = np.empty((50, scm.n_nodes))
    third = sample_soft(scm, kind, 1, 2.0, 50, np.random.default_rng(11), out=out)  # type: ignore[arg-type]
    assert third is out and np.array_equal(out, first)


def test_bad_requests_name_the_bad_value() -> None:
    scm = _instance("linear_gaussian").scm
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="kind must be one of"):
        sample_soft(scm, "hard", 0, 1.0, 5, rng)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="var must be in"):
        sample_soft(scm, "shift", scm.n_nodes, 1.0, 5, rng)
    with pytest.raises(ValueError, match="value must be finite"):
        sample_soft(scm, "shift", 0, float("nan"), 5, rng)
    with pytest.raises(ValueError, match="interventions must be one of"):
        episode_kinds("soft", 0, 3)  # type: ignore[arg-type]


def test_mixed_kinds_are_seeded_and_use_every_kind() -> None:
    kinds = episode_kinds("mixed", 12, 300)
    assert kinds == episode_kinds("mixed", 12, 300)
    assert kinds != episode_kinds("mixed", 13, 300)
    assert set(kinds) == set(INTERVENTION_KINDS)
    assert episode_kinds("mixed", 12, 5) == kinds[:5]  # a prefix: one draw per slot
    assert episode_kinds("scale", 12, 3) == ("scale",) * 3


def test_session_records_kinds_and_its_hard_default_is_unchanged() -> None:
    instance = _instance("linear_gaussian")
    default = Session(instance).intervene(2, 1.0)
    hard = Session(instance).intervene(2, 1.0, kind="hard")
    assert np.array_equal(default, hard)
    session = Session(instance)
    session.intervene(2, 1.0, kind="shift")
    session.intervene(3, 2.0, kind="scale")
    session.intervene(4, 0.5)
    assert session.kinds == ("shift", "scale", "hard")
    assert [e.kind for e in session.experiments] == ["shift", "scale", "hard"]
    # The session's soft samples are sample_soft's on the intervention stream.
    expected = sample_soft(instance.scm, "shift", 2, 1.0, instance.spec.n_int,
                           instance.intervention_rng())  # fmt: skip
    assert np.array_equal(session.experiments[0].samples, expected)


def test_session_refuses_an_unknown_kind_without_spending_budget() -> None:
    session = Session(_instance("linear_gaussian"))
    with pytest.raises(ValueError, match="kind must be"):
        session.intervene(0, 1.0, kind="soft")  # type: ignore[arg-type]
    assert session.interventions_used == 0 and session.kinds == ()
    for _ in range(session.budget):
        session.intervene(0, 1.0, kind="shift")
    with pytest.raises(BudgetExhaustedError):
        session.intervene(0, 1.0, kind="scale")
