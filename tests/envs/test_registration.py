"""Conformance over the whole registry: Gymnasium's and SB3's checkers, ``check_acdb_env``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from acdb_gym.core.ladders.shipped import ALL_LADDERS, LADDER_IDS, LADDERS, REAL_VERSION
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.registration import (
    DEPRECATED_IDS,
    DESIGN_IDS,
    ENV_IDS,
    FLAT_IDS,
    LARGE_IDS,
    flat_id,
    register_envs,
)
from acdb_gym.envs.wrappers import FlatActions
from acdb_gym.testing import check_acdb_env

BIG_LEVELS = {f"ACDB-Calibrated-L{n}-v1" for n in (3, 5)} | {
    f"ACDB-{family}-L{n}-v2" for family in ("NonGaussian", "Nonlinear") for n in (3, 5)
}
"""d = 20 and d = 30: fewer random steps keep the suite fast; the small levels get the full 50."""


def test_every_level_of_every_ladder_is_registered() -> None:
    expected = {f"ACDB-L{n}-v0" for n in range(6)} | {f"ACDB-Calibrated-L{n}-v1" for n in range(6)}
    expected |= {f"ACDB-{tag}-L{n}-v2" for n in range(6) for tag in ("NonGaussian", "Nonlinear")}
    assert set(ENV_IDS) == expected
    assert set(DESIGN_IDS) == {f"ACDB-Design-L{n}-v0" for n in range(6)} | {
        f"ACDB-Design-Calibrated-L{n}-v1" for n in range(6)
    }
    for env_id in ENV_IDS + DESIGN_IDS:
        assert env_id in gym.registry


@pytest.mark.parametrize(
    ("env_id", "ladder", "family"),
    [
        ("ACDB-L2-v0", "v0", "linear_gaussian"),
        ("ACDB-Calibrated-L2-v1", "v1", "linear_gaussian"),
        ("ACDB-NonGaussian-L2-v2", "v1-nongaussian", "linear_nongaussian"),
        ("ACDB-Nonlinear-L2-v2", "v1-nonlinear", "nonlinear"),
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


def test_every_full_id_has_a_registered_flat_variant() -> None:
    assert {"ACDB-Flat-" + env_id[5:] for env_id in ENV_IDS + LARGE_IDS} <= set(FLAT_IDS)
    full_ids = [level.env_id for ladder in ALL_LADDERS.values() for level in ladder.values()]
    assert tuple("ACDB-Flat-" + env_id[5:] for env_id in full_ids) == FLAT_IDS
    assert flat_id("ACDB-NonGaussian-L2-v2") == "ACDB-Flat-NonGaussian-L2-v2"
    with pytest.raises(ValueError, match="must start with 'ACDB-', got 'L2'"):
        flat_id("L2")
    env = gym.make("ACDB-Flat-Calibrated-L2-v1", tools="stats", value_scale=5.0)
    assert isinstance(env.observation_space, gym.spaces.Box)
    assert env.get_wrapper_attr("layout").value_scale == 5.0
    assert env.unwrapped.level is LADDERS["v1"]["L2"]
    assert env.unwrapped.tools == "stats"
    kept = gym.make("ACDB-Flat-L2-v0", flatten_observation=False)
    assert isinstance(kept.env.env, FlatActions)  # under OrderEnforcing and the env checker
    assert set(FLAT_IDS) <= set(gym.registry)


def test_ids_keep_gymnasiums_env_checker() -> None:
    for env_id in ENV_IDS + DESIGN_IDS + FLAT_IDS:
        assert not gym.spec(env_id).disable_env_checker, env_id


def test_register_envs_twice_is_harmless() -> None:
    before = dict(gym.registry)
    register_envs()
    assert dict(gym.registry) == before


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENV_IDS + DESIGN_IDS + FLAT_IDS[:3])
def test_gymnasium_check_env(env_id: str, strict_warnings: None) -> None:
    env = gym.make(env_id)
    check_env(env.unwrapped)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", DESIGN_IDS)
def test_stable_baselines3_check_env(env_id: str, strict_warnings: None) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(gym.make(env_id), warn=True)
    sb3_check_env(gym.make(env_id, estimator="true_cpdag"), warn=True)


@pytest.mark.slow
@pytest.mark.parametrize("tools", ["raw", "stats"])
@pytest.mark.parametrize("panel", ["active", "observational"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_acdb_env(env_id: str, panel: str, tools: str, strict_warnings: None) -> None:
    env = gym.make(env_id, panel=panel, tools=tools, render_mode="ansi")
    check_acdb_env(env, seed=7, n_random_steps=25 if env_id in BIG_LEVELS else 50)


def test_make_passes_arguments_through() -> None:
    env = gym.make(
        "ACDB-Calibrated-L3-v1", panel="observational", tools="stats", max_steps=7, reward="neg_shd"
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


@pytest.mark.slow
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


def test_family_ids_of_the_first_worlds_are_gone() -> None:
    """The family ladders' v1 ids named other worlds (CHANGELOG); Gymnasium points to v2."""
    with pytest.raises(gym.error.Error, match="v2"):
        gym.make("ACDB-Nonlinear-L2-v1")


# --------------------------------------------------------------------------- the id scheme


def test_every_id_ends_in_its_ladders_world_version() -> None:
    """``ACDB-[<view>-]<tag>-<level>-v<version>``: Gymnasium parses the version of every id of
    every ladder (no suffix names a ladder), and the ladder is in the name."""
    for ladder, levels in ALL_LADDERS.items():
        ids = LADDER_IDS[ladder]
        for name, level in levels.items():
            namespace, parsed_name, version = gym.envs.registration.parse_env_id(level.env_id)
            assert namespace is None and version == ids.version, level.env_id
            assert parsed_name == "-".join(p for p in ("ACDB", ids.tag, name) if p)
            assert gym.spec(level.env_id).kwargs == {"level": name, "ladder": ladder}
    assert LADDER_IDS["real"].version == REAL_VERSION
    names = [gym.envs.registration.parse_env_id(i)[1] for i in ENV_IDS + FLAT_IDS + DESIGN_IDS]
    assert len(set(names)) == len(names), "two ladders' ids share a name"


@pytest.mark.slow
def test_the_papers_ids_are_unchanged_and_warning_free() -> None:
    code = textwrap.dedent(
        """
        import warnings
        warnings.simplefilter("error")
        import gymnasium as gym
        for env_id in ("ACDB-L2-v0", "ACDB-Flat-L2-v0", "ACDB-Design-L2-v0"):
            env = gym.make("acdb_gym:" + env_id)
            env.reset(seed=0)
            print(env_id, env.unwrapped.level.ladder, env.unwrapped.level.name)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        *("ACDB-L2-v0", "v0", "L2"),
        *("ACDB-Flat-L2-v0", "v0", "L2"),
        *("ACDB-Design-L2-v0", "v0", "L2"),
    ]


@pytest.mark.parametrize(
    ("deprecated", "current"),
    [
        ("ACDB-L2-v1", "ACDB-Calibrated-L2-v1"),
        ("ACDB-Flat-L2-v1", "ACDB-Flat-Calibrated-L2-v1"),
        ("ACDB-Design-L2-v1", "ACDB-Design-Calibrated-L2-v1"),
        ("ACDB-L1-large", "ACDB-Large-L1-v0"),
        ("ACDB-Sachs-real", f"ACDB-Real-Sachs-v{REAL_VERSION}"),
        ("ACDB-Nonlinear-L2-v1-n3", "ACDB-FewSample-Nonlinear-L2-v0"),
        ("ACDB-Design-L4-v1-n3", "ACDB-Design-FewSample-L4-v0"),
    ],
)
def test_a_deprecated_id_warns_and_makes_its_current_env(deprecated: str, current: str) -> None:
    assert DEPRECATED_IDS[deprecated] == current
    with pytest.warns(DeprecationWarning, match=f"{deprecated} is deprecated: it is now {current}"):
        old = gym.make(deprecated)
    new = gym.make(current)
    assert old.unwrapped.level is new.unwrapped.level
    assert type(old.unwrapped) is type(new.unwrapped)
    assert old.observation_space == new.observation_space
    assert old.action_space == new.action_space
    if current.startswith("ACDB-Design-"):
        with pytest.warns(DeprecationWarning, match=f"{deprecated} is deprecated"):
            envs = gym.make_vec(deprecated, 2, vectorization_mode="vector_entry_point")
        assert envs.unwrapped.level is new.unwrapped.level


def test_gymnasiums_own_notices_are_not_filtered() -> None:
    """Only the one notice the deprecated ``ACDB-L<k>-v1`` aliases make wrong is filtered
    (DESIGN §8): Gymnasium still says which version an unversioned id resolves to and that
    an id of worlds replaced since is gone."""
    with (
        pytest.warns(UserWarning, match="Using the latest versioned environment `ACDB-L2-v1`"),
        pytest.warns(DeprecationWarning, match="ACDB-L2-v1 is deprecated"),
    ):
        gym.make("ACDB-L2")
    with pytest.warns(UserWarning, match="Using the latest versioned environment"):
        gym.make("ACDB-Nonlinear-L2")
    with pytest.raises(gym.error.DeprecatedEnv, match="ACDB-Nonlinear-L2-v2"):
        gym.make("ACDB-Nonlinear-L2-v0")
