"""Registration of every environment id with Gymnasium (string entry points, no imports)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    FEW_SAMPLE,
    FEW_SAMPLE_LADDER,
    FRONTIER,
    FRONTIER_LADDER,
    HIDDEN_SLACK_LADDER,
    LADDERS,
    LARGE_LADDER,
    PAPER_LADDERS,
    REAL_LADDER,
    SACHS_EXPERIMENT_LADDER,
    SACHS_EXPERIMENTS,
    TUEBINGEN_LADDER,
    Level,
)

__all__ = [
    "DESIGN_IDS",
    "ENV_IDS",
    "FEW_SAMPLE_DESIGN_IDS",
    "FEW_SAMPLE_IDS",
    "FLAT_IDS",
    "FRONTIER_DESIGN_IDS",
    "FRONTIER_IDS",
    "HIDDEN_SLACK_IDS",
    "LARGE_IDS",
    "REAL_IDS",
    "SACHS_EXPERIMENT_DESIGN_IDS",
    "SACHS_EXPERIMENT_IDS",
    "TUEBINGEN_IDS",
    "flat_id",
    "make_custom",
    "register_envs",
]

ENV_IDS: tuple[str, ...] = tuple(
    level.env_id for ladder in LADDERS.values() for level in ladder.values()
)
"""``ACDB-L{0..5}-v0``, ``ACDB-L{0..5}-v1``, and the v1 levels of the other SCM families,
``ACDB-NonGaussian-L{0..5}-v2`` and ``ACDB-Nonlinear-L{0..5}-v2``."""

LARGE_IDS: tuple[str, ...] = tuple(level.env_id for level in LARGE_LADDER.values())
"""``ACDB-L{0..6}-large``: d = 20, 50, 100, 200, 500, 1,000, 2,000 (registered; not in
:data:`ENV_IDS`)."""

HIDDEN_SLACK_IDS: tuple[str, ...] = tuple(level.env_id for level in HIDDEN_SLACK_LADDER.values())
"""``ACDB-HiddenSlack-L{0..5}-v1``: v1's levels and instances with a hidden slack (registered;
not in :data:`ENV_IDS`, whose envs differ from these only in the budget)."""

REAL_IDS: tuple[str, ...] = tuple(level.env_id for level in REAL_LADDER.values())
"""``ACDB-<level>-real``: the real ladder (scale-free graphs, the Sachs and DREAM4 wirings, the
fitted Sachs world; registered, not in :data:`ENV_IDS`)."""

SACHS_EXPERIMENT_IDS: tuple[str, ...] = tuple(
    level.env_id for level in SACHS_EXPERIMENT_LADDER.values()
)
"""``ACDB-Cells-sachs-experiments`` (real experiments on the measured Sachs cells),
``ACDB-Fitted-sachs-experiments`` and ``ACDB-Fitted-Spline-sachs-experiments`` (the fitted Sachs
worlds with the same targets allowed); registered, not in :data:`ENV_IDS`."""

TUEBINGEN_IDS: tuple[str, ...] = tuple(level.env_id for level in TUEBINGEN_LADDER.values())
"""``ACDB-Pairs-tuebingen`` and ``ACDB-Pairs-1000-tuebingen``: the Tübingen cause-effect pairs,
observational only (registered, not in :data:`ENV_IDS`)."""

DESIGN_IDS: tuple[str, ...] = tuple(
    f"ACDB-Design-{name}-{ladder}" for ladder in PAPER_LADDERS for name in LADDERS[ladder]
)
"""``ACDB-Design-L{0..5}-v0`` and ``ACDB-Design-L{0..5}-v1``: the RL intervention-design view
of each ladder's levels. Each also registers the natively vectorized
:class:`~acdb_gym.envs.design.vector.DesignVectorEnv` as its ``vector_entry_point``, so
``gym.make_vec(id, n)`` (or ``vectorization_mode="vector_entry_point"``) steps ``n`` worlds as
arrays in one process."""


FEW_SAMPLE_IDS: tuple[str, ...] = tuple(level.env_id for level in FEW_SAMPLE_LADDER.values())
"""``ACDB-L{1,2,4}-v1-n3`` and ``ACDB-Nonlinear-L{1,2,4}-v1-n3``: the few-sample ladder (v1's
and v1-nonlinear's worlds with 3 samples per experiment; registered, not in :data:`ENV_IDS`)."""

FEW_SAMPLE_DESIGN_IDS: tuple[str, ...] = tuple(
    f"ACDB-Design-{name}-{FEW_SAMPLE}" for name in FEW_SAMPLE_LADDER
)
"""``ACDB-Design-<level>-v1-n3``: the design view of the few-sample ladder, the regime where a
targeting policy has room to beat greedy (README, "RL intervention design"); registered with
the same ``vector_entry_point`` as :data:`DESIGN_IDS`, not in it."""


SACHS_EXPERIMENT_DESIGN_IDS: tuple[str, ...] = tuple(
    f"ACDB-Design-{name}-{SACHS_EXPERIMENTS}" for name in SACHS_EXPERIMENT_LADDER
)
"""``ACDB-Design-<level>-sachs-experiments``: the design view of the real-experiment ladder (the
targets without an experiment are masked); registered with the same ``vector_entry_point`` as
:data:`DESIGN_IDS`, not in it."""

FRONTIER_IDS: tuple[str, ...] = tuple(level.env_id for level in FRONTIER_LADDER.values())
"""``ACDB-<level>-frontier``: the frontier ladder (registered, not in :data:`ENV_IDS`)."""

FRONTIER_DESIGN_LEVELS: tuple[str, ...] = tuple(
    name for name, level in FRONTIER_LADDER.items() if not level.spec.latent
)
"""The frontier levels the design env takes: every causally sufficient one (the vectorized
design env scores sufficient worlds only)."""

FRONTIER_DESIGN_IDS: tuple[str, ...] = tuple(
    f"ACDB-Design-{name}-{FRONTIER}" for name in FRONTIER_DESIGN_LEVELS
)
"""``ACDB-Design-<level>-frontier``: the design view of the frontier's causally sufficient
levels; registered with the same ``vector_entry_point`` as :data:`DESIGN_IDS`, not in it."""


def flat_id(env_id: str) -> str:
    """The flat variant's id of a full env's id: ``ACDB-L2-v0`` -> ``ACDB-Flat-L2-v0``."""
    if not env_id.startswith("ACDB-"):
        raise ValueError(f"env_id must start with 'ACDB-', got {env_id!r}")
    return "ACDB-Flat-" + env_id[len("ACDB-") :]


FLAT_IDS: tuple[str, ...] = tuple(flat_id(env_id) for env_id in ENV_IDS + LARGE_IDS)
"""``ACDB-Flat-...``: each full id (:data:`ENV_IDS` and :data:`LARGE_IDS`) with one ``Box``
action and a flat observation (:func:`acdb_gym.envs.wrappers.make_flat`), so TorchRL's
``GymEnv`` and stable-baselines3 take it by id with no wrapper code."""


def register_envs() -> None:
    """Register all ids; calling it twice is harmless."""
    for ladder_name, ladder in ALL_LADDERS.items():
        for level in ladder.values():
            if level.env_id not in gym.registry:
                gym.register(
                    id=level.env_id,
                    entry_point="acdb_gym.envs.acdb_env:ACDBEnv",
                    kwargs={"level": level.name, "ladder": ladder_name},
                )
            if flat_id(level.env_id) not in gym.registry:
                gym.register(
                    id=flat_id(level.env_id),
                    entry_point="acdb_gym.envs.wrappers:flat_env",
                    kwargs={"level": level.name, "ladder": ladder_name},
                )
    design_levels = [
        (ladder_name, name)
        for ladder_name in (*PAPER_LADDERS, FEW_SAMPLE, SACHS_EXPERIMENTS)
        for name in ALL_LADDERS[ladder_name]
    ]
    design_levels += [(FRONTIER, name) for name in FRONTIER_DESIGN_LEVELS]
    for ladder_name, name in design_levels:
        env_id = f"ACDB-Design-{name}-{ladder_name}"
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point="acdb_gym.envs.design.env:InterventionDesignEnv",
                vector_entry_point="acdb_gym.envs.design.vector:DesignVectorEnv",
                kwargs={"level": name, "ladder": ladder_name},
            )


def make_custom(level: Level, **kwargs: Any) -> gym.Env[Any, Any]:
    """``gym.make`` of a level that has no registered id (a custom level): the full env's entry
    point given the :class:`Level` itself, wrapped as ``gym.make`` wraps the registered ids."""
    spec = EnvSpec(
        id=level.env_id,
        entry_point="acdb_gym.envs.acdb_env:ACDBEnv",
        kwargs={"level": level},
    )
    return gym.make(spec, **kwargs)
