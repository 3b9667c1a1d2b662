"""The measured Sachs cells (DESIGN §3.5, :mod:`acdb_gym.core.worlds.real_experiments`): the
graph stream's permutation labels the proteins exactly as
:func:`~acdb_gym.core.worlds.kinds.linear.draw_graph` labels the Sachs topology, the
observational stream draws the baseline cells, and each episode's experiments draw cells from
its intervention stream. Nothing is accepted or rejected (``attempts`` is 1); a finished
instance is refused when an episode could ask one condition for more cells than it has. A bank
does not hold measured data."""

from __future__ import annotations

from acdb_gym.core.worlds.faithfulness import min_relevant_partial_correlation
from acdb_gym.core.worlds.kinds.base import GRAPH, DrawnWorld, SeedStreams, Unbankable, World
from acdb_gym.core.worlds.real_experiments import SachsCells
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = ["SachsCellsKind"]


class SachsCellsKind(Unbankable):
    """The real Sachs experiments' cells."""

    unbankable = "a bank holds SCM worlds, not measured data"

    name = "sachs-cells"
    worlds: tuple[type, ...] = (SachsCells,)

    def matches(self, spec: LevelSpec) -> bool:
        return spec.world == "sachs-cells"

    def draw(self, spec: LevelSpec, streams: SeedStreams, deadline: float | None) -> DrawnWorld:
        world = SachsCells(streams.rng(GRAPH).permutation(spec.d))
        return DrawnWorld(
            world.dag,
            world,
            1,
            variable_names=world.variable_names,
            measured_dependence=min_relevant_partial_correlation(world.dag, world.covariance()),
        )

    def check(self, spec: LevelSpec, world: World, i_star: frozenset[int]) -> None:
        """Refuse ``n_int`` times the largest budget beyond the smallest experiment's cells.

        Raises:
            ValueError: naming ``n_int`` and the cells.
        """
        assert isinstance(world, SachsCells)
        most = len(i_star) + spec.slack_high
        if spec.n_int * most > world.smallest_block:
            raise ValueError(
                f"n_int = {spec.n_int} times a budget of up to {most} exceeds the "
                f"{world.smallest_block} cells of the smallest experiment: lower n_int"
            )
