"""The size-free graph policy: equivariance, safe files, RLAgent on every level and d = 40."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from dataclasses import asdict
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from acdb_gym.agents.base import Agent, run_episode  # noqa: E402
from acdb_gym.agents.rl.agent import PolicyMetadata, RLAgent, UntrustedPolicyError, load_policy  # noqa: E402
from acdb_gym.agents.rl.graph_policy import (  # noqa: E402
    WEIGHTS_MEMBER,
    NetworkConfig,
    NodeMessagePolicy,
    collate,
    save_network,
)
from acdb_gym.agents.rl.train import held_out_instances  # noqa: E402
from acdb_gym.agents.rl.training_worlds import UNSEEN_SIZE_LEVEL  # noqa: E402
from acdb_gym.core.ladders.shipped import LADDERS  # noqa: E402
from acdb_gym.core.worlds.instance import generate_instance  # noqa: E402
from acdb_gym.envs.acdb_env import ACDBEnv  # noqa: E402
from acdb_gym.envs.design.env import InterventionDesignEnv  # noqa: E402
from acdb_gym.envs.design.graph_obs import NODE_FEATURES, PAIR_FEATURES  # noqa: E402
from acdb_gym.sweep.run import Job, run_job  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "models" / "acdb_design_graph" / "model.zip"
D40 = UNSEEN_SIZE_LEVEL


def random_observation(d: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "nodes": rng.uniform(0, 1, (d, len(NODE_FEATURES))).astype(np.float32),
        "pairs": rng.uniform(-1, 1, (d, d, len(PAIR_FEATURES))).astype(np.float32),
        "action_mask": np.ones(d + 1, dtype=bool),
        "budget": rng.uniform(0, 1, 3).astype(np.float32),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(0)
    network = NodeMessagePolicy(NetworkConfig(hidden=16, layers=2))
    metadata = asdict(PolicyMetadata("ppo", "v0+v1", "mix", 0, "pc", observation="graph"))
    return save_network(network, tmp_path_factory.mktemp("graph") / "model", metadata)


def test_renumbering_nodes_renumbers_the_logits_and_keeps_stop_and_value() -> None:
    torch.manual_seed(1)
    network = NodeMessagePolicy(NetworkConfig(hidden=16, layers=2))
    rng = np.random.default_rng(0)
    observation = random_observation(7, rng)
    order = rng.permutation(7)
    permuted = {
        "nodes": observation["nodes"][order],
        "pairs": observation["pairs"][order][:, order],
        "action_mask": observation["action_mask"],
        "budget": observation["budget"],
    }
    with torch.no_grad():
        logits, value = network(collate([observation, permuted]))
    assert torch.allclose(logits[1, :7], logits[0, :7][order], atol=1e-5)
    assert torch.allclose(logits[1, 7], logits[0, 7], atol=1e-5)
    assert torch.allclose(value[1], value[0], atol=1e-5)
    assert not torch.allclose(logits[0, :7], logits[0, :7][np.roll(np.arange(7), 1)])


def test_padding_in_a_batch_changes_no_logit() -> None:
    network = NodeMessagePolicy(NetworkConfig(hidden=16, layers=2))
    rng = np.random.default_rng(1)
    small, large = random_observation(4, rng), random_observation(9, rng)
    with torch.no_grad():
        alone, value_alone = network(collate([small]))
        batched, value_batched = network(collate([small, large]))
    assert torch.allclose(batched[0, :4], alone[0, :4], atol=1e-5)
    assert torch.allclose(batched[0, 9], alone[0, 4], atol=1e-5)  # "stop" moves to the end
    assert (batched[0, 4:9] < -1e7).all()  # padding is masked out
    assert torch.allclose(value_batched[0], value_alone[0], atol=1e-5)


def test_a_saved_graph_policy_loads_without_pickle(saved: Path) -> None:
    with zipfile.ZipFile(saved) as archive:
        assert sorted(archive.namelist()) == ["acdb_gym.json", "network.json", "weights.pt"]
    network, metadata = load_policy(saved)
    assert isinstance(network, NodeMessagePolicy) and metadata.size_free
    assert network.config == NetworkConfig(hidden=16, layers=2)


class _Marker:
    """Unpickling this creates a file: a stand-in for any code a crafted file could run."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.path, "w"))


def test_weights_holding_more_than_tensors_are_refused(saved: Path, tmp_path: Path) -> None:
    marker = tmp_path / "code_ran"
    buffer = io.BytesIO()
    torch.save({"embed.0.weight": _Marker(str(marker))}, buffer)
    crafted = tmp_path / "crafted.zip"
    with zipfile.ZipFile(saved) as old, zipfile.ZipFile(crafted, "w") as new:
        for name in old.namelist():
            new.writestr(name, buffer.getvalue() if name == WEIGHTS_MEMBER else old.read(name))
    for trust in (False, True):
        with pytest.raises(UntrustedPolicyError, match="more than tensors"):
            load_policy(crafted, trust=trust)
    assert not marker.exists()


@pytest.mark.parametrize("ladder", ["v0", "v1"])
def test_one_policy_acts_on_every_level_through_acdb_env(saved: Path, ladder: str) -> None:
    agent = RLAgent.load(saved)
    assert isinstance(agent, Agent)
    for level in LADDERS[ladder].values():
        result = run_episode(gym.make(level.env_id), agent, manifest_index=0)
        assert not result.truncated and result.invalid_actions == 0
        assert result.interventions <= level.instance(0).budget
        assert result.trajectory[-1].action.startswith("Submit(")


def test_the_acdb_env_episode_is_the_design_env_episode(saved: Path) -> None:
    agent = RLAgent.load(saved)
    design = InterventionDesignEnv("L1", ladder="v1", estimator="pc", observation="graph")
    acdb = gym.make("ACDB-Calibrated-L1-v1")
    for instance in held_out_instances("L1", 10**9 + 10**6, 3, ladder="v1"):
        on_design = run_episode(design, agent, instance=instance)
        on_acdb = run_episode(acdb, agent, instance=instance)
        assert on_design.score == on_acdb.score
        assert on_design.interventions == on_acdb.interventions


def test_the_policy_acts_on_an_unseen_size(saved: Path) -> None:
    agent = RLAgent.load(saved)
    instance = generate_instance(D40.spec, 10**9 + 10**6 + 1)
    result = run_episode(ACDBEnv(D40), agent, instance=instance)
    assert not result.truncated and result.interventions <= instance.budget
    design = InterventionDesignEnv(D40, estimator="true_cpdag", observation="graph")
    observation, info = design.reset(options={"instance": instance})
    agent.reset(observation, info)
    assert design.action_masks()[agent.act(observation, info)]


def test_a_graph_policy_refuses_the_flat_observation(saved: Path) -> None:
    agent = RLAgent.load(saved)
    with pytest.raises(ValueError, match='observation="graph"'):
        run_episode(InterventionDesignEnv("L1", estimator="true_cpdag"), agent, seed=0)


def test_the_sweep_runs_a_graph_policy_on_v1(saved: Path, tmp_path: Path) -> None:
    row = run_job(Job("v1", "L3", 0, f"rl:{saved}", "active", "raw", 0), {}, tmp_path)
    assert row.status == "ok", row.error
    assert row.interventions_used is not None
    assert row.interventions_used <= LADDERS["v1"]["L3"].instance(0).budget


@pytest.mark.slow
def test_the_trainer_runs_and_writes_a_loadable_policy(tmp_path: Path) -> None:
    """On one ladder and estimator (the paper's levels differ only in the list trained on,
    :func:`~acdb_gym.agents.rl.selection.protocol_levels`), with a checkpoint per validation."""
    script = ROOT / "experiments" / "train_design_policy.py"
    command = [sys.executable, str(script), "--out", str(tmp_path), "--max-updates", "1"]
    command += ["--ladder", "v1-n3", "--estimators", "true_cpdag", "--checkpoints"]
    command += ["--rollout-steps", "2", "--eval-every", "1", "--eval-episodes", "1"]
    command += ["--hidden", "8", "--layers", "1"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "learning_curve.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "eval.csv").read_text().count("\n") == 2
    _, metadata = load_policy(tmp_path / "model.zip")
    assert metadata.timesteps == 12 and metadata.size_free
    assert (metadata.ladder, metadata.estimator) == ("v1-n3", "true_cpdag")
    assert [p.name for p in (tmp_path / "checkpoints").iterdir()] == ["update_1.zip"]
    greedy = json.loads((tmp_path / "greedy_validation.json").read_text())
    assert list(greedy) == ["val_true_cpdag"]


def test_the_committed_graph_policy_is_small_and_plays_d40() -> None:
    assert COMMITTED.is_file(), "models/acdb_design_graph/model.zip is missing"
    assert COMMITTED.stat().st_size < 10_000_000
    agent = RLAgent.load(COMMITTED)
    instance = generate_instance(D40.spec, 10**9 + 10**6 + 1)
    result = run_episode(ACDBEnv(D40), agent, instance=instance)
    assert not result.truncated and 0.0 <= result.score.directed_f1 <= 1.0


@pytest.mark.parametrize("sizes", [{"hidden": 10**9}, {"layers": 10**6}, {"hidden": True}])
def test_network_sizes_from_a_file_are_bounded(sizes: dict[str, int]) -> None:
    from acdb_gym.agents.rl.graph_policy import NetworkConfig

    with pytest.raises(ValueError, match=r"must be an integer in \[1, "):
        NetworkConfig(**sizes)


@pytest.mark.parametrize(
    ("member", "content", "message"),
    [
        ("network.json", b'{"hidden": 1024, "layers": 4}', "parameters, more than"),
        ("network.json", b"[" * 5000 + b"]" * 5000, "nested 5000 levels deep"),
        ("network.json", b'{"hidden": 48, "layers": 3, "x": 1}', "does not describe a network"),
        ("weights.pt", None, "do not fit the network"),
    ],
    ids=["too many parameters", "nested", "unknown size", "wrong shapes"],
)
def test_a_crafted_graph_policy_is_a_value_error_before_anything_is_built(
    tmp_path: Path, member: str, content: bytes | None, message: str
) -> None:
    import re

    if content is None:
        buffer = io.BytesIO()
        torch.save({"embed.0.weight": torch.zeros(2, 2)}, buffer)
        content = buffer.getvalue()
    crafted = tmp_path / "model.zip"
    with zipfile.ZipFile(COMMITTED) as old, zipfile.ZipFile(crafted, "w") as new:
        for name in old.namelist():
            new.writestr(name, content if name == member else old.read(name))
    with pytest.raises(ValueError, match=re.escape(message)):
        load_policy(crafted)
