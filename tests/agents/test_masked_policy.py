"""The fast masked policy computes what sb3-contrib's computes, bit for bit."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from acdb_gym.agents.rl.masked_policy import (
    FastMaskableActorCriticPolicy,
    FastMaskableCategoricalDistribution,
)
from acdb_gym.agents.rl.vec_env import SB3DesignVecEnv
from acdb_gym.envs.design.bank import build_bank


def _logits_and_masks(
    seed: int, rows: int = 64, actions: int = 7
) -> tuple[torch.Tensor, np.ndarray]:
    rng = np.random.default_rng(seed)
    logits = torch.as_tensor(rng.normal(0, 3, size=(rows, actions)), dtype=torch.float32)
    masks = rng.random((rows, actions)) < 0.6
    masks[:, -1] = True  # "stop" is always valid
    masks[0] = False
    masks[0, 2] = True  # a row with one valid action
    return logits, masks


def _probs(dist: Any) -> torch.Tensor:
    if isinstance(dist, FastMaskableCategoricalDistribution):
        return dist.probs
    return dist.distribution.probs


@pytest.mark.parametrize("masked", [True, False])
def test_probabilities_log_probs_entropies_and_gradients_equal_sb3_contribs(masked: bool) -> None:
    logits, masks = _logits_and_masks(1)
    mask = masks if masked else None
    actions = torch.as_tensor(np.argmax(np.where(masks, 1.0, 0.0), axis=1))
    results = []
    for dist in (MaskableCategoricalDistribution(7), FastMaskableCategoricalDistribution(7)):
        raw = logits.clone().requires_grad_(True)
        dist.proba_distribution(raw)
        dist.apply_masking(mask)
        probs = _probs(dist)
        log_prob, entropy = dist.log_prob(actions), dist.entropy()
        assert entropy is not None
        (log_prob.sum() + 0.01 * entropy.sum()).backward()
        assert raw.grad is not None
        results.append((probs.detach(), log_prob.detach(), entropy.detach(), raw.grad, dist.mode()))
    for theirs, ours in zip(*results, strict=True):
        assert torch.equal(theirs, ours)
    if masked:  # masked-out actions have probability 0 to float precision
        assert float(results[1][0][torch.as_tensor(~masks)].max()) < 1e-30


def test_samples_follow_the_same_torch_generator_draws() -> None:
    logits, masks = _logits_and_masks(2, rows=256)
    draws = []
    for dist in (MaskableCategoricalDistribution(7), FastMaskableCategoricalDistribution(7)):
        dist.proba_distribution(logits)
        dist.apply_masking(masks)
        torch.manual_seed(5)
        draws.append(dist.sample())
    assert draws[0].shape == (256,) and torch.equal(draws[0], draws[1])
    assert masks[np.arange(256), draws[1].numpy()].all()  # never a masked-out action


def test_a_seeded_training_run_ends_with_the_same_weights(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bank = build_bank(tmp_path / "bank", ladder="v0", level="L1", seeds=range(10**6, 10**6 + 8))
    weights = []
    for policy in (MaskableActorCriticPolicy, FastMaskableActorCriticPolicy):
        venv = SB3DesignVecEnv.of(4, "L1", ladder="v0", bank=bank)
        model = MaskablePPO(policy, venv, n_steps=32, batch_size=32, n_epochs=2, seed=3)
        model.learn(total_timesteps=256)
        weights.append(model.policy.state_dict())
    assert isinstance(weights[0], dict) and weights[0].keys() == weights[1].keys()
    for key in weights[0]:
        assert torch.equal(weights[0][key], weights[1][key]), key


def test_the_fast_policy_keeps_sb3_contribs_distribution_off_discrete_spaces() -> None:
    space = gym.spaces.Box(-1.0, 1.0, shape=(3,))
    policy = FastMaskableActorCriticPolicy(space, gym.spaces.MultiDiscrete([2, 3]), lambda _: 1e-3)
    assert not isinstance(policy.action_dist, FastMaskableCategoricalDistribution)
    policy = FastMaskableActorCriticPolicy(space, gym.spaces.Discrete(4), lambda _: 1e-3)
    assert isinstance(policy.action_dist, FastMaskableCategoricalDistribution)


def test_the_dict_observation_policy_matches_sb3_contribs_multi_input_policy() -> None:
    from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy

    from acdb_gym.agents.rl.masked_policy import FastMaskableMultiInputActorCriticPolicy

    space = gym.spaces.Dict(
        {"a": gym.spaces.Box(-1.0, 1.0, shape=(3,)), "b": gym.spaces.Box(0.0, 1.0, shape=(2, 2))}
    )
    observation = {
        "a": torch.as_tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)),
        "b": torch.full((4, 2, 2), 0.5),
    }
    masks = np.array([[1, 0, 1], [1, 1, 1], [0, 0, 1], [1, 1, 0]], dtype=bool)
    probabilities = []
    for policy_class in (
        MaskableMultiInputActorCriticPolicy,
        FastMaskableMultiInputActorCriticPolicy,
    ):
        torch.manual_seed(0)
        policy = policy_class(space, gym.spaces.Discrete(3), lambda _: 1e-3)
        dist = policy.get_distribution(observation, action_masks=masks)
        probs = _probs(dist)
        probabilities.append(probs.detach())
    assert isinstance(policy.action_dist, FastMaskableCategoricalDistribution)
    assert torch.equal(probabilities[0], probabilities[1])


def test_the_distribution_attribute_is_sb3_contribs_categorical_of_the_same_numbers() -> None:
    logits, masks = _logits_and_masks(3)
    theirs, ours = MaskableCategoricalDistribution(7), FastMaskableCategoricalDistribution(7)
    for dist in (theirs, ours):
        dist.proba_distribution(logits)
        dist.apply_masking(masks)
    assert torch.equal(ours.distribution.logits, theirs.distribution.logits)
    assert torch.equal(ours.distribution.logits, ours.logits)
    assert torch.equal(ours.distribution.probs, ours.probs)
