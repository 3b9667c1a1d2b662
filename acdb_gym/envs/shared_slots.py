"""Write-once slots handed out as read-only mappings of one file (DESIGN §8, "Observations are
never shared"): the stats mode's covariance block on large worlds, where a regime's slot is
``8 d²`` bytes (8 MB at d = 1,000) and copying the earlier regimes' slots into a new block on
every step costs more than the step's draw.

A regime's covariance is written once, into an anonymous shared-memory file (``memfd``), and
never changes while an observation showing it is held. Every observation is a new read-only
mapping of its own address range: its filled slots map the file's pages, its unused slots map
the zero page, and the page where the last filled slot ends, which the next slot shares in the
file, is a private copy. So no two observations share an address (``np.shares_memory`` is
false, as Gymnasium's checker asks), no observation can be written (the mapping is read-only
and no array can be made writable on it), a held observation never changes, and a step writes
only its new slot: no earlier slot is copied, and the pages are the same physical memory, not
a copy per observation. Linux only (``os.memfd_create`` and ``mmap`` with ``MAP_FIXED``
through ctypes); :func:`available` says whether this platform has them.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import sys
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from acdb_gym.core.types import FloatArray

__all__ = ["SharedSlots", "available"]

_MAP_FIXED = 0x10
"""Linux's ``MAP_FIXED``: map at the address given (inside a range this module reserved)."""
_MAP_NORESERVE = 0x4000
"""Linux's ``MAP_NORESERVE``: reserving an observation's address range commits no memory."""
_MADV_POPULATE_WRITE = 23
"""Linux's ``MADV_POPULATE_WRITE`` (5.14+): allocate a range's pages with one call."""


def _libc_calls() -> tuple[object, object, object] | None:
    """libc's ``mmap``, ``munmap`` and ``mprotect`` with their C signatures, or None."""
    if not sys.platform.startswith("linux") or not hasattr(os, "memfd_create"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mapper, unmapper, protector = libc.mmap, libc.munmap, libc.mprotect
    except (OSError, AttributeError):  # pragma: no cover - a libc without them
        return None
    size, address = ctypes.c_size_t, ctypes.c_void_p
    mapper.restype = address
    mapper.argtypes = [address, size, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    unmapper.restype = ctypes.c_int
    unmapper.argtypes = [address, size]
    protector.restype = ctypes.c_int
    protector.argtypes = [address, size, ctypes.c_int]
    return mapper, unmapper, protector


_LIBC = _libc_calls()
_MAP_FAILED = ctypes.c_void_p(-1).value


def available() -> bool:
    """Whether this platform can hand out slots as mappings (Linux with ``memfd_create``)."""
    return _LIBC is not None


def _checked(result: int, call: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{call} failed: {os.strerror(error)}")


def _map(address: int | None, length: int, prot: int, flags: int, fd: int = -1) -> int:
    assert _LIBC is not None
    mapped = _LIBC[0](address, length, prot, flags, fd, 0)  # type: ignore[operator]
    if mapped is None or mapped == _MAP_FAILED:
        error = ctypes.get_errno()
        raise OSError(error, f"mmap of {length} bytes failed: {os.strerror(error)}")
    return int(mapped)


def _unmap(address: int, length: int) -> None:
    assert _LIBC is not None
    _checked(_LIBC[1](address, length), "munmap")  # type: ignore[operator]


def _protect(address: int, length: int, prot: int) -> None:
    assert _LIBC is not None
    _checked(_LIBC[2](address, length, prot), "mprotect")  # type: ignore[operator]


def _page_ceil(size: int) -> int:
    return -(-size // mmap.PAGESIZE) * mmap.PAGESIZE


class _View:
    """One observation's address range: the base every array handed out for it refers to,
    unmapped when the last of them is let go of. It offers no buffer, so numpy cannot make an
    array on it writable."""

    __slots__ = ("__array_interface__", "__weakref__", "_address", "_length")

    def __init__(self, address: int, length: int, shape: tuple[int, ...]) -> None:
        self._address = address
        self._length = length
        self.__array_interface__ = {
            "shape": shape,
            "typestr": "<f8",
            "data": (address, True),  # read-only
            "version": 3,
        }

    def __del__(self) -> None:
        with contextlib.suppress(OSError, TypeError):  # TypeError: at interpreter exit
            _unmap(self._address, self._length)


class _SlotFile:
    """An anonymous shared-memory file of the block's size (sparse: a page takes memory once
    written), this process's writable mapping of it, and the views handed out from it."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.size = int(np.prod(shape)) * 8
        self.length = _page_ceil(self.size)
        self.pid = os.getpid()
        self.fd = os.memfd_create("acdb-slots", os.MFD_CLOEXEC)
        try:
            os.ftruncate(self.fd, self.length)
            self.mapping = mmap.mmap(self.fd, self.length, flags=mmap.MAP_SHARED)
        except OSError:
            os.close(self.fd)
            raise
        self.block: FloatArray = np.ndarray(shape, dtype=np.float64, buffer=self.mapping)
        self.address = int(self.block.__array_interface__["data"][0])
        self.views: weakref.WeakSet[_View] = weakref.WeakSet()
        self.populated = 0  # slots whose pages are allocated

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.close(self.fd)

    def populate(self, start: int, stop: int) -> None:
        """Allocate the pages of slots ``start .. stop - 1`` with one call before they are
        written (faulting megabytes in page by page costs more than writing them); nothing
        where the call is not supported (it only saves time)."""
        stop = min(stop, len(self.block))
        start = max(start, self.populated)
        if stop <= start:
            return
        slot_bytes = self.size // len(self.block)
        first = start * slot_bytes // mmap.PAGESIZE * mmap.PAGESIZE
        with contextlib.suppress(OSError, ValueError):
            self.mapping.madvise(_MADV_POPULATE_WRITE, first, stop * slot_bytes - first)
        self.populated = stop

    def view(self, filled_bytes: int) -> _View:
        """A new read-only mapping of the block: the file's first ``filled_bytes``, zeros after."""
        address = _map(
            None,
            self.length,
            mmap.PROT_READ,
            mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE,
        )
        try:
            whole = filled_bytes // mmap.PAGESIZE * mmap.PAGESIZE
            if whole:
                _map(address, whole, mmap.PROT_READ, mmap.MAP_SHARED | _MAP_FIXED, self.fd)
            if filled_bytes > whole:  # the next slot starts on this page: a private copy
                page = address + whole
                _protect(page, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE)
                ctypes.memmove(page, self.address + whole, filled_bytes - whole)
                _protect(page, mmap.PAGESIZE, mmap.PROT_READ)
        except OSError:
            _unmap(address, self.length)
            raise
        view = _View(address, self.length, self.block.shape)
        self.views.add(view)
        return view


class SharedSlots:
    """:class:`~acdb_gym.envs.slot_blocks.SlotBlocks`' contract without copies: a zero-padded
    block of write-once slots, each observation a read-only array of it that shares no address
    with another (see the module docstring).

    Within an episode slot ``k`` is written once, by ``fill``, and never changes. A new episode
    writes its slots into a pooled file no observation of an earlier episode is held from
    (otherwise into a new file; a file dropped from the pool lives until its last observation is
    let go of), so an env allocates a file's pages once, not once per episode. Two files cover a
    caller who still holds the last episode's observation while it resets.

    Args:
        shape: the block's shape; slot ``k`` is ``block[k]``.
        pool_size: files kept for reuse.
    """

    def __init__(self, shape: tuple[int, ...], *, pool_size: int = 2) -> None:
        self._shape = shape
        self._pool_size = pool_size
        self._files: list[_SlotFile] = []
        self._file: _SlotFile | None = None
        self._written = 0

    def __getstate__(self) -> dict[str, object]:
        """Pickles without the files: the next episode that writes a slot makes one."""
        return {**self.__dict__, "_files": [], "_file": None, "_written": 0}

    def new_episode(self) -> None:
        """Forget the episode's slots; the next slot written picks a file (:meth:`_free_file`)."""
        self._file = None
        self._written = 0

    def snapshot(self, filled: Sequence[FloatArray]) -> FloatArray:
        """:meth:`fill_snapshot` of ``len(filled)`` slots, slot ``k`` a copy of ``filled[k]``."""

        def copy(slot: int, out: FloatArray) -> None:
            out[...] = filled[slot]

        return self.fill_snapshot(len(filled), copy)

    def fill_snapshot(self, count: int, fill: Callable[[int, FloatArray], None]) -> FloatArray:
        """A read-only array equal to the block with the first ``count`` slots filled and zeros
        after, sharing no address with any other array handed out; each slot this episode has
        not written yet is written by ``fill(slot, view)`` straight into the file (``fill`` must
        write the same values for a slot every time)."""
        file = self._file
        if file is None or file.pid != os.getpid():  # a forked child writes its own files
            file = self._file = self._free_file()
            self._written = 0
        file.populate(self._written, count)
        for slot in range(self._written, count):
            fill(slot, file.block[slot])
        self._written = max(self._written, count)
        slot_bytes = file.size // self._shape[0]
        return np.asarray(file.view(count * slot_bytes))

    def _free_file(self) -> _SlotFile:
        """A pooled file of this process that no held observation maps, or a new one."""
        pid = os.getpid()
        self._files = [file for file in self._files if file.pid == pid]
        for file in self._files:
            if not file.views:
                return file
        file = _SlotFile(self._shape)
        if len(self._files) >= self._pool_size:
            self._files.pop(0)  # still held; it lives as long as its observations
        self._files.append(file)
        return file
