"""The Sachs world fitted to its data (DESIGN §3.4, :mod:`acdb_gym.core.worlds.fitted`): the
graph stream's permutation relabels the proteins exactly as
:func:`~acdb_gym.core.worlds.kinds.linear.draw_graph` relabels the Sachs topology; the fit is
fixed, so nothing is accepted or rejected (``attempts`` is 1). A bank holds its worlds as
``order`` ``(n, d)``, the labelling (the fit is the level's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.core.graphs.real import topology
from acdb_gym.core.worlds.fitted import FitKind, FittedSCM, sachs_fit
from acdb_gym.core.worlds.kinds.base import GRAPH, DrawnWorld, SeedStreams, World
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = ["FittedKind"]


class FittedKind:
    """The fitted Sachs worlds (linear or spline fit)."""

    name = "fitted"
    worlds: tuple[type, ...] = (FittedSCM,)

    def matches(self, spec: LevelSpec) -> bool:
        return spec.fit != "none"

    def draw(self, spec: LevelSpec, streams: SeedStreams, deadline: float | None) -> DrawnWorld:
        fit_kind = "linear" if spec.fit == "linear" else "spline"
        scm = FittedSCM(sachs_fit(fit_kind), streams.rng(GRAPH).permutation(spec.d))
        names = [""] * spec.d
        for protein, name in enumerate(topology("sachs").names):
            names[int(scm.order[protein])] = name
        return DrawnWorld(scm.dag, scm, 1, variable_names=tuple(names))

    def check(self, spec: LevelSpec, world: World, i_star: frozenset[int]) -> None:
        pass

    def to_bank(self, worlds: Sequence[World]) -> dict[str, np.ndarray]:
        orders = [cast(FittedSCM, world).order for world in worlds]
        return {"order": np.stack(orders).astype(np.int64)}

    def from_bank(
        self, spec: LevelSpec, dags: Sequence[DAG], arrays: dict[str, np.ndarray]
    ) -> list[World]:
        fit = sachs_fit(cast(FitKind, spec.fit))
        return [FittedSCM(fit, order) for order in arrays["order"]]
