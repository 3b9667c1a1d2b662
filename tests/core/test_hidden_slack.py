"""A budget that does not reveal |I*|: LevelSpec.slack_max and the v1-hidden ladder."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.core.ladders.custom import format_level_spec, parse_level_spec
from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    HIDDEN_SLACK_LADDER,
    HIDDEN_SLACK_SPREAD,
    LADDERS,
    LEVEL_NAMES,
    MANIFEST_SIZE,
)
from acdb_gym.core.worlds.instance import generate_instance, instance_slack
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.envs.registration import ENV_IDS, HIDDEN_SLACK_IDS
from acdb_gym.testing import check_acdb_env

SPEC = LevelSpec(d=6, k=6, n_obs=50, n_int=10, noise_var=1.0, slack=1)
HIDDEN = replace(SPEC, slack_max=3)


def test_a_hidden_slack_is_drawn_per_instance_from_its_range_and_seed() -> None:
    slacks = [instance_slack(HIDDEN, seed) for seed in range(60)]
    assert set(slacks) == {1, 2, 3}
    assert slacks == [instance_slack(HIDDEN, seed) for seed in range(60)]
    for seed in (0, 1, 2):
        instance = generate_instance(HIDDEN, seed)
        assert instance.slack == slacks[seed]
        assert instance.budget == len(instance.i_star) + slacks[seed]
    assert {instance_slack(SPEC, seed) for seed in range(20)} == {1}


def test_the_slack_stream_leaves_the_world_as_it_is() -> None:
    plain, hidden = generate_instance(SPEC, 5), generate_instance(HIDDEN, 5)
    assert np.array_equal(plain.dag.adjacency, hidden.dag.adjacency)
    assert np.array_equal(plain.d_obs, hidden.d_obs) and plain.i_star == hidden.i_star
    assert plain.digest() != hidden.digest()  # the spec and the budget are hashed


def test_the_spec_validates_and_publishes_only_the_range() -> None:
    with pytest.raises(ValueError, match=r"slack_max must be at least slack \(1\) or None, got 0"):
        replace(SPEC, slack_max=0)
    assert HIDDEN.hidden_slack and not SPEC.hidden_slack
    assert (HIDDEN.slack_text, SPEC.slack_text) == ("1-3 hidden", "1")
    assert HIDDEN.max_interventions == SPEC.d - 1 + 3
    assert "slack_max" not in repr(SPEC)  # shipped digests keep their meaning
    assert repr(HIDDEN).endswith("slack_max=3)")


def test_a_custom_level_parses_and_formats_the_option() -> None:
    text = "d=6,k=6,n_obs=50,n_int=10,slack=1,slack_max=3"
    assert parse_level_spec(text) == HIDDEN
    assert (
        format_level_spec(HIDDEN) == "d=6,k=6,n_obs=50,n_int=10,noise_var=1.0,slack=1,slack_max=3"
    )
    assert parse_level_spec(text.replace("slack_max=3", "slack_max=none")) == SPEC
    with pytest.raises(ValueError, match="slack_max must be an integer, got 'x'"):
        parse_level_spec(text.replace("slack_max=3", "slack_max=x"))


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_v1_hidden_is_v1_with_a_hidden_slack_on_v1s_seeds(level: str) -> None:
    hidden, v1 = HIDDEN_SLACK_LADDER[level], LADDERS["v1"][level]
    assert hidden.spec == replace(v1.spec, slack_max=v1.spec.slack + HIDDEN_SLACK_SPREAD)
    assert len(hidden.manifest) == MANIFEST_SIZE
    assert [e.seed for e in hidden.manifest] == [e.seed for e in v1.manifest]
    for index in (0, 1, 2, 150):
        ours, theirs = hidden.instance(index), v1.instance(index)
        assert ours.digest() == hidden.manifest[index].digest
        assert np.array_equal(ours.d_obs, theirs.d_obs) and ours.i_star == theirs.i_star
        assert v1.spec.slack <= ours.slack <= v1.spec.slack + HIDDEN_SLACK_SPREAD
    assert ALL_LADDERS["v1-hidden"] is HIDDEN_SLACK_LADDER and "v1-hidden" not in LADDERS


def test_v1_hidden_is_registered_and_its_observation_holds_no_slack() -> None:
    assert tuple(f"ACDB-HiddenSlack-L{n}-v1" for n in range(6)) == HIDDEN_SLACK_IDS
    assert not set(HIDDEN_SLACK_IDS) & set(ENV_IDS)
    env = gym.make("ACDB-HiddenSlack-L1-v1")
    observation, info = env.reset(options={"manifest_index": 3})
    instance = HIDDEN_SLACK_LADDER["L1"].instance(3)
    assert info["budget"] == instance.budget and "slack" not in info
    assert "i_star_size" not in info and not any("slack" in key for key in observation)
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize("tools", ["raw", "stats"])
def test_a_hidden_slack_env_passes_the_conformance_checks(tools: str) -> None:
    env = gym.make("ACDB-HiddenSlack-L4-v1", tools=tools, render_mode="ansi")
    check_acdb_env(env, seed=7, n_random_steps=30)
