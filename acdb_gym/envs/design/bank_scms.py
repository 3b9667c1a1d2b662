"""The SCMs of an instance bank as arrays: every family the design env takes, written and read
back exactly (the same float64 bits, so the same samples from the same generator). Each world
kind writes and reads its own worlds (``to_bank`` / ``from_bank`` of
:mod:`acdb_gym.core.worlds.kinds`); this module asks the kind.

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

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.core.worlds.kinds import kind_of, kind_of_world
from acdb_gym.core.worlds.kinds.base import World
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = ["scm_arrays", "scms_of"]


def scm_arrays(scms: Sequence[World]) -> dict[str, np.ndarray]:
    """The arrays that hold ``scms`` (all of one class, as one level's are), written by their
    kind.

    Raises:
        ValueError: worlds of several classes, or a kind a bank does not hold (hidden
            confounders, measured data).
    """
    classes = {type(scm) for scm in scms}
    if len(classes) != 1:
        raise ValueError(
            f"a bank's worlds share one SCM class, got {sorted(k.__name__ for k in classes)}"
        )
    return kind_of_world(scms[0]).to_bank(scms)


def scms_of(spec: LevelSpec, dags: Sequence[DAG], arrays: dict[str, np.ndarray]) -> list[World]:
    """The worlds of ``spec``'s kind over ``dags`` that :func:`scm_arrays` wrote as ``arrays``.

    Raises:
        KeyError: an array of the kind is missing.
        ValueError: the arrays do not describe worlds over ``dags``.
    """
    return kind_of(spec).from_bank(spec, dags, arrays)
