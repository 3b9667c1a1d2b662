"""The frontier ladder (DESIGN §7, "Frontier ladder"): six levels where the best agent of the suite
is far from the oracle, no shortcut comes near it, 100 test seeds resolve 5 points, and a
reference given what is scarce reaches the ceiling. :mod:`~acdb_gym.core.ladders.shipped` builds
it into :data:`~acdb_gym.core.ladders.shipped.ALL_LADDERS`.

The levels were chosen by ``experiments/calibrate_frontier.py`` among candidates that combine the
axes that resist today's agents (nonlinear mechanisms with every other axis: few samples per
experiment or in the observational sample, hidden confounders, a budget below ``|I*|``, larger
``d``, real and scale-free wirings) on generated seeds, never on this ladder's manifest;
``docs/frontier_calibration.md`` holds the table, with every candidate that was not kept and
why. Registered as ``ACDB-Frontier-<level>-v1``: version v1 gave ``NL20`` its R²-sortability
band (:data:`NL20_BAND`); the other five levels' worlds are v0's.

>>> FRONTIER_SPECS["NL40"][1].d, FRONTIER_SPECS["NL30-Short2"][1].shortfall
(40, 2)
"""

from __future__ import annotations

from acdb_gym.core.worlds.spec import NONLINEAR, LevelSpec

__all__ = ["FRONTIER", "FRONTIER_SEED_BASE", "FRONTIER_SPECS", "NL20_BAND"]

FRONTIER = "frontier"
"""The ladder's name."""

FRONTIER_SEED_BASE = 700_000
"""Manifest seeds: level ``i`` (in table order) uses the first seeds from ``700000 + 1000 i`` up
whose world generates (for ``NL20``, whose sample also lies in its band) (calibration used the custom levels' seeds from 300000 up instead)."""


def _nonlinear(
    d: int,
    k: int,
    n_obs: int,
    n_int: int,
    slack: int,
    *,
    latent: int = 0,
    shortfall: int = 0,
    band: float = 0.0,
) -> LevelSpec:
    """A standardized nonlinear level (DESIGN §3.1) of these sizes (``band``: its
    R²-sortability band, DESIGN §3)."""
    return LevelSpec(
        d,
        k,
        n_obs,
        n_int,
        1.0,
        slack,
        standardized=True,
        family=NONLINEAR,
        latent=latent,
        shortfall=shortfall,
        r2_sortability_band=band,
    )


NL20_BAND = 0.1
"""``NL20``'s R²-sortability band (from the ladder's version v1): the ladder's v0 ``NL20``, the
same spec without a band, failed the shortcut gate on its test split by its margin (the
descending-R² order +3.0 points over random orders); with the band it met every criterion on
the calibration's generated seeds (``NL20-band`` in ``docs/frontier_calibration.md``)."""


FRONTIER_SPECS: dict[str, tuple[str, LevelSpec]] = {
    "NL20": (
        "nonlinear, d = 20, R²-sortability within 0.5 ± 0.1",
        _nonlinear(20, 30, 1000, 200, 1, band=NL20_BAND),
    ),
    "NL20-N10": ("nonlinear, 10 samples per experiment", _nonlinear(20, 30, 1000, 10, 1)),
    "NL20-Obs200": ("nonlinear, 200 observational samples", _nonlinear(20, 30, 200, 50, 1)),
    "NL20-Hidden3": ("nonlinear, hidden confounders", _nonlinear(20, 30, 1000, 200, 1, latent=3)),
    "NL30-Short2": (
        "nonlinear, budget below I* by 2, sparse",
        _nonlinear(30, 30, 1000, 100, 0, shortfall=2),
    ),
    "NL40": ("nonlinear, d = 40", _nonlinear(40, 60, 1000, 100, 1)),
}
"""The levels of ``frontier``: their axes and specs (one line each)."""
