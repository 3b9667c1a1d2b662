"""The sign-flip test's sums of flipped differences (acdb_gym/report/statistics.py) are added
one column at a time in NumPy's own order for a row sum, so its p-values are those of a
row-wise ``sum(axis=1)``, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.report import statistics


@pytest.mark.parametrize("columns", [1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 127, 128, 129, 300])
def test_the_column_sums_are_numpys_row_sums(columns: int) -> None:
    rng = np.random.default_rng(columns)
    values = rng.normal(size=(2000, columns)) * rng.choice([1e-6, 1.0, 1e6], size=(2000, columns))
    summed = statistics._row_sums([values[:, k] for k in range(columns)])
    assert np.array_equal(summed, values.sum(axis=1))


def test_the_p_values_are_those_of_row_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    samples = [np.round(rng.normal(size=n), 2) for n in (5, 12, 30, 48, 70)]
    fast = [statistics.sign_flip_pvalue(x, n_resamples=20_000) for x in samples]

    def by_rows(tables: np.ndarray, patterns: np.ndarray, total: float, threshold: float) -> int:
        offsets = 256 * np.arange(tables.shape[0])
        flipped = tables.ravel()[patterns.astype(np.intp) + offsets].sum(axis=1)
        return int(np.count_nonzero(np.abs(total - 2.0 * flipped) >= threshold))

    monkeypatch.setattr(statistics, "_count_extreme", by_rows)
    assert fast == [statistics.sign_flip_pvalue(x, n_resamples=20_000) for x in samples]
