"""The envs under the checkers and wrappers of RL stacks: stable-baselines3 and TorchRL.

RLlib pins gymnasium 1.2.2 and runs outside this environment: see the compatibility note in
``models/README.md`` and ``experiments/rllib_design_env.py``.
"""

from __future__ import annotations

import functools
import traceback
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env

from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.envs.registration import DESIGN_IDS
from acdb_gym.envs.wrappers import FlatActions, make_flat

FULL_IDS = ("ACDB-L1-v0", "ACDB-Calibrated-L3-v1")
FLAT_IDS = (*FULL_IDS, "ACDB-NonGaussian-L1-v2")

OBSERVATION_LAYOUT_ADVICE = (
    r"It seems that your observation (space )?interventional is an image",
    r"The minimal resolution for an image is 36x36",
    r"Your observation observational has an unconventional shape",
)
"""SB3's advice on the full env's data blocks (``observational (n_obs, d)``, ``interventional
(m, n_int, d)``), which its checker takes for images or asks to flatten. They are samples, not
pictures, and the env's contract keeps their shape; ``make_flat`` flattens them for SB3's
policies (checked without any filter below)."""


@pytest.mark.parametrize("env_id", DESIGN_IDS)
def test_sb3_check_env_passes_on_every_design_id(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3's checker warns about what it dislikes
        check_env(env, warn=True, skip_render_check=True)


@pytest.mark.parametrize("env_id", FULL_IDS)
def test_sb3_check_env_accepts_the_full_env_observations(env_id: str) -> None:
    # SB3 supports no OneOf action space, so its last check (a NaN scan of a sampled action,
    # which is a (kind, arguments) pair) cannot run on the env itself; every check before it,
    # the observation checks that crashed on 0-d counters among them, must pass. SB3 drives
    # the full env through acdb_gym.envs.wrappers.FlatActions (tests below).
    env = gym.make(env_id).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="isnan") as failure:
            check_env(env, warn=True, skip_render_check=True)
    frames = [frame.name for frame in traceback.extract_tb(failure.value.__traceback__)]
    assert "_check_nan" in frames and "_check_returned_values" not in frames
    observation, _ = env.reset(seed=0)
    assert observation["budget_remaining"].shape == observation["steps_remaining"].shape == (1,)


@pytest.mark.parametrize("env_id", FLAT_IDS)
def test_sb3_check_env_passes_on_the_flat_action_full_env(env_id: str) -> None:
    env = FlatActions(gym.make(env_id))  # built first: gym.make notices old versions
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for advice in OBSERVATION_LAYOUT_ADVICE:
            warnings.filterwarnings("ignore", message=advice, category=UserWarning)
        check_env(env, warn=True, skip_render_check=True)  # its NaN scan of actions included
    assert isinstance(env.action_space, gym.spaces.Box)
    assert env.action_space.dtype == np.float32


@pytest.mark.parametrize("env_id", FLAT_IDS)
def test_sb3_check_env_passes_on_make_flat_without_a_warning(env_id: str) -> None:
    env = make_flat(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, warn=True, skip_render_check=True)


def test_sb3_multi_input_policy_learns_on_the_dict_observation() -> None:
    # SB3's CombinedExtractor keeps one module per observation key in a torch ModuleDict; the
    # key "intervention_values" (formerly "values", a ModuleDict method) lets it build.
    env = make_flat("ACDB-L0-v0", flatten_observation=False)
    assert isinstance(env.observation_space, gym.spaces.Dict)
    model = PPO(
        "MultiInputPolicy", env, n_steps=32, batch_size=16, n_epochs=1, seed=0, device="cpu"
    )
    before = [parameter.detach().clone() for parameter in model.policy.parameters()]
    model.learn(total_timesteps=32)
    assert model.num_timesteps == 32
    after = list(model.policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert "intervention_values" in model.policy.features_extractor.extractors


def test_legacy_values_key_is_the_former_name_and_breaks_multi_input_policy() -> None:
    with pytest.warns(DeprecationWarning, match="legacy_values_key"):
        env = make_flat("ACDB-L0-v0", flatten_observation=False, legacy_values_key=True)
    observation, _ = env.reset(seed=0)
    assert "values" in observation and "intervention_values" not in observation
    with pytest.raises(KeyError, match="attribute 'values' already exists"):
        PPO("MultiInputPolicy", env, device="cpu")


def test_sb3_ppo_learns_on_the_flat_full_env() -> None:
    env = make_flat("ACDB-L1-v0")
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    before = [parameter.detach().clone() for parameter in model.policy.parameters()]
    model.learn(total_timesteps=64)
    assert model.num_timesteps == 64
    after = list(model.policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    observation, _ = env.reset(seed=1)
    action, _ = model.predict(observation, deterministic=True)
    assert env.action_space.contains(action)
    _, _, _, _, info = env.step(action)
    assert info["steps"] == 1


def test_info_holds_only_numbers_before_the_end() -> None:
    for env_id in (*DESIGN_IDS[:1], *FULL_IDS):
        env = gym.make(env_id)
        _, info = env.reset(seed=0)
        strings = {
            k: v for k, v in info.items() if isinstance(v, str) and k not in ("panel", "tools")
        }
        assert not strings, f"{env_id} info has strings {strings}"
        assert f"-{env.unwrapped.level.name}-" in env_id  # the name stays on the env


TORCHRL_IDS = [
    ("acdb_gym:ACDB-Flat-L1-v0", {}),
    ("acdb_gym:ACDB-Flat-Calibrated-L1-v1", {"action": "discrete", "observation": "compact"}),
    ("acdb_gym:ACDB-Design-L1-v0", {}),
    ("acdb_gym:ACDB-Design-L1-v0", {"observation": "graph"}),
]
"""The three kinds of id TorchRL must batch: full (flat), design, graph observation."""


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "kwargs"), TORCHRL_IDS)
def test_torchrl_gym_env_with_two_envs(env_id: str, kwargs: dict[str, str]) -> None:
    """``GymEnv(id, num_envs=2)``: TorchRL infers the info specs from a trial step, so every
    info key must be there from reset to the end (a key seen only at the end, a string or an
    info key that is an observation key too broke it before)."""
    torchrl_envs = pytest.importorskip("torchrl.envs")
    for seed in range(2):  # the trial step's random actions: one seed may end an episode
        torch.manual_seed(seed)
        env = torchrl_envs.GymEnv(env_id, num_envs=2, **kwargs)
        try:
            rollout = env.rollout(24, break_when_any_done=False)
            assert tuple(rollout.batch_size) == (2, 24)
            done = rollout["next", "done"].numpy()
            assert done.any(), "episodes end within 24 steps"
            # Every info key is batched, with the shape it has from reset to the end.
            assert rollout["next", "score"].shape == (2, 24, len(SCORE_FIELDS))
            assert rollout["next", "scored"].dtype == torch.bool
            assert rollout["next", "instance_seed"].shape[:2] == (2, 24)
        finally:
            env.close()


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "kwargs"), TORCHRL_IDS[::2])
def test_torchrl_parallel_env(env_id: str, kwargs: dict[str, str]) -> None:
    torchrl_envs = pytest.importorskip("torchrl.envs")
    torch.manual_seed(0)
    env = torchrl_envs.ParallelEnv(2, functools.partial(torchrl_envs.GymEnv, env_id, **kwargs))
    try:
        rollout = env.rollout(20, break_when_any_done=False)
        assert tuple(rollout.batch_size) == (2, 20) and rollout["next", "done"].numpy().any()
    finally:
        env.close()


def test_torchrl_wraps_the_native_vector_env() -> None:
    """TorchRL takes the design vector env itself with same-step autoreset."""
    libs = pytest.importorskip("torchrl.envs.libs.gym")
    from acdb_gym.envs.design.vector import DesignVectorEnv

    torch.manual_seed(0)
    env = libs.GymWrapper(DesignVectorEnv(2, "L1", autoreset_mode="same_step"))
    rollout = env.rollout(16, break_when_any_done=False)
    assert tuple(rollout.batch_size) == (2, 16) and rollout["next", "done"].numpy().any()


def test_flat_envs_pickle_with_the_standard_library() -> None:
    import pickle

    for kwargs in ({}, {"action": "discrete", "observation": "compact"}):
        env = gym.make("ACDB-Flat-L1-v0", **kwargs)
        env.action_space.seed(0)
        env.reset(seed=0)
        env.step(env.action_space.sample())
        copy = pickle.loads(pickle.dumps(env))
        action = env.action_space.sample()
        ours, theirs = env.step(action), copy.step(action)
        assert np.array_equal(ours[0], theirs[0]) and ours[1:4] == theirs[1:4]


def test_registered_flat_id_trains_in_sb3_by_id() -> None:
    from stable_baselines3.common.env_util import make_vec_env

    check_env(gym.make("ACDB-Flat-L1-v0"), warn=True)
    model = PPO(
        "MlpPolicy",
        make_vec_env("ACDB-Flat-L1-v0", n_envs=2, seed=0),
        n_steps=16,
        batch_size=16,
        n_epochs=1,
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=32)
    assert model.num_timesteps == 32


def test_torchrl_gym_env_drives_a_registered_flat_id() -> None:
    torchrl_envs = pytest.importorskip("torchrl.envs")
    torch.manual_seed(0)
    env = torchrl_envs.GymEnv("acdb_gym:ACDB-Flat-L1-v0")
    try:
        rollout = env.rollout(20, break_when_any_done=False)
        observation = rollout["observation"].numpy()
        assert observation.shape == (20, 3017) and np.isfinite(observation).all()
        assert rollout["next", "done"].numpy().any(), "the 16-step limit ends an episode"
    finally:
        env.close()


def test_torchrl_action_mask_reads_the_design_envs_graph_observation() -> None:
    torchrl_envs = pytest.importorskip("torchrl.envs")
    from torchrl.envs.transforms import ActionMask

    torch.manual_seed(0)
    env = torchrl_envs.TransformedEnv(
        torchrl_envs.GymEnv(
            "acdb_gym:ACDB-Design-L1-v0", observation="graph", categorical_action_encoding=True
        ),
        ActionMask(),
    )
    try:
        rollout = env.rollout(24, break_when_any_done=False)
        chosen = rollout["action"].numpy()
        mask = rollout["action_mask"].numpy().astype(bool)
        assert mask.shape == (24, 65) and not mask.all()  # d = 6 of 64 node slots, and stop
        assert mask[np.arange(24), chosen].all()  # every random action was an allowed one
    finally:
        env.close()
