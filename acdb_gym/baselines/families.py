"""Agents fitted to the SCM families beyond linear-Gaussian (DESIGN §3.1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acdb_gym.discovery.lingam_order import direct_lingam
from acdb_gym.discovery.pc_rank import rank_pc_cpdag
from acdb_gym.envs import actions

__all__ = ["DirectLiNGAMAgent", "RankPCAgent"]

Observation = Mapping[str, Any]


class DirectLiNGAMAgent:
    """Submits the DirectLiNGAM DAG of the observational sample
    (:func:`~acdb_gym.discovery.lingam_order.direct_lingam`): identifiable from observational
    data when the noise is non-Gaussian, an order at chance when it is Gaussian."""

    name = "lingam"

    def __init__(self, *, alpha: float = 0.01) -> None:
        self.alpha = alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._graph = direct_lingam(observation["observational"], alpha=self.alpha)

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(self._graph)


class RankPCAgent:
    """Submits PC's CPDAG on the normal scores of the observational sample
    (:func:`~acdb_gym.discovery.pc_rank.rank_pc_cpdag`): a CI test for monotone nonlinear
    dependences at Fisher-z cost."""

    name = "pc_rank"

    def __init__(self, *, alpha: float = 0.05) -> None:
        self.alpha = alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._graph = rank_pc_cpdag(observation["observational"], alpha=self.alpha)

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(self._graph)
