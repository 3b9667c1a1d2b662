"""The ladders of measured data (DESIGN §7, "Real-experiment ladder" and "Cause-effect pairs"):
their level specs and how their manifests are seeded. :mod:`~acdb_gym.core.ladders.shipped`
builds them into :data:`~acdb_gym.core.ladders.shipped.ALL_LADDERS`.

- ``sachs-experiments``: ``Cells`` is the measured Sachs cells, whose interventions are the real
  perturbations (DESIGN §3.5); ``Fitted`` and ``Fitted-Spline`` are the Sachs worlds fitted to
  the same data (§3.4) with the same sample sizes and the same targets allowed, on ``Cells``'s
  seeds index for index (so each pair of instances shares its labelling): simulated against
  real experiments, everything else equal.
- ``tuebingen``: ``Pairs`` plays every bivariate Tübingen pair on 94 rows (the smallest pair's
  size), ``Pairs-1000`` the 36 pairs with at least 1,000 rows on 1,000 (DESIGN §3.6); manifest
  index ``i`` is the ``i``-th such pair in file order.

>>> SACHS_EXPERIMENT_SPECS["Cells"][1].world, SACHS_EXPERIMENT_PAIRS["Fitted"]
('sachs-cells', 'Cells')
>>> pair_seeds(TUEBINGEN_SPECS["Pairs"][1], 600_000)[:2]
(600039, 600040)
"""

from __future__ import annotations

import math
from dataclasses import replace

from acdb_gym.core.worlds.cause_effect_pairs import MIN_PAIR_ROWS, pair_for_seed, pairs_with_rows
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = [
    "SACHS_EXPERIMENTS",
    "SACHS_EXPERIMENT_PAIRS",
    "SACHS_EXPERIMENT_SPECS",
    "TUEBINGEN",
    "TUEBINGEN_SPECS",
    "pair_seeds",
]

SACHS_EXPERIMENTS = "sachs-experiments"
"""The ladder whose experiments are real perturbations of the Sachs cells."""

TUEBINGEN = "tuebingen"
"""The ladder of the Tübingen cause-effect pairs."""

_CELLS = LevelSpec(
    11, 17, 800, 150, 1.0, 1, graph="sachs", world="sachs-cells", targets="sachs-experiments"
)
# 800 of the 853 baseline cells, so each seed's sample differs; 150 cells per experiment, so
# even the budget of 4 spent on one condition (4 x 150 = 600) fits the smallest one (707).
_FITTED = LevelSpec(
    11, 17, 800, 150, 1.0, 1, standardized=True, graph="sachs", targets="sachs-experiments"
)

SACHS_EXPERIMENT_SPECS: dict[str, tuple[str, LevelSpec]] = {
    "Cells": ("measured cells, real experiments", _CELLS),
    "Fitted": ("fitted linear Sachs world, same targets", replace(_FITTED, fit="linear")),
    "Fitted-Spline": ("fitted spline Sachs world, same targets", replace(_FITTED, fit="spline")),
}
"""The levels of ``sachs-experiments``: their axes and specs."""

SACHS_EXPERIMENT_PAIRS: dict[str, str] = {"Fitted": "Cells", "Fitted-Spline": "Cells"}
"""The fitted levels hold ``Cells``'s seeds index for index: the same labelling per index."""

TUEBINGEN_SPECS: dict[str, tuple[str, LevelSpec]] = {
    "Pairs": (
        "every bivariate pair, 94 rows",
        LevelSpec(2, 1, MIN_PAIR_ROWS, 3, 1.0, 0, world="cause-effect-pairs", targets="none"),
    ),
    "Pairs-1000": (
        "the 36 pairs with 1,000 rows or more",
        LevelSpec(2, 1, 1000, 3, 1.0, 0, world="cause-effect-pairs", targets="none"),
    ),
}
"""The levels of ``tuebingen``: their axes and specs."""


def pair_seeds(spec: LevelSpec, base: int) -> tuple[int, ...]:
    """A pairs level's manifest seeds: one per usable pair, the first seeds from ``base`` up
    that play the pairs in file order (seed ``s`` plays pair ``s mod P`` of the ``P`` usable
    ones), so manifest index ``i`` is the ``i``-th pair."""
    usable = pairs_with_rows(spec.n_obs)
    first = len(usable) * math.ceil(base / len(usable))
    seeds = tuple(first + i for i in range(len(usable)))
    assert [pair_for_seed(s, spec.n_obs) for s in seeds] == list(usable)
    return seeds
