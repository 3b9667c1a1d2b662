"""The pool of read-only slot blocks the observations hand out (DESIGN §8, "Observations are
never shared"): each observation gets its own block, no two held observations share memory,
and a block the caller has let go of is reused with only the slots filled since written.
Blocks of large worlds are lazy mappings whose fresh pages are faulted in with one call.
"""

from __future__ import annotations

import contextlib
import mmap
import sys
from collections.abc import Callable, Sequence

import numpy as np

from acdb_gym.core.types import FloatArray

__all__ = ["SlotBlocks"]


class SlotBlocks:
    """Read-only copies of a write-once, zero-padded block of slots, one per observation.

    Within an episode slot ``k`` is filled once and never changes, so a block handed out earlier
    and since let go of by the caller differs from the current state only in the slots filled
    after it: :meth:`snapshot` reuses such a block and writes just those. A block is let go of
    when nothing but this pool refers to it (each handed-out array is a view of its block, so a
    caller who keeps the observation, or any slice of it, keeps the block). Blocks are
    read-only outside :meth:`snapshot` and so are their views, so a caller cannot change a block
    the pool will reuse.

    Args:
        shape: the block's shape; slot ``k`` is ``block[k]``.
        pool_size: blocks kept for reuse (a caller who drops each observation at the next step
            leaves one free at every step with 3).
    """

    def __init__(self, shape: tuple[int, ...], *, pool_size: int = 3) -> None:
        self._shape = shape
        self._pool_size = pool_size
        self._episode = 0
        # Each entry: [block, slots filled in it, episode they belong to, slots ever written].
        self._entries: list[list[object]] = []

    def __getstate__(self) -> dict[str, object]:
        """Pickles without the pool: its blocks are a cache of what :meth:`snapshot` rebuilds
        (an unpickled read-only block could not be made writable again to be reused)."""
        return {**self.__dict__, "_entries": []}

    def new_episode(self) -> None:
        """Forget the episode's slots: a reused block is cleared of them before it is reused."""
        self._episode += 1

    def snapshot(self, filled: Sequence[FloatArray]) -> FloatArray:
        """A read-only array equal to the block with ``filled[k]`` in slot ``k`` and zeros in
        the other slots, sharing memory with no array handed out earlier that is still held."""

        def copy(slot: int, out: FloatArray) -> None:
            out[...] = filled[slot]

        return self.fill_snapshot(len(filled), copy)

    def fill_snapshot(self, count: int, fill: Callable[[int, FloatArray], None]) -> FloatArray:
        """:meth:`snapshot` of ``count`` filled slots, each slot the block still lacks written
        by ``fill(slot, view)`` straight into the block (a slot computed there is never
        allocated and copied). ``fill`` must write the same values for a slot every time."""
        entry = self._free_entry()
        if entry is None:
            block = _zero_block(self._shape)
            start = 0
            entry = [block, 0, self._episode, 0]
            if len(self._entries) >= self._pool_size:
                self._entries.pop(0)  # the oldest is still held; the caller keeps it
            self._entries.append(entry)
        else:
            block = entry[0]  # type: ignore[assignment]
            start = int(entry[1])  # type: ignore[call-overload]
            block.flags.writeable = True
            if entry[2] != self._episode or start > count:
                block[:start] = 0.0
                start = 0
        touched = int(entry[3])  # type: ignore[call-overload]
        _populate(block, max(start, touched), count)  # slots never written before
        for slot in range(start, count):
            fill(slot, block[slot])
        block.flags.writeable = False
        entry[1] = count
        entry[2] = self._episode
        entry[3] = max(touched, count)
        return block[...]

    def _free_entry(self) -> list[object] | None:
        """The pooled block no caller holds with the most slots of this episode, if any."""
        best: list[object] | None = None
        for entry in self._entries:
            # References: the entry's list and getrefcount's own argument.
            if sys.getrefcount(entry[0]) > _UNHELD_REFCOUNT:
                continue
            if best is None or _reuse_rank(entry, self._episode) > _reuse_rank(best, self._episode):
                best = entry
        return best


_LAZY_BLOCK_BYTES = 1 << 30
"""Blocks from this size up are mapped with ``MAP_NORESERVE`` on Linux (see :func:`_zero_block`)."""

_MAP_NORESERVE = 0x4000
"""Linux's ``MAP_NORESERVE`` (Python's ``mmap`` module does not export it)."""


def _zero_block(shape: tuple[int, ...]) -> FloatArray:
    """A zero block whose pages the OS provides, zero-filled, only once written.

    ``np.zeros`` does that too, but Linux's default overcommit rule refuses one allocation
    larger than the machine's memory, which a stats block of a large world is (30 GB at
    d = 2,000); a private anonymous mapping with ``MAP_NORESERVE`` is not refused, and only the
    slots an episode fills become resident.
    """
    size = int(np.prod(shape)) * 8
    if size < _LAZY_BLOCK_BYTES or not sys.platform.startswith("linux"):
        return np.zeros(shape)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
    # One array straight on the mapping, so views of the block name it as their base (the
    # pool's reference count).
    return np.ndarray(shape, dtype=np.float64, buffer=mmap.mmap(-1, size, flags=flags))


_MADV_POPULATE_WRITE = 23
"""Linux's ``MADV_POPULATE_WRITE`` (5.14+): fault a range's pages in with one call."""


def _populate(block: FloatArray, start: int, stop: int) -> None:
    """Fault in the pages of slots ``start .. stop - 1`` of a mapped block (:func:`_zero_block`)
    with one call before they are written: a slot of a large world is megabytes, and faulting
    its pages in one by one as they are first written costs more than writing them. Nothing
    for a block that is no mapping, or where the call is not supported (it only saves time)."""
    mapping = block.base
    if stop <= start or not isinstance(mapping, mmap.mmap):
        return
    slot_bytes = block[0].nbytes
    first = start * slot_bytes // mmap.PAGESIZE * mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError):  # an older kernel, or no such call here
        mapping.madvise(_MADV_POPULATE_WRITE, first, stop * slot_bytes - first)


def _reuse_rank(entry: list[object], episode: int) -> int:
    return int(entry[1]) if entry[2] == episode else -1  # type: ignore[call-overload]


def _refcount_of_a_list_item() -> int:
    entry = [np.zeros(1)]
    return sys.getrefcount(entry[0])


_UNHELD_REFCOUNT = _refcount_of_a_list_item()
"""``sys.getrefcount`` of an array referred to only by one list (measured, not assumed)."""
