"""Tests for acdb_gym.discovery.pc_batched: the batched PC against causal-learn's ``pc`` itself.

Every comparison runs both on the same data and requires the same skeleton, the same separating
sets (``cg.sepset``, entry for entry) and the same oriented graph (causal-learn's mark matrix,
before any decoding). The instances: every shipped manifest instance, fresh seeds of the
ladder levels, random small levels (d = 3..12, down to n = d + 1 samples and up to complete
graphs, where collider conflicts are common) and a few large ones up to d = 100; over 1,000 in
all, in chunks so that pytest-xdist spreads them.

On the manifest instances causal-learn's output is read from its record
(``_pc_reference.py``, digests of its marks and separating sets), and causal-learn
itself reruns on :data:`LIVE_PER_LEVEL` instances of every level to check the record, and on any
instance the record lacks.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery import pc_cpdag
from acdb_gym.discovery.pc_batched import BatchedPCResult, fisher_z_pvalues, pc_batched


def _load_reference() -> Any:
    # Tests run with --import-mode=importlib, so sibling modules are not on sys.path.
    name = "_pc_reference"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_reference = _load_reference()
ALPHA = _reference.ALPHA
causallearn_digest = _reference.causallearn_digest
output_digest = _reference.output_digest
reference_sepsets = _reference.causallearn_sepsets

causallearn_pc = pytest.importorskip("causallearn.search.ConstraintBased.PC").pc

LEVELS = [level for ladder in LADDERS.values() for level in ladder.values()]
SMALL_LEVELS = [level for level in LEVELS if level.spec.d <= 12]
FRESH_SEEDS = 30
RANDOM_CHUNKS = 13
RANDOM_PER_CHUNK = 50
LIVE_PER_LEVEL = 4
RECORD = _reference.read_record()
RECORDED_LADDERS = {key[0] for key in RECORD}


def reference(data: np.ndarray, alpha: float) -> Any:
    """causal-learn's PC as pc_cpdag calls it."""
    return causallearn_pc(np.ascontiguousarray(data), alpha, "fisherz", show_progress=False)


def assert_same_as_causallearn(data: np.ndarray, alpha: float = 0.05) -> BatchedPCResult:
    """Run both and require identical skeleton, separating sets and marks."""
    cg = reference(data, alpha)
    result = pc_batched(data, alpha=alpha)
    marks = cg.G.graph
    # Priority 2 only ever writes tails and arrowheads, never a bidirected pair.
    assert set(np.unique(marks)) <= {-1, 0, 1}
    np.testing.assert_array_equal(result.skeleton, marks != 0)
    assert dict(result.sepsets) == reference_sepsets(cg)
    np.testing.assert_array_equal(result.directed, (marks == -1) & (marks.T == 1))
    np.testing.assert_array_equal(result.undirected, (marks == -1) & (marks.T == -1))
    return result


def count_conflicts(result: BatchedPCResult) -> int:
    """Unshielded colliders by the separating sets that the output does not show as colliders
    (a later collider lost to an earlier one, or Meek could not complete)."""
    conflicts = 0
    n_nodes = result.skeleton.shape[0]
    for x, z in itertools.combinations(range(n_nodes), 2):
        if result.skeleton[x, z]:
            continue
        for y in np.flatnonzero(result.skeleton[x] & result.skeleton[z]):
            collider = all(y not in s for s in result.sepsets[(x, z)])
            if collider and not (result.directed[x, y] and result.directed[z, y]):
                conflicts += 1
    return conflicts


# --------------------------------------------------------------------------- equivalence


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS, ids=lambda level: f"{level.ladder}-{level.name}")
def test_manifest_instances_match_causallearn(level: Any) -> None:
    size = len(level.manifest)
    live = set(np.linspace(0, size - 1, LIVE_PER_LEVEL).astype(int).tolist())
    missing = 0
    for index, entry in enumerate(level.manifest):
        recorded = RECORD.get((level.ladder, level.name, index, entry.digest))
        if recorded is None and index not in live:
            missing += 1
            continue
        data = level.instance(index).d_obs
        if index in live:
            result = assert_same_as_causallearn(data, ALPHA)
            if recorded is not None:  # the record is causal-learn's output on this instance
                assert recorded == causallearn_digest(data, ALPHA), (level.name, index)
        else:
            result = pc_batched(data, alpha=ALPHA)
            digest = output_digest(
                result.skeleton, result.directed, result.undirected, result.sepsets
            )
            assert digest == recorded, f"{level.ladder} {level.name} index {index}"
    # A recorded ladder is recorded in full: a regenerated manifest must be recorded again
    # (`python tests/discovery/_pc_reference.py`); a ladder not yet recorded is checked live on
    # its spread of instances only.
    if level.ladder in RECORDED_LADDERS:
        assert missing == 0, f"{missing} instances of {level.ladder} {level.name} not recorded"


@pytest.mark.slow
@pytest.mark.parametrize("level", SMALL_LEVELS, ids=lambda level: f"{level.ladder}-{level.name}")
def test_fresh_ladder_instances_match_causallearn(level: Any) -> None:
    for seed in range(10_000, 10_000 + FRESH_SEEDS):
        assert_same_as_causallearn(generate_instance(level.spec, seed).d_obs)


def random_spec(rng: np.random.Generator) -> LevelSpec:
    """A small level of any density, with as few samples as PC accepts at times."""
    d = int(rng.integers(3, 13))
    n_pairs = d * (d - 1) // 2
    return LevelSpec(
        d=d,
        k=int(rng.integers(0, n_pairs + 1)),
        n_obs=max(4, d + 1, int(rng.choice([d + 1, d + 3, 20, 50, 200]))),
        n_int=4,
        noise_var=float(rng.choice([1.0, 4.0])),
        slack=0,
        faithfulness_eps=0.0,
        standardized=bool(rng.integers(2)),
    )


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(RANDOM_CHUNKS))
def test_random_small_levels_match_causallearn(chunk: int) -> None:
    rng = np.random.default_rng([16, chunk])
    conflicts = 0
    for _ in range(RANDOM_PER_CHUNK):
        instance = generate_instance(random_spec(rng), int(rng.integers(2**31)))
        alpha = float(rng.choice([0.01, 0.05, 0.2, 0.5]))
        conflicts += count_conflicts(assert_same_as_causallearn(instance.d_obs, alpha))
    # The chunk exercised the conflict handling, not only agreeable graphs.
    assert conflicts > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("d", "k", "n_obs"), [(5, 6, 30), (20, 30, 200), (50, 75, 500), (100, 60, 200)]
)
def test_large_levels_match_causallearn(d: int, k: int, n_obs: int) -> None:
    spec = LevelSpec(
        d=d,
        k=k,
        n_obs=n_obs,
        n_int=4,
        noise_var=1.0,
        slack=0,
        faithfulness_eps=0.0,
        standardized=True,
    )
    assert_same_as_causallearn(generate_instance(spec, 7).d_obs)


def test_pvalues_are_bit_identical_to_causallearn() -> None:
    from causallearn.utils.cit import CIT

    rng = np.random.default_rng(3)
    data = rng.normal(size=(40, 7)) @ rng.normal(size=(7, 7))
    test = CIT(np.ascontiguousarray(data), "fisherz")
    corr = np.corrcoef(data.T)
    for size in range(6):
        rows = [
            (a, b, s)
            for a, b in itertools.combinations(range(7), 2)
            for s in itertools.combinations([v for v in range(7) if v not in (a, b)], size)
        ]
        pairs = np.array([(a, b) for a, b, _ in rows])
        conditions = np.array([s for _, _, s in rows], dtype=np.int64).reshape(len(rows), size)
        expected = [test(a, b, list(s)) for a, b, s in rows]
        assert fisher_z_pvalues(corr, 40, pairs, conditions).tolist() == expected


# --------------------------------------------------------------------------- the backend


def test_pc_cpdag_backends_agree_on_manifest_instances() -> None:
    for level in LADDERS["v0"].values():
        data = level.instance(0).d_obs
        assert pc_cpdag(data, backend="batched") == pc_cpdag(data, backend="causal-learn")


@pytest.mark.parametrize(
    ("data", "alpha"),
    [
        (np.ones((10, 3)), 0.05),  # constant columns
        (np.array([[0.0, 1.0], [np.nan, 2.0], [3.0, 1.0]]), 0.05),  # not finite
        (np.arange(6.0).reshape(2, 3), 0.05),  # too few rows
        (np.arange(6.0), 0.05),  # not 2-D
        (np.random.default_rng(0).normal(size=(20, 3)), 1.0),  # alpha outside (0, 1)
    ],
)
def test_invalid_data_raises_the_same_errors(data: np.ndarray, alpha: float) -> None:
    with pytest.raises(ValueError) as reference_error:
        pc_cpdag(data, alpha=alpha, backend="causal-learn")
    with pytest.raises(ValueError) as batched_error:
        pc_cpdag(data, alpha=alpha, backend="batched")
    assert str(batched_error.value) == str(reference_error.value)
    with pytest.raises(ValueError, match=re.escape(str(reference_error.value))):
        pc_batched(data, alpha=alpha)


def test_singular_correlation_is_a_value_error_in_both() -> None:
    column = np.random.default_rng(1).normal(size=(30, 1))
    data = np.hstack([column, 2.0 * column, np.random.default_rng(2).normal(size=(30, 1))])
    with pytest.raises(ValueError, match="singular"):
        pc_cpdag(data, backend="causal-learn")
    with pytest.raises(ValueError, match="singular"):
        pc_cpdag(data, backend="batched")


def test_unknown_backend_is_named() -> None:
    with pytest.raises(ValueError, match="'tetrad'"):
        pc_cpdag(np.zeros((3, 2)), backend="tetrad")  # type: ignore[arg-type]


def test_fewer_than_two_variables_give_an_empty_result() -> None:
    result = pc_batched(np.zeros((5, 1)))
    assert result.skeleton.shape == (1, 1) and not result.skeleton.any()
    assert pc_cpdag(np.zeros((5, 1)), backend="batched") == pc_cpdag(
        np.zeros((5, 1)), backend="causal-learn"
    )


def test_input_is_not_modified() -> None:
    data = np.random.default_rng(4).normal(size=(30, 4))
    before = data.copy()
    pc_batched(data)
    np.testing.assert_array_equal(data, before)
