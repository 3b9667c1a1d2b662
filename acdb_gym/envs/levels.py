"""The former path of :mod:`acdb_gym.envs.episode_rules` (what both environments share about an
episode), kept so code importing it keeps working; every name is that module's."""

from __future__ import annotations

from acdb_gym.envs.episode_rules import *  # noqa: F403
from acdb_gym.envs.episode_rules import __all__ as __all__
