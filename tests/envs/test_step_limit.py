"""The default step limit never keeps an agent from spending its budget and submitting."""

from __future__ import annotations

import pytest

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import STEP_LIMITS, ACDBEnv


def _big_budget_index(ladder: str, level: str, at_least: int) -> int:
    manifest = ALL_LADDERS[ladder][level]
    return next(
        index
        for index in range(len(manifest.manifest))
        if manifest.instance(index).budget >= at_least
    )


@pytest.mark.slow
@pytest.mark.parametrize(("ladder", "level"), [("large", "L3"), ("real", "DREAM4-1")])
def test_a_budget_above_16_is_spent_and_the_graph_submitted(ladder: str, level: str) -> None:
    index = _big_budget_index(ladder, level, STEP_LIMITS["raw"])
    env = ACDBEnv(level, ladder=ladder)
    observation, info = env.reset(options={"manifest_index": index})
    budget = info["budget"]
    assert budget >= 16
    assert int(observation["steps_remaining"][0]) == budget + 1 == env.max_steps
    assert env.observation_space["steps_remaining"].contains(observation["steps_remaining"])  # type: ignore[index]
    for step in range(budget):
        observation, _, terminated, truncated, _ = env.step(
            actions.intervene(step % env.n_nodes, 1.0)
        )
        assert not (terminated or truncated)
    assert int(observation["budget_remaining"][0]) == 0
    assert int(observation["steps_remaining"][0]) == 1
    _, _, terminated, truncated, info = env.step(actions.submit(PDAG.empty(env.n_nodes)))
    assert terminated and not truncated
    assert env.details()["score"]["interventions_used"] == budget


@pytest.mark.slow
def test_the_paper_ladders_keep_the_limit_and_an_explicit_limit_is_never_raised() -> None:
    for ladder in ("v0", "v1", "v1-latent", "v1-hidden"):
        for name in ALL_LADDERS[ladder]:
            env = ACDBEnv(name, ladder=ladder)
            for index in (0, 1):
                env.reset(options={"manifest_index": index})
                assert env.max_steps == STEP_LIMITS["raw"], (ladder, name)
    index = _big_budget_index("large", "L3", 16)
    fixed = ACDBEnv("L3", ladder="large", max_steps=16)
    observation, _ = fixed.reset(options={"manifest_index": index})
    assert int(observation["steps_remaining"][0]) == 16 == fixed.max_steps
    stats = ACDBEnv("L3", ladder="large", tools="stats")
    _, info = stats.reset(options={"manifest_index": index})
    assert stats.max_steps == max(STEP_LIMITS["stats"], info["budget"] + 1)
