"""RL policies: the trainer (smoke run), saving/loading, RLAgent on both envs, the sweep spec."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import acdb_gym
from acdb_gym.agents.base import Agent, run_episode
from acdb_gym.agents.rl.agent import (
    METADATA_MEMBER,
    MissingExtraError,
    PolicyMetadata,
    RLAgent,
    load_policy,
    read_metadata,
)
from acdb_gym.agents.rl.train import (
    TRAIN_SEED_LOW,
    TrainConfig,
    TrainingInstances,
    build_parser,
    held_out_instances,
    main,
    parse_config,
    train,
)
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.privileged import hidden_instance_of
from acdb_gym.registry import get_agent
from acdb_gym.sweep.run import Job, run_job

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "models" / "acdb_design_l1_v0" / "model.zip"
L1 = LADDERS["v0"]["L1"]
TEST_INSTANCES = held_out_instances("L1", 10**9 + 10**6, 6)


def _quick(out: Path, **changes: Any) -> TrainConfig:
    """The tests' training settings: ``changes`` over one epoch, the fast estimator, no
    evaluation before the end and no checkpoints."""
    base = TrainConfig(
        out=out,
        estimator="true_cpdag",
        n_epochs=1,
        eval_every=0,
        eval_episodes=2,
        checkpoint_every=0,
        verbose=False,
    )
    return dataclasses.replace(base, **changes)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[TrainConfig, Any]:
    """A CI-sized MaskablePPO run on the fast estimator (about 10 s of CPU)."""
    pytest.importorskip("sb3_contrib")
    out = tmp_path_factory.mktemp("rl")
    config = _quick(
        out,
        total_timesteps=2048,
        n_steps=512,
        batch_size=128,
        n_epochs=2,
        eval_every=1024,
        eval_episodes=5,
        checkpoint_every=1024,
    )
    return config, train(config)


def _plays(result: Any) -> RLAgent:
    """The saved policy, after it has played one v0 L1 episode through the evaluation env."""
    agent = RLAgent.load(result.model_path)
    assert run_episode(gym.make("ACDB-L1-v0"), agent, manifest_index=0).score
    return agent


# --------------------------------------------------------------------------- the trainer
@pytest.mark.slow
def test_training_writes_logs_checkpoints_and_a_loadable_model(trained: Any) -> None:
    config, result = trained
    out = config.out
    assert result.model_path == out / "model.zip"
    assert [row["timesteps"] for row in result.eval_rows] == [1024, 2048]
    assert (out / "eval.csv").read_text().count("\n") == 3  # header + two evaluations
    assert "train/value_loss" in (out / "progress.csv").read_text().splitlines()[0]
    assert (out / "learning_curve.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == [
        "step_1024.zip",
        "step_2048.zip",
    ]
    timing = json.loads((out / "timing.json").read_text())
    assert timing["timesteps"] == 2048 and timing["steps_per_second"] > 0
    assert 0 < timing["env_share"] < 1 and 0 < timing["env_cpu_share"] < 1
    assert json.loads((out / "config.json").read_text())["estimator"] == "true_cpdag"

    metadata = read_metadata(result.model_path)
    assert metadata == PolicyMetadata(
        "maskable_ppo", "v0", "L1", 6, "true_cpdag", timesteps=2048, version=acdb_gym.__version__
    )
    model, loaded = load_policy(result.model_path)
    assert loaded == metadata and model.action_space.n == L1.spec.d + 1


@pytest.mark.slow
def test_ppo_without_masks_trains_too(tmp_path: Path) -> None:
    pytest.importorskip("stable_baselines3")
    result = train(_quick(tmp_path, algo="ppo", total_timesteps=64, n_steps=64, batch_size=32))
    assert _plays(result).metadata.algo == "ppo"


@pytest.mark.slow
def test_training_on_the_native_vector_env_saves_a_policy_and_times_its_env(
    tmp_path: Path,
) -> None:
    pytest.importorskip("sb3_contrib")
    result = train(_quick(tmp_path, envs=4, total_timesteps=256, n_steps=32, batch_size=64))
    timing = json.loads((tmp_path / "timing.json").read_text())
    assert timing["timesteps"] == 256  # 2 rollouts of 32 steps x 4 worlds
    assert timing["env_seconds"] > 0 and 0 < timing["env_cpu_share"] < 1
    assert json.loads((tmp_path / "config.json").read_text())["envs"] == 4
    agent = _plays(result)
    assert agent.metadata.algo == "maskable_ppo" and agent.metadata.timesteps == 256


def test_training_instances_never_use_manifest_or_held_out_seeds() -> None:
    env = TrainingInstances(InterventionDesignEnv("L1", estimator="true_cpdag"), seed=0)
    seeds = []
    for _ in range(20):
        env.reset()
        seeds.append(env.unwrapped.hidden_instance().seed)  # type: ignore[attr-defined]
    assert min(seeds) >= TRAIN_SEED_LOW and len(set(seeds)) == 20
    env.reset(seed=5)
    first = hidden_instance_of(env).seed
    env.reset(seed=5)
    assert env.unwrapped.hidden_instance().seed == first  # type: ignore[attr-defined]


def test_held_out_instances_refuse_manifest_seeds() -> None:
    assert [i.seed for i in held_out_instances("L0", 10**9, 2)] == [10**9, 10**9 + 1]
    with pytest.raises(ValueError, match="200000"):
        held_out_instances("L1", L1.manifest_seed(0), 1)


def test_help_comes_from_the_field_docstrings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "rollout steps per worker (or per world, with envs) between updates" in text
    assert "{maskable_ppo,ppo}" in text and "--no-verbose" in text
    config = parse_config(["--net-arch", "32", "16", "--no-verbose", "--estimator", "true_cpdag"])
    assert config.net_arch == (32, 16) and not config.verbose and config.estimator == "true_cpdag"
    with pytest.raises(ValueError, match="workers must be at least 1"):
        parse_config(["--workers", "0"])
    with pytest.raises(ValueError, match="give envs or workers, not both"):
        parse_config(["--envs", "8", "--workers", "2"])
    with pytest.raises(ValueError, match="envs must be non-negative"):
        parse_config(["--envs", "-1"])
    with pytest.raises(ValueError, match="level"):
        parse_config(["--level", "L9"])


# --------------------------------------------------------------------------- RLAgent
def _agent(trained: Any) -> RLAgent:
    return RLAgent.load(trained[1].model_path)


def test_rl_agent_meets_the_protocol_and_stays_in_budget_through_acdb_env(trained: Any) -> None:
    agent = _agent(trained)
    assert isinstance(agent, Agent)
    env = gym.make("ACDB-L1-v0")
    for index in range(4):
        result = run_episode(env, agent, manifest_index=index)
        assert not result.truncated and result.invalid_actions == 0
        assert result.interventions <= L1.instance(index).budget
        assert result.trajectory[-1].action.startswith("Submit(")
        assert result.extra["estimator"] == "pc"


def test_rl_agent_reproduces_the_design_env_episode_through_acdb_env(trained: Any) -> None:
    agent = _agent(trained)
    design = InterventionDesignEnv("L1", estimator="pc")
    acdb = gym.make("ACDB-L1-v0")
    for instance in TEST_INSTANCES[:3]:
        on_design = run_episode(design, agent, instance=instance)
        on_acdb = run_episode(acdb, agent, instance=instance)
        assert on_design.score == on_acdb.score
        assert on_design.steps == on_acdb.steps


def test_rl_agent_acts_on_the_design_env_within_the_mask(trained: Any) -> None:
    agent = _agent(trained)
    env = InterventionDesignEnv("L1", estimator="true_cpdag")
    for instance in TEST_INSTANCES:
        observation, info = env.reset(options={"instance": instance})
        agent.reset(observation, info)
        terminated = False
        while not terminated:
            action = agent.act(observation, info)
            assert env.action_masks()[action]
            observation, _, terminated, _, info = env.step(action)
        assert info["interventions_used"] <= instance.budget


def test_rl_agent_submits_when_it_may_not_intervene(trained: Any) -> None:
    agent = _agent(trained)
    observational = run_episode(gym.make("ACDB-L1-v0", panel="observational"), agent, seed=1)
    assert observational.steps == 1 and observational.interventions == 0
    one_step = run_episode(gym.make("ACDB-L1-v0", max_steps=1), agent, seed=1)
    assert one_step.steps == 1 and not one_step.truncated


def test_rl_agent_refuses_levels_of_another_size(trained: Any) -> None:
    agent = _agent(trained)
    with pytest.raises(ValueError, match="d=6 variables and cannot act on d=5"):
        run_episode(gym.make("ACDB-L0-v0"), agent, manifest_index=0)
    with pytest.raises(ValueError, match="size 94"):
        run_episode(InterventionDesignEnv("L0", estimator="true_cpdag"), agent, seed=0)


def test_sampling_mode_is_seeded(trained: Any) -> None:
    path = trained[1].model_path
    env = InterventionDesignEnv("L1", estimator="true_cpdag")
    runs = [
        [
            run_episode(env, RLAgent.load(path, deterministic=False, seed=s), instance=i).steps
            for i in TEST_INSTANCES
        ]
        for s in (7, 7)
    ]
    assert runs[0] == runs[1]


# --------------------------------------------------------------------------- the sweep
def test_sweep_runs_a_saved_policy(trained: Any, tmp_path: Path) -> None:
    path = str(trained[1].model_path)
    spec = get_agent(f"rl:{path}")
    assert spec.panels == ("active",) and spec.tools == "raw"
    assert spec.build(0, {}).name == f"rl:{path}"
    row = run_job(Job("v0", "L1", 0, f"rl:{path}", "active", "raw", 0), {}, tmp_path)
    assert row.status == "ok", row.error
    assert row.interventions_used is not None
    assert row.interventions_used <= L1.instance(0).budget
    with pytest.raises(ValueError, match="no saved policy"):
        get_agent(f"rl:{tmp_path / 'missing.zip'}")


# --------------------------------------------------------------------------- committed model
def test_committed_model_loads_and_plays_a_valid_episode() -> None:
    assert COMMITTED.is_file(), "models/acdb_design_l1_v0/model.zip is missing"
    assert COMMITTED.stat().st_size < 3_000_000
    with zipfile.ZipFile(COMMITTED) as archive:
        assert METADATA_MEMBER in archive.namelist()
    pytest.importorskip("sb3_contrib")
    agent = RLAgent.load(COMMITTED)
    assert (agent.metadata.level, agent.metadata.n_nodes) == ("L1", 6)
    result = run_episode(gym.make("ACDB-L1-v0"), agent, manifest_index=0)
    assert not result.truncated and result.invalid_actions == 0
    assert result.interventions <= L1.instance(0).budget
    assert 0.0 <= result.score.directed_f1 <= 1.0


# --------------------------------------------------------------------------- missing extra
@pytest.mark.parametrize("module", ["sb3_contrib", "stable_baselines3", "torch"])
def test_a_missing_rl_extra_names_the_install(
    module: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(MissingExtraError, match=r"pip install 'acdb_gym\[rl\]'"):
        load_policy(COMMITTED)
    assert main(["--out", "unused", "--total-timesteps", "8"]) == 2
    assert "pip install 'acdb_gym[rl]'" in capsys.readouterr().err


@pytest.mark.slow
def test_importing_the_rl_modules_loads_no_torch() -> None:
    code = (
        "import sys, acdb_gym.agents.rl.agent, acdb_gym.agents.rl.train, acdb_gym.baselines.targeting\n"
        "print([m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
