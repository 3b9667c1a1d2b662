"""The order the report shows levels in: L0, L1, ... first (the paper's ladder order), then
every other level name in alphabetical order. Every table, plot and CSV of the report that
lists levels sorts them with :func:`level_order`."""

from __future__ import annotations

from acdb_gym.core.ladders.shipped import LEVEL_NAMES

__all__ = ["level_order"]


def level_order(level: str) -> tuple[int, str]:
    """The sort key of a level name.

    >>> sorted(["Sachs", "L2", "L0", "DREAM4-1"], key=level_order)
    ['L0', 'L2', 'DREAM4-1', 'Sachs']
    """
    return (LEVEL_NAMES.index(level) if level in LEVEL_NAMES else len(LEVEL_NAMES), level)
