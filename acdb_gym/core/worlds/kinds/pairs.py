"""The cause-effect pairs (DESIGN §3.6, :mod:`acdb_gym.core.worlds.cause_effect_pairs`): the pair
is ``seed mod`` the number of pairs with at least ``n_obs`` rows, the graph stream draws which
variable is the cause, the observational stream the rows. ``I*`` is empty and the budget 0
(``targets="none"``). A bank does not hold measured data."""

from __future__ import annotations

from acdb_gym.core.worlds.cause_effect_pairs import CauseEffectPair, pair_for_seed
from acdb_gym.core.worlds.kinds.base import GRAPH, DrawnWorld, SeedStreams, Unbankable, World
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = ["CauseEffectPairsKind"]


class CauseEffectPairsKind(Unbankable):
    """The Tübingen cause-effect pairs."""

    unbankable = "a bank holds SCM worlds, not measured data"

    name = "cause-effect-pairs"
    worlds: tuple[type, ...] = (CauseEffectPair,)

    def matches(self, spec: LevelSpec) -> bool:
        return spec.world == "cause-effect-pairs"

    def draw(self, spec: LevelSpec, streams: SeedStreams, deadline: float | None) -> DrawnWorld:
        index = pair_for_seed(streams.seed, spec.n_obs)
        world = CauseEffectPair(index, streams.rng(GRAPH).permutation(2))
        return DrawnWorld(world.dag, world, 1, measured_dependence=abs(float(world.weights.sum())))

    def check(self, spec: LevelSpec, world: World, i_star: frozenset[int]) -> None:
        pass
