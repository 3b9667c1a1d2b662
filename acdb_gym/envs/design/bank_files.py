"""Reading an instance bank's files as hostile input (:mod:`acdb_gym.envs.design.bank`).

A bank on disk may have been handed over by anyone, so nothing in it is used before it is
checked: ``bank.json`` is read within :data:`_MAX_INDEX_BYTES` through the bounded JSON reader
(:func:`acdb_gym.core.untrusted.loads`) and every value checked for its type
(:func:`parse_index`); every member of ``worlds.npz`` must be one the bank writes, with a
numeric dtype and a shape of ``n`` worlds of the level's sizes, read from its header before
its array is (:func:`read_arrays`), the declared total within ``max_bytes``; and the values
no generated world has (a budget past ``d - 1 + slack``, a non-finite observation) are refused
(:func:`check_values`). Every refusal is a :class:`BankError` naming what was wrong.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import Any, Final

import numpy as np

from acdb_gym.core.ladders.shipped import Level, LevelSpec, get_level
from acdb_gym.core.types import is_integer
from acdb_gym.core.untrusted import UntrustedInputError, loads, read_file

__all__ = [
    "ARRAYS_FILE",
    "BANK_FORMAT",
    "INDEX_FILE",
    "MAX_BANK_BYTES",
    "BankError",
    "check_values",
    "file_hash",
    "index_level",
    "parse_index",
    "read_arrays",
    "read_index_bytes",
]

BANK_FORMAT = 2
"""Version of the on-disk layout: 2 holds any family; :func:`~acdb_gym.envs.design.bank.load_bank`
also reads format 1 (linear-Gaussian worlds, the same arrays) and refuses any other."""

_READABLE_FORMATS = (1, BANK_FORMAT)

INDEX_FILE: Final = "bank.json"
"""The bank's index: format, level, seeds, digests and the SHA-256 of the arrays."""

ARRAYS_FILE: Final = "worlds.npz"
"""The bank's arrays."""

_INDEX = INDEX_FILE
_ARRAYS = ARRAYS_FILE


class BankError(ValueError):
    """A bank that cannot be used: missing, of another format, or failing a check (the
    message names which)."""


MAX_BANK_BYTES: Final = 4 << 30
"""The most bytes of arrays a bank's ``worlds.npz`` may declare by default (4 GiB)."""

_MAX_INDEX_BYTES: Final = 64 << 20
"""The largest ``bank.json`` read (10,000 worlds' seeds, digests and names are about 2 MB)."""


def read_index_bytes(source: Path) -> bytes:
    try:
        return read_file(source / _INDEX, max_bytes=_MAX_INDEX_BYTES)
    except (OSError, UntrustedInputError) as error:
        raise BankError(f"cannot read {source / _INDEX}: {error}") from None


_INDEX_KEYS: Final = ("format", "ladder", "level", "spec", "seeds", "digests", "sha256")


def parse_index(raw: bytes) -> dict[str, Any]:
    """``bank.json`` as a dict whose every value has its type (each refusal a BankError)."""
    try:
        index = loads(raw, max_bytes=_MAX_INDEX_BYTES)
    except ValueError as error:
        raise BankError(f"{_INDEX} is not JSON within the bounds ({error})") from None
    if not isinstance(index, dict):
        raise BankError(f"{_INDEX} is not a JSON object")
    missing = [key for key in _INDEX_KEYS if key not in index]
    if missing:
        raise BankError(f"{_INDEX} lacks {missing}")
    if index["format"] not in _READABLE_FORMATS or isinstance(index["format"], bool):
        raise BankError(
            f"bank format {repr(index['format'])[:20]}; expected one of {_READABLE_FORMATS}"
        )
    seeds = index["seeds"]
    n = len(seeds) if isinstance(seeds, list) else -1
    checks = {
        "ladder": (isinstance(index["ladder"], str), "a string"),
        "level": (isinstance(index["level"], str), "a string"),
        "spec": (isinstance(index["spec"], str), "a string"),
        "sha256": (isinstance(index["sha256"], str), "a string"),
        "seeds": (n > 0 and all(is_integer(x) and x >= 0 for x in seeds), "a list of seeds"),
        "digests": (_list_of(index["digests"], str, n), f"a list of {n} strings"),
        "dependence_measures": (
            _list_of(index.get("dependence_measures", [""] * n), str, n),
            f"a list of {n} strings",
        ),
        "variable_names": (_names_ok(index.get("variable_names"), n), f"a list of {n} names"),
    }
    for key, (ok, kind) in checks.items():
        if not ok:
            raise BankError(f"{_INDEX}: {key} must be {kind}")
    return index


def _list_of(value: object, kind: type, n: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(isinstance(x, kind) for x in value)


def _names_ok(value: object, n: int) -> bool:
    if value is None:
        return True
    return (
        isinstance(value, list)
        and len(value) == n
        and all(
            x is None or (isinstance(x, list) and all(isinstance(name, str) for name in x))
            for x in value
        )
    )


def index_level(index: dict[str, Any]) -> Level:
    try:
        level = get_level(index["ladder"], index["level"])
    except (KeyError, ValueError) as error:
        raise BankError(f"{_INDEX}: {error}") from None
    if repr(level.spec) != index["spec"]:
        raise BankError(
            f"level {index['level']} of ladder {index['ladder']} changed since the bank was "
            f"built: {index['spec'][:200]} then, {level.spec!r} now"
        )
    return level


_PER_WORLD: Final = {
    "seeds": "1",
    "budget": "1",
    "min_relevant_abs_rho": "1",
    "attempts": "1",
    "weak_edges": "1",
    "i_star": "d",
    "noise_std": "d",
    "noise_kinds": "d",
    "loc": "d",
    "scale": "d",
    "mechanism_kinds": "d",
    "mechanism_sizes": "d",
    "order": "d",
    "adjacency": "dd",
    "start_directed": "dd",
    "start_undirected": "dd",
    "weights": "dd",
    "d_obs": "nd",
    "score_knots": "dk",
    "score_values": "dk",
    "mechanism_parameters": "flat",
}
"""Every member a bank's ``worlds.npz`` may hold and the shape of one world's share of it:
a number, ``d`` numbers, ``d x d``, ``n_obs x d``, ``d x knots``, or a flat run of mechanism
parameters (at most ``64 (d + 1)`` a node)."""

_MAX_KNOTS: Final = 4096


def _expected_elements(kind: str, spec: LevelSpec, n: int) -> int:
    d = spec.d
    per_world = {
        "1": 1,
        "d": d,
        "dd": d * d,
        "nd": spec.n_obs * d,
        "dk": d * _MAX_KNOTS,
        "flat": d * 64 * (d + 1),
    }[kind]
    return n * per_world


def read_arrays(
    path: Path, spec: LevelSpec, n: int, *, max_bytes: int = MAX_BANK_BYTES
) -> dict[str, np.ndarray]:
    """The arrays of a bank's ``worlds.npz`` holding ``n`` worlds of ``spec``, every member's
    name, dtype and shape checked from its header (and the total against ``max_bytes``) before
    any array is read, and no member read past its declared size.

    Raises:
        BankError: an unexpected member, a pickled or object dtype, a shape that is not ``n``
            worlds of the spec's sizes, declared bytes past ``max_bytes``, or a corrupt file.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            headers = {
                info.filename: _header(archive, info, spec, n) for info in archive.infolist()
            }
            total = sum(size for _, size in headers.values())
            if total > max_bytes:
                raise BankError(
                    f"{path} declares {total} bytes of arrays, more than the limit of "
                    f"{max_bytes} (max_bytes)"
                )
            return {name: _array(archive, member) for member, (name, _) in headers.items()}
    except BankError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise BankError(f"{path} cannot be read: {error}") from None


def _header(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, spec: LevelSpec, n: int
) -> tuple[str, int]:
    """A member's array name and byte size, from its header, after every check."""
    name = info.filename.removesuffix(".npy")
    if name not in _PER_WORLD or not info.filename.endswith(".npy"):
        raise BankError(f"{_ARRAYS} holds an unexpected member {name!r}")
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        read = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = read(member)
    if dtype.hasobject or dtype.kind not in "biuf":
        raise BankError(f"{name} has dtype {dtype}, not numbers")
    elements = int(np.prod(shape, dtype=object))
    expected = _expected_elements(_PER_WORLD[name], spec, n)
    leading = name == "mechanism_parameters" or (len(shape) >= 1 and shape[0] == n)
    if not leading or elements > expected:
        raise BankError(
            f"{name} declares shape {tuple(shape)}, not {n} worlds of the level's sizes "
            f"(at most {expected} values)"
        )
    size = elements * dtype.itemsize
    if info.file_size > size + (1 << 16):
        raise BankError(f"{name} declares {info.file_size} bytes for {size} bytes of values")
    return name, size


def _array(archive: zipfile.ZipFile, member: str) -> np.ndarray:
    with archive.open(member) as handle:
        return np.lib.format.read_array(handle, allow_pickle=False)


def check_values(level: Level, arrays: dict[str, np.ndarray]) -> None:
    """Refuse values no generated world has: a budget outside ``[0, d - 1 + slack]``, a
    non-finite observation, weight or noise scale."""
    budget = arrays["budget"]
    high = level.spec.max_interventions
    if budget.size and (budget.min() < 0 or budget.max() > high):
        raise BankError(f"budget must be in [0, {high}], got {int(budget.max())}")
    for name in ("d_obs", "weights", "noise_std", "min_relevant_abs_rho"):
        if name in arrays and not np.isfinite(arrays[name]).all():
            raise BankError(f"{name} holds values that are not finite")


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
