"""The other SCM families (DESIGN §3.1): linear with non-Gaussian noise, and nonlinear additive
noise, each paired with the linear-Gaussian level.

The graph and weights are those of the linear-Gaussian world of the same spec and seed (drawn
and accepted exactly as there, on the same streams,
:func:`~acdb_gym.core.worlds.kinds.linear.accepted_linear_world`); only the family's own parts
(noise kinds, mechanisms and their calibration sample) are redrawn, on the weight stream after
that world's draws, until the family's acceptance rule
(:mod:`acdb_gym.core.worlds.acceptance`) holds. A bank holds a non-Gaussian world as the linear
arrays and ``noise_kinds`` ``(n, d)``; a nonlinear one as ``weights``, ``noise_std``, ``loc``,
``scale``, ``mechanism_kinds`` ``(n, d)`` (0 a root, 1 additive, 2 network),
``mechanism_sizes`` ``(n, d)`` and ``mechanism_parameters`` (every mechanism's ``parameters()``,
world after world, node after node), and with normal-score maps ``score_knots`` and
``score_values`` ``(n, d, knots)``: exactly what the instance digest hashes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.core.types import FloatArray
from acdb_gym.core.worlds.acceptance import Acceptance, draw_world
from acdb_gym.core.worlds.kinds.base import (
    CALIBRATION,
    GRAPH,
    MAX_ATTEMPTS,
    WEIGHTS,
    DrawnWorld,
    InstanceGenerationError,
    SeedStreams,
    World,
    check_deadline,
)
from acdb_gym.core.worlds.kinds.linear import accepted_linear_world, linear_from_bank
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.mechanisms import (
    NOISE_KINDS,
    SCM,
    AdditiveMechanism,
    LinearNonGaussianSCM,
    Mechanism,
    NetworkMechanism,
    NonlinearSCM,
    NormalScoreMap,
    readonly_copy,
)
from acdb_gym.core.worlds.spec import LINEAR_GAUSSIAN, LINEAR_NONGAUSSIAN, LevelSpec

__all__ = ["FAMILY_REDRAWS", "FamilyKind"]

FAMILY_REDRAWS = 1000
"""Draws of a family's own parts (noise kinds, mechanisms) on one accepted linear world before
:class:`InstanceGenerationError`."""

_ROOT, _ADDITIVE, _NETWORK = range(3)


class FamilyKind:
    """Non-Gaussian and nonlinear worlds on the linear-Gaussian level's graph and weights."""

    name = "family"
    worlds: tuple[type, ...] = (LinearNonGaussianSCM, NonlinearSCM)

    def matches(self, spec: LevelSpec) -> bool:
        return spec.family != LINEAR_GAUSSIAN

    def draw(self, spec: LevelSpec, streams: SeedStreams, deadline: float | None) -> DrawnWorld:
        seed = streams.seed
        graph_rng, weight_rng = streams.rng(GRAPH), streams.rng(WEIGHTS)
        calibration_rng = streams.rng(CALIBRATION)
        linear_spec = replace(spec, family=LINEAR_GAUSSIAN)
        try:
            dag, weights, linear, cov, attempts, names = accepted_linear_world(
                linear_spec, seed, graph_rng, weight_rng, deadline
            )
        except InstanceGenerationError:
            raise InstanceGenerationError(spec, seed, MAX_ATTEMPTS) from None
        drawn = _family_world(
            spec, seed, dag, weights, (linear, cov), (weight_rng, calibration_rng), deadline
        )
        if drawn is None:
            raise InstanceGenerationError(spec, seed, attempts + FAMILY_REDRAWS)
        scm, acceptance, redraws = drawn
        return DrawnWorld(
            dag,
            scm,
            attempts + redraws - 1,
            variable_names=names,
            measured_dependence=acceptance.min_dependence,
            dependence_measure=acceptance.measure,
        )

    def check(self, spec: LevelSpec, world: World, i_star: frozenset[int]) -> None:
        pass

    def to_bank(self, worlds: Sequence[World]) -> dict[str, np.ndarray]:
        first = worlds[0]
        if isinstance(first, LinearNonGaussianSCM):
            scms = [cast(LinearNonGaussianSCM, world) for world in worlds]
            codes = [[NOISE_KINDS.index(k) for k in scm.noise_kinds] for scm in scms]
            return {
                "weights": np.stack([scm.weights for scm in scms]),
                "noise_std": np.stack([scm.noise_std for scm in scms]),
                "noise_kinds": np.array(codes, dtype=np.int8),
            }
        return _nonlinear_arrays([cast(NonlinearSCM, world) for world in worlds])

    def from_bank(
        self, spec: LevelSpec, dags: Sequence[DAG], arrays: dict[str, np.ndarray]
    ) -> list[World]:
        if spec.family != LINEAR_NONGAUSSIAN:
            return list(_nonlinear_scms(dags, arrays))
        return [
            LinearNonGaussianSCM(scm, tuple(NOISE_KINDS[int(c)] for c in codes))
            for scm, codes in zip(
                linear_from_bank(dags, arrays), arrays["noise_kinds"], strict=True
            )
        ]


def _family_world(
    spec: LevelSpec,
    seed: int,
    dag: DAG,
    weights: FloatArray,
    linear: tuple[LinearGaussianSCM, FloatArray],
    rngs: tuple[np.random.Generator, np.random.Generator],
    deadline: float | None,
) -> tuple[SCM, Acceptance, int] | None:
    """The first accepted draw of the family's own parts on the fixed graph and weights (at
    most :data:`FAMILY_REDRAWS`; ``rngs`` are the weight and calibration streams): its SCM, the
    rule's decision and how many draws it took; None when none was accepted."""
    weight_rng, calibration_rng = rngs
    for redraws in range(1, FAMILY_REDRAWS + 1):
        world = draw_world(spec, dag, weights, weight_rng, calibration_rng, accepted_linear=linear)
        if world.scm is not None and world.acceptance.accepted:
            return world.scm, world.acceptance, redraws
        check_deadline(deadline, spec, seed, redraws)
    return None


def _nonlinear_arrays(scms: Sequence[NonlinearSCM]) -> dict[str, np.ndarray]:
    d = scms[0].n_nodes
    kinds = np.zeros((len(scms), d), dtype=np.int8)
    sizes = np.zeros((len(scms), d), dtype=np.int64)
    parameters: list[FloatArray] = []
    for k, scm in enumerate(scms):
        for j, mechanism in enumerate(scm.mechanisms):
            if mechanism is None:
                continue
            kinds[k, j] = _ADDITIVE if isinstance(mechanism, AdditiveMechanism) else _NETWORK
            values = mechanism.parameters()
            sizes[k, j] = values.size
            parameters.append(values)
    arrays: dict[str, np.ndarray] = {
        "weights": np.stack([scm.weights for scm in scms]),
        "noise_std": np.stack([scm.noise_std for scm in scms]),
        "loc": np.stack([scm.loc for scm in scms]),
        "scale": np.stack([scm.scale for scm in scms]),
        "mechanism_kinds": kinds,
        "mechanism_sizes": sizes,
        "mechanism_parameters": np.concatenate(parameters) if parameters else np.zeros(0),
    }
    if scms[0].normal_scores is not None:
        maps = [scm.normal_scores or () for scm in scms]
        arrays["score_knots"] = np.array([[m.knots for m in world] for world in maps])
        arrays["score_values"] = np.array([[m.scores for m in world] for world in maps])
    return arrays


def _nonlinear_scms(dags: Sequence[DAG], arrays: dict[str, np.ndarray]) -> list[NonlinearSCM]:
    flat = arrays["mechanism_parameters"]
    bounds = np.concatenate([[0], np.cumsum(arrays["mechanism_sizes"].ravel())])
    if bounds[-1] != flat.size:
        raise ValueError(
            f"mechanism_sizes sum to {bounds[-1]}, mechanism_parameters hold {flat.size}"
        )
    knots, values = arrays.get("score_knots"), arrays.get("score_values")
    scms: list[NonlinearSCM] = []
    for k, dag in enumerate(dags):
        d = dag.n_nodes
        mechanisms: list[Mechanism | None] = []
        for j in range(d):
            start, stop = int(bounds[k * d + j]), int(bounds[k * d + j + 1])
            parents = tuple(int(p) for p in np.flatnonzero(dag.adjacency[:, j]))
            kind = int(arrays["mechanism_kinds"][k, j])
            mechanisms.append(_mechanism(kind, parents, flat[start:stop]))
        maps = None
        if knots is not None and values is not None:
            maps = tuple(
                NormalScoreMap(readonly_copy(knots[k, j]), readonly_copy(values[k, j]))
                for j in range(d)
            )
        scms.append(
            NonlinearSCM(
                dag=dag,
                mechanisms=tuple(mechanisms),
                noise_std=readonly_copy(arrays["noise_std"][k]),
                loc=readonly_copy(arrays["loc"][k]),
                scale=readonly_copy(arrays["scale"][k]),
                weights=readonly_copy(arrays["weights"][k]),
                normal_scores=maps,
            )
        )
    return scms


def _mechanism(kind: int, parents: tuple[int, ...], values: FloatArray) -> Mechanism | None:
    """The mechanism of ``kind`` on ``parents`` whose ``parameters()`` are ``values``."""
    if kind == _ROOT:
        return None
    if kind == _ADDITIVE:
        return AdditiveMechanism.from_parameters(parents, values)
    if kind == _NETWORK:
        return NetworkMechanism.from_parameters(parents, values)
    raise ValueError(f"mechanism kind must be 0, 1 or 2, got {kind}")
