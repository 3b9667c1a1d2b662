"""Soft (imperfect) single-node interventions beside the hard ``do(X_i = v)`` (DESIGN §8).

A hard intervention replaces the target's mechanism by a constant. A soft one keeps the
mechanism, and so the target's in-edges, and changes it:

* ``shift``: ``X_i := f_i(pa_i) + e_i + delta`` with ``delta = value`` (a mean shift);
* ``scale``: ``X_i := f_i(pa_i) + s e_i`` with ``s = scale_factor(value) = clip(|value|, 0.1,
  10)`` (the noise standard deviation multiplied by ``s``).

Every kind's world supports both through its own ``sample_soft`` (:class:`SoftSampling`;
measured data refuse them); :func:`sample_soft` checks the arguments once and asks the world.
A draw consumes the generator exactly as the family's observational ``sample`` does (one
``(n, d)`` block), and the linear families compute it as that observational draw plus a term
confined to the target's descendants, so the other columns are bit-identical to
``scm.sample(n, rng)`` from the same generator state.

>>> from acdb_gym.core.worlds.linear import LinearGaussianSCM
>>> scm = LinearGaussianSCM(np.array([[0.0, 2.0], [0.0, 0.0]]), np.array([1.0, 1.0]))
>>> base = scm.sample(3, np.random.default_rng(0))
>>> moved = sample_soft(scm, "shift", 0, 1.5, 3, np.random.default_rng(0))
>>> (moved - base).round(12).tolist()[0]
[1.5, 3.0]
"""

from __future__ import annotations

from typing import Literal, Protocol, get_args

import numpy as np

from acdb_gym.core.types import FloatArray
from acdb_gym.core.worlds.checks import check_samples, check_target, check_value

__all__ = [
    "INTERVENTION_KINDS",
    "INTERVENTION_MODES",
    "KIND_UNUSED",
    "SCALE_LIMITS",
    "SOFT_KINDS",
    "InterventionKind",
    "InterventionMode",
    "SoftKind",
    "SoftSampling",
    "episode_kinds",
    "into",
    "linear_soft",
    "measured_data_refuses",
    "sample_soft",
    "scale_factor",
]

InterventionKind = Literal["hard", "shift", "scale"]
"""What one experiment does to its target; its code (the env's ``kinds``) is its index in
:data:`INTERVENTION_KINDS`: 0 hard, 1 shift, 2 scale."""
INTERVENTION_KINDS: tuple[InterventionKind, ...] = get_args(InterventionKind)
KIND_UNUSED = len(INTERVENTION_KINDS)
"""The code of an unused experiment slot (3), as ``d`` marks an unused target."""

SoftKind = Literal["shift", "scale"]
SOFT_KINDS: tuple[SoftKind, ...] = get_args(SoftKind)

InterventionMode = Literal["hard", "shift", "scale", "mixed"]
"""An env's intervention option: every experiment of one kind, or ``mixed`` (per experiment,
a kind drawn uniformly from :data:`INTERVENTION_KINDS` by :func:`episode_kinds`)."""
INTERVENTION_MODES: tuple[InterventionMode, ...] = get_args(InterventionMode)

SCALE_LIMITS = (0.1, 10.0)
"""The range ``|value|`` is clipped to for a ``scale`` intervention's noise factor."""

_KIND_STREAM = 5
"""Spawn key of the mixed-kind stream: ``SeedSequence(seed).spawn(6)[5]``, after the instance's
five streams (graph, weights, observational data, interventions, calibration)."""


def scale_factor(value: float) -> float:
    """The noise-std factor of a ``scale`` intervention with ``value``: ``|value|`` clipped to
    :data:`SCALE_LIMITS`.

    >>> scale_factor(2.0), scale_factor(-3.0), scale_factor(0.0), scale_factor(50.0)
    (2.0, 3.0, 0.1, 10.0)
    """
    low, high = SCALE_LIMITS
    return min(max(abs(float(value)), low), high)


def episode_kinds(mode: InterventionMode, seed: int, count: int) -> tuple[InterventionKind, ...]:
    """The kinds of an episode's ``count`` experiments under ``mode``, in order.

    ``hard``, ``shift`` and ``scale`` give that kind every time. ``mixed`` draws each kind
    uniformly from :data:`INTERVENTION_KINDS` on a stream of the instance's ``seed`` of its own
    (spawn key 5), so every agent meets the same kinds on the same instance and nothing else
    (data, interventions' samples) moves.

    Raises:
        ValueError: an unknown ``mode`` or a negative ``count``.

    >>> episode_kinds("shift", 0, 2)
    ('shift', 'shift')
    >>> episode_kinds("mixed", 7, 4) == episode_kinds("mixed", 7, 4)
    True
    """
    if mode not in INTERVENTION_MODES:
        raise ValueError(f"interventions must be one of {list(INTERVENTION_MODES)}, got {mode!r}")
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if mode != "mixed":
        return (mode,) * count
    sequence = np.random.SeedSequence(seed, spawn_key=(_KIND_STREAM,))
    codes = np.random.default_rng(sequence).integers(len(INTERVENTION_KINDS), size=count)
    return tuple(INTERVENTION_KINDS[int(code)] for code in codes)


class SoftSampling(Protocol):
    """A world that takes soft interventions: every kind's world meets it (a world of measured
    data refuses them, naming why)."""

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        ...

    def sample_soft(
        self,
        kind: SoftKind,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` rows under the soft intervention (the arguments checked by the caller)."""
        ...


def sample_soft(
    scm: SoftSampling,
    kind: SoftKind,
    var: int,
    value: float,
    n: int,
    rng: np.random.Generator,
    *,
    out: FloatArray | None = None,
) -> FloatArray:
    """``n`` rows under the soft intervention ``kind`` on ``X_var`` with ``value``: the
    arguments checked once (:mod:`acdb_gym.core.worlds.checks`), then the world's own
    ``sample_soft``.

    Args:
        scm: any kind's world.
        kind: ``"shift"`` (add ``value`` to ``X_var``'s equation) or ``"scale"`` (multiply its
            noise by :func:`scale_factor` of ``value``).
        var: the target, in ``[0, d)``.
        value: a finite real number.
        n: rows, at least 1.
        rng: the generator; one ``(n, d)`` block is drawn, as by ``scm.sample``.
        out: a writable C-contiguous float64 ``(n, d)`` array to write into.

    Returns:
        The samples (``out`` when it is given).

    Raises:
        ValueError: an unknown ``kind``, ``var`` out of range, ``value`` not finite, ``n < 1``,
            or a world of measured data (no model to intervene on softly).
    """
    if kind not in SOFT_KINDS:
        raise ValueError(f"kind must be one of {list(SOFT_KINDS)}, got {kind!r}")
    check_target(var, scm.n_nodes)
    check_value(value)
    check_samples(n)
    return scm.sample_soft(kind, var, float(value), n, rng, out=out)


def into(samples: FloatArray, out: FloatArray | None) -> FloatArray:
    """``samples``, or written into ``out`` and ``out`` returned when it is given."""
    if out is None:
        return samples
    out[...] = samples
    return out


def measured_data_refuses(kind: SoftKind) -> ValueError:
    """The error of a soft intervention on measured data (it has no model to change)."""
    return ValueError(
        f"a {kind} intervention needs a model; this level's data are measured, "
        "so its experiments are what they are (kind 'hard' only)"
    )


def linear_soft(
    noise: FloatArray,
    mixing: FloatArray,
    weights: FloatArray,
    kind: SoftKind,
    var: int,
    value: float,
    out: FloatArray | None,
) -> FloatArray:
    """A linear world's soft draw from its scaled ``noise`` (the observational draw's): the
    observational draw ``E M`` plus the change of ``e_var`` times the total effects of ``X_var``
    (``M[var]``), added to the descendants' columns only."""
    n = noise.shape[0]
    change = np.full(n, value) if kind == "shift" else (scale_factor(value) - 1.0) * noise[:, var]
    samples = np.matmul(noise, mixing, out=out)  # as scm.sample computes it
    # inv(I - W) leaves ulp-sized entries off the descendants; they are exact zeros in truth.
    columns = _descendants_and_self(weights != 0, var)
    effects = mixing[var, columns].copy()
    effects[0] = 1.0  # columns[0] is var; the diagonal of M is exactly 1
    samples[:, columns] += change[:, None] * effects
    return samples


def _descendants_and_self(adjacency: np.ndarray, var: int) -> np.ndarray:
    """``var`` followed by its descendants in ascending order."""
    reached = np.zeros(adjacency.shape[0], dtype=np.bool_)
    frontier = reached.copy()
    frontier[var] = True
    while frontier.any():
        reached |= frontier
        frontier = adjacency[frontier].any(axis=0) & ~reached
    reached[var] = False
    return np.concatenate([[var], np.flatnonzero(reached)])
