"""Gymnasium environments: :class:`ACDBEnv`, :class:`InterventionDesignEnv` and registration."""

from __future__ import annotations

from acdb_gym.envs.registration import register_envs

__all__ = ["register_envs"]
