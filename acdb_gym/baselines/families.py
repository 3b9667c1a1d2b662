"""Agents fitted to the SCM families beyond linear-Gaussian (DESIGN §3.1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acdb_gym.baselines.active import PCActiveAgent
from acdb_gym.core.graphs import PDAG
from acdb_gym.core.types import FloatArray
from acdb_gym.discovery.anm import anm_graph
from acdb_gym.discovery.lingam_order import direct_lingam
from acdb_gym.discovery.pc_rank import rank_pc_cpdag
from acdb_gym.envs import actions

__all__ = ["ANMAgent", "DirectLiNGAMAgent", "LiNGAMActiveAgent", "RankPCAgent"]

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


class ANMAgent:
    """Submits :func:`~acdb_gym.discovery.anm.anm_graph`: every adjacency (on two variables the
    pair itself, else PC's) oriented by additive-noise-model fits with HSIC tests, the
    bivariate orientation method of the cause-effect pair literature (ANM-HSIC)."""

    name = "anm"

    def __init__(self, *, alpha: float = 0.05) -> None:
        self.alpha = alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._graph = anm_graph(observation["observational"], alpha=self.alpha)

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


class LiNGAMActiveAgent(PCActiveAgent):
    """DirectLiNGAM's DAG, then :class:`~acdb_gym.baselines.active.PCActiveAgent`'s experiments
    with the LiNGAM graph in place of PC's: every experiment's shift tests orient the edges at
    its target (overruling LiNGAM's order where they disagree), repair the skeleton, and the
    LiNGAM orientations stand where the experiments say nothing. The targeting is pc_active's
    (all edges start directed, so targets come from its ``leftover`` rule).

    Args:
        lingam_alpha: significance level of the OLS coefficients that prune LiNGAM's order.
        **arguments: :class:`~acdb_gym.baselines.active.PCActiveAgent`'s other arguments
            (``pc_alpha`` is unused).
    """

    name = "lingam_active"

    def __init__(self, *, lingam_alpha: float = 0.01, **arguments: Any) -> None:
        super().__init__(**arguments)
        if not 0.0 < lingam_alpha < 1.0:
            raise ValueError(f"lingam_alpha must be in (0, 1), got {lingam_alpha}")
        self.lingam_alpha = lingam_alpha

    def _start_graph(self, observational: FloatArray) -> PDAG:
        return direct_lingam(observational, alpha=self.lingam_alpha)
