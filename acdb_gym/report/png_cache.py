"""Plots drawn once per content: a PNG carries the digest of what it shows, and a report that
would draw the same content again keeps the file instead (DESIGN §10, "Report").

A plot's key is a SHA-256 over its kind, the package and matplotlib versions and the ``repr``
of the values it draws (frozen dataclasses of floats and strings, whose ``repr`` is exact). It
is stored in the PNG as a ``tEXt`` chunk under :data:`KEY_FIELD`; :func:`save_png` draws and
writes only when the file at the path does not carry the same key. Nothing else is cached: a
changed value, a new version, a missing or foreign file all draw anew.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import struct
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from acdb_gym import __version__

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["KEY_FIELD", "plot_key", "png_text", "save_png"]

KEY_FIELD: Final = "acdb-plot-key"
"""The PNG ``tEXt`` keyword holding a plot's key."""

_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
_MAX_SCAN: Final = 1 << 16
"""Bytes read from a PNG's start to find the key (matplotlib writes text chunks first)."""


def plot_key(kind: str, content: object) -> str:
    """The key of a plot of ``kind`` showing ``content`` (anything with an exact ``repr``)."""
    text = repr((kind, __version__, _matplotlib_version(), content))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.cache
def _matplotlib_version() -> str:
    """The installed matplotlib's version, read from its metadata (no import of matplotlib,
    which a report that redraws nothing does not need)."""
    try:
        return importlib.metadata.version("matplotlib")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a report needs it
        return "unknown"


def png_text(path: Path, keyword: str) -> str | None:
    """The ``tEXt`` value under ``keyword`` among the first chunks of the PNG at ``path``; None
    for a missing or unreadable file, a file that is no PNG, or no such chunk before the
    image data."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_MAX_SCAN)
    except OSError:
        return None
    if not head.startswith(_SIGNATURE):
        return None
    offset = len(_SIGNATURE)
    while offset + 8 <= len(head):
        length, kind = struct.unpack(">I4s", head[offset : offset + 8])
        body = head[offset + 8 : offset + 8 + length]
        if kind == b"IDAT" or len(body) < length:
            return None
        if kind == b"tEXt":
            name, _, value = body.partition(b"\x00")
            if name == keyword.encode("latin-1"):
                return value.decode("latin-1")
        offset += 12 + length
    return None


def save_png(path: str | Path, key: str, figure: Callable[[], Figure], *, dpi: int) -> Path:
    """Write ``figure()`` as a PNG at ``path`` carrying ``key``, unless the file there already
    carries it (then the figure is not even built).

    Returns:
        The path.
    """
    target = Path(path)
    if target.is_file() and not target.is_symlink() and png_text(target, KEY_FIELD) == key:
        return target
    figure().savefig(target, dpi=dpi, metadata={KEY_FIELD: key})
    return target
