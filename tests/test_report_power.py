"""Tests for the report's power figures and sign-flip p-values, pinned on small constructed data.

Hand-computed cases: an exact sign-flip p enumerated by hand, the minimum detectable difference
(MDD) from the t quantiles, the MDD checked against the exact paired t-test power (noncentral
t), and the seeds a 5-point difference needs at the boundary.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from acdb_gym.report import compare_agents, paired_test, sign_flip_pvalue
from acdb_gym.report.power import (
    min_sign_flip_seeds,
    minimum_detectable_difference,
    paired_t_power,
    seeds_to_detect,
)
from acdb_gym.report.tables import format_mdd, format_p_value
from acdb_gym.results import example_row


def _brute_force_p(differences: np.ndarray) -> float:
    observed = abs(differences.sum())
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=differences.size)))
    return float(np.mean(np.abs(signs @ differences) >= observed - 1e-12))


def test_exact_sign_flip_p_enumerated_by_hand() -> None:
    # Observed sum 2.5. The 8 sums of +-1 +-2 +-3 are 6, 4, 2, 0, 0, -2, -4, -6; adding +-0.5,
    # |sum| >= 2.5 for 6.5, 5.5, 4.5, 3.5, 2.5 (not 1.5), none of the four around 0, 2.5 of
    # -2 +- 0.5, and all four of -4 and -6: 10 of 16 patterns.
    assert sign_flip_pvalue(np.array([1.0, -2.0, 3.0, 0.5])) == 0.625


@pytest.mark.parametrize("seed", range(4))
def test_exact_sign_flip_p_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    differences = np.round(rng.normal(0.3, 1.0, size=12), 1)  # rounded: many ties
    assert sign_flip_pvalue(differences) == pytest.approx(_brute_force_p(differences), abs=1e-12)


def test_monte_carlo_p_agrees_with_the_exact_one_and_is_deterministic() -> None:
    differences = np.random.default_rng(5).normal(0.4, 1.0, size=21)
    exact = sign_flip_pvalue(differences, max_exact_n=21)
    drawn = sign_flip_pvalue(differences)
    standard_error = math.sqrt(exact * (1 - exact) / 200_000)
    assert abs(drawn - exact) < 5 * standard_error
    assert drawn == sign_flip_pvalue(differences)
    assert drawn != sign_flip_pvalue(differences, seed=1)


def test_a_monte_carlo_p_resolves_below_1e4_and_is_never_zero() -> None:
    differences = np.full(40, 0.1)
    p = sign_flip_pvalue(differences)
    assert p == pytest.approx(1 / 200_001) and p > 0
    assert format_p_value(p, exact=False) == "< 1e-4"
    assert format_p_value(2 / 2**20, exact=True) == "1.9e-06"
    assert format_p_value(0.0123) == "0.012" and format_p_value(0.00123) == "0.0012"


def test_sign_flip_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="n_resamples must be at least 1"):
        sign_flip_pvalue(np.ones(30), n_resamples=0)
    with pytest.raises(ValueError, match="finite"):
        sign_flip_pvalue(np.array([1.0, math.nan]))
    assert sign_flip_pvalue(np.zeros(30)) == 1.0


def test_mdd_is_the_t_quantile_formula() -> None:
    sd, n = 0.12, 20
    direct = (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / math.sqrt(n)
    assert minimum_detectable_difference(sd, n) == pytest.approx(direct, rel=1e-12)
    # By hand: t(0.975, 19) = 2.0930, t(0.8, 19) = 0.8610; (2.9540) * 0.12 / 4.4721 = 0.0793.
    assert minimum_detectable_difference(sd, n) == pytest.approx(0.0793, abs=1e-4)


@pytest.mark.parametrize("n", [8, 16, 48, 100, 600])
def test_the_mdd_has_80_percent_power_by_direct_computation(n: int) -> None:
    mdd = minimum_detectable_difference(0.2, n)
    assert paired_t_power(mdd, 0.2, n) == pytest.approx(0.8, abs=0.005)


def test_seeds_to_detect_is_the_first_n_whose_mdd_reaches_the_target() -> None:
    needed = seeds_to_detect(0.05, 0.15)
    assert needed is not None
    assert minimum_detectable_difference(0.15, needed) <= 0.05
    assert minimum_detectable_difference(0.15, needed - 1) > 0.05
    assert needed == 73  # (t(.975, 72) + t(.8, 72)) * 0.15 / sqrt(73) = 0.0497


def test_too_few_pairs_for_the_sign_flip_test_detect_nothing() -> None:
    assert min_sign_flip_seeds(0.05) == 6  # 2 / 2**6 = 0.031 <= 0.05 < 2 / 2**5
    assert minimum_detectable_difference(0.1, 5) == math.inf
    assert seeds_to_detect(0.05, 0.0) == 6
    assert seeds_to_detect(0.05, math.nan) is None and seeds_to_detect(0.0, 0.1) is None
    with pytest.raises(ValueError, match="power must be in"):
        minimum_detectable_difference(0.1, 10, power=1.0)


def _row(agent: str, level: str, index: int, f1: float, panel: str = "observational") -> Any:
    return example_row(
        job_id=f"{agent}-{level}-{index}",
        ladder="v1",
        level=level,
        manifest_index=index,
        agent=agent,
        panel=panel,
        directed_f1=f1,
        shd=10 * (1 - f1),
    )


def test_paired_test_reports_ci_mdd_and_seeds_from_the_differences() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.uniform(0.4, 0.9, size=30), rng.uniform(0.3, 0.8, size=30)
    rows = [_row("x", ("L0", "L1")[i % 2], i, float(a[i])) for i in range(30)]
    rows += [_row("y", ("L0", "L1")[i % 2], i, float(b[i])) for i in range(30)]
    test = paired_test(rows, "x (observational)", "y (observational)")
    differences = a - b
    sd = float(differences.std(ddof=1))
    assert test.sd_difference == pytest.approx(sd)
    assert test.mdd == pytest.approx(minimum_detectable_difference(sd, 30))
    assert test.seeds_for_target == seeds_to_detect(0.05, sd)
    assert test.ci_low < test.mean_difference < test.ci_high
    assert not test.p_exact and test.target == 0.05
    assert format_mdd(test) == f"{100 * test.mdd:.1f}"
    shd = paired_test(rows, "x (observational)", "y (observational)", "shd")
    assert shd.seeds_for_target is None and math.isnan(shd.target)
    level = paired_test(rows, "x (observational)", "y (observational)", level="L1")
    assert (level.n, level.level, level.p_exact) == (15, "L1", True)
    assert level.mean_difference == pytest.approx(float(differences[1::2].mean()))


def test_default_tests_include_the_reference_pairs_and_every_level() -> None:
    rows = []
    for i in range(6):
        level = ("L0", "L1")[i % 2]
        rows += [_row("pc_active", level, i, 0.9, "active"), _row("pc", level, i, 0.5)]
        rows += [_row("pc_greedy", level, i, 0.7, "active"), _row("sortnregress", level, i, 0.3)]
        rows += [_row("randregress", level, i, 0.35), _row("r2sortnregress", level, i, 0.4)]
    tests = compare_agents(rows)
    pooled = {(t.agent_a, t.agent_b) for t in tests if t.level is None}
    assert ("pc_greedy (active)", "pc (observational)") in pooled
    assert ("sortnregress (observational)", "randregress (observational)") in pooled
    assert ("r2sortnregress (observational)", "randregress (observational)") in pooled
    assert ("pc_active (active)", "pc (observational)") in pooled
    levels = {(t.agent_a, t.agent_b, t.level) for t in tests if t.level is not None}
    assert ("pc_greedy (active)", "pc (observational)", "L0") in levels
    assert ("pc_greedy (active)", "pc (observational)", "L1") in levels
    assert {t.metric for t in tests if t.level is not None} == {"directed_f1"}
