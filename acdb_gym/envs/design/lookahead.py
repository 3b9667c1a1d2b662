"""The single design env's fresh resets on the vector env's path: PC on the next worlds at once.

A fresh reset (no seed, no options) draws the next world from the env's ``np_random``: one
integer seed per reset (:func:`~acdb_gym.core.worlds.instance.generate_instance`), so the seeds
of the next resets are known in advance from a copy of the generator. :class:`FreshLookahead`
reads them, generates those worlds together (:func:`~acdb_gym.core.worlds.instance.generate_instances`:
their faithfulness checks stacked; generation keeps its recent instances), runs PC on all of
them in one stacked call (:func:`~acdb_gym.envs.design.cache.starting_graphs`, whose cache
keeps each start) and summarizes their samples stacked
(:func:`~acdb_gym.envs.design.cache.prepare`); each of the following resets then finds its
world, its start and its summary ready (put back in the caches first, should other envs in the
process have pushed them out: :func:`~acdb_gym.envs.design.cache.restore`). The
env's generator is never touched, so every reset, its observation and the generator's state
after it are what they were one reset at a time; only the time moves.

Looking ahead only pays when the env keeps resetting without a seed, so the batch starts at two
worlds and doubles (up to :data:`MAX_LOOKAHEAD`) each time the last batch was used up; a seeded
reset, or any other use of the generator that changes the next seed, drops it, and the next
fresh reset starts over at two: at most one batch's work is ever drawn for nothing.
"""

from __future__ import annotations

import numpy as np

from acdb_gym.core.ladders.shipped import Level
from acdb_gym.core.worlds.instance import (
    cached_generation,
    draw_seed,
    generate_instances,
    seeds_known_ahead,
)
from acdb_gym.discovery.orientation import OrientationRule
from acdb_gym.envs.design.cache import Prepared, prepare, restore

__all__ = ["MAX_LOOKAHEAD", "FreshLookahead"]

MAX_LOOKAHEAD = 32
"""The most worlds prepared ahead at once (each about 0.1 MB at the ladder's sizes)."""


class FreshLookahead:
    """Prepares the next fresh worlds of one env's generator in batches (module docstring).

    Args:
        level: the env's level.
        estimator: the env's estimator; only ``"pc"`` has a start worth batching.
        alpha, rule, detectable_shift: the env's orientation tests, whose observational half
            each world's summary holds (:func:`~acdb_gym.envs.design.cache.prepare`).
    """

    def __init__(
        self,
        level: Level,
        estimator: str,
        *,
        alpha: float,
        rule: OrientationRule,
        detectable_shift: float,
    ) -> None:
        self._active = (
            estimator == "pc" and cached_generation(level.spec) and seeds_known_ahead(level.spec)
        )
        self._level = level
        self._tests = (alpha, rule, detectable_shift)
        self._seeds: list[int] = []
        self._prepared: list[Prepared] = []
        self._used = 0
        self._size = 1
        self._twin: np.random.Generator | None = None

    def forget(self) -> None:
        """Drop the batch (a seeded reset or a reset with options)."""
        self._seeds, self._prepared, self._used, self._size = [], [], 0, 1

    def before_fresh_reset(self, rng: np.random.Generator) -> None:
        """Called before a fresh reset draws its world from ``rng``: if the batch does not
        hold the world it will draw, prepare a new batch starting with it."""
        if not self._active:
            return
        upcoming = self._next_seeds(rng, 1)[0]
        if not (self._used < len(self._seeds) and self._seeds[self._used] == upcoming):
            used_up = bool(self._seeds) and self._used == len(self._seeds)
            self._size = min(2 * self._size, MAX_LOOKAHEAD) if used_up else 2
            self._seeds = self._next_seeds(rng, self._size)
            self._used = 0
            self._prepared = self._prepare(self._seeds)
        if self._used < len(self._prepared):
            restore(self._prepared[self._used])
        self._used += 1

    def _next_seeds(self, rng: np.random.Generator, count: int) -> list[int]:
        """The world seeds the next ``count`` fresh draws from ``rng`` will use, read from a
        twin generator (kept between calls) put in ``rng``'s state."""
        if self._twin is None or type(self._twin.bit_generator) is not type(rng.bit_generator):
            self._twin = np.random.Generator(type(rng.bit_generator)())
        self._twin.bit_generator.state = rng.bit_generator.state
        return [draw_seed(self._twin) for _ in range(count)]

    def _prepare(self, seeds: list[int]) -> list[Prepared]:
        try:
            return prepare(generate_instances(self._level.spec, seeds), *self._tests)
        except (RuntimeError, ValueError):
            # A seed generation refuses (RuntimeError) or a sample PC refuses (ValueError):
            # its own reset meets the same error; nothing is prepared.
            return []
