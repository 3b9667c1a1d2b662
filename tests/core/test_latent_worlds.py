"""Worlds with hidden common causes: ``LevelSpec(latent=L)`` (DESIGN §3.2)."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, has_directed_path
from acdb_gym.core.session import Session
from acdb_gym.core.worlds import LevelSpec, generate_instance
from acdb_gym.core.worlds.latent import LatentSCM, passes_observed_rule

SPEC = LevelSpec(d=6, k=5, n_obs=400, n_int=100, noise_var=1.0, slack=1, standardized=True)


def test_the_default_leaves_the_spec_repr_and_sufficient_instances_alone() -> None:
    assert "latent" not in repr(SPEC)
    assert "latent=2" in repr(LevelSpec(**{**SPEC.__dict__, "latent": 2}))
    instance = generate_instance(SPEC, 3)
    assert instance.admg is None and instance.latent_truth is None


@pytest.mark.parametrize("family", ["linear_gaussian", "linear_nongaussian", "nonlinear"])
def test_latent_worlds_hide_their_confounders(family: str) -> None:
    spec = LevelSpec(**{**SPEC.__dict__, "latent": 2, "family": family})
    for seed in range(4):
        instance = generate_instance(spec, seed)
        assert isinstance(instance.scm, LatentSCM) and instance.scm.n_latent == 2
        assert instance.d_obs.shape == (spec.n_obs, spec.d)
        admg = instance.admg
        assert admg is not None and len(admg.bidirected_edges()) == 2
        assert instance.dag == DAG(admg.directed) and instance.dag.n_edges == spec.k
        # Each latent confounds a pair without an edge: no bows.
        assert not (admg.bidirected & (admg.directed | admg.directed.T)).any()
        assert instance.budget == len(instance.i_star) + spec.slack + spec.latent
        assert generate_instance(spec, seed).digest() == instance.digest()
        if family != "nonlinear":
            cov = instance.scm.covariance()
            assert passes_observed_rule(admg, cov, spec.faithfulness_eps)
            assert instance.min_relevant_abs_rho > 0


def _confounded_pair(spec: LevelSpec) -> tuple[int, int, int]:
    """A seed and a pair i <-> j with no directed path between them."""
    for seed in range(50):
        instance = generate_instance(spec, seed)
        assert instance.admg is not None
        for i, j in instance.admg.bidirected_edges():
            directed = instance.admg.directed
            if not has_directed_path(directed, i, j) and not has_directed_path(directed, j, i):
                return seed, i, j
    raise AssertionError("no confounded pair without a directed path")


def test_a_hard_intervention_cuts_the_latent_edges_too() -> None:
    spec = LevelSpec(**{**SPEC.__dict__, "latent": 2, "n_obs": 4000, "n_int": 4000})
    seed, i, j = _confounded_pair(spec)
    instance = generate_instance(spec, seed)
    scm = instance.scm
    assert isinstance(scm, LatentSCM)
    session = Session(instance, np.random.default_rng(0))
    assert abs(np.corrcoef(instance.d_obs[:, i], instance.d_obs[:, j])[0, 1]) > 0.08
    hard = session.intervene(i, 0.0)
    shifted = session.intervene(i, 1.0, kind="shift")
    assert hard.shape == shifted.shape == (spec.n_int, spec.d)
    # The session draws what the whole world draws under do(X_i), observed columns only.
    expected = scm.full.sample_do(i, 0.0, spec.n_int, np.random.default_rng(0))
    np.testing.assert_array_equal(hard, expected[:, : spec.d])
    # do(X_i) cuts L -> X_i: X_i is constant while the latent still moves X_j; a shift keeps
    # the latent edge, so X_i and X_j stay correlated.
    assert np.all(hard[:, i] == 0.0) and hard[:, j].std() > 0.5
    assert abs(np.corrcoef(shifted[:, i], shifted[:, j])[0, 1]) > 0.08


def test_bad_latent_values_are_refused() -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        LevelSpec(**{**SPEC.__dict__, "latent": -1})
    with pytest.raises(ValueError, match="pairs without an edge"):
        LevelSpec(**{**SPEC.__dict__, "k": 15, "latent": 1})
    with pytest.raises(ValueError, match="reject_world"):
        LevelSpec(**{**SPEC.__dict__, "latent": 1, "faithfulness_rule": "redraw_edges"})


def test_the_latent_ladder_is_registered_and_its_manifests_regenerate() -> None:
    import gymnasium as gym

    import acdb_gym  # noqa: F401 - registers the ids
    from acdb_gym.core.ladders.shipped import ALL_LADDERS, LATENT_LADDER, MANIFEST_SIZE

    assert ALL_LADDERS["v1-latent"] is LATENT_LADDER
    assert [level.env_id for level in LATENT_LADDER.values()] == [
        f"ACDB-Latent-L{i}-v1" for i in range(6)
    ]
    for level in LATENT_LADDER.values():
        assert level.spec.latent > 0 and len(level.manifest) == MANIFEST_SIZE
        assert level.env_id in gym.registry
        for index in (0, 1, MANIFEST_SIZE - 1):
            assert level.instance(index).digest() == level.manifest[index].digest
