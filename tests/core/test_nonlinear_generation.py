"""The nonlinear generator's fast paths give numpy's plain computations bit for bit (DESIGN §3.1).

The ladders' manifest digests pin every generated world; these tests pin each shortcut the
generator takes against the plain numpy expression it replaces, on many random inputs, so a
numpy or BLAS change that broke the equality would fail here and not only as a drifted digest.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from acdb_gym.core.worlds.acceptance import _row_moments
from acdb_gym.core.worlds.dependence import (
    UNIQUE_ROWS,
    Calibration,
    _independent_copy,
    _network_differences,
    edge_dependences,
    mean_variance,
)
from acdb_gym.core.worlds.mechanisms import (
    AdditiveMechanism,
    NetworkMechanism,
    NormalScoreMap,
    apply_shape,
)


def _same_bits(a: object, b: object) -> bool:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return x.shape == y.shape and bool(np.array_equal(x.view(np.int64), y.view(np.int64)))


def test_mean_variance_is_numpys_mean_and_var_on_columns_of_any_stride() -> None:
    rng = np.random.default_rng(0)
    for trial in range(200):
        sample = rng.standard_normal((1000, 1 + trial % 30)) * rng.exponential()
        column = sample[:, trial % sample.shape[1]]
        mean, variance = mean_variance(column)
        assert _same_bits(mean, column.mean()) and _same_bits(variance, column.var())
        assert _same_bits(np.sqrt(variance), column.std())


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_row_moments_are_numpys_column_moments_of_the_transpose(p: int) -> None:
    rng = np.random.default_rng(p)
    shapes = ("tanh", "sin", "softplus", "square")
    for _ in range(50):
        sample = rng.standard_normal((1000, 8))
        rows = np.array([apply_shape(shapes[rng.integers(4)], sample[:, c]) for c in range(p)])
        terms = np.column_stack(list(rows))  # the (n, p) layout numpy reduces column-wise
        mean, variance, centred = _row_moments(rows)
        assert _same_bits(mean, terms.mean(axis=0)) and _same_bits(variance, terms.var(axis=0))
        assert _same_bits(np.ascontiguousarray(centred.T), terms - terms.mean(axis=0))


def test_fit_and_map_is_fit_then_map_including_samples_with_ties() -> None:
    rng = np.random.default_rng(1)
    for trial in range(200):
        sample = [rng.standard_normal, rng.exponential, rng.standard_cauchy][trial % 3](size=1000)
        if trial % 10 == 0:
            sample[:7] = sample[7]  # ties away from the knots: np.interp's own path
        fitted, mapped = NormalScoreMap.fit_and_map(sample)
        reference = NormalScoreMap.fit(sample)
        assert _same_bits(fitted.knots, reference.knots)
        assert _same_bits(mapped, reference(sample))
    with pytest.raises(ValueError, match="at least 101"):
        NormalScoreMap.fit_and_map(rng.standard_normal(50))


def test_a_map_in_sorted_order_is_the_plain_map_with_knots_ties_tails_and_nan() -> None:
    rng = np.random.default_rng(2)
    for trial in range(300):
        normal_scores = NormalScoreMap.fit(rng.standard_normal(1000))
        x = 2.0 * rng.standard_normal([10, 64, 200, 1000][trial % 4])  # tails on both sides
        x[::9] = normal_scores.knots[rng.integers(0, 101, size=len(x[::9]))]  # on knots
        x[:3] = x[3]
        if trial % 25 == 0:
            x[5] = np.nan
        assert _same_bits(normal_scores(x), normal_scores._map(x))


@pytest.mark.parametrize(("n", "rows"), [(1000, 500), (1000, 600), (300, 300), (7, 3)])
def test_independent_copy_is_the_rolled_columns_first_rows(n: int, rows: int) -> None:
    x = np.random.default_rng(n).standard_normal(n)
    assert _same_bits(_independent_copy(x, rows), np.roll(x, n // 2)[:rows])


def _one_parent_at_a_time(network: NetworkMechanism, sample: np.ndarray) -> np.ndarray:
    """The variances as first written: each parent's shifted copy of the whole rows evaluated
    on its own."""
    rows = sample[:UNIQUE_ROWS]
    base = network(rows)
    variances = []
    for parent in network.parents:
        shifted = rows.copy()
        shifted[:, parent] = np.roll(sample[:, parent], len(sample) // 2)[:UNIQUE_ROWS]
        variances.append((base - network(shifted)).var())
    return np.array(variances)


@pytest.mark.parametrize("p", [1, 2, 4, 6])
def test_stacked_network_differences_are_those_of_each_parent_alone(p: int) -> None:
    rng = np.random.default_rng(10 + p)
    for _ in range(30):
        sample = rng.standard_normal((1000, 12))
        network = NetworkMechanism(
            tuple(sorted(rng.choice(12, p, replace=False).tolist())),
            rng.normal(0.0, 1.5 / math.sqrt(p), (p, 8)),
            rng.uniform(-1.0, 1.0, 8),
            rng.normal(0.0, 1.0, 8),
            center=float(rng.normal()),
            spread=float(rng.exponential()),
            gain=float(rng.exponential()),
        )
        assert _same_bits(
            _network_differences(network, sample), _one_parent_at_a_time(network, sample)
        )


def test_a_nodes_check_stops_at_its_first_failing_edge_with_the_same_decision() -> None:
    rng = np.random.default_rng(3)
    sample = rng.standard_normal((1000, 4))
    weights = np.array([0.9, 0.02, 0.5])  # the middle parent barely counts
    mechanism = AdditiveMechanism(
        (0, 1, 2), ("tanh", "sin", "square"), weights, np.zeros(3), np.ones(3)
    )
    sample[:, 3] = mechanism(sample) + 0.3 * sample[:, 3]
    every = edge_dependences(mechanism, 1.0, Calibration(sample, {}), 3)
    assert len(every) == 3 and every.min() < 0.1
    stopped = edge_dependences(mechanism, 1.0, Calibration(sample, {}), 3, stop_below=0.1)
    assert len(stopped) == 2 and stopped[-1] < 0.1
    assert _same_bits(stopped, every[:2])
    lowest = float(every.min())  # nothing is below the smallest: every edge is read
    passed = edge_dependences(mechanism, 1.0, Calibration(sample, {}), 3, stop_below=lowest)
    assert _same_bits(passed, every)


@pytest.mark.slow
def test_the_manifest_check_script_records_compares_and_fails_on_a_change(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "manifest_digests.py"
    record = tmp_path / "record.json"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(script), "v1-nonlinear:L0", "--first", "2", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    recorded = run("--record", str(record))
    assert recorded.returncode == 0, recorded.stderr
    assert "2/2 match" in recorded.stdout and "all digests match" in recorded.stdout
    assert run("--against", str(record)).stdout.count("2/2 worlds equal the record") == 1
    hashes = json.loads(record.read_text(encoding="utf-8"))
    hashes["v1-nonlinear:L0:1"] = "0" * 16
    record.write_text(json.dumps(hashes), encoding="utf-8")
    changed = run("--against", str(record))
    assert changed.returncode == 1 and "v1-nonlinear:L0:1" in changed.stdout
