"""The shipped policies load the way SB3 users load theirs: ``load_model(path).predict``."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from acdb_gym.agents.rl import RLAgent, load_model

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_the_flat_policy_predicts_as_sb3s_own_loader_does() -> None:
    from sb3_contrib import MaskablePPO

    path = MODELS / "acdb_design_l1_v0" / "model.zip"
    ours = load_model(path)
    theirs = MaskablePPO.load(path, device="cpu")  # a file of this repository: trusted
    env = gym.make("ACDB-Design-L1-v0", estimator="true_cpdag")
    observations, masks = [], []
    for seed in range(4):
        observation, _ = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()  # type: ignore[attr-defined]
            action, state = ours.predict(observation, action_masks=mask, deterministic=True)
            expected, _ = theirs.predict(observation, action_masks=mask, deterministic=True)
            assert state is None and action.shape == () and int(action) == int(expected)
            assert mask[int(action)]
            observations.append(observation)
            masks.append(mask)
            observation, _, terminated, truncated, _ = env.step(int(action))
            done = terminated or truncated
    batch, _ = ours.predict(
        np.stack(observations), action_masks=np.stack(masks), deterministic=True
    )
    single = [
        int(ours.predict(o, action_masks=m, deterministic=True)[0])
        for o, m in zip(observations, masks, strict=True)
    ]
    assert batch.tolist() == single


@pytest.mark.parametrize(
    ("model", "env_id"),
    [
        ("acdb_design_graph", "ACDB-Design-Calibrated-L2-v1"),
        ("acdb_design_n3", "ACDB-Design-FewSample-Nonlinear-L2-v0"),
    ],
)
def test_a_graph_policy_predicts_as_its_agent_chooses(model: str, env_id: str) -> None:
    path = MODELS / model / "model.zip"
    ours = load_model(path)
    agent = RLAgent.load(path)
    env = gym.make(env_id, observation="graph", estimator="true_cpdag")
    observation, _ = env.reset(seed=0)
    steps = 0
    while True:
        mask = env.unwrapped.action_masks()  # type: ignore[attr-defined]
        action, _ = ours.predict(observation, action_masks=mask, deterministic=True)
        assert int(action) == agent._choose_graph(observation) and mask[int(action)]
        observation, reward, terminated, truncated, info = env.step(int(action))
        steps += 1
        if terminated or truncated:
            break
    assert info["scored"] and 0.0 <= reward <= 1.0 and steps >= 2
    drawn = {int(ours.predict(observation, deterministic=False)[0]) for _ in range(3)}
    assert drawn <= set(np.flatnonzero(observation["action_mask"]).tolist())


def test_a_vector_env_batch_gets_one_action_per_world() -> None:
    ours = load_model(MODELS / "acdb_design_graph" / "model.zip")
    envs = gym.make_vec(
        "ACDB-Design-L1-v0", 3, vectorization_mode="vector_entry_point", observation="graph"
    )
    observation, _ = envs.reset(seed=0)
    masks = np.stack(envs.call("action_masks"))
    actions, _ = ours.predict(observation, action_masks=masks, deterministic=True)
    assert actions.shape == (3,) and masks[np.arange(3), actions].all()
    envs.step(actions)


def test_loading_a_missing_file_names_it() -> None:
    with pytest.raises(FileNotFoundError, match="no saved policy at"):
        load_model(MODELS / "missing.zip")
