"""The baselines that start from PC share one computation per dataset, with the same rows."""

from __future__ import annotations

from acdb_gym.agents.base import run_episode
from acdb_gym.discovery import pc
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.registry import get_agent


def test_agents_that_share_pc_score_as_with_their_own() -> None:
    """The second agent finds PC computed; computing it afresh gives the same score."""
    env = ACDBEnv("L3")
    rows = {}
    for name in ("pc", "pc_greedy"):
        agent = get_agent(name).build(0, {})
        rows[name] = run_episode(env, agent, manifest_index=1).score
        assert len(pc._SHARED) >= 1
        pc._SHARED.clear()
        again = run_episode(env, get_agent(name).build(0, {}), manifest_index=1).score
        assert again == rows[name]
