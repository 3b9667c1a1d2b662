"""run_draws (acdb_gym/agents/draws.py): the random baseline's draws scored in one pass give
the episodes the env loop gives, and everything else still runs through the loop."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.draws import BlindAgent, run_draws
from acdb_gym.baselines.classical import PCAgent, RandomDAGAgent
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.sweep.jobs import Job, run_job


def _loop(ladder: str, level: str, index: int, draws: int, seed: int) -> list:
    env = gym.make(get_level(ladder, level).env_id)
    agent = RandomDAGAgent(seed=seed)
    try:
        return [run_episode(env, agent, manifest_index=index) for _ in range(draws)]
    finally:
        env.close()


@pytest.mark.parametrize(("ladder", "level"), [("v0", "L0"), ("v0", "L5"), ("v1", "L3")])
def test_the_draws_at_once_are_the_loops_episodes(ladder: str, level: str) -> None:
    env = gym.make(get_level(ladder, level).env_id)
    agent = RandomDAGAgent(seed=7)
    assert isinstance(agent, BlindAgent)
    try:
        fast = run_draws(env, agent, draws=30, manifest_index=2)
    finally:
        env.close()
    slow = _loop(ladder, level, 2, 30, seed=7)
    for mine, theirs in zip(fast, slow, strict=True):
        assert mine.score == theirs.score
        assert (mine.reward, mine.steps, mine.interventions) == (
            theirs.reward,
            theirs.steps,
            theirs.interventions,
        )
        assert (mine.invalid_actions, mine.truncated, mine.extra) == (
            theirs.invalid_actions,
            theirs.truncated,
            theirs.extra,
        )
        assert mine.trajectory == () and mine.submission is None  # neither is kept


def test_the_draws_continue_the_agents_generator() -> None:
    agent = RandomDAGAgent(seed=3)
    first = agent.draw_adjacencies(6, 4)
    second = agent.draw_adjacencies(6, 4)
    together = RandomDAGAgent(seed=3).draw_adjacencies(6, 8)
    assert first.dtype == np.bool_ and first.shape == (4, 6, 6)
    assert np.array_equal(np.concatenate([first, second]), together)


def test_a_world_with_latents_one_draw_or_another_agent_runs_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    import acdb_gym.agents.draws as draws_module

    original = draws_module.run_episode

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(draws_module, "run_episode", counted)
    latent = gym.make(get_level("v1-latent", "L1").env_id)
    assert len(run_draws(latent, RandomDAGAgent(seed=1), draws=3, manifest_index=0)) == 3
    assert len(calls) == 3
    plain = gym.make(get_level("v0", "L0").env_id)
    run_draws(plain, RandomDAGAgent(seed=1), draws=1, manifest_index=0)
    run_draws(plain, PCAgent(), draws=2, manifest_index=0)
    run_draws(plain, RandomDAGAgent(seed=1), draws=2)  # each reset draws its own instance
    assert len(calls) == 8
    with pytest.raises(ValueError, match="at least 1"):
        run_draws(plain, PCAgent(), draws=0)


def test_a_random_job_row_is_the_rows_of_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    job = Job("v0", "L3", 1, "random", "observational", "raw", 0)
    fast = run_job(job)
    import acdb_gym.agents.draws as draws_module

    monkeypatch.setattr(draws_module, "BlindAgent", type("Nothing", (), {}))  # no agent is blind
    slow = run_job(job)
    assert fast.status == slow.status == "ok"
    assert fast.to_dict() | {"wall_time": 0} == slow.to_dict() | {"wall_time": 0}
