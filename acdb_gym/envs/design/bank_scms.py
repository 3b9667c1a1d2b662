"""The SCMs of an instance bank as arrays: every family the design env takes, written and read
back exactly (the same float64 bits, so the same samples from the same generator).

One level's worlds share a family, so each family has its own fixed set of arrays, stacked on
a first axis of worlds:

| family | arrays |
|--------|--------|
| linear-Gaussian | ``weights`` ``(n, d, d)``, ``noise_std`` ``(n, d)`` |
| linear non-Gaussian | those, and ``noise_kinds`` ``(n, d)`` (indices into :data:`NOISE_KINDS`) |
| nonlinear | ``weights``, ``noise_std``, ``loc``, ``scale``; ``mechanism_kinds`` ``(n, d)`` (0 a root, 1 additive, 2 network), ``mechanism_sizes`` ``(n, d)`` and ``mechanism_parameters`` (every mechanism's :meth:`parameters`, world after world, node after node); with normal-score maps, ``score_knots`` and ``score_values`` ``(n, d, knots)`` |
| fitted Sachs | ``order`` ``(n, d)`` (the labelling; the fit is the level's) |

A mechanism's parameters are exactly what the instance digest hashes
(:meth:`~acdb_gym.core.worlds.mechanisms.AdditiveMechanism.parameters`,
:meth:`~acdb_gym.core.worlds.mechanisms.NetworkMechanism.parameters`), so a world read back
wrong fails its digest check in :func:`~acdb_gym.envs.design.bank.load_bank`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.core.types import FloatArray
from acdb_gym.core.worlds.fitted import FitKind, FittedSCM, sachs_fit
from acdb_gym.core.worlds.instance import RealData, World
from acdb_gym.core.worlds.latent import LatentSCM
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

__all__ = ["scm_arrays", "scms_of"]

_ROOT, _ADDITIVE, _NETWORK = range(3)


def scm_arrays(scms: Sequence[World]) -> dict[str, np.ndarray]:
    """The arrays that hold ``scms`` (all of one family, as one level's are; no latent world,
    no measured data)."""
    kinds = {type(scm) for scm in scms}
    if len(kinds) != 1:
        raise ValueError(
            f"a bank's worlds share one SCM class, got {sorted(k.__name__ for k in kinds)}"
        )
    first = scms[0]
    if isinstance(first, LatentSCM):
        raise ValueError("a bank holds worlds without hidden confounders")
    if isinstance(first, RealData):
        raise ValueError("a bank holds SCM worlds, not measured data")
    if isinstance(first, FittedSCM):
        return {"order": np.stack([cast(FittedSCM, scm).order for scm in scms]).astype(np.int64)}
    arrays = {
        "weights": np.stack([scm.weights for scm in scms]),
        "noise_std": np.stack([scm.noise_std for scm in scms]),  # type: ignore[union-attr]
    }
    if isinstance(first, LinearNonGaussianSCM):
        codes = [
            [NOISE_KINDS.index(k) for k in cast(LinearNonGaussianSCM, scm).noise_kinds]
            for scm in scms
        ]
        arrays["noise_kinds"] = np.array(codes, dtype=np.int8)
    elif isinstance(first, NonlinearSCM):
        arrays.update(_nonlinear_arrays([cast(NonlinearSCM, scm) for scm in scms]))
    return arrays


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


def scms_of(spec: LevelSpec, dags: Sequence[DAG], arrays: dict[str, np.ndarray]) -> list[SCM]:
    """The SCMs of ``spec``'s family over ``dags`` that :func:`scm_arrays` wrote as ``arrays``.

    Raises:
        KeyError: an array of the family is missing.
        ValueError: the arrays do not describe SCMs over ``dags``.
    """
    if spec.fit != "none":
        fit = sachs_fit(cast(FitKind, spec.fit))
        return [FittedSCM(fit, order) for order in arrays["order"]]
    if spec.family not in (LINEAR_GAUSSIAN, LINEAR_NONGAUSSIAN):
        return _nonlinear_scms(dags, arrays)
    weights, noise_std = arrays["weights"], arrays["noise_std"]
    linear = [LinearGaussianSCM(weights[k], noise_std[k]) for k in range(len(dags))]
    if spec.family == LINEAR_GAUSSIAN:
        return list(linear)
    return [
        LinearNonGaussianSCM(scm, tuple(NOISE_KINDS[int(c)] for c in codes))
        for scm, codes in zip(linear, arrays["noise_kinds"], strict=True)
    ]


def _nonlinear_scms(dags: Sequence[DAG], arrays: dict[str, np.ndarray]) -> list[SCM]:
    flat = arrays["mechanism_parameters"]
    bounds = np.concatenate([[0], np.cumsum(arrays["mechanism_sizes"].ravel())])
    if bounds[-1] != flat.size:
        raise ValueError(
            f"mechanism_sizes sum to {bounds[-1]}, mechanism_parameters hold {flat.size}"
        )
    knots, values = arrays.get("score_knots"), arrays.get("score_values")
    scms: list[SCM] = []
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
    """The mechanism of ``kind`` on ``parents`` whose :meth:`parameters` are ``values``."""
    if kind == _ROOT:
        return None
    if kind == _ADDITIVE:
        return AdditiveMechanism.from_parameters(parents, values)
    if kind == _NETWORK:
        return NetworkMechanism.from_parameters(parents, values)
    raise ValueError(f"mechanism kind must be 0, 1 or 2, got {kind}")
