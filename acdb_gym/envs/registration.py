"""Registration of every environment id with Gymnasium (string entry points, no imports)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    LADDERS,
    LARGE_LADDER,
    PAPER_LADDERS,
    REAL_LADDER,
    Level,
)

__all__ = ["DESIGN_IDS", "ENV_IDS", "LARGE_IDS", "REAL_IDS", "make_custom", "register_envs"]

ENV_IDS: tuple[str, ...] = tuple(
    level.env_id for ladder in LADDERS.values() for level in ladder.values()
)
"""``ACDB-L{0..5}-v0``, ``ACDB-L{0..5}-v1``, and the v1 levels of the other SCM families,
``ACDB-NonGaussian-L{0..5}-v1`` and ``ACDB-Nonlinear-L{0..5}-v1``."""

LARGE_IDS: tuple[str, ...] = tuple(level.env_id for level in LARGE_LADDER.values())
"""``ACDB-L{0..4}-large``: d = 20, 50, 100, 200, 500 (registered; not in :data:`ENV_IDS`)."""

REAL_IDS: tuple[str, ...] = tuple(level.env_id for level in REAL_LADDER.values())
"""``ACDB-<level>-real``: the real ladder (scale-free graphs, the Sachs and DREAM4 wirings, the
fitted Sachs world; registered, not in :data:`ENV_IDS`)."""

DESIGN_IDS: tuple[str, ...] = tuple(
    f"ACDB-Design-{name}-{ladder}" for ladder in PAPER_LADDERS for name in LADDERS[ladder]
)
"""``ACDB-Design-L{0..5}-v0`` and ``ACDB-Design-L{0..5}-v1``: the RL intervention-design view
of each ladder's levels."""


def register_envs() -> None:
    """Register all ids; calling it twice is harmless."""
    for ladder_name, ladder in ALL_LADDERS.items():
        for level in ladder.values():
            if level.env_id not in gym.registry:
                gym.register(
                    id=level.env_id,
                    entry_point="acdb_gym.envs.acdb_env:ACDBEnv",
                    kwargs={"level": level.name, "ladder": ladder_name},
                    disable_env_checker=True,
                )
    for ladder_name in PAPER_LADDERS:
        for name in LADDERS[ladder_name]:
            env_id = f"ACDB-Design-{name}-{ladder_name}"
            if env_id not in gym.registry:
                gym.register(
                    id=env_id,
                    entry_point="acdb_gym.envs.design.env:InterventionDesignEnv",
                    kwargs={"level": name, "ladder": ladder_name},
                    disable_env_checker=True,
                )


def make_custom(level: Level, **kwargs: Any) -> gym.Env[Any, Any]:
    """``gym.make`` of a level that has no registered id (a custom level): the full env's entry
    point given the :class:`Level` itself, wrapped as ``gym.make`` wraps the registered ids."""
    spec = EnvSpec(
        id=level.env_id,
        entry_point="acdb_gym.envs.acdb_env:ACDBEnv",
        kwargs={"level": level},
        disable_env_checker=True,
    )
    return gym.make(spec, **kwargs)
