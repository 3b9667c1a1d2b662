"""Welch's t-test and the Brown–Forsythe test of many variables at once (private).

:func:`acdb_gym.discovery.shift.shift_pvalues` used to call ``scipy.stats.ttest_ind`` and
``scipy.stats.f_oneway``, whose argument handling costs about a millisecond per call, more than
the arithmetic at the sizes of the ladder; the design env runs one shift test per step. This
module performs the same floating-point operations as those two functions (scipy 1.17), in the
same order and on arrays of the same memory layout, so the p-values are bit-identical to
scipy's (the tests compare them on random data, constant columns included), and it keeps the
half that depends only on the observational sample, which an episode reuses at every step.

Arrays hold one variable per row (``(d, n)``), the layout scipy works in after it moves the
sample axis last. numpy sums a contiguous row pairwise but a strided one element by element, so
the layout decides the last bits: ``data.T`` of a C-ordered ``(n, d)`` sample reproduces
scipy on the whole matrix, ``np.ascontiguousarray(data.T)`` reproduces scipy on each column
alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from acdb_gym.core.types import BoolMatrix, FloatArray

__all__ = ["ReferenceRows", "ShiftReference", "stacked_pvalues"]


@dataclass(frozen=True, eq=False)
class _Group:
    """What the two tests need of one sample: its rows and their summaries."""

    rows: FloatArray
    mean: FloatArray
    var: FloatArray
    deviations: FloatArray
    deviations_constant: BoolMatrix
    constant: BoolMatrix
    size: int
    """Observations per row (``rows`` may hold only the first column, for a stacked group)."""

    @classmethod
    def of(cls, rows: FloatArray) -> _Group:
        n = rows.shape[-1]
        centred = rows - np.mean(rows, axis=-1, keepdims=True)
        var = np.mean(centred**2, axis=-1)
        size = np.asarray(n, dtype=rows.dtype)
        var *= size / (size - 1)  # scipy's ddof=1 correction, applied as it applies it
        deviations = np.abs(rows - np.median(rows, axis=-1, keepdims=True))
        return cls(
            rows=rows,
            mean=np.mean(rows, axis=-1),
            var=var,
            deviations=deviations,
            deviations_constant=np.all(np.diff(deviations, axis=-1) == 0, axis=-1),
            constant=rows.min(axis=-1) == rows.max(axis=-1),
            size=n,
        )


class ShiftReference:
    """The observational half of the shift test, computed once for many experiments.

    Args:
        rows: observational samples, one variable per row, ``(d, n_obs)`` with ``n_obs >= 2``,
            finite (checked by the caller). Kept by reference, never modified.
    """

    def __init__(self, rows: FloatArray) -> None:
        self._obs = _Group.of(rows)

    @classmethod
    def many(cls, rows: FloatArray) -> list[ShiftReference]:
        """The references of ``k`` samples at once: ``rows`` is ``(k, d, n_obs)``
        (C-contiguous, as the constructor takes each), and reference ``i`` equals
        ``ShiftReference(rows[i])`` bit for bit (every summary is a reduction along one
        contiguous row, so stacking changes no last bit); each keeps its block by reference."""
        return cls._many(rows)[1]

    @classmethod
    def _many(cls, rows: FloatArray) -> tuple[_Group, list[ShiftReference]]:
        """:meth:`many`'s references and the stacked group they are parts of."""
        k, d, n = rows.shape
        group = _Group.of(rows.reshape(k * d, n))
        references = []
        for i in range(k):
            part = slice(i * d, (i + 1) * d)
            reference = object.__new__(cls)
            reference._obs = _Group(
                rows=group.rows[part],
                mean=group.mean[part],
                var=group.var[part],
                deviations=group.deviations[part],
                deviations_constant=group.deviations_constant[part],
                constant=group.constant[part],
                size=n,
            )
            references.append(reference)
        return group, references

    def pvalues(self, rows: FloatArray) -> FloatArray:
        """:func:`acdb_gym.discovery.shift.shift_pvalues` of every variable against ``rows``
        (``(d, n_int)``, ``n_int >= 2``, finite): Welch's t-test and the Brown–Forsythe test,
        Bonferroni-combined, with the degenerate cases documented there."""
        return _combined_pvalues(self._obs, _Group.of(rows))


def stacked_pvalues(references: Sequence[ShiftReference], rows: FloatArray) -> FloatArray:
    """:meth:`ShiftReference.pvalues` of ``k`` references at once: ``rows`` is ``(k, d, n_int)``
    (C-contiguous, finite, ``n_int >= 2``) and row ``i`` of the ``(k, d)`` result equals
    ``references[i].pvalues(rows[i])`` bit for bit (every reduction runs along one contiguous
    row of the same length either way, so stacking changes no last bit). A vectorized env tests
    the experiments of many worlds in one pass of numpy calls instead of one per world.
    """
    k, d, n = rows.shape
    if len(references) != k:
        raise ValueError(f"expected {k} references for {k} row blocks, got {len(references)}")
    groups = [reference._obs for reference in references]
    obs = _Group(
        rows=np.concatenate([group.rows[:, :1] for group in groups]),
        mean=np.concatenate([group.mean for group in groups]),
        var=np.concatenate([group.var for group in groups]),
        deviations=np.concatenate([group.deviations for group in groups]),
        deviations_constant=np.concatenate([group.deviations_constant for group in groups]),
        constant=np.concatenate([group.constant for group in groups]),
        size=groups[0].size if groups else 0,
    )
    result = _combined_pvalues(obs, _Group.of(rows.reshape(k * d, n)))
    return result.reshape(k, d)


class ReferenceRows:
    """The observational halves of ``slots`` worlds' shift tests in stacked arrays, so that
    tests of chosen (world, variable) rows run in one pass without gathering per world.

    Args:
        slots: how many worlds the table holds.
        n_nodes: variables per world.
        n_obs: observations per variable (every reference put in must have this many).
    """

    def __init__(self, slots: int, n_nodes: int, n_obs: int) -> None:
        d = n_nodes
        self.n_obs = n_obs
        # Two records per slot (:meth:`record`), every summary a view into them.
        self._floats = np.zeros((slots, d * (3 + n_obs)))
        self._flags = np.zeros((slots, 2 * d), dtype=np.bool_)
        self._first = self._floats[:, :d]
        self._mean = self._floats[:, d : 2 * d]
        self._var = self._floats[:, 2 * d : 3 * d]
        self._deviations = self._floats[:, 3 * d :].reshape(slots, d, n_obs)
        self._deviations_constant = self._flags[:, :d]
        self._constant = self._flags[:, d:]
        assert np.shares_memory(self._deviations, self._floats)

    @staticmethod
    def record(reference: ShiftReference) -> tuple[FloatArray, BoolMatrix]:
        """``reference``'s summaries as the two rows a slot holds (floats, flags)."""
        return ReferenceRows._records(reference._obs, (-1,))

    @staticmethod
    def many(rows: FloatArray) -> tuple[list[ShiftReference], FloatArray, BoolMatrix]:
        """``ShiftReference.many(rows)`` and the :meth:`record` of each reference, the
        records made stacked: row ``i`` of the floats and of the flags is ``record(i)``'s
        (the same values, concatenated in the same order)."""
        group, references = ShiftReference._many(rows)
        floats, flags = ReferenceRows._records(group, (len(rows), -1))
        return references, floats, flags

    @staticmethod
    def _records(group: _Group, shape: tuple[int, ...]) -> tuple[FloatArray, BoolMatrix]:
        """The slot records of the references held (stacked) in ``group``, each summary
        reshaped to ``shape`` (``(-1,)``: one world's record; ``(k, -1)``: a row per world):
        each variable's first observation, mean, variance and deviations, then the two flags,
        the layout :meth:`__init__` reads."""
        floats = np.concatenate(
            [
                group.rows[:, 0].reshape(shape),
                group.mean.reshape(shape),
                group.var.reshape(shape),
                group.deviations.reshape(shape),
            ],
            axis=-1,
        )
        flags = np.concatenate(
            [group.deviations_constant.reshape(shape), group.constant.reshape(shape)], axis=-1
        )
        return floats, flags

    def put(self, slots: np.ndarray, records: Sequence[tuple[FloatArray, BoolMatrix]]) -> None:
        """Hold ``records[i]`` (:meth:`record`) in slot ``slots[i]``.

        Raises:
            ValueError: a record of another world size or sample size than the table's.
        """
        self._floats[slots] = [record[0] for record in records]
        self._flags[slots] = [record[1] for record in records]

    def pvalues(self, slots: np.ndarray, variables: np.ndarray, rows: FloatArray) -> FloatArray:
        """The shift test of variable ``variables[i]`` of the world in slot ``slots[i]``
        against ``rows[i]`` (``(m, n_int)``, C-contiguous, finite, ``n_int >= 2``): entry ``i``
        equals ``reference.pvalues(experiment)[variables[i]]`` of that slot's reference and
        the experiment whose row ``variables[i]`` is ``rows[i]``, bit for bit (each summary a
        reduction along one contiguous row of the same length either way)."""
        obs = _Group(
            rows=self._first[slots, variables][:, None],
            mean=self._mean[slots, variables],
            var=self._var[slots, variables],
            deviations=self._deviations[slots, variables],
            deviations_constant=self._deviations_constant[slots, variables],
            constant=self._constant[slots, variables],
            size=self.n_obs,
        )
        return _combined_pvalues(obs, _Group.of(rows))


def _combined_pvalues(obs: _Group, inter: _Group) -> FloatArray:
    """Welch and Brown–Forsythe of each row of ``inter`` against the same row of ``obs``,
    Bonferroni-combined (the body of :meth:`ShiftReference.pvalues`)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p_mean = _welch(obs, inter)
        p_var = _brown_forsythe(obs, inter)
    p_mean = np.where(np.isfinite(p_mean), p_mean, 1.0)
    p_var = np.where(np.isfinite(p_var), p_var, 1.0)
    combined = np.minimum(1.0, 2.0 * np.minimum(p_mean, p_var))
    same = obs.rows[:, 0] == inter.rows[:, 0]
    result: FloatArray = np.where(obs.constant & inter.constant, np.where(same, 1.0, 0.0), combined)
    return result


def _welch(a: _Group, b: _Group) -> FloatArray:
    """``scipy.stats.ttest_ind(equal_var=False)``'s two-sided p-values."""
    n1, n2 = a.size, b.size
    vn1 = a.var / n1
    vn2 = b.var / n2
    df = (vn1 + vn2) ** 2 / (vn1**2 / (n1 - 1) + vn2**2 / (n2 - 1))
    df = np.where(np.isnan(df), 1.0, df)  # zero variances: any df gives the same answer
    t = np.divide(a.mean - b.mean, np.sqrt(vn1 + vn2))
    p: FloatArray = 2 * special.stdtr(df, -np.abs(t))
    return p


def _brown_forsythe(a: _Group, b: _Group) -> FloatArray:
    """``scipy.stats.f_oneway`` of the absolute deviations from each group's median."""
    first, second = a.deviations, b.deviations
    alldata = np.concatenate([first, second], axis=-1)
    bign = alldata.shape[-1]
    all_const = a.deviations_constant & b.deviations_constant
    all_same_const = all_const & (first[:, -1] == second[:, 0])
    offset = np.mean(alldata, axis=-1, keepdims=True)
    alldata = alldata - offset
    normalized_ss = np.sum(alldata, axis=-1) ** 2.0 / bign
    sstot = np.vecdot(alldata, alldata)  # over the last axis - normalized_ss
    ssbn = np.sum(first - offset, axis=-1) ** 2.0 / first.shape[-1]
    ssbn = ssbn + np.sum(second - offset, axis=-1) ** 2.0 / second.shape[-1]
    ssbn = ssbn - normalized_ss
    f = (ssbn / 1) / ((sstot - ssbn) / (bign - 2))
    f[all_const] = np.inf
    f[all_same_const] = np.nan
    p: FloatArray = special.fdtrc(1, bign - 2, f)
    return p
