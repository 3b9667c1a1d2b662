"""What keeps a sweep run sound: it stops agents that keep failing, and refuses to mix two
custom levels under one name, or two versions of a shipped level's worlds, in a run directory."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from acdb_gym.core.ladders.custom import CUSTOM_LADDER
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.results import ResultRow

if TYPE_CHECKING:
    from acdb_gym.sweep.jobs import Job

__all__ = [
    "STOP_AFTER_SAME_FAILURES",
    "FailureWatch",
    "check_custom_levels",
    "check_shipped_seeds",
]


STOP_AFTER_SAME_FAILURES = 3
"""An agent whose last this many jobs all failed with the same error is not given more jobs."""


class FailureWatch:
    """Stops scheduling an agent whose jobs keep failing the same way (a bad key, a server that
    is gone): the rest of its jobs would only fail too, slowly or at a cost."""

    def __init__(self, limit: int = STOP_AFTER_SAME_FAILURES) -> None:
        self.limit = limit
        self.stopped: dict[str, str] = {}
        self._streaks: dict[str, tuple[str, int]] = {}

    def record(self, row: ResultRow) -> str | None:
        """Note a finished job; the error that stops its agent, when it does."""
        if row.status == "ok" or row.error is None:
            self._streaks.pop(row.agent, None)
            return None
        error, count = self._streaks.get(row.agent, (row.error, 0))
        count = count + 1 if error == row.error else 1
        self._streaks[row.agent] = (row.error, count)
        if count >= self.limit and row.agent not in self.stopped:
            self.stopped[row.agent] = row.error
            return row.error
        return None

    def skips(self, job: Job) -> bool:
        return job.agent in self.stopped


def check_custom_levels(
    spec_texts: Mapping[str, str], rows: Iterable[ResultRow], results: Path
) -> None:
    """Refuse to run a custom level whose name the run directory already holds with another
    spec: the report groups rows by ladder and level name, so the two would be pooled.

    Args:
        spec_texts: this sweep's custom levels, name to spec text (empty for a shipped ladder).
        rows: the rows already in the run directory.
        results: the results file, for the message.

    Raises:
        ValueError: names the level, both specs and the results file.
    """
    for row in rows:
        if row.ladder != CUSTOM_LADDER or row.level not in spec_texts:
            continue
        mine = spec_texts[row.level]
        if row.level_spec != mine:
            raise ValueError(
                f"{results} holds custom level {row.level!r} with spec {row.level_spec!r}, "
                f"this sweep's is {mine!r}: give the level another name (NAME:spec) or use "
                "another run directory"
            )


def check_shipped_seeds(rows: Iterable[ResultRow], results: Path) -> None:
    """Refuse a run directory holding rows of a shipped level whose seed is not the one its
    manifest now has at the row's index: rows of an earlier version of the ladder's worlds (a
    job id names the level and index, not the world), which a resumed sweep would take as done
    and a report would pool with the new ones.

    Raises:
        ValueError: names the level, the first such index, both seeds and the results file.
    """
    seeds: dict[tuple[str, str], tuple[int, ...]] = {}
    stale: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        key = (row.ladder, row.level)
        if key not in seeds:
            level = ALL_LADDERS.get(row.ladder, {}).get(row.level)
            seeds[key] = () if level is None else tuple(e.seed for e in level.manifest)
        index = row.manifest_index
        if 0 <= index < len(seeds[key]) and row.seed != seeds[key][index]:
            stale.setdefault(key, []).append(row)
    if stale:
        (ladder, name), found = next(iter(stale.items()))
        first = found[0]
        others = [f"{ladder} {level}" for ladder, level in list(stale)[1:]]
        raise ValueError(
            f"{results} holds {len(found)} rows of {ladder} {name} from other worlds than the "
            f"level's manifest now has (index {first.manifest_index}: seed {first.seed}, the "
            f"manifest's is {seeds[(ladder, name)][first.manifest_index]}; an earlier version of "
            f"the ladder, see CHANGELOG)"
            + (f", and rows of {', '.join(others)} too" if others else "")
            + ": move those rows aside or use another run directory"
        )
