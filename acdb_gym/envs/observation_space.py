"""The observation of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` as a type and a Gymnasium
space: :class:`Observation`, its keys (the raw and the stats mode, the soft-intervention kinds,
the deprecated values key) and :func:`observation_space` (DESIGN §8). The blocks the data keys
hold are built by :mod:`acdb_gym.envs.observations`."""

from __future__ import annotations

from typing import TypedDict, cast

import numpy as np
from gymnasium import spaces

from acdb_gym.core.ladders.shipped import Level
from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.core.worlds.soft import KIND_UNUSED, InterventionMode
from acdb_gym.envs import observations
from acdb_gym.envs.actions import VALUE_BOUND
from acdb_gym.envs.observations import ObservationMode, StatsObservation

__all__ = [
    "COMPACT_OBSERVATION_KEYS",
    "KINDS_KEY",
    "LEGACY_VALUES_KEY",
    "OBSERVATION_KEYS",
    "STATS_OBSERVATION_KEYS",
    "VALUES_KEY",
    "Observation",
    "observation_space",
]


class Observation(TypedDict):
    """One observation of :class:`ACDBEnv` (the Observation Space table of its docstring)."""

    observational: FloatArray
    interventional: FloatArray
    targets: IntArray
    intervention_values: FloatArray
    budget_remaining: IntArray
    steps_remaining: IntArray
    tool_result: FloatArray


OBSERVATION_KEYS: tuple[str, ...] = tuple(Observation.__annotations__)
"""The keys of an observation, in order (``observation="raw"``)."""
STATS_OBSERVATION_KEYS: tuple[str, ...] = tuple(StatsObservation.__annotations__)
"""The keys of an observation with ``observation="stats"``, in order."""
COMPACT_OBSERVATION_KEYS: tuple[str, ...] = (
    *observations.COMPACT_KEYS,
    *(key for key in OBSERVATION_KEYS if key not in observations.data_keys("raw")),
)
"""The keys of an observation with ``observation="compact"``, in order."""

KINDS_KEY = "kinds"
"""The observation key of each experiment's kind, present unless ``interventions="hard"``."""
VALUES_KEY = "intervention_values"
"""The observation key of each experiment's intervention value."""
LEGACY_VALUES_KEY = "values"
"""The former name of :data:`VALUES_KEY`, deprecated: ``legacy_values_key=True`` restores it
in 0.1.x, and 0.2.0 removes the option. It was renamed because stable-baselines3's
``MultiInputPolicy`` keeps one module per key in a torch ``ModuleDict``, which has a method
``values``, so the policy could not be built."""


def observation_space(
    level: Level,
    max_steps: int,
    observation: ObservationMode = "raw",
    interventions: InterventionMode = "hard",
    *,
    legacy_values_key: bool = False,
) -> spaces.Space[Observation]:
    """The ``Dict`` space of :class:`Observation` (or, with ``observation="stats"``,
    :class:`StatsObservation`) for a level and a step limit, plus :data:`KINDS_KEY` unless
    ``interventions`` is ``"hard"``; with ``legacy_values_key`` the key :data:`VALUES_KEY` is
    named :data:`LEGACY_VALUES_KEY`."""
    spec = level.spec
    d, m = spec.d, observations.observation_slots(spec)
    space = spaces.Dict(
        {
            **observations.data_spaces(spec, observation),
            "targets": spaces.Box(0, d, (m,), np.int64),
            (LEGACY_VALUES_KEY if legacy_values_key else VALUES_KEY): spaces.Box(
                -VALUE_BOUND, VALUE_BOUND, (m,), np.float64
            ),
            "budget_remaining": spaces.Box(0, m, (1,), np.int64),
            "steps_remaining": spaces.Box(0, max_steps, (1,), np.int64),
            "tool_result": spaces.Box(
                np.array([-np.inf, 0.0, 0.0]), np.array([np.inf, 1.0, 1.0]), (3,), np.float64
            ),
            **(
                {}
                if interventions == "hard"
                else {KINDS_KEY: spaces.Box(0, KIND_UNUSED, (m,), np.int64)}
            ),
        }
    )
    keys = {
        "raw": OBSERVATION_KEYS,
        "stats": STATS_OBSERVATION_KEYS,
        "compact": COMPACT_OBSERVATION_KEYS,
    }[observation]
    keys += () if interventions == "hard" else (KINDS_KEY,)
    if legacy_values_key:
        keys = tuple(LEGACY_VALUES_KEY if key == VALUES_KEY else key for key in keys)
    assert tuple(space.spaces) == tuple(sorted(keys))
    return cast("spaces.Space[Observation]", space)
