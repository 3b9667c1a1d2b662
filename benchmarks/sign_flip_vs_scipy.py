"""The report's sign-flip test against scipy.stats.permutation_test with as many sign patterns.

For each number of paired differences ``n``, ``sign_flip_pvalue`` (byte-table lookups over
200,000 random sign patterns, or exact enumeration up to n = 20) is timed against
``scipy.stats.permutation_test(permutation_type="samples")`` with the same number of random
patterns (for n <= 20 scipy enumerates too), on the same differences; the table also shows both
p-values, which must agree within Monte Carlo error.

Run: ``python benchmarks/sign_flip_vs_scipy.py [--smoke] [--repeats N] [--sizes 8 48 600]``
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, markdown_table, measure, print_header, ratio

from acdb_gym.report.statistics import N_SIGN_FLIPS, sign_flip_pvalue


def _scipy_p(differences: np.ndarray, n_resamples: int) -> float:
    result = stats.permutation_test(
        (differences,),
        lambda sample, axis: np.mean(sample, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=0,
    )
    return float(result.pvalue)


def table(sizes: list[int], n_resamples: int, repeats: int) -> str:
    rows = []
    for n in sizes:
        differences = np.random.default_rng(n).normal(0.05, 0.2, size=n)
        resamples = max(n_resamples, 2**n) if n <= 20 else n_resamples
        ours = measure(lambda d=differences: sign_flip_pvalue(d), repeats=repeats)
        peer = measure(lambda d=differences, r=resamples: _scipy_p(d, r), repeats=repeats)
        rows.append(
            [
                n,
                "exact" if n <= 20 else f"{n_resamples:,}",
                ours.cell(),
                peer.cell(),
                ratio(peer, ours),
                f"{sign_flip_pvalue(differences):.4g}",
                f"{_scipy_p(differences, resamples):.4g}",
            ]
        )
    headers = ["n", "patterns", "ours", "scipy", "scipy / ours", "p ours", "p scipy"]
    return markdown_table(headers, rows)


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 20, 48, 100, 600])
    args = parser.parse_args()
    sizes = args.sizes[:2] if args.smoke else args.sizes
    repeats = args.repeats or (2 if args.smoke else 7)
    print_header(
        "sign_flip_pvalue vs scipy.stats.permutation_test",
        f"Median wall time (IQR, fastest run, runs); {N_SIGN_FLIPS:,} random sign patterns "
        "beyond n = 20.",
    )
    print(table(sizes, N_SIGN_FLIPS, repeats))


if __name__ == "__main__":
    main()
