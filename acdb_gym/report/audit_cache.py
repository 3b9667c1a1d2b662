"""The order audit's per-instance results kept in the run directory, so a report rewritten over
the same run computes no instance audit twice (DESIGN §10, "Report").

``order_audit_cache.json`` holds one JSON object: ``"key"``, the digest of everything the
audit's numbers depend on besides the instance (the package version and the audit's constants),
and ``"instances"``, one entry per audited instance (its spec's ``repr`` and its seed) with
the plain values of its audit. A file whose key differs, that is not such an object, or that
cannot be read is ignored whole (the audit is then computed again and the file rewritten):
it is a cache, never an input.

The package also ships the audits of the instances the default sweeps of the v0 and v1 ladders
play (:data:`SHIPPED_LADDERS`, manifest indices :data:`SHIPPED_INDICES`), in
``report/data/order_audits.json`` (:data:`SHIPPED_AUDITS`, the same layout; its key is the
audit's constants without the package version, and its entries are named
``LADDER|LEVEL|SEED``), so a first report of the README's main command computes none of them.
``tests/test_shipped_audits.py`` recomputes them and fails when the code gives other numbers;
``experiments/ship_order_audits.py`` writes the file again.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

__all__ = [
    "AUDIT_CACHE_FILE",
    "SHIPPED_AUDITS",
    "SHIPPED_INDICES",
    "SHIPPED_LADDERS",
    "as_float",
    "load_cache",
    "save_cache",
    "shipped_entries",
    "shipped_name",
]

AUDIT_CACHE_FILE: Final = "order_audit_cache.json"
"""The cache's file name in a run directory."""
SHIPPED_AUDITS: Final = Path(__file__).with_name("data") / "order_audits.json"
"""The shipped audits of the default sweeps' instances."""
SHIPPED_LADDERS: Final = ("v0", "v1")
"""The ladders whose instances the shipped file holds."""
SHIPPED_INDICES: Final = range(8)
"""The manifest indices it holds of each of their levels (``acdb sweep``'s default seeds)."""


def load_cache(path: Path, key: str) -> dict[str, Any]:
    """The cached entries of the file at ``path`` if it carries ``key``; empty otherwise."""
    try:
        with path.open(encoding="utf-8") as handle:
            payload = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(payload, dict) or payload.get("key") != key:
        return {}
    instances = payload.get("instances")
    return dict(instances) if isinstance(instances, dict) else {}


@functools.cache
def shipped_entries(key: str) -> Mapping[str, Any]:
    """The shipped audits' entries if the file carries ``key`` (read once per process)."""
    return load_cache(SHIPPED_AUDITS, key)


def shipped_name(ladder: str, level: str, seed: int) -> str:
    """An instance's entry name in the shipped file."""
    return f"{ladder}|{level}|{seed}"


def save_cache(path: Path, key: str, entries: Mapping[str, Any]) -> None:
    """Write ``entries`` under ``key`` to ``path`` (through a temporary file, then renamed, so
    a reader never meets half a file)."""
    partial = path.with_name(path.name + ".partial")
    text = json.dumps({"key": key, "instances": dict(entries)}, sort_keys=True)
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def as_float(value: object) -> float:
    """A cached number back as a float (JSON keeps NaN as ``NaN``).

    Raises:
        TypeError: ``value`` is not a number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"a cached audit value must be a number, got {value!r}")
    return float(value)
