"""Privileged access to an episode's hidden instance (the harness and the oracle only).

An environment offers it by meeting :class:`PrivilegedEnv`; both ACDB environments do, through
:class:`HiddenInstanceAccess`. Callers hold a possibly wrapped env and use
:func:`hidden_instance_of`, which unwraps and checks it:

>>> from acdb_gym.envs.acdb_env import ACDBEnv
>>> env = ACDBEnv("L0")
>>> _ = env.reset(seed=0)
>>> hidden_instance_of(env) is env.hidden_instance()
True
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

from acdb_gym.core.worlds.instance import Instance

__all__ = ["HiddenInstanceAccess", "PrivilegedEnv", "hidden_instance_of"]


@runtime_checkable
class PrivilegedEnv(Protocol):
    """An environment that hands out its current hidden instance."""

    def hidden_instance(self) -> Instance:
        """The current episode's hidden instance; RuntimeError before the first ``reset``."""
        ...


class HiddenInstanceAccess:
    """The :class:`PrivilegedEnv` method for an env that keeps its episode's instance in
    ``self._instance`` (None before the first ``reset``)."""

    _instance: Instance | None

    def hidden_instance(self) -> Instance:
        """The current hidden instance. For the harness and agents declared privileged (the
        oracle) only; :func:`~acdb_gym.agents.base.run_episode` hands it to such agents."""
        if self._instance is None:
            raise RuntimeError("call reset() before hidden_instance()")
        return self._instance


def hidden_instance_of(env: gym.Env[Any, Any]) -> Instance:
    """The hidden instance of ``env``'s current episode; ``env`` may be wrapped.

    Raises:
        TypeError: the unwrapped env offers no privileged access (no ``hidden_instance()``).
        RuntimeError: the env was not reset yet.
    """
    base = env.unwrapped
    if not isinstance(base, PrivilegedEnv):
        raise TypeError(
            f"{type(base).__name__} offers no privileged access: it has no hidden_instance() "
            "(ACDBEnv and InterventionDesignEnv do)"
        )
    return base.hidden_instance()
