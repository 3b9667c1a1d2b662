"""World generation: SCM sampling, faithfulness, instances, ladders (DESIGN §3, §7)."""

from __future__ import annotations

import ast
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

import acdb_gym.core
from acdb_gym.core.graphs import DAG, minimum_intervention_set
from acdb_gym.core.ladders.shipped import LADDERS, LEVEL_NAMES, MANIFEST_SIZE, LevelSpec, get_level
from acdb_gym.core.worlds.faithfulness import (
    is_faithful,
    min_relevant_partial_correlation,
    partial_correlation_from_covariance,
)
from acdb_gym.core.worlds.instance import (
    Instance,
    InstanceGenerationError,
    generate_instance,
)
from acdb_gym.core.worlds.linear import LinearGaussianSCM

SMALL = LevelSpec(d=5, k=6, n_obs=200, n_int=40, noise_var=1.0, slack=1)

# --------------------------------------------------------------------------- SCM


def test_covariance_matches_large_sample() -> None:
    weights = np.zeros((3, 3))
    weights[0, 1], weights[1, 2], weights[0, 2] = 1.5, -0.8, 0.6
    scm = LinearGaussianSCM(weights, np.array([1.0, 0.5, 2.0]))
    data = scm.sample(200_000, np.random.default_rng(1))
    np.testing.assert_allclose(np.cov(data.T), scm.covariance(), atol=0.05, rtol=0.02)


def test_sample_do_cuts_parents_and_fixes_target() -> None:
    weights = np.zeros((3, 3))
    weights[0, 1], weights[1, 2] = 2.0, 1.0
    scm = LinearGaussianSCM(weights, np.ones(3))
    data = scm.sample_do(1, 5.0, 50_000, np.random.default_rng(2))
    assert (data[:, 1] == 5.0).all()
    # X0 is upstream: unaffected; X2 = X1 + e2 has mean 5 and variance 1.
    assert abs(data[:, 0].mean()) < 0.03 and abs(data[:, 0].var() - 1) < 0.05
    assert abs(data[:, 2].mean() - 5.0) < 0.03 and abs(data[:, 2].var() - 1) < 0.05
    # No dependence on the cut parent.
    assert abs(np.corrcoef(data[:, 0], data[:, 2])[0, 1]) < 0.02


def _reference_do(scm: LinearGaussianSCM, var: int, value: float, noise: np.ndarray) -> np.ndarray:
    """do(X_var = value) by the textbook route: invert I - W with var's in-edges cut."""
    cut = np.array(scm.weights)
    cut[:, var] = 0.0
    scaled = noise * scm.noise_std
    scaled[:, var] = 0.0
    mixing = np.linalg.inv(np.eye(scm.n_nodes) - cut)
    return scaled @ mixing + value * mixing[var]


@pytest.mark.parametrize("d", [2, 5, 10, 32, 33, 40, 41, 45, 64])
def test_sample_do_matches_the_cut_system_inverse_for_every_target(d: int) -> None:
    """The rank-one do-matrices (all targets at once for d <= 32, one at a time up to 40) and the
    rank-one update of the observational draw (d > 40) give the same samples as inverting each
    cut system, from the same noise, with the target's column exactly the value."""
    rng = np.random.default_rng(d)
    weights = np.triu(rng.uniform(0.5, 2.0, (d, d)) * rng.choice([-1, 1], (d, d)), k=1)
    weights *= rng.random((d, d)) < 0.3
    order = rng.permutation(d)
    weights = weights[np.ix_(order, order)]
    scm = LinearGaussianSCM(weights, rng.uniform(0.5, 2.0, d))
    for var in range(d):
        value = float(rng.normal(0.0, 3.0))
        seed = int(rng.integers(2**32))
        data = scm.sample_do(var, value, 7, np.random.default_rng(seed))
        noise = np.random.default_rng(seed).standard_normal((7, d))
        expected = _reference_do(scm, var, value, noise)
        assert (data[:, var] == value).all()
        # Total effects grow with d in these dense worlds (1e7 at d = 64) and so does the
        # rounding of every route, the reference's too: compare on the scale of the sample.
        scale = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(data, expected, rtol=0, atol=1e-9 * scale)


@pytest.mark.parametrize("bad", [-1, 3])
def test_sample_do_rejects_bad_var(bad: int) -> None:
    scm = LinearGaussianSCM(np.zeros((3, 3)), np.ones(3))
    with pytest.raises(ValueError, match=str(bad)):
        scm.sample_do(bad, 1.0, 5, np.random.default_rng(0))


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_sample_do_rejects_non_finite_value(value: float) -> None:
    scm = LinearGaussianSCM(np.zeros((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        scm.sample_do(0, value, 5, np.random.default_rng(0))


def test_scm_rejects_cyclic_support() -> None:
    weights = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="cycle"):
        LinearGaussianSCM(weights, np.ones(2))


def test_standardized_scm_has_unit_variances_and_same_graph() -> None:
    inst = generate_instance(LADDERS["v1"]["L1"].spec, 3)
    cov = inst.scm.covariance()
    np.testing.assert_allclose(np.diag(cov), 1.0, atol=1e-12)
    assert DAG(inst.scm.weights != 0) == inst.dag


def test_standardization_removes_variance_sortability() -> None:
    """Raw SCMs: variance grows along the causal order; standardized: all variances equal."""
    raw = generate_instance(LevelSpec(8, 12, 100, 20, 1.0, 1), 5)
    order = raw.dag.topological_order()
    variances = np.diag(raw.scm.covariance())[order]
    assert variances[-1] > variances[0]
    std = generate_instance(LevelSpec(8, 12, 100, 20, 1.0, 1, standardized=True), 5)
    assert np.ptp(np.diag(std.scm.covariance())) < 1e-12


def test_standardized_scales_each_variable_as_it_is_generated() -> None:
    """Chain X0 -> X1 -> X2, weights 2, noise 1: every link has correlation 2/sqrt(5), since
    each child sees its already-standardized parent (a raw SCM gives 2 sqrt(5)/sqrt(21) for the
    second link)."""
    weights = np.zeros((3, 3))
    weights[0, 1] = weights[1, 2] = 2.0
    cov = LinearGaussianSCM.standardized(weights, 1.0).covariance()
    np.testing.assert_allclose([cov[0, 1], cov[1, 2]], 2 / np.sqrt(5), atol=1e-12)
    np.testing.assert_allclose(cov[0, 2], 4 / 5, atol=1e-12)


# --------------------------------------------------------------------------- faithfulness


@pytest.mark.slow
def test_partial_correlation_matches_regression_residuals() -> None:
    inst = generate_instance(SMALL, 11)
    cov = inst.scm.covariance()
    data = inst.scm.sample(400_000, np.random.default_rng(3))
    for cond in [(), (2,), (2, 3)]:
        design = np.column_stack([data[:, list(cond)], np.ones(len(data))])
        res = [
            data[:, v] - design @ np.linalg.lstsq(design, data[:, v], rcond=None)[0] for v in (0, 1)
        ]
        empirical = np.corrcoef(res[0], res[1])[0, 1]
        assert abs(partial_correlation_from_covariance(cov, 0, 1, cond) - empirical) < 0.01


def test_faithfulness_rejects_cancelling_paths() -> None:
    # X0 -> X1 -> X2 and X0 -> X2 with the direct effect cancelling the indirect one.
    weights = np.zeros((3, 3))
    weights[0, 1], weights[1, 2], weights[0, 2] = 1.0, 1.0, -1.0
    scm = LinearGaussianSCM(weights, np.ones(3))
    dag = scm.dag
    cov = scm.covariance()
    assert abs(cov[0, 2]) < 1e-12  # marginally independent despite the edge
    # The v0 check only conditions on parent sets and full sets, which do not vanish here;
    # PC-relevant conditioning (the empty set) exposes it through the covariate.
    assert min_relevant_partial_correlation(dag, cov) < 1e-12
    weights[0, 2] = 0.05
    assert not is_faithful(LinearGaussianSCM(weights, np.ones(3)).dag, _cov(weights), 0.1)


def _cov(weights: np.ndarray) -> np.ndarray:
    return LinearGaussianSCM(weights, np.ones(len(weights))).covariance()


def test_accepted_instances_pass_the_v0_check_by_brute_force() -> None:
    for seed in range(20):
        inst = generate_instance(SMALL, seed)
        cov = inst.scm.covariance()
        d = inst.n_nodes
        for i, j in inst.dag.edges():
            parents = [int(p) for p in inst.dag.parents(j) if p != i]
            rest = [v for v in range(d) if v not in (i, j)]
            assert abs(partial_correlation_from_covariance(cov, i, j, parents)) >= 0.1
            assert abs(partial_correlation_from_covariance(cov, i, j, rest)) >= 0.1


def test_min_relevant_partial_correlation_by_brute_force() -> None:
    inst = generate_instance(SMALL, 4)
    cov = inst.scm.covariance()
    skel = inst.dag.skeleton()
    best = np.inf
    for i, j in inst.dag.edges():
        for end, other in ((i, j), (j, i)):
            nbrs = [v for v in range(inst.n_nodes) if skel[end, v] and v != other]
            for size in range(3):
                for cond in combinations(nbrs, size):
                    best = min(best, abs(partial_correlation_from_covariance(cov, i, j, cond)))
    assert inst.min_relevant_abs_rho == pytest.approx(best, abs=1e-12)


# --------------------------------------------------------------------------- instances


def test_instance_has_exact_k_and_budget() -> None:
    for seed in range(10):
        inst = generate_instance(SMALL, seed)
        assert inst.dag.n_edges == SMALL.k
        assert inst.d_obs.shape == (SMALL.n_obs, SMALL.d)
        assert inst.i_star == minimum_intervention_set(inst.dag)
        assert inst.budget == len(inst.i_star) + SMALL.slack
        assert inst.attempts >= 1


def test_instance_arrays_are_read_only() -> None:
    inst = generate_instance(SMALL, 0)
    for array in (inst.d_obs, inst.weights, inst.dag.adjacency):
        with pytest.raises(ValueError):
            array[0, 0] = 1


def test_weights_have_the_specified_magnitudes_and_both_signs() -> None:
    weights = np.concatenate(
        [
            generate_instance(SMALL, s).weights[generate_instance(SMALL, s).dag.adjacency]
            for s in range(30)
        ]
    )
    assert ((np.abs(weights) >= 0.5) & (np.abs(weights) <= 2.0)).all()
    assert 0.3 < (weights > 0).mean() < 0.7


def test_node_indices_are_permuted() -> None:
    """Index order says nothing about causal order: some edges point from high to low index."""
    backwards = sum(
        int(np.tril(generate_instance(SMALL, s).dag.adjacency).sum() > 0) for s in range(20)
    )
    assert backwards >= 15


def test_same_seed_same_instance_different_seed_different() -> None:
    a, b = generate_instance(SMALL, 42), generate_instance(SMALL, 42)
    assert a.digest() == b.digest()
    assert np.array_equal(a.d_obs, b.d_obs) and a.dag == b.dag
    assert generate_instance(SMALL, 43).digest() != a.digest()


def test_generator_seed_is_recorded() -> None:
    inst = generate_instance(SMALL, np.random.default_rng(5))
    assert generate_instance(SMALL, inst.seed).digest() == inst.digest()


def test_intervention_stream_is_reproducible_and_separate() -> None:
    inst = generate_instance(SMALL, 9)
    first = inst.scm.sample_do(0, 1.0, 10, inst.intervention_rng())
    again = inst.scm.sample_do(0, 1.0, 10, inst.intervention_rng())
    assert np.array_equal(first, again)
    obs_like = inst.scm.sample(SMALL.n_obs, inst.intervention_rng())
    assert not np.array_equal(obs_like, inst.d_obs)


_CHILD = """
import numpy as np
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.ladders.shipped import LADDERS
inst = generate_instance(LADDERS["v0"]["L3"].spec, 123)
data = inst.scm.sample_do(2, 1.5, 7, inst.intervention_rng())
print(inst.d_obs.tobytes().hex(), inst.weights.tobytes().hex(), data.tobytes().hex())
"""


@pytest.mark.slow
def test_bit_identical_across_processes() -> None:
    runs = [
        subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout
    inst = generate_instance(LADDERS["v0"]["L3"].spec, 123)
    data = inst.scm.sample_do(2, 1.5, 7, inst.intervention_rng())
    expected = f"{inst.d_obs.tobytes().hex()} {inst.weights.tobytes().hex()} {data.tobytes().hex()}"
    assert runs[0].stdout.strip() == expected


def test_generation_failure_names_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("acdb_gym.core.worlds.kinds.linear.MAX_ATTEMPTS", 3)
    impossible = LevelSpec(
        d=6, k=15, n_obs=10, n_int=10, noise_var=1.0, slack=0, faithfulness_eps=0.99
    )
    with pytest.raises(InstanceGenerationError, match="d=6, k=15") as info:
        generate_instance(impossible, 0)
    assert info.value.attempts == 3 and info.value.spec == impossible


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d": 1, "k": 0}, "d must be at least 2"),
        ({"d": 4, "k": 7}, r"k must be in \[0, 6\]"),
        ({"d": 4, "k": 2, "slack": -1}, "slack"),
        ({"d": 4, "k": 2, "noise_var": 0.0}, "noise_var"),
        ({"d": 4, "k": 2, "n_obs": 2}, "n_obs"),
    ],
)
def test_level_spec_validation(kwargs: dict[str, float], match: str) -> None:
    base: dict[str, float] = {"n_obs": 10, "n_int": 10, "noise_var": 1.0, "slack": 0}
    with pytest.raises(ValueError, match=match):
        LevelSpec(**{**base, **kwargs})  # type: ignore[arg-type]


def test_instance_repr_hides_nothing_it_should_not_print() -> None:
    text = repr(generate_instance(SMALL, 0))
    assert "seed=0" in text and "adjacency" not in text


# --------------------------------------------------------------------------- ladders


def test_ladder_tables_verbatim() -> None:
    v0 = {
        "L0": (5, 8, 500, 100, 1.0, 2, 0.275),
        "L1": (6, 9, 200, 50, 2.0, 1, 0.243),
        "L2": (6, 9, 50, 20, 4.0, 1, 0.243),
        "L3": (8, 13, 200, 50, 2.0, 1, 0.215),
        "L4": (6, 9, 200, 50, 2.0, 0, 0.243),
        "L5": (10, 20, 50, 20, 4.0, 0, 0.210),
    }
    v1 = {
        "L0": (10, 8, 1000, 200, 1.0, 2, 0.117),
        "L1": (12, 12, 1000, 200, 1.0, 1, 0.119),
        "L2": (12, 12, 100, 50, 1.0, 1, 0.119),
        "L3": (20, 30, 1000, 200, 1.0, 1, 0.108),
        "L4": (12, 12, 1000, 200, 1.0, 0, 0.119),
        "L5": (30, 45, 200, 50, 1.0, 0, 0.078),
    }
    for name, table, standardized in (("v0", v0, False), ("v1", v1, True)):
        assert tuple(LADDERS[name]) == LEVEL_NAMES
        for level, (d, k, n_obs, n_int, noise, slack, floor) in table.items():
            spec = LADDERS[name][level].spec
            assert (spec.d, spec.k, spec.n_obs, spec.n_int, spec.noise_var, spec.slack) == (
                d,
                k,
                n_obs,
                n_int,
                noise,
                slack,
            )
            assert spec.standardized is standardized and spec.faithfulness_eps == 0.1
            assert round(spec.random_floor, 3) == floor
    mean_floor = np.mean([lv.spec.random_floor for lv in LADDERS["v0"].values()])
    assert round(mean_floor, 3) == 0.238


@pytest.mark.slow
def test_random_floor_closed_form_matches_simulation() -> None:
    spec = LADDERS["v0"]["L1"].spec
    rng = np.random.default_rng(0)
    truth = generate_instance(spec, 0).dag.adjacency
    rows, cols = np.triu_indices(spec.d, 1)
    f1s = []
    for _ in range(20_000):
        order = rng.permutation(spec.d)
        m = rng.integers(0, spec.n_pairs + 1)
        pick = rng.choice(spec.n_pairs, m, replace=False)
        pred = np.zeros_like(truth)
        pred[order[rows[pick]], order[cols[pick]]] = True
        tp = (pred & truth).sum()
        f1s.append(0.0 if tp == 0 else 2 * tp / (m + spec.k))
    assert abs(np.mean(f1s) - spec.random_floor) < 0.005


@pytest.mark.slow
@pytest.mark.parametrize("ladder", list(LADDERS))
@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_manifest_digests_catch_generation_drift(ladder: str, level: str) -> None:
    """The first 8 seeds (v0's published ones) and a fixed sample of the other 192 regenerate."""
    lv = LADDERS[ladder][level]
    assert len(lv.manifest) == MANIFEST_SIZE == 200
    assert len({entry.seed for entry in lv.manifest}) == MANIFEST_SIZE
    sample = [*range(8), *np.random.default_rng(17).choice(np.arange(8, 200), 12, replace=False)]
    for index in sample:
        entry = lv.manifest[index]
        inst = lv.instance(int(index))
        assert isinstance(inst, Instance)
        assert inst.digest() == entry.digest, f"{ladder} {level} seed {entry.seed} drifted"
        assert inst.budget <= lv.spec.max_interventions


def test_get_level_errors_list_choices() -> None:
    with pytest.raises(ValueError, match="v9"):
        get_level("v9", "L0")
    with pytest.raises(ValueError, match="L7"):
        get_level("v0", "L7")
    with pytest.raises(ValueError, match="manifest_index"):
        LADDERS["v0"]["L0"].manifest_seed(200)


@pytest.mark.slow
def test_core_imports_only_numpy_scipy_and_itself() -> None:
    """DESIGN §1: acdb_gym/core imports numpy and scipy only (plus the standard library)."""
    core = Path(acdb_gym.core.__file__).parent
    # networkx is the interop layer (DAG.to_networkx), imported lazily inside those methods.
    allowed = {"numpy", "scipy", "networkx", "acdb_gym"} | set(sys.stdlib_module_names)
    for source in core.rglob("*.py"):  # the graphs package too
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{source.name} imports {name}"
                if name.startswith("acdb_gym"):
                    assert name.startswith("acdb_gym.core"), f"{source.name} imports {name}"


@pytest.mark.slow
def test_import_acdb_gym_loads_no_torch_llm_sdk_or_plotting() -> None:
    code = (
        "import sys, acdb_gym\n"
        "bad = [m for m in ('torch', 'stable_baselines3', 'openai', 'anthropic', 'matplotlib',"
        " 'causallearn', 'ray') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
