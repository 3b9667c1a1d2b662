"""Conformance over the whole registry: Gymnasium's and SB3's checkers, ``check_acdb_env``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.registration import DESIGN_IDS, ENV_IDS, register_envs
from acdb_gym.testing import check_acdb_env

BIG_LEVELS = {
    f"ACDB-{family}L{n}-v1" for family in ("", "NonGaussian-", "Nonlinear-") for n in (3, 5)
}
"""d = 20 and d = 30: fewer random steps keep the suite fast; the small levels get the full 50."""


def test_every_level_of_every_ladder_is_registered() -> None:
    expected = {f"ACDB-L{n}-{ladder}" for n in range(6) for ladder in ("v0", "v1")}
    expected |= {f"ACDB-{tag}-L{n}-v1" for n in range(6) for tag in ("NonGaussian", "Nonlinear")}
    assert set(ENV_IDS) == expected
    assert set(DESIGN_IDS) == {f"ACDB-Design-L{n}-{v}" for n in range(6) for v in ("v0", "v1")}
    for env_id in ENV_IDS + DESIGN_IDS:
        assert env_id in gym.registry


@pytest.mark.parametrize(
    ("env_id", "ladder", "family"),
    [
        ("ACDB-L2-v0", "v0", "linear_gaussian"),
        ("ACDB-L2-v1", "v1", "linear_gaussian"),
        ("ACDB-NonGaussian-L2-v1", "v1-nongaussian", "linear_nongaussian"),
        ("ACDB-Nonlinear-L2-v1", "v1-nonlinear", "nonlinear"),
    ],
)
def test_family_ids_parse_and_old_ids_keep_their_meaning(
    env_id: str, ladder: str, family: str
) -> None:
    namespace, name, version = gym.envs.registration.parse_env_id(env_id)
    assert namespace is None and version == int(env_id[-1]) and name == env_id[: -len("-v0")]
    env = gym.make(env_id)
    assert env.unwrapped.level is LADDERS[ladder]["L2"]
    assert env.unwrapped.level.spec.family == family
    env.reset(seed=0)
    assert env.unwrapped.hidden_instance().spec.family == family


def test_register_envs_twice_is_harmless() -> None:
    before = dict(gym.registry)
    register_envs()
    assert dict(gym.registry) == before


@pytest.mark.parametrize("env_id", ENV_IDS + DESIGN_IDS)
def test_gymnasium_check_env(env_id: str, strict_warnings: None) -> None:
    env = gym.make(env_id)
    check_env(env.unwrapped)


@pytest.mark.parametrize("env_id", DESIGN_IDS)
def test_stable_baselines3_check_env(env_id: str, strict_warnings: None) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(gym.make(env_id), warn=True)
    sb3_check_env(gym.make(env_id, estimator="true_cpdag"), warn=True)


@pytest.mark.parametrize("tools", ["raw", "stats"])
@pytest.mark.parametrize("panel", ["active", "observational"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_acdb_env(env_id: str, panel: str, tools: str, strict_warnings: None) -> None:
    env = gym.make(env_id, panel=panel, tools=tools, render_mode="ansi")
    check_acdb_env(env, seed=7, n_random_steps=25 if env_id in BIG_LEVELS else 50)


def test_make_passes_arguments_through() -> None:
    env = gym.make(
        "ACDB-L3-v1", panel="observational", tools="stats", max_steps=7, reward="neg_shd"
    )
    base = env.unwrapped
    assert isinstance(base, ACDBEnv)
    assert (base.level.ladder, base.level.name) == ("v1", "L3")
    assert (base.panel, base.tools, base.max_steps, base.reward_name) == (
        "observational",
        "stats",
        7,
        "neg_shd",
    )
    design = gym.make("ACDB-Design-L2-v0", estimator="true_cpdag", shift=2.0).unwrapped
    assert isinstance(design, InterventionDesignEnv)
    assert (design.level.name, design.estimator, design.shift) == ("L2", "true_cpdag", 2.0)


def test_default_step_limits_follow_the_tool_variant() -> None:
    assert gym.make("ACDB-L1-v0", tools="raw").unwrapped.max_steps == 16  # type: ignore[attr-defined]
    assert gym.make("ACDB-L1-v0", tools="stats").unwrapped.max_steps == 32  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"panel": "passive"}, "panel must be one of"),
        ({"tools": "all"}, "tools must be one of"),
        ({"reward": "accuracy"}, "reward must be one of"),
        ({"max_steps": 0}, "max_steps must be an integer >= 1 or None, got 0"),
        ({"render_mode": "human"}, "render_mode must be one of"),
        ({"level": "L9"}, "level must be one of"),
        ({"ladder": "v2"}, "ladder must be one of"),
    ],
)
def test_bad_constructor_arguments_raise(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ACDBEnv(**kwargs)  # type: ignore[arg-type]


def test_every_registered_level_has_its_ladder_spec() -> None:
    for env_id in ENV_IDS:
        level = gym.make(env_id).unwrapped.level  # type: ignore[attr-defined]
        assert LADDERS[level.ladder][level.name] is level
        assert level.env_id == env_id


def test_make_in_a_fresh_interpreter() -> None:
    code = textwrap.dedent(
        """
        import gymnasium as gym
        env = gym.make("acdb_gym:ACDB-L2-v0")
        observation, info = env.reset(seed=0)
        print(type(env.unwrapped).__name__, observation["observational"].shape, env.unwrapped.level.name)
        """
    )
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ACDBEnv", "(50,", "6)", "L2"]
