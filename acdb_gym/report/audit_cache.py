"""The order audit's per-instance results kept in the run directory, so a report rewritten over
the same run computes no instance audit twice (DESIGN §10, "Report").

``order_audit_cache.json`` holds one JSON object: ``"key"``, the digest of everything the
audit's numbers depend on besides the instance (the package version and the audit's constants),
and ``"instances"``, one entry per audited instance (its spec's ``repr`` and its seed) with
the plain values of its audit. A file whose key differs, that is not such an object, or that
cannot be read is ignored whole (the audit is then computed again and the file rewritten):
it is a cache, never an input.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["AUDIT_CACHE_FILE", "as_float", "load_cache", "save_cache"]

AUDIT_CACHE_FILE: Final = "order_audit_cache.json"
"""The cache's file name in a run directory."""


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
