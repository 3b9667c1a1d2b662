"""What defines a sweep (:class:`SweepConfig`) and the CLI's spelling of its lists.

A config is checked whole when it is made: its levels and seeds exist, its agents are known
(each resolved once to its :class:`~acdb_gym.registry.AgentEntry`, which the planner hands to
every job), the texts that go into every row fit the results file, and the plan fits in
memory. :func:`parse_list`, :func:`parse_panels` and :func:`parse_indices` read the CLI's
comma-separated lists and ``START:STOP`` ranges.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from acdb_gym.core.graphs import TOPOLOGY_SIZES
from acdb_gym.core.ladders.custom import CUSTOM_LADDER, MAX_CUSTOM_SEEDS, CustomLevel
from acdb_gym.core.ladders.shipped import LEVEL_NAMES, get_level
from acdb_gym.core.types import PANEL_ACTIVE, PANEL_OBSERVATIONAL, PANELS, Panel
from acdb_gym.registry import OFFLINE_AGENTS, AgentEntry, get_agent
from acdb_gym.row_values import MAX_AGENT_CHARS, MAX_MODEL_CHARS

__all__ = [
    "MAX_JOBS",
    "Backend",
    "SweepConfig",
    "panels_for",
    "parse_indices",
    "parse_list",
    "parse_panels",
]

Backend = Literal["process", "ray"]

MAX_JOBS: Final = 1_000_000
"""The most jobs one sweep plans (each job and its id are held in memory while planning)."""


@dataclass(frozen=True)
class SweepConfig:
    """Everything that defines a sweep.

    Attributes:
        out: run directory; results go to its :data:`~acdb_gym.results.RESULTS_FILE`.
        ladder: a ladder of :data:`~acdb_gym.core.ladders.shipped.ALL_LADDERS` (``"v0"``, ``"v1"``,
            ``"large"``, ...), or ``"custom"`` with ``custom_levels``.
        levels: level names (the large ladder has L0 to L6; on ``"custom"``, the custom
            levels' names, in their order).
        seeds: how many manifest seeds of each level, from ``first_index`` on (at most the
            manifest size, 200; a custom level's are preflighted, up to 1000).
        first_index: the first manifest index of each level: the sweep runs indices
            ``first_index`` to ``first_index + seeds - 1``. Indices 0-99 are for development,
            100-199 the test split that claims come from (DESIGN §7).
        agents: agent names (see :data:`acdb_gym.registry.AGENTS`; ``rl:PATH`` for a saved
            policy).
        panels: ``"active"`` and/or ``"observational"``.
        repeats: repeats of every job (useful for stochastic agents).
        workers: parallel worker processes (1 runs in this process).
        concurrency: LLM episodes each worker runs at once (their agents await HTTP replies
            in one event loop; other agents run one job at a time). Rows are the same as a
            serial run's, apart from ``wall_time``.
        backend: ``"process"`` (a process pool) or ``"ray"``.
        agent_options: options for configurable agents (LLM provider, model, base URL, ...).
        progress: show a progress bar with ETA on stderr.
        custom_levels: the levels of ladder ``"custom"``, named in ``levels`` in their order.
        entries: each of ``agents`` resolved to its registry entry, in order (set when the
            config is made, from ``agents``; not an argument).
    """

    out: Path
    ladder: str = "v0"
    levels: tuple[str, ...] = LEVEL_NAMES
    seeds: int = 8
    first_index: int = 0
    agents: tuple[str, ...] = OFFLINE_AGENTS
    panels: tuple[Panel, ...] = PANELS
    repeats: int = 1
    workers: int = 1
    concurrency: int = 1
    backend: Backend = "process"
    agent_options: dict[str, Any] = field(default_factory=dict)
    progress: bool = True
    custom_levels: tuple[CustomLevel, ...] = ()
    entries: tuple[AgentEntry, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.levels:
            raise ValueError("at least one level is needed")
        self._check_custom()
        manifest_size = (
            MAX_CUSTOM_SEEDS
            if self.custom_levels
            else min(len(get_level(self.ladder, lv).manifest) for lv in self.levels)
        )
        if not 0 <= self.first_index < manifest_size:
            top = manifest_size - 1
            raise ValueError(f"first_index must be in [0, {top}], got {self.first_index}")
        if not 1 <= self.seeds <= manifest_size - self.first_index:
            top = manifest_size - self.first_index
            raise ValueError(
                f"seeds must be in [1, {top}] from first_index {self.first_index}, got {self.seeds}"
            )
        for panel in self.panels:
            if panel not in PANELS:
                raise ValueError(f"panels must be among {list(PANELS)}, got {panel!r}")
        if not self.panels:
            raise ValueError("at least one panel is needed")
        if self.repeats < 1:
            raise ValueError(f"repeats must be at least 1, got {self.repeats}")
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.backend not in ("process", "ray"):
            raise ValueError(f"backend must be 'process' or 'ray', got {self.backend!r}")
        if self.backend == "ray" and self.concurrency > 1:
            raise ValueError("concurrency above 1 needs backend='process'")
        # Resolved once: the planner hands each job its entry, so no worker looks it up again.
        object.__setattr__(self, "entries", tuple(get_agent(agent) for agent in self.agents))
        self._check_named()
        self._check_row_texts()
        self._check_size()

    def _check_named(self) -> None:
        if not self.agent_options.get("named"):
            return
        specs = {custom.name: custom.spec for custom in self.custom_levels}
        unnamed = [
            level
            for level in self.levels
            if (specs[level] if specs else get_level(self.ladder, level).spec).graph
            not in TOPOLOGY_SIZES
        ]
        if unnamed:
            raise ValueError(
                f"--named needs levels over a real topology (the real ladder's Sachs and "
                f"DREAM4 levels); {self.ladder} {', '.join(unnamed)} have no variable names"
            )

    def _check_row_texts(self) -> None:
        """Texts that go into every row are checked here, before the first job, not by the
        writer after each (:mod:`acdb_gym.row_values`)."""
        model = self.agent_options.get("model")
        if model is not None and (not isinstance(model, str) or len(model) > MAX_MODEL_CHARS):
            raise ValueError(f"--model must be at most {MAX_MODEL_CHARS} characters")
        for agent in self.agents:
            if len(agent) > MAX_AGENT_CHARS:
                raise ValueError(f"an agent name is at most {MAX_AGENT_CHARS} characters")

    def _check_size(self) -> None:
        """Refuse a sweep whose plan would not fit in memory, before it is planned."""
        levels, seeds = len(self.levels), self.seeds
        per_repeat = sum(len(panels_for(entry, self.panels)) for entry in self.entries)
        jobs = per_repeat * levels * seeds * self.repeats
        if jobs > MAX_JOBS:
            raise ValueError(
                f"this sweep has {jobs} jobs, more than {MAX_JOBS} ({per_repeat} agent-panel "
                f"pairs x {levels} levels x {seeds} seeds x {self.repeats} repeats); run it "
                "in parts (fewer repeats, levels or seeds per run directory)"
            )

    def _check_custom(self) -> None:
        names = tuple(custom.name for custom in self.custom_levels)
        if (self.ladder == CUSTOM_LADDER) != bool(names):
            message = f"ladder {self.ladder!r} with {len(names)} custom levels"
            raise ValueError(f"custom levels go with ladder {CUSTOM_LADDER!r} only; got {message}")
        if names and self.levels != names:
            raise ValueError(f"levels must be the custom levels' names {names}, got {self.levels}")
        if len(set(names)) != len(names):
            raise ValueError(f"custom level names must differ, got {list(names)}")

    @property
    def indices(self) -> range:
        """The manifest indices every level runs."""
        return range(self.first_index, self.first_index + self.seeds)

    def level_spec(self, level: str) -> str:
        """The canonical spec text of a custom level of this sweep; ``""`` for a shipped one."""
        by_name = {custom.name: custom.text for custom in self.custom_levels}
        return by_name.get(level, "")


def panels_for(entry: AgentEntry, requested: Sequence[Panel]) -> list[Panel]:
    """The panels of ``requested`` an agent runs in: those of its own, or, for an agent that
    never intervenes (it behaves the same in both), only the first (observational preferred)."""
    if entry.panels == (PANEL_OBSERVATIONAL,):
        preferred = [p for p in (PANEL_OBSERVATIONAL, PANEL_ACTIVE) if p in requested]
        return preferred[:1]
    return [p for p in requested if p in entry.panels]


def parse_panels(text: str) -> tuple[Panel, ...]:
    """Split a comma-separated CLI list of panels, in the order given."""
    by_name: dict[str, Panel] = {panel: panel for panel in PANELS}
    return tuple(by_name[item] for item in parse_list(text, PANELS, what="panels"))


def parse_indices(text: str) -> tuple[int, int]:
    """``START:STOP`` (half-open, as a Python slice) as ``(first_index, seeds)``.

    >>> parse_indices("100:200")
    (100, 100)
    """
    start, sep, stop = text.partition(":")
    # ASCII digits only: int() also reads "١٢", "1_0" and surrounding spaces.
    digits = all(part.isascii() and part.isdigit() and len(part) <= 9 for part in (start, stop))
    first, end = (int(start), int(stop)) if digits else (-1, -1)
    if not sep or first < 0 or end <= first:
        raise ValueError(f"indices must be START:STOP with 0 <= START < STOP, got {text!r}")
    return first, end - first


def parse_list(text: str, allowed: Iterable[str] | None = None, *, what: str) -> tuple[str, ...]:
    """Split a comma-separated CLI list, checking each item against ``allowed``."""
    items = tuple(item.strip() for item in text.split(",") if item.strip())
    if not items:
        raise ValueError(f"{what} must not be empty")
    if allowed is not None:
        allowed = tuple(allowed)
        bad = [item for item in items if item not in allowed]
        if bad:
            raise ValueError(f"unknown {what} {bad}; choose from {list(allowed)}")
    return items
