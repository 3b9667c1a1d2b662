"""The frontier's reachability reference (``class_reference``) and its ablation
(``class_bic_active``): privileged only in the family's mechanism class and the budget's best
targets, acting through the env like any agent."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import acdb_gym  # noqa: F401  (registers the env ids)
from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.active import BICActiveAgent
from acdb_gym.baselines.reference import ClassReferenceAgent, reference_targets
from acdb_gym.core.graphs import best_intervention_set
from acdb_gym.core.ladders.shipped import FRONTIER_LADDER
from acdb_gym.discovery.class_bic import CLASS_FEATURES
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.registry import get_agent


def test_the_reference_runs_the_best_experiments_first() -> None:
    level = FRONTIER_LADDER["NL30-Short2"]
    env = ACDBEnv(level, panel="active")
    for index in range(2):
        instance = level.instance(index)
        planned = reference_targets(instance)
        assert set(planned) == set(
            best_intervention_set(instance.dag, instance.budget, instance.intervention_targets)
        )
        assert len(planned) == instance.budget < len(instance.i_star)  # a budget below |I*|
        result = run_episode(env, ClassReferenceAgent(), manifest_index=index)
        assert result.revision is not None
        assert tuple(result.revision.targets) == planned


def test_the_reference_takes_the_family_class_and_beats_bic_active_on_nonlinear_worlds() -> None:
    env = gym.make("ACDB-Frontier-NL20-v1")
    reference, plain = [], []
    for index in range(3):
        agent = ClassReferenceAgent()
        reference.append(run_episode(env, agent, manifest_index=index).score["directed_f1"])
        assert agent._features == CLASS_FEATURES["nonlinear"]
        plain.append(run_episode(env, BICActiveAgent(), manifest_index=index).score["directed_f1"])
    assert np.mean(reference) > np.mean(plain) + 0.15


def test_the_reference_needs_its_instance_and_a_known_design() -> None:
    agent = ClassReferenceAgent()
    env = ACDBEnv(FRONTIER_LADDER["NL20"], panel="active")
    observation, info = env.reset(options={"manifest_index": 0})
    with pytest.raises(RuntimeError, match="needs the instance"):
        agent.reset(observation, info)
    with pytest.raises(ValueError, match="design must be one of"):
        ClassReferenceAgent(design="oracle")  # type: ignore[arg-type]


def test_the_registry_builds_both_as_privileged() -> None:
    reference = get_agent("class_reference").build(0, {})
    ablation = get_agent("class_bic_active").build(0, {})
    assert (reference.design, ablation.design) == ("best", "adaptive")
    assert reference.privileged and ablation.privileged
