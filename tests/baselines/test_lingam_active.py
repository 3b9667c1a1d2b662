"""lingam_active: DirectLiNGAM's DAG corrected by pc_active's experiments."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.families import DirectLiNGAMAgent, LiNGAMActiveAgent
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.types import PANEL_ACTIVE
from acdb_gym.registry import get_agent


def _mean_f1(agent: object, env_id: str, seeds: range) -> float:
    env = gym.make(env_id)
    scores = [run_episode(env, agent, manifest_index=i).score.directed_f1 for i in seeds]
    env.close()
    return float(np.mean(scores))


@pytest.mark.slow
def test_experiments_correct_lingam_where_its_order_is_at_chance() -> None:
    # Gaussian noise: LiNGAM's order carries no information, the experiments' shifts do.
    env_id = LADDERS["v1"]["L0"].env_id
    alone = _mean_f1(DirectLiNGAMAgent(), env_id, range(6))
    active = _mean_f1(LiNGAMActiveAgent(), env_id, range(6))
    assert active > alone + 0.2


@pytest.mark.slow
def test_on_non_gaussian_worlds_it_keeps_what_lingam_found() -> None:
    env_id = LADDERS["v1-nongaussian"]["L0"].env_id
    alone = _mean_f1(DirectLiNGAMAgent(), env_id, range(6))
    active = _mean_f1(LiNGAMActiveAgent(), env_id, range(6))
    assert alone > 0.85 and active >= alone - 0.05


def test_it_spends_the_budget_and_is_an_active_sweep_agent() -> None:
    env = gym.make(LADDERS["v1-nongaussian"]["L1"].env_id)
    result = run_episode(env, LiNGAMActiveAgent(), manifest_index=0)
    assert result.interventions == result.score.i_star_size + 1  # v1's slack is 1
    assert get_agent("lingam_active").panels == (PANEL_ACTIVE,)


def test_rejects_a_bad_alpha() -> None:
    with pytest.raises(ValueError, match="lingam_alpha"):
        LiNGAMActiveAgent(lingam_alpha=1.5)
