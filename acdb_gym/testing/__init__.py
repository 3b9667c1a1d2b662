"""Conformance checks for ACDB environments, shipped with the package (as PettingZoo does).

Run :func:`check_acdb_env` on your own variant of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` (a
subclass, a wrapper, a custom level) to check that it still keeps the contract of DESIGN §8:
Gymnasium's API, the typed action and observation spaces, invalid actions that never raise,
episodes that always end with a score, same-seed determinism, and that nothing about the hidden
graph reaches the agent before the end. :func:`find_hidden_leak` is the leak detector it uses,
for checking your own wrappers' observations, infos and renders.

>>> import gymnasium as gym
>>> import acdb_gym
>>> check_acdb_env(gym.make("ACDB-L0-v0", render_mode="ansi"), n_random_steps=10)
"""

from __future__ import annotations

from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.envs.acdb_env import OBSERVATION_KEYS
from acdb_gym.testing.conformance import check_acdb_env
from acdb_gym.testing.leaks import find_hidden_leak

__all__ = ["OBSERVATION_KEYS", "SCORE_FIELDS", "check_acdb_env", "find_hidden_leak"]
