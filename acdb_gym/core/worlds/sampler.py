"""The session's intervention sampler: the per-target do-matrices of one SCM, made once.

:meth:`LinearGaussianSCM.sample_do <acdb_gym.core.worlds.linear.LinearGaussianSCM.sample_do>` makes the
target's matrix on every call; an episode calls it a few times per instance, and a sweep replays
the same preflighted instances in every episode. The sampler keeps the matrices instead, for
``d <= 32`` all of them made at once, and :func:`sampler_for` keeps one sampler per SCM for as
long as the SCM lives. The samples are bit-identical to ``sample_do``'s: the same draws from the
generator and the same arithmetic (``np.dot`` with the same matrix).

The SCMs of the other families (:mod:`acdb_gym.core.worlds.mechanisms`) draw through their own
``sample_do`` (:class:`FamilySampler`).
"""

from __future__ import annotations

import weakref

import numpy as np

from acdb_gym.core.types import FloatArray, readonly
from acdb_gym.core.worlds.fitted import FittedSCM
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.mechanisms import SCM, LinearNonGaussianSCM, NonlinearSCM

__all__ = ["FamilySampler", "InterventionSampler", "sampler_for"]

BLOCK_MAX_D = 32
"""Largest ``d`` whose do-matrices are made all at once (the block is ``8 d^3`` bytes)."""

_SAMPLERS: weakref.WeakKeyDictionary[LinearGaussianSCM, InterventionSampler] = (
    weakref.WeakKeyDictionary()
)


def sampler_for(scm: SCM) -> InterventionSampler | FamilySampler:
    """The sampler of ``scm``, made on first request and kept while ``scm`` lives (so episodes
    on a cached instance reuse its matrices); a :class:`FamilySampler` for the other families."""
    if not isinstance(scm, LinearGaussianSCM):
        return FamilySampler(scm)
    sampler = _SAMPLERS.get(scm)
    if sampler is None:
        sampler = _SAMPLERS[scm] = InterventionSampler(scm)
    return sampler


class InterventionSampler:
    """Draws ``do(X_var = value)`` samples of one SCM from cached per-target matrices.

    Args:
        scm: the model; for ``d <= 32`` every target's matrix is made here, above that each
            one on its first draw.
    """

    def __init__(self, scm: LinearGaussianSCM) -> None:
        # A weak reference: :func:`sampler_for` keys samplers weakly by their SCM, which a strong
        # one would keep alive for ever.
        self._scm = weakref.ref(scm)
        self._n_nodes = scm.n_nodes
        self._matrices: list[FloatArray | None] = (
            do_matrix_block(scm) if scm.n_nodes <= BLOCK_MAX_D else [None] * scm.n_nodes
        )

    def draw(
        self, var: int, value: float, n: int, rng: np.random.Generator, out: FloatArray | None
    ) -> FloatArray:
        """:meth:`~acdb_gym.core.worlds.linear.LinearGaussianSCM.sample_do` without its argument checks
        (the session has made them): ``n`` rows, written into ``out`` when it is given.

        ``out`` must be a writable C-contiguous float64 ``(n, d)`` array.
        """
        matrix = self._matrices[var]
        if matrix is None:
            scm = self._scm()
            assert scm is not None, "a sampler outlived its SCM"
            matrix = self._matrices[var] = scm.do_matrix(var)
        noise = rng.standard_normal((n, self._n_nodes))
        noise[:, var] = value
        # np.dot, not matmul: half the call overhead at the ladder's small sizes.
        return np.dot(noise, matrix, out=out)


def do_matrix_block(scm: LinearGaussianSCM) -> list[FloatArray | None]:
    """Every target's :meth:`~acdb_gym.core.worlds.linear.LinearGaussianSCM.do_matrix`, bit for bit,
    made in one ``(d, d, d)`` block with no loop over the targets."""
    d = scm.n_nodes
    mixing = scm.mixing.copy()
    mixing.reshape(-1)[:: d + 1] = 1.0  # as do_matrix does: the exact diagonal
    scaled = scm.noise_std[:, None] * mixing
    # block[v] = scaled - scaled[:, v] (outer) mixing[v], elementwise the same products and
    # differences as do_matrix. Column v is then exactly 0 and so is row v (scaled[v] -
    # scaled[v, v] mixing[v], with mixing[v, v] = 1), which becomes mixing[v]: rows (v, v) of
    # the (d*d, d) view, a plain strided slice.
    block = np.empty((d, d, d))  # C order, so the reshape below is a view
    np.multiply(scaled.T[:, :, None], mixing[:, None, :], out=block)
    np.subtract(scaled[None, :, :], block, out=block)
    block.reshape(d * d, d)[:: d + 1] = mixing
    return list(readonly(block))


class FamilySampler:
    """Draws ``do(X_var = value)`` samples of a non-Gaussian or nonlinear SCM through its own
    ``sample_do`` (the same draws as calling it directly)."""

    def __init__(self, scm: LinearNonGaussianSCM | NonlinearSCM | FittedSCM) -> None:
        self._scm = scm

    def draw(
        self, var: int, value: float, n: int, rng: np.random.Generator, out: FloatArray | None
    ) -> FloatArray:
        """``n`` rows, written into ``out`` when it is given (as :meth:`InterventionSampler.draw`)."""
        return self._scm.sample_do(var, value, n, rng, out=out)
