"""Worlds with ``spec.latent`` hidden common causes (DESIGN §3.2,
:mod:`acdb_gym.core.worlds.latent`): the whole world (observed and hidden variables) is drawn
on the family's streams, accepted by the family's rule on the whole world and, for the linear
families, by the observed rule on the latent projection. ``I*`` is the minimum intervention set
of the observed graph (a lower bound on what identifies the ADMG) and the budget
``|I*| + slack + latent``. A bank does not hold these worlds."""

from __future__ import annotations

import math

from acdb_gym.core.graphs import DAG
from acdb_gym.core.worlds.acceptance import PARTIAL_CORRELATION, draw_world
from acdb_gym.core.worlds.faithfulness import is_faithful
from acdb_gym.core.worlds.kinds.base import (
    CALIBRATION,
    GRAPH,
    MAX_ATTEMPTS,
    WEIGHTS,
    DrawnWorld,
    InstanceGenerationError,
    SeedStreams,
    Unbankable,
    World,
    check_deadline,
)
from acdb_gym.core.worlds.kinds.linear import build_scm, draw_weights, passes_full_set_check
from acdb_gym.core.worlds.latent import (
    LatentSCM,
    draw_latent_graph,
    full_spec,
    min_relevant_latent_correlation,
    passes_observed_rule,
)
from acdb_gym.core.worlds.mechanisms import SCM
from acdb_gym.core.worlds.spec import LINEAR_GAUSSIAN, LevelSpec

__all__ = ["LatentKind"]


class LatentKind(Unbankable):
    """Worlds with hidden confounders."""

    unbankable = "a bank holds worlds without hidden confounders"

    name = "latent"
    worlds: tuple[type, ...] = (LatentSCM,)

    def matches(self, spec: LevelSpec) -> bool:
        return spec.latent > 0

    def draw(self, spec: LevelSpec, streams: SeedStreams, deadline: float | None) -> DrawnWorld:
        seed = streams.seed
        graph_rng, weight_rng = streams.rng(GRAPH), streams.rng(WEIGHTS)
        calibration_rng = streams.rng(CALIBRATION)
        attempts = 0
        while True:
            attempts += 1
            full, admg = draw_latent_graph(spec, graph_rng)
            whole = full_spec(spec, full)
            weights = draw_weights(whole, full, weight_rng)
            scm: SCM | None
            if spec.family == LINEAR_GAUSSIAN:
                scm = build_scm(whole, weights)
                cov = scm.covariance()
                accepted = passes_full_set_check(full, cov, spec.faithfulness_eps) and is_faithful(
                    full, cov, spec.faithfulness_eps
                )
                measure, smallest = PARTIAL_CORRELATION, math.nan
            else:
                world = draw_world(whole, full, weights, weight_rng, calibration_rng)
                scm, accepted = world.scm, world.acceptance.accepted
                measure, smallest = world.acceptance.measure, world.acceptance.min_dependence
            if scm is not None and accepted:
                latent_scm = LatentSCM(scm, spec.d)
                if measure != PARTIAL_CORRELATION:
                    break
                observed_cov = latent_scm.covariance()
                if passes_observed_rule(admg, observed_cov, spec.faithfulness_eps):
                    smallest = min_relevant_latent_correlation(admg, observed_cov)
                    break
            if attempts == MAX_ATTEMPTS:
                raise InstanceGenerationError(spec, seed, MAX_ATTEMPTS)
            check_deadline(deadline, spec, seed, attempts)
        return DrawnWorld(
            DAG(admg.directed),
            latent_scm,
            attempts,
            measured_dependence=smallest,
            dependence_measure=measure,
            admg=admg,
            extra_budget=spec.latent,
        )

    def check(self, spec: LevelSpec, world: World, i_star: frozenset[int]) -> None:
        pass
