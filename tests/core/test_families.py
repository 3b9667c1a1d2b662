"""SCM families beyond linear-Gaussian: generation, sampling, acceptance rules (DESIGN §3.1)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG
from acdb_gym.core.ladders.shipped import FAMILY_LADDERS, LADDERS, LevelSpec
from acdb_gym.core.session import Session
from acdb_gym.core.worlds.acceptance import (
    CORRELATION_RATIO,
    PARTIAL_CORRELATION,
    correlation_ratio,
    linear_acceptance,
    nonlinear_acceptance,
    unique_contribution,
)
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.mechanisms import (
    NOISE_KINDS,
    AdditiveMechanism,
    LinearNonGaussianSCM,
    NetworkMechanism,
    NonlinearSCM,
    standardized_noise,
)
from acdb_gym.core.worlds.spec import FAMILIES

BASE = LevelSpec(d=8, k=10, n_obs=500, n_int=100, noise_var=1.0, slack=1, standardized=True)
NEW_FAMILIES = ("linear_nongaussian", "nonlinear")


def test_family_is_validated_and_omitted_from_the_repr_at_its_default() -> None:
    with pytest.raises(ValueError, match="'cubic'"):
        replace(BASE, family="cubic")  # type: ignore[arg-type]
    assert "family" not in repr(BASE)
    assert "family='nonlinear'" in repr(replace(BASE, family="nonlinear"))
    assert set(FAMILIES) == {"linear_gaussian", *NEW_FAMILIES}


@pytest.mark.parametrize("family", NEW_FAMILIES)
def test_same_seed_same_world_and_the_family_changes_the_digest(family: str) -> None:
    spec = replace(BASE, family=family)
    a, b = generate_instance(spec, 5), generate_instance(replace(spec, n_int=101), 5)
    assert np.array_equal(a.d_obs, b.d_obs) and np.array_equal(a.dag.adjacency, b.dag.adjacency)
    assert a.digest() != generate_instance(BASE, 5).digest()
    assert a.digest() != generate_instance(spec, 6).digest()
    # The same graph stream: a family changes the mechanisms, not the first drawn graph.
    assert a.scm.n_nodes == spec.d and a.dag.n_edges == spec.k


@pytest.mark.parametrize("kind", NOISE_KINDS)
def test_standardized_noise_has_mean_zero_variance_one_and_its_shape(kind: str) -> None:
    noise = standardized_noise([kind], 400_000, np.random.default_rng(0))[:, 0]
    assert abs(noise.mean()) < 0.01 and abs(noise.var() - 1.0) < 0.01
    z = (noise - noise.mean()) / noise.std()
    skew, excess_kurtosis = float((z**3).mean()), float((z**4).mean() - 3.0)
    expected = {"uniform": (0.0, -1.2), "laplace": (0.0, 3.0), "gumbel": (1.14, 2.4)}[kind]
    assert skew == pytest.approx(expected[0], abs=0.05)
    assert excess_kurtosis == pytest.approx(expected[1], abs=0.25)


def test_nongaussian_scm_keeps_the_linear_covariance() -> None:
    weights = np.zeros((3, 3))
    weights[0, 1], weights[1, 2], weights[0, 2] = 1.5, -0.8, 0.6
    linear = LinearGaussianSCM(weights, np.array([1.0, 0.5, 2.0]))
    scm = LinearNonGaussianSCM(linear, ("uniform", "laplace", "gumbel"))
    data = scm.sample(200_000, np.random.default_rng(1))
    np.testing.assert_allclose(np.cov(data.T), scm.covariance(), atol=0.05, rtol=0.02)


def test_nongaussian_rule_rejects_a_nearly_cancelling_world() -> None:
    # The linear rule on the same population partial correlations (the test of the linear
    # family's rule uses the same construction): a direct effect of 0.05 is too weak.
    weights = np.zeros((3, 3))
    weights[0, 1], weights[1, 2], weights[0, 2] = 1.0, 1.0, 0.05
    scm = LinearNonGaussianSCM(LinearGaussianSCM(weights, np.ones(3)), ("gumbel",) * 3)
    assert not linear_acceptance(scm.dag, scm.covariance(), 0.1).accepted
    weights[0, 2] = -0.8
    scm = LinearNonGaussianSCM(LinearGaussianSCM(weights, np.ones(3)), ("gumbel",) * 3)
    decision = linear_acceptance(scm.dag, scm.covariance(), 0.1)
    assert decision.accepted and decision.measure == PARTIAL_CORRELATION


def _cancelling_world(direct: float) -> NonlinearSCM:
    """X0 -> X1 -> X2, X0 -> X2 with X1 = tanh(2 X0) + e1 and, through a network whose second
    unit is linear to a good approximation, X2 = X1 + direct * tanh(2 X0) + e2."""
    adjacency = np.zeros((3, 3), dtype=bool)
    adjacency[0, 1] = adjacency[1, 2] = adjacency[0, 2] = True
    first = AdditiveMechanism((0,), ("tanh",), np.ones(1), np.zeros(1), np.ones(1))
    second = NetworkMechanism(
        (0, 1),
        hidden_weights=np.array([[2.0, 0.0], [0.0, 1e-4]]),
        hidden_bias=np.zeros(2),
        output_weights=np.array([direct, 1e4]),
        center=0.0,
        spread=1.0,
        gain=1.0,
    )
    ones = np.ones(3)
    return NonlinearSCM(DAG(adjacency), (None, first, second), ones, np.zeros(3), ones, ones)


def test_nonlinear_rule_rejects_a_cancelling_world_and_accepts_its_faithful_twin() -> None:
    # direct = -1: X2 = e1 + e2 is independent of X0 although X0 -> X2 (unfaithful); the
    # mechanism still uses X0, so only the correlation ratio on data can see it.
    unfaithful = _cancelling_world(-1.0)
    sample = unfaithful.sample(4000, np.random.default_rng(0))
    assert correlation_ratio(sample[:, 0], sample[:, 2]) < 0.05
    assert unique_contribution(unfaithful, sample, 0, 2) > 0.5
    decision = nonlinear_acceptance(unfaithful, sample, 0.1)
    assert not decision.accepted and decision.measure == CORRELATION_RATIO
    faithful = _cancelling_world(1.0)
    assert nonlinear_acceptance(faithful, faithful.sample(4000, np.random.default_rng(0)), 0.1)


def test_correlation_ratio_sees_a_dependence_that_correlation_misses() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(5000)
    y = x**2 + 0.5 * rng.standard_normal(5000)
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.05
    assert correlation_ratio(x, y) > 0.8
    assert correlation_ratio(x, rng.standard_normal(5000)) < 0.06


@pytest.mark.parametrize("family", NEW_FAMILIES)
def test_observations_are_standardized(family: str) -> None:
    inst = generate_instance(replace(BASE, n_obs=4000, family=family), 1)
    np.testing.assert_allclose(inst.d_obs.std(axis=0), 1.0, atol=0.1)
    np.testing.assert_allclose(inst.d_obs.mean(axis=0), 0.0, atol=0.1)


@pytest.mark.parametrize("family", NEW_FAMILIES)
def test_hard_interventions_cut_parents_and_leave_non_descendants(family: str) -> None:
    inst = generate_instance(replace(BASE, family=family), 2)
    scm = inst.scm
    assert not isinstance(scm, LinearGaussianSCM)
    target = int(inst.dag.topological_order()[2])
    observed = scm.sample(300, np.random.default_rng(9))
    done = scm.sample_do(target, 2.5, 300, np.random.default_rng(9))
    assert (done[:, target] == 2.5).all()
    reach = _descendants(inst.dag, target)
    for node in range(inst.n_nodes):
        if node != target and node not in reach:
            np.testing.assert_allclose(done[:, node], observed[:, node], rtol=1e-12, atol=1e-12)
    children = [int(c) for c in inst.dag.children(target)]
    assert children and all(not np.allclose(done[:, c], observed[:, c]) for c in children)


def _descendants(dag: DAG, node: int) -> set[int]:
    seen: set[int] = set()
    stack = [node]
    while stack:
        for child in np.flatnonzero(dag.adjacency[stack.pop()]):
            if int(child) not in seen:
                seen.add(int(child))
                stack.append(int(child))
    return seen


@pytest.mark.parametrize("ladder", list(FAMILY_LADDERS))
def test_sessions_intervene_on_every_family(ladder: str) -> None:
    inst = LADDERS[ladder]["L0"].instance(0)
    assert inst.spec.family == FAMILY_LADDERS[ladder]
    samples = Session(inst).intervene(3, -1.25)
    assert samples.shape == (inst.spec.n_int, inst.n_nodes) and (samples[:, 3] == -1.25).all()
    out = np.empty_like(samples)
    assert Session(inst).intervene(3, -1.25, out=out) is out
    np.testing.assert_array_equal(out, samples)
    if ladder == "v1-nonlinear":
        assert inst.dependence_measure == CORRELATION_RATIO and inst.min_relevant_abs_rho >= 0.1
    else:
        assert inst.dependence_measure == PARTIAL_CORRELATION
