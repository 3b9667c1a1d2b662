"""Both checkers over every registered id: Gymnasium's ``check_env`` and, where SB3 supports the
spaces (the flat and design ids; SB3 has no ``OneOf``), stable-baselines3's ``check_env``.

The only warning allowed is the one DESIGN §8 documents as intended: Gymnasium's notice that a
``Box`` observation is unbounded, on every id whose observation carries samples or a test
statistic (the data are real numbers, unbounded by nature). Anything else fails the test.
Levels above d = 40 skip the render check here (a d = 2,000 picture takes about a minute;
``tests/envs/test_rendering.py`` renders a large world); their checks run in full otherwise.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from acdb_gym.envs.discrete_actions import DiscreteActions
from acdb_gym.envs.observations import is_large
from acdb_gym.envs.registration import DEPRECATED_IDS, DESIGN_IDS, FEW_SAMPLE_DESIGN_IDS
from acdb_gym.envs.wrappers import FlatActions, FlatObservation

UNBOUNDED_OBSERVATION = re.compile(
    r".*A Box observation space (minimum|maximum) value is -?infinity"
)
"""Gymnasium's notice on unbounded observation Boxes: documented as intended (DESIGN §8)."""

CHECKED_WRAPPED = re.compile(r".*is different from the unwrapped version")
"""Gymnasium's advice to check the unwrapped env: a flat id's view *is* its wrappers, so they
are what is checked (the full env under them is checked under its own id)."""

EVERY_ID = tuple(sorted(env_id for env_id in gym.registry if env_id.startswith("ACDB-")))
CURRENT_IDS = tuple(env_id for env_id in EVERY_ID if env_id not in DEPRECATED_IDS)


def _warnings_of(check: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check()
    return [str(warning.message) for warning in caught]


def _undocumented(
    messages: list[str], *, unbounded_allowed: bool, wrapped: bool = False
) -> list[str]:
    return [
        message
        for message in messages
        if not (unbounded_allowed and UNBOUNDED_OBSERVATION.match(message))
        and not (wrapped and CHECKED_WRAPPED.match(message))
    ]


def checked_view(env: gym.Env[Any, Any]) -> gym.Env[Any, Any]:
    """What an id stands for, without ``gym.make``'s own wrappers (order enforcing, the passive
    checker): the env itself, or for a flat id its flat wrappers over it."""
    view = env
    while isinstance(view, gym.Wrapper) and not isinstance(
        view, FlatObservation | FlatActions | DiscreteActions
    ):
        view = view.env
    return view


def test_every_registered_id_is_checked() -> None:
    from acdb_gym.core.ladders.shipped import ALL_LADDERS
    from acdb_gym.envs.registration import DESIGN_LADDERS, FRONTIER_DESIGN_IDS

    levels = sum(len(levels) for levels in ALL_LADDERS.values())
    design = sum(len(ALL_LADDERS[ladder]) for ladder in DESIGN_LADDERS)
    design += len(FRONTIER_DESIGN_IDS)  # the frontier's causally sufficient levels
    assert set(FRONTIER_DESIGN_IDS) <= set(CURRENT_IDS)
    assert len(CURRENT_IDS) == 2 * levels + design  # full and flat ids, design ids
    assert len(EVERY_ID) == len(CURRENT_IDS) + len(DEPRECATED_IDS)
    assert set(DESIGN_IDS + FEW_SAMPLE_DESIGN_IDS) <= set(CURRENT_IDS)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", CURRENT_IDS)
def test_gymnasium_check_env_on_every_id(env_id: str) -> None:
    env = gym.make(env_id)
    view = checked_view(env)
    large = is_large(env.unwrapped.level.spec)  # type: ignore[attr-defined]
    messages = _warnings_of(lambda: check_env(view, skip_render_check=large))
    design = env_id.startswith("ACDB-Design-")
    wrapped = view is not env.unwrapped
    assert not _undocumented(messages, unbounded_allowed=not design, wrapped=wrapped), messages
    if design:
        assert not messages  # bounded features only


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id",
    [env_id for env_id in CURRENT_IDS if env_id.startswith(("ACDB-Flat-", "ACDB-Design-"))],
)
def test_stable_baselines3_check_env_on_every_flat_and_design_id(env_id: str) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(env_id)
    large = is_large(env.unwrapped.level.spec)  # type: ignore[attr-defined]
    messages = _warnings_of(lambda: sb3_check_env(env, warn=True, skip_render_check=large))
    assert not _undocumented(messages, unbounded_allowed=True), messages


@pytest.mark.slow
@pytest.mark.parametrize("action", ["box", "discrete"])
@pytest.mark.parametrize("observation", ["raw", "stats", "compact"])
def test_both_checkers_on_the_flat_options(action: str, observation: str) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make("ACDB-Flat-Calibrated-L1-v1", action=action, observation=observation)
    messages = _warnings_of(lambda: check_env(checked_view(env)))
    messages += _warnings_of(lambda: sb3_check_env(env, warn=True))
    assert not _undocumented(messages, unbounded_allowed=True, wrapped=True), messages
