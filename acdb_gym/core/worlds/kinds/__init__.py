"""The kinds of hidden world, one module each, and :data:`KINDS`, the one table that lists them.

Each module holds one class meeting :class:`~acdb_gym.core.worlds.kinds.base.WorldKind`: it
draws and accepts its worlds from an instance's seed streams, checks the finished instance, and
writes its worlds to an instance bank and reads them back; its worlds sample themselves
(:class:`~acdb_gym.core.worlds.kinds.base.WorldModel`). Adding a kind is one new module here and
one line in :data:`KINDS` (DESIGN §3 shows the recipe).
"""

from __future__ import annotations

from typing import Final

from acdb_gym.core.worlds.kinds.base import World, WorldKind
from acdb_gym.core.worlds.kinds.family import FamilyKind
from acdb_gym.core.worlds.kinds.fitted import FittedKind
from acdb_gym.core.worlds.kinds.latent import LatentKind
from acdb_gym.core.worlds.kinds.linear import LinearGaussianKind
from acdb_gym.core.worlds.kinds.pairs import CauseEffectPairsKind
from acdb_gym.core.worlds.kinds.sachs_cells import SachsCellsKind
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = ["KINDS", "kind_of", "kind_of_world"]

KINDS: Final[tuple[WorldKind, ...]] = (
    # The first kind whose ``matches(spec)`` holds draws the spec's worlds:
    SachsCellsKind(),  # world="sachs-cells": the measured Sachs cells
    CauseEffectPairsKind(),  # world="cause-effect-pairs": the Tübingen pairs
    FittedKind(),  # fit="linear" or "spline": the fitted Sachs world
    LatentKind(),  # latent > 0: hidden confounders, any family
    FamilyKind(),  # family other than linear_gaussian
    LinearGaussianKind(),  # linear_gaussian
)
"""Every world kind, in the order a spec is matched against them."""


def kind_of(spec: LevelSpec) -> WorldKind:
    """The kind that draws ``spec``'s worlds (the first of :data:`KINDS` that matches).

    Raises:
        ValueError: no kind matches (a spec no module draws).
    """
    for kind in KINDS:
        if kind.matches(spec):
            return kind
    raise ValueError(f"no world kind draws {spec}")


def kind_of_world(world: World) -> WorldKind:
    """The kind whose worlds are of ``world``'s class.

    Raises:
        ValueError: a world of no kind's class.
    """
    for kind in KINDS:
        if isinstance(world, kind.worlds):
            return kind
    raise ValueError(f"no world kind holds a {type(world).__name__}")
