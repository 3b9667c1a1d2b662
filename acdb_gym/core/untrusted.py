"""Reading what the package did not just write itself: bounded JSON, bounded lines and archive
members, names safe as file names, and files opened without following symbolic links.

Every file acdb_gym reads back (a results file, a transcript, a response-cache entry, a
policy's ``.zip``, an instance bank, a lock file) may have been written by someone else, so
each is parsed as hostile input through this module (SECURITY.md, "Every file read back is
hostile input"):

- :func:`loads` parses JSON whose size is checked before it is parsed, whose nesting is
  measured before the recursive parser sees it (:data:`MAX_DEPTH` levels, so nothing that walks
  the value later recurses past Python's limit), whose integers have at most
  :data:`MAX_INT_DIGITS` digits and whose strings are valid Unicode (no lone surrogate, which
  no UTF-8 file can be written with). Every refusal is an :class:`UntrustedInputError`
  (a ``ValueError``) naming what was wrong; JSON syntax errors stay ``json.JSONDecodeError``
  (also a ``ValueError``), so one ``except ValueError`` covers both.
- :func:`iter_lines` splits a file into lines without holding more than one line of at most
  ``max_line_bytes`` at a time; a longer line is reported by its length and never read whole.
- :func:`read_member` reads one member of a zip archive after checking its declared size, and
  reads at most that many bytes whatever the compressed stream holds (a decompression bomb
  stops at the limit).
- :func:`check_name` accepts only names that are safe as one path component (no separator, no
  leading dot, bounded length), for the record fields that become file names.
- :func:`open_nofollow` and :func:`write_nofollow` refuse a symbolic link in the last path
  component (``O_NOFOLLOW``), so a link planted in a run directory is never written through.

This module needs only the standard library and NumPy, so every layer can use it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import numpy as np

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "NAME_PATTERN",
    "Line",
    "UntrustedInputError",
    "check_name",
    "is_safe_name",
    "iter_lines",
    "json_depth",
    "loads",
    "open_nofollow",
    "read_file",
    "read_member",
    "write_nofollow",
]

MAX_DEPTH: Final = 64
"""The deepest nesting of arrays and objects :func:`loads` parses (a result row nests 3 deep)."""

MAX_INT_DIGITS: Final = 40
"""The longest integer :func:`loads` parses (``10**40`` is past any count, seed or token total)."""

NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
"""A name safe as one path component: a letter or digit, then up to 63 letters, digits or
``_.+-`` (no separator, no leading dot, so never ``..``)."""


class UntrustedInputError(ValueError):
    """Input that is refused before it is parsed or used: too large, nested too deeply, a
    number too long, a name that is not a safe file name, or a symbolic link."""


# --------------------------------------------------------------------------- JSON
_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")
_DIGITS_AS_ONES: Final = bytes.maketrans(b"0123456789", b"1" * 10)
_CHUNK: Final = 1 << 20


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text, without parsing it.

    Strings are cut out first (a bracket inside one does not count); for text that is not
    valid JSON the count is an estimate, which :func:`loads` only uses to refuse early.

    >>> json_depth(b'{"a": [1, [2, "]]]"]]}'), json_depth(b'"x"'), json_depth(b"[" * 5)
    (3, 0, 5)
    """
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    opens = brackets.count(b"[") + brackets.count(b"{")
    if opens <= 1:
        return opens
    deepest = 0
    level = 0
    for start in range(0, len(brackets), _CHUNK):
        chunk = np.frombuffer(brackets[start : start + _CHUNK], dtype=np.uint8)
        steps = np.where((chunk == ord("[")) | (chunk == ord("{")), 1, -1).astype(np.int64)
        levels = level + np.cumsum(steps)
        deepest = max(deepest, int(levels.max()))
        level = int(levels[-1])
    return deepest


def _int_parser(max_digits: int) -> Callable[[str], int]:
    def parse_int(text: str) -> int:
        digits = len(text) - text.startswith("-")
        if digits > max_digits:
            raise UntrustedInputError(f"an integer of {digits} digits (at most {max_digits})")
        return int(text)

    return parse_int


def _refuse_constant(name: str) -> float:
    raise UntrustedInputError(f"{name} is not a JSON number")


def loads(
    data: str | bytes,
    *,
    max_bytes: int,
    max_depth: int = MAX_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
    allow_nan: bool = True,
) -> Any:
    """Parse JSON from an untrusted source (see the module docstring).

    Args:
        data: the text, or its UTF-8 bytes.
        max_bytes: the longest text parsed, in UTF-8 bytes.
        max_depth: the deepest nesting of arrays and objects parsed.
        max_int_digits: the longest integer parsed (at most Python's own limit, 4,300; a
            response cache keeps a model's numbers as it sent them).
        allow_nan: accept ``NaN`` and ``Infinity`` (Python's ``json`` writes them); without it
            they are refused.

    Raises:
        UntrustedInputError: text longer than ``max_bytes``, nested deeper than ``max_depth``,
            an integer longer than ``max_int_digits`` digits, a lone surrogate, invalid
            UTF-8, or (without ``allow_nan``) a non-finite constant.
        json.JSONDecodeError: text that is not JSON.

    >>> loads(b'{"a": [1, 2.5, null]}', max_bytes=100)
    {'a': [1, 2.5, None]}
    >>> loads("[" * 65 + "]" * 65, max_bytes=1000)
    Traceback (most recent call last):
    ...
    acdb_gym.core.untrusted.UntrustedInputError: JSON nested 65 levels deep (at most 64)
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise UntrustedInputError(f"JSON text of {len(raw)} bytes (at most {max_bytes})")
    # Counting brackets is an upper bound on the depth: most texts need no more.
    if raw.count(b"[") + raw.count(b"{") > max_depth:
        depth = json_depth(raw)
        if depth > max_depth:
            raise UntrustedInputError(f"JSON nested {depth} levels deep (at most {max_depth})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UntrustedInputError(f"invalid UTF-8 at byte {error.start + 1}") from None
    constant = None if allow_nan else _refuse_constant
    # Only a text with a long run of digits can hold a long integer: the others skip the hook.
    long_digits = b"1" * (max_int_digits + 1) in raw.translate(_DIGITS_AS_ONES)
    parse_int = _int_parser(max_int_digits) if long_digits else None
    value = json.loads(text, parse_int=parse_int, parse_constant=constant)
    if _SURROGATE_ESCAPE.search(raw):
        _check_unicode(value)
    return value


def _check_unicode(value: Any) -> None:
    """Refuse a lone surrogate anywhere in a parsed value (it cannot be written as UTF-8)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise UntrustedInputError("a string with a lone surrogate") from None


def read_file(path: Path, *, max_bytes: int, follow_links: bool = True) -> bytes:
    """A whole file of at most ``max_bytes`` bytes (never more is read).

    Raises:
        UntrustedInputError: a longer file, or (without ``follow_links``) a symbolic link.
        OSError: the file cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY) if follow_links else open_nofollow(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise UntrustedInputError(f"{path} is larger than {max_bytes} bytes")
    return raw


# --------------------------------------------------------------------------- lines
@dataclass(frozen=True)
class Line:
    """One line of a file read by :func:`iter_lines`.

    Attributes:
        number: its 1-based line number.
        offset: the byte offset of its first byte.
        length: its length in bytes, without the newline.
        text: its bytes without the newline, or None when longer than the limit (not read).
        complete: it ends with a newline (only the last line of a file may not).
    """

    number: int
    offset: int
    length: int
    text: bytes | None
    complete: bool


def iter_lines(handle: IO[bytes], *, max_line_bytes: int) -> Iterator[Line]:
    """The lines of a binary file, holding at most one line of ``max_line_bytes`` in memory.

    Blank lines are counted but not yielded. A line longer than ``max_line_bytes`` is yielded
    with ``text=None`` and its length, its bytes skipped in blocks.

    >>> import io
    >>> [(x.number, x.text, x.complete) for x in iter_lines(io.BytesIO(b"a\\n\\nbcd"),
    ...                                                     max_line_bytes=2)]
    [(1, b'a', True), (3, None, False)]
    """
    offset = 0
    number = 0
    while True:
        piece = handle.readline(max_line_bytes + 1)
        if not piece:
            return
        number += 1
        length = len(piece)
        # readline stops after the limit: a piece that long without its newline is cut.
        too_long = length > max_line_bytes and not piece.endswith(b"\n")
        while too_long and not piece.endswith(b"\n"):
            piece = handle.readline(_CHUNK)
            if not piece:
                break
            length += len(piece)
        complete = piece.endswith(b"\n")
        length -= complete
        if too_long:
            yield Line(number, offset, length, None, complete)
        else:
            text = piece[:-1] if complete else piece
            if text.strip():
                yield Line(number, offset, length, text, complete)
        offset += length + complete


# --------------------------------------------------------------------------- archives
def read_member(archive: zipfile.ZipFile, name: str, *, max_bytes: int) -> bytes:
    """The bytes of one member of a zip archive, refused before any is read when its declared
    size is over ``max_bytes``; at most ``max_bytes`` bytes are ever decompressed.

    Raises:
        UntrustedInputError: the member is larger than ``max_bytes`` (declared or decompressed).
        KeyError: no such member.
        zipfile.BadZipFile: a corrupt member (e.g. a CRC that does not match).
    """
    info = archive.getinfo(name)
    if info.file_size > max_bytes:
        raise UntrustedInputError(
            f"member {name!r} declares {info.file_size} bytes (at most {max_bytes})"
        )
    with archive.open(info) as member:
        data = member.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UntrustedInputError(f"member {name!r} inflates past {max_bytes} bytes")
    return data


# --------------------------------------------------------------------------- names and paths
def is_safe_name(text: object) -> bool:
    """Whether ``text`` is a :data:`NAME_PATTERN` name, safe as one path component.

    >>> is_safe_name("v1-n3"), is_safe_name("../x"), is_safe_name(".lock"), is_safe_name("a/b")
    (True, False, False, False)
    """
    return isinstance(text, str) and NAME_PATTERN.fullmatch(text) is not None


def check_name(text: object, *, what: str) -> str:
    """``text`` when it is safe as one path component (:func:`is_safe_name`).

    Raises:
        UntrustedInputError: naming ``what`` and the value (cut to 60 characters).
    """
    if not is_safe_name(text):
        shown = repr(text)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise UntrustedInputError(
            f"{what} must be 1-64 letters, digits or _.+- starting with a letter or digit, "
            f"got {shown}"
        )
    assert isinstance(text, str)
    return text


def open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` with ``O_NOFOLLOW``: a symbolic link as the last component is refused.

    Raises:
        UntrustedInputError: ``path`` is a symbolic link.
        OSError: any other failure to open it.
    """
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UntrustedInputError(
                f"{path} is a symbolic link; acdb_gym does not follow links it did not make "
                "(remove it)"
            ) from None
        raise


def write_nofollow(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (created or truncated) without following a link there.

    Raises:
        UntrustedInputError: ``path`` is a symbolic link; nothing is written.
    """
    fd = open_nofollow(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
