"""stable-baselines3's ``VecEnv`` over the natively vectorized design env.

SB3 and sb3-contrib do not take a :class:`gymnasium.vector.VectorEnv`; they take their own
``VecEnv`` (same-step autoreset, ``infos`` as one dict per world, ``terminal_observation`` in
the ended world's info). :class:`SB3DesignVecEnv` adapts
:class:`~acdb_gym.envs.design.vector.DesignVectorEnv` to it, and answers
``env_method("action_masks")`` as MaskablePPO asks::

    from sb3_contrib import MaskablePPO
    venv = SB3DesignVecEnv(DesignVectorEnv(16, "L1", ladder="v0", bank=load_bank(path, sha256=digest)))
    MaskablePPO("MlpPolicy", venv).learn(100_000)

Importing this module needs stable-baselines3 (the ``rl`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from acdb_gym.agents.rl.training_worlds import EnvClock
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.envs.design.vector import DesignVectorEnv

__all__ = ["SB3DesignVecEnv", "TimedVecEnv"]


class SB3DesignVecEnv(VecEnv):
    """A stable-baselines3 ``VecEnv`` stepping a :class:`DesignVectorEnv` (which must use
    ``autoreset_mode="same_step"``; :meth:`of` makes one that does).

    Each world's info holds ``budget``, ``interventions_used``, and at an episode's end
    ``score`` (the final score's fields), ``terminal_observation`` and
    ``TimeLimit.truncated`` (always False: design episodes end by "stop" only).
    """

    def __init__(self, env: DesignVectorEnv) -> None:
        if env.metadata["autoreset_mode"] != AutoresetMode.SAME_STEP:
            raise ValueError(
                "SB3DesignVecEnv needs DesignVectorEnv(..., autoreset_mode='same_step'); "
                f"got {env.metadata['autoreset_mode']}"
            )
        self.env = env  # before VecEnv's constructor, which asks for the render mode
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    @classmethod
    def of(cls, num_envs: int, level: str = "L1", **kwargs: Any) -> SB3DesignVecEnv:
        """``SB3DesignVecEnv(DesignVectorEnv(num_envs, level, autoreset_mode="same_step",
        **kwargs))``."""
        return cls(DesignVectorEnv(num_envs, level, autoreset_mode="same_step", **kwargs))

    def reset(self) -> Any:
        seeds = self._seeds
        if all(seed is None for seed in seeds):
            observation, _ = self.env.reset()
        else:
            observation, _ = self.env.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        return observation

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_async() must come before step_wait()")
        observation, reward, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [
            {
                "budget": int(info["total_budget"][i]),
                "interventions_used": int(info["interventions_used"][i]),
            }
            for i in range(self.num_envs)
        ]
        if dones.any():
            final = info["final_info"]
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = info["final_obs"][i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                infos[i]["score"] = dict(zip(SCORE_FIELDS, final["score"][i].tolist(), strict=True))
        return observation, reward.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """``(N, A)`` booleans (see :meth:`DesignVectorEnv.action_masks`)."""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.env, attr_name)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(
            f"SB3DesignVecEnv worlds share their attributes; cannot set {attr_name}"
        )

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        chosen: Sequence[int] = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.env.action_masks()
            return [masks[i] for i in chosen]
        raise AttributeError(f"SB3DesignVecEnv has no per-world method {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


class TimedVecEnv(EnvClock, VecEnvWrapper):
    """Accumulates the wall and CPU time spent in the wrapped ``VecEnv``'s ``reset`` and
    ``step_wait`` (:class:`~acdb_gym.agents.rl.training_worlds.EnvClock`, as
    :class:`~acdb_gym.agents.rl.training_worlds.EnvTimer` does for one env)."""

    def reset(self) -> Any:
        return self.timed(self.venv.reset)

    def step_wait(self) -> Any:
        return self.timed(self.venv.step_wait)
