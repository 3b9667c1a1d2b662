"""Tests for the Sachs world fitted to its cytometry data (DESIGN §3.4): the fits are the
least-squares fits they claim, the noise is resampled real residuals, interventions cut exactly
the target's mechanism, the labelling is a per-seed permutation, and the fitted model
reproduces the real marginals."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import SACHS_PROTEINS, topology
from acdb_gym.core.worlds.fitted import FittedSCM, fit_quality, sachs_fit, sachs_log_data
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.soft import sample_soft
from acdb_gym.core.worlds.spec import LevelSpec


def _spec(fit: str) -> LevelSpec:
    return LevelSpec(11, 17, 300, 50, 1.0, 1, graph="sachs", fit=fit)


def test_the_log_data_is_standardized_sachs() -> None:
    data = sachs_log_data()
    assert data.shape == (7466, len(SACHS_PROTEINS))
    assert np.allclose(data.mean(axis=0), 0.0, atol=1e-12)
    assert np.allclose(data.std(axis=0), 1.0)


def test_the_linear_fit_is_ordinary_least_squares_on_the_parents() -> None:
    data = np.asarray(sachs_log_data())
    fit = sachs_fit("linear")
    for j in range(len(SACHS_PROTEINS)):
        parents = list(fit.dag.parents(j))
        design = np.column_stack([np.ones(data.shape[0]), data[:, parents]])
        solution, *_ = np.linalg.lstsq(design, data[:, j], rcond=None)
        assert np.allclose(fit.mechanisms[j].coefficients[:, 0], solution[1:], atol=1e-9)
        assert np.allclose(fit.residuals[:, j], data[:, j] - design @ solution, atol=1e-9)


def test_the_spline_fits_better_than_the_linear_one_in_sample() -> None:
    linear, spline = sachs_fit("linear"), sachs_fit("spline")
    has_parents = np.array(
        [len(fit_parents) > 0 for fit_parents in (m.parents for m in linear.mechanisms)]
    )
    assert (spline.r_squared[has_parents] >= linear.r_squared[has_parents] - 1e-9).all()
    assert spline.r_squared[has_parents].mean() > linear.r_squared[has_parents].mean() + 0.05


@pytest.mark.parametrize("fit", ["linear", "spline"])
def test_noise_is_resampled_from_the_real_residuals(fit: str) -> None:
    model = sachs_fit(fit)  # type: ignore[arg-type]
    rng = np.random.default_rng(5)
    samples = model.simulate(500, rng)
    roots = [j for j in range(11) if not model.mechanisms[j].parents]
    for root in roots:
        expected = model.residuals[:, root] + model.mechanisms[root].intercept
        assert np.isin(samples[:, root], expected).all()
    # Rebuild one child's draws by hand: its residual rows are the generator's indices.
    rows = np.random.default_rng(5).integers(7466, size=(500, 11))
    child = next(j for j in model.order if model.mechanisms[j].parents)
    predicted = model.mechanisms[child](model.kind, samples)
    assert np.allclose(samples[:, child] - predicted, model.residuals[rows[:, child], child])


@pytest.mark.parametrize("fit", ["linear", "spline"])
def test_do_cuts_only_the_targets_mechanism(fit: str) -> None:
    instance = generate_instance(_spec(fit), 11)
    scm = instance.scm
    assert isinstance(scm, FittedSCM)
    for var in range(11):
        observational = scm.sample(200, np.random.default_rng(1))
        intervened = scm.sample_do(var, 2.5, 200, np.random.default_rng(1))
        assert (intervened[:, var] == 2.5).all()
        reach = _reachable(instance.dag.adjacency, var)
        for other in range(11):
            if other != var and not reach[other]:
                assert np.array_equal(observational[:, other], intervened[:, other])


def _reachable(adjacency: np.ndarray, var: int) -> np.ndarray:
    reached = np.zeros(adjacency.shape[0], dtype=bool)
    frontier = adjacency[var].copy()
    while frontier.any():
        reached |= frontier
        frontier = adjacency[frontier].any(axis=0) & ~reached
    return reached


def test_each_seed_relabels_the_proteins_and_the_truth_is_the_sachs_dag() -> None:
    truth = topology("sachs")
    truth_names = {
        (truth.names[i], truth.names[j])
        for i, j in zip(*np.nonzero(truth.dag.adjacency), strict=True)
    }
    labellings = set()
    for seed in range(4):
        instance = generate_instance(_spec("spline"), seed)
        names = instance.variable_names
        assert names is not None
        labellings.add(names)
        got = {
            (names[i], names[j]) for i, j in zip(*np.nonzero(instance.dag.adjacency), strict=True)
        }
        assert got == truth_names
        # Column "PKA" of the sample is the fitted PKA, whatever its index.
        pka = names.index("PKA")
        spline = sachs_fit("spline")
        pka_values = spline.residuals[:, 7] + spline.mechanisms[7].intercept
        assert np.isin(instance.d_obs[:, pka], pka_values).all()
    assert len(labellings) == 4
    again = generate_instance(_spec("spline"), 3)
    assert again.digest() == generate_instance(_spec("spline"), 3).digest()
    assert generate_instance(_spec("linear"), 3).digest() != again.digest()


def test_soft_shift_moves_the_target_by_the_value() -> None:
    instance = generate_instance(_spec("linear"), 2)
    var = instance.variable_names.index("PKA") if instance.variable_names else 0
    plain = instance.scm.sample(100, np.random.default_rng(0))
    shifted = sample_soft(instance.scm, "shift", var, 1.5, 100, np.random.default_rng(0))
    assert np.allclose(shifted[:, var] - plain[:, var], 1.5)


@pytest.mark.parametrize("fit", ["linear", "spline"])
def test_the_fit_reproduces_the_real_marginals(fit: str) -> None:
    quality = fit_quality(fit, n=4000)  # type: ignore[arg-type]
    assert quality["max_abs_mean_gap"] < 0.1
    assert quality["max_abs_std_gap"] < 0.15
    assert quality["mean_ks"] < 0.08


def test_fit_needs_the_sachs_graph_and_a_known_kind() -> None:
    with pytest.raises(ValueError, match="needs graph='sachs'"):
        LevelSpec(11, 17, 300, 50, 1.0, 1, fit="linear")
    with pytest.raises(ValueError, match="fit must be one of"):
        LevelSpec(11, 17, 300, 50, 1.0, 1, graph="sachs", fit="gam")
    with pytest.raises(ValueError, match="fit must be one of"):
        sachs_fit("gam")  # type: ignore[arg-type]
