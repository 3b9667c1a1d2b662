"""The measured-data ladders in the environments (DESIGN §7, §8): ``sachs-experiments`` and
``tuebingen`` are registered, keep the env contract, name only the allowed targets, refuse the
others as invalid actions, keep the proteins anonymous, and the design env masks the targets
without an experiment."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.agents.base import agent_info, run_episode
from acdb_gym.agents.llm.prompts import session_prompt, task_prompt, world_options
from acdb_gym.cli import main
from acdb_gym.core.graphs import SACHS_PROTEINS
from acdb_gym.core.ladders.shipped import ALL_LADDERS, SACHS_EXPERIMENT_LADDER, TUEBINGEN_LADDER
from acdb_gym.envs import actions
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.design.vector import DesignVectorEnv
from acdb_gym.envs.privileged import hidden_instance_of
from acdb_gym.envs.registration import (
    ENV_IDS,
    SACHS_EXPERIMENT_DESIGN_IDS,
    SACHS_EXPERIMENT_IDS,
    TUEBINGEN_IDS,
)
from acdb_gym.registry import get_agent
from acdb_gym.testing import check_acdb_env

CELLS_ID = "ACDB-SachsExperiments-Cells-v0"


def test_the_ladders_are_registered_apart_from_env_ids() -> None:
    assert ALL_LADDERS["sachs-experiments"] is SACHS_EXPERIMENT_LADDER
    assert ALL_LADDERS["tuebingen"] is TUEBINGEN_LADDER
    assert SACHS_EXPERIMENT_IDS == (
        CELLS_ID,
        "ACDB-SachsExperiments-Fitted-v0",
        "ACDB-SachsExperiments-Fitted-Spline-v0",
    )
    assert TUEBINGEN_IDS == ("ACDB-Tuebingen-Pairs-v0", "ACDB-Tuebingen-Pairs-1000-v0")
    for env_id in (*SACHS_EXPERIMENT_IDS, *TUEBINGEN_IDS, *SACHS_EXPERIMENT_DESIGN_IDS):
        assert env_id in gym.registry and env_id not in ENV_IDS
    assert gym.registry["ACDB-Design-SachsExperiments-Cells-v0"].vector_entry_point


@pytest.mark.parametrize("name", ["Cells", "Fitted", "Fitted-Spline"])
def test_the_manifests_regenerate(name: str) -> None:
    level = SACHS_EXPERIMENT_LADDER[name]
    assert len(level.manifest) == 200
    for index in (0, 100, 199):
        assert level.instance(index).digest() == level.manifest[index].digest


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id", [CELLS_ID, "ACDB-SachsExperiments-Fitted-v0", "ACDB-Tuebingen-Pairs-1000-v0"]
)
def test_the_levels_keep_the_env_contract(env_id: str) -> None:
    env = gym.make(env_id, panel="active", tools="stats", render_mode="ansi")
    check_acdb_env(env, seed=3, n_random_steps=25)


def _seen(env_id: str, index: int, **kwargs: Any) -> tuple[Any, dict[str, Any], Any]:
    """The reset's observation, the info an agent is given (numbers and details) and the env."""
    env = gym.make(env_id, **kwargs)
    observation, info = env.reset(options={"manifest_index": index})
    return observation, agent_info(env, info), env


def test_reset_info_names_the_allowed_targets_and_measured_data() -> None:
    _, info, env = _seen(CELLS_ID, 4)
    instance = hidden_instance_of(env)
    assert info["experiment_targets"] == tuple(sorted(instance.intervention_targets or ()))
    assert info["real_data"] == 1 and info["budget"] == 4
    _, fitted, _ = _seen("ACDB-SachsExperiments-Fitted-v0", 4)
    assert fitted["experiment_targets"] == info["experiment_targets"] and fitted["real_data"] == 0
    _, pair, _ = _seen("ACDB-Tuebingen-Pairs-v0", 4)
    assert pair["experiment_targets"] == () and pair["real_data"] == 1 and pair["budget"] == 0
    _, plain, _ = _seen("ACDB-Calibrated-L1-v1", 0)
    assert "experiment_targets" not in plain and plain["real_data"] == 0


def test_a_target_without_an_experiment_is_an_invalid_action() -> None:
    observation, info, env = _seen(CELLS_ID, 0)
    allowed = info["experiment_targets"]
    outside = next(v for v in range(11) if v not in allowed)
    observation, _, terminated, truncated, info = env.step(actions.intervene(outside, 1.0))
    error = env.unwrapped.details()["error"]  # type: ignore[attr-defined]
    assert "has no experiment on this level; experiments exist for" in error
    assert info["invalid_actions"] == 1 and info["interventions_used"] == 0
    assert observation["budget_remaining"][0] == 4 and not (terminated or truncated)
    inside = allowed[0]
    observation, *_ = env.step(actions.intervene(inside, -2.0))
    assert observation["targets"][0] == inside and observation["interventional"][0].any()


def test_measured_data_take_hard_interventions_only() -> None:
    with pytest.raises(ValueError, match="interventions must be 'hard'"):
        gym.make(CELLS_ID, interventions="shift")
    gym.make("ACDB-SachsExperiments-Fitted-v0", interventions="mixed").reset(seed=0)


def test_agents_and_prompts_see_no_protein_name() -> None:
    observation, info, env = _seen(CELLS_ID, 3)
    instance = hidden_instance_of(env)
    seen: list[Any] = [
        observation,
        info,
        task_prompt("llm_raw", panel="active", n_nodes=11, **world_options(info)),
        session_prompt(
            "llm_raw",
            observational=np.asarray(instance.d_obs),
            panel="active",
            budget=info["budget"],
            max_steps=16,
            n_int=150,
        ),
    ]
    for target in info["experiment_targets"]:
        seen.append(env.step(actions.intervene(target, 1.0)))
    text = repr(seen)
    for protein in SACHS_PROTEINS:
        assert f"'{protein}'" not in text and f" {protein} " not in text, protein
    _, info, _ = _seen(CELLS_ID, 3, named=True)
    assert info["variable_names"] == list(instance.variable_names or ())


def test_the_prompt_says_the_experiments_are_real_perturbations() -> None:
    _, info, _ = _seen(CELLS_ID, 0)
    text = task_prompt("llm_raw", panel="active", n_nodes=11, **world_options(info))
    assert "real experiment" in text and "not a perfect intervention" in text
    targets = ", ".join(f"X{v}" for v in info["experiment_targets"])
    assert f"Experiments exist only for {targets};" in text
    assert "linear-Gaussian" not in text
    _, fitted, _ = _seen("ACDB-SachsExperiments-Fitted-v0", 0)
    text = task_prompt("llm_raw", panel="active", n_nodes=11, **world_options(fitted))
    assert f"Interventions exist only for {targets};" in text and "perfect intervention" in text
    _, pair, _ = _seen("ACDB-Tuebingen-Pairs-v0", 0)
    text = task_prompt("llm_raw", panel="active", n_nodes=2, **world_options(pair))
    assert "either X0 -> X1 or X1 -> X0" in text and "no experiment exists" in text
    unchanged = task_prompt("llm_raw", panel="active", n_nodes=11)
    assert unchanged == task_prompt("llm_raw", panel="active", n_nodes=11, **world_options({}))


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["pc_greedy", "pc_active", "bic_active", "fci_active"])
def test_the_active_baselines_intervene_only_where_experiments_exist(agent: str) -> None:
    for env_id in (CELLS_ID, "ACDB-SachsExperiments-Fitted-v0"):
        env = gym.make(env_id)
        result = run_episode(env, get_agent(agent).build(0, {}), manifest_index=2)
        allowed = hidden_instance_of(env).intervention_targets or frozenset()
        assert result.invalid_actions == 0, (agent, env_id)
        assert 0 < result.score.interventions_used <= 4
        assert set(env.unwrapped.session.targets) <= allowed


def test_the_design_env_masks_targets_without_an_experiment() -> None:
    env = InterventionDesignEnv("Cells", ladder="sachs-experiments", observation="graph")
    observation, _ = env.reset(options={"manifest_index": 1})
    allowed = sorted(env.session.intervention_targets or ())
    mask = env.action_masks()
    assert np.flatnonzero(mask[:11]).tolist() == allowed and mask[env.max_nodes]
    assert np.flatnonzero(observation["action_mask"][:11]).tolist() == allowed
    outside = next(v for v in range(11) if v not in allowed)
    _, _, terminated, _, _ = env.step(outside)  # masked: acts as stop
    assert terminated and env.session.interventions_used == 0


def test_the_vector_design_env_equals_the_single_env_on_real_cells() -> None:
    vector = DesignVectorEnv(2, "Cells", ladder="sachs-experiments")
    flat, _ = vector.reset(seed=11)
    singles = [InterventionDesignEnv("Cells", ladder="sachs-experiments") for _ in range(2)]
    firsts = [env.reset(seed=11 + i)[0] for i, env in enumerate(singles)]
    for i in range(2):
        assert np.array_equal(flat[i], firsts[i])
    for _ in range(3):
        masks = vector.action_masks()
        acts = np.array([int(np.flatnonzero(m[:-1])[-1]) if m[:-1].any() else 11 for m in masks])
        flat, rewards, *_ = vector.step(acts)
        for i, env in enumerate(singles):
            if env.session.sealed:
                continue
            observation, reward, *_ = env.step(int(acts[i]))
            assert np.array_equal(flat[i], observation) and rewards[i] == reward


def test_acdb_levels_lists_the_measured_ladders(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["levels"]) == 0
    out = capsys.readouterr().out
    assert "| sachs-experiments | Cells |" in out and "measured cells (real experiments)" in out
    assert "fitted (linear), targets sachs-experiments |" in out
    assert "| tuebingen | Pairs-1000 |" in out and "Tübingen cause-effect pairs" in out
