"""The session's intervention sampler: the per-target do-matrices of one SCM, made once.

:meth:`LinearGaussianSCM.sample_do <acdb_gym.core.worlds.linear.LinearGaussianSCM.sample_do>` makes the
target's matrix on every call; an episode calls it a few times per instance, and a sweep replays
the same preflighted instances in every episode. The sampler keeps the matrices instead, for
``d <= 32`` all of them made at once, and :func:`sampler_for` keeps one sampler per SCM for as
long as the SCM lives. Above :data:`~acdb_gym.core.worlds.linear.DO_MATRIX_MAX_D` it keeps no matrix per
target but one scaled mixing matrix, and draws with :func:`~acdb_gym.core.worlds.linear.rank_one_do`. The
samples are bit-identical to ``sample_do``'s: the same draws from the generator and the same
arithmetic.

The SCMs of the other families (:mod:`acdb_gym.core.worlds.mechanisms`) draw through their own
``sample_do`` (:class:`FamilySampler`), and the measured Sachs cells through a fresh
:class:`~acdb_gym.core.worlds.real_experiments.CellSampler` per session, which never hands out a
cell twice.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from acdb_gym.core.types import FloatArray, readonly
from acdb_gym.core.worlds.cause_effect_pairs import CauseEffectPair
from acdb_gym.core.worlds.fitted import FittedSCM
from acdb_gym.core.worlds.latent import LatentSCM
from acdb_gym.core.worlds.linear import (
    DO_MATRIX_MAX_D,
    LinearGaussianSCM,
    rank_one_do,
    unit_scaled_mixing,
)
from acdb_gym.core.worlds.mechanisms import SCM, LinearNonGaussianSCM, NonlinearSCM
from acdb_gym.core.worlds.real_experiments import CellSampler, SachsCells

__all__ = ["FamilySampler", "InterventionSampler", "sampler_for"]

BLOCK_MAX_D = 32
"""Largest ``d`` whose do-matrices are made all at once (the block is ``8 d^3`` bytes)."""

_SAMPLERS: weakref.WeakKeyDictionary[LinearGaussianSCM, InterventionSampler] = (
    weakref.WeakKeyDictionary()
)


def sampler_for(
    scm: SCM | LatentSCM | SachsCells | CauseEffectPair,
) -> InterventionSampler | FamilySampler | CellSampler:
    """The sampler of ``scm``, made on first request and kept while ``scm`` lives (so episodes
    on a cached instance reuse its matrices); a :class:`FamilySampler` for the other families
    and the cause-effect pairs (which refuse every experiment), and a new
    :class:`~acdb_gym.core.worlds.real_experiments.CellSampler` on every call for the Sachs
    cells (one per episode: it remembers the cells handed out)."""
    if isinstance(scm, SachsCells):
        return scm.sampler()
    if not isinstance(scm, LinearGaussianSCM):
        return FamilySampler(scm)
    sampler = _SAMPLERS.get(scm)
    if sampler is None:
        sampler = _SAMPLERS[scm] = InterventionSampler(scm)
    return sampler


class InterventionSampler:
    """Draws ``do(X_var = value)`` samples of one SCM from cached per-target matrices.

    Args:
        scm: the model; for ``d <= 32`` every target's matrix is made here, up to
            ``DO_MATRIX_MAX_D`` each one on its first draw, and above that none (one scaled
            mixing matrix for every target, made here).
    """

    def __init__(self, scm: LinearGaussianSCM) -> None:
        # A weak reference: :func:`sampler_for` keys samplers weakly by their SCM, which a strong
        # one would keep alive for ever.
        self._scm = weakref.ref(scm)
        self._n_nodes = d = scm.n_nodes
        self._scaled: FloatArray | None = None
        self._matrices: list[FloatArray | None] = []
        if d <= BLOCK_MAX_D:
            self._matrices = do_matrix_block(scm)
        elif d <= DO_MATRIX_MAX_D:
            self._matrices = [None] * d
        else:
            self._scaled = readonly(unit_scaled_mixing(scm.mixing, scm.noise_std))

    def __reduce__(self) -> tuple[object, tuple[LinearGaussianSCM]]:
        """Pickles as its SCM: unpickling asks :func:`sampler_for` again, so a pickled session
        (an env checkpointed mid-episode) gets the sampler of the unpickled SCM, whose matrices
        are the same bit for bit (a weak reference cannot be pickled)."""
        scm = self._scm()
        assert scm is not None, "a sampler outlived its SCM"
        return sampler_for, (scm,)

    def draw(
        self, var: int, value: float, n: int, rng: np.random.Generator, out: FloatArray | None
    ) -> FloatArray:
        """:meth:`~acdb_gym.core.worlds.linear.LinearGaussianSCM.sample_do` without its argument checks
        (the session has made them): ``n`` rows, written into ``out`` when it is given.

        ``out`` must be a writable C-contiguous float64 ``(n, d)`` array.
        """
        if self._scaled is not None:
            scm = self._scm()
            assert scm is not None, "a sampler outlived its SCM"
            noise = rng.standard_normal((n, self._n_nodes))
            return rank_one_do(self._scaled, scm.mixing, var, value, noise, out)
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


def do_matrix_blocks(scms: Sequence[LinearGaussianSCM]) -> FloatArray:
    """``np.stack(do_matrix_block(scm))`` of each SCM (all of one size), as one
    ``(k, d, d, d)`` array: the same elementwise steps on all of them at once, so the same
    bits."""
    d = scms[0].n_nodes
    mixing = np.stack([scm.mixing for scm in scms])
    mixing.reshape(len(scms), -1)[:, :: d + 1] = 1.0
    scaled = np.stack([scm.noise_std for scm in scms])[:, :, None] * mixing
    block = np.empty((len(scms), d, d, d))
    np.multiply(scaled.transpose(0, 2, 1)[:, :, :, None], mixing[:, :, None, :], out=block)
    np.subtract(scaled[:, None, :, :], block, out=block)
    block.reshape(len(scms), d * d, d)[:, :: d + 1] = mixing
    return block


class FamilySampler:
    """Draws ``do(X_var = value)`` samples of a non-Gaussian or nonlinear SCM through its own
    ``sample_do`` (the same draws as calling it directly)."""

    def __init__(
        self, scm: LinearNonGaussianSCM | NonlinearSCM | LatentSCM | FittedSCM | CauseEffectPair
    ) -> None:
        self._scm = scm

    def draw(
        self, var: int, value: float, n: int, rng: np.random.Generator, out: FloatArray | None
    ) -> FloatArray:
        """``n`` rows, written into ``out`` when it is given (as :meth:`InterventionSampler.draw`)."""
        return self._scm.sample_do(var, value, n, rng, out=out)
