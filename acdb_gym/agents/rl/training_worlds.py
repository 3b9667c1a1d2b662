"""Which worlds a policy trains, is selected and is tested on: the seed ranges (none of them a
manifest seed) and the env wrappers that draw training instances and time the env."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, SupportsFloat, TypeVar

import gymnasium as gym
import numpy as np

from acdb_gym.core.ladders.shipped import Level, get_level
from acdb_gym.core.worlds.instance import Instance, draw_instance, instances_from
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = [
    "MANIFEST_SEED_BOUND",
    "TEST_SEED_BASE",
    "TRAIN_SEED_LOW",
    "UNSEEN_SIZE_LEVEL",
    "VALIDATION_SEED_BASE",
    "EnvClock",
    "EnvTimer",
    "TrainingInstances",
    "held_out_instances",
]

TRAIN_SEED_LOW = 2**32
"""Training instances use seeds in ``[2**32, 2**63 - 1)``."""

VALIDATION_SEED_BASE = 10**9
"""Periodic evaluation during training uses seeds ``10**9 + i``."""

TEST_SEED_BASE = 10**9 + 10**6
"""Final comparisons of trained policies use seeds ``10**9 + 10**6 + i``."""

MANIFEST_SEED_BOUND = 200_000
"""Every manifest seed is below this; held-out and training seeds never are."""

UNSEEN_SIZE_LEVEL = Level(
    "custom",
    "D40",
    "unseen size",
    LevelSpec(d=40, k=60, n_obs=1000, n_int=200, noise_var=1.0, slack=0, standardized=True),
    manifest=(),
)
"""A level no training level reaches (d = 40; training levels have at most 30 variables): v1
L5's density (1.5 edges per node) and v1 L1's samples, slack 0. The size-free policy is evaluated
on it to show that it acts on sizes it never saw."""


class TrainingInstances(gym.Wrapper[np.ndarray, np.int64, np.ndarray, np.int64]):
    """Resets the design env on instances whose seeds are drawn from ``[2**32, 2**63 - 1)``, so
    training never meets a manifest, validation or test instance (on a level with an
    R²-sortability band, the first drawn seed that has an instance:
    :func:`~acdb_gym.core.worlds.instance.draw_instance`).

    Args:
        env: a design env.
        seed: seed of the instance-seed stream (a seed passed to ``reset`` restarts it).
    """

    def __init__(self, env: gym.Env[np.ndarray, np.int64], *, seed: int) -> None:
        super().__init__(env)
        self._rng = np.random.default_rng(seed)
        self._spec = env.unwrapped.level.spec  # type: ignore[attr-defined]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        instance = draw_instance(self._spec, self._rng, low=TRAIN_SEED_LOW)
        return self.env.reset(seed=seed, options={**(options or {}), "instance": instance})


_Result = TypeVar("_Result")


class EnvClock:
    """Accumulates the wall and CPU time of the calls made through :meth:`timed` in
    ``env_seconds`` and ``env_cpu_seconds`` (CPU time of the calling process stays meaningful
    when other work shares the cores); the env timers of the trainer derive from it."""

    env_seconds: float = 0.0
    env_cpu_seconds: float = 0.0

    def timed(self, call: Callable[..., _Result], *args: Any, **kwargs: Any) -> _Result:
        """``call(*args, **kwargs)``, its time added to the totals."""
        wall, cpu = time.perf_counter(), time.process_time()
        result = call(*args, **kwargs)
        self.env_seconds += time.perf_counter() - wall
        self.env_cpu_seconds += time.process_time() - cpu
        return result


class EnvTimer(EnvClock, gym.Wrapper[np.ndarray, np.int64, np.ndarray, np.int64]):
    """Accumulates the wall and CPU time spent inside the wrapped env's ``reset`` and ``step``
    (:class:`EnvClock`), and counts its steps."""

    def __init__(self, env: gym.Env[np.ndarray, np.int64]) -> None:
        super().__init__(env)
        self.env_steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        return self.timed(self.env.reset, seed=seed, options=options)

    def step(
        self, action: np.int64
    ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        result = self.timed(self.env.step, action)
        self.env_steps += 1
        return result


def held_out_instances(level: str, base: int, count: int, *, ladder: str = "v0") -> list[Instance]:
    """The ``count`` instances of ``level`` with seeds ``base, base + 1, ...`` (on a level with
    an R²-sortability band, the first ``count`` of those seeds that have an instance:
    :func:`~acdb_gym.core.worlds.instance.instances_from`).

    Raises:
        ValueError: a seed range that reaches into the manifest seeds (below 200000).
    """
    if base < MANIFEST_SEED_BOUND:
        raise ValueError(f"held-out seeds must be >= {MANIFEST_SEED_BOUND}, got base {base}")
    spec = get_level(ladder, level).spec
    return instances_from(spec, base, count)
