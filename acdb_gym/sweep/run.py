"""The resumable ladder sweep (DESIGN §10).

Jobs are ladder × levels × manifest seeds × agents × panels × repeats (an agent's tool variant
is part of its name, e.g. ``llm_raw`` / ``llm_stats``; agents come from
:data:`acdb_gym.registry.AGENTS`). The levels are a shipped ladder's or custom ones
(:mod:`acdb_gym.core.ladders.custom`, ladder ``"custom"``), whose jobs and rows carry the spec's
text: every worker rebuilds the level and its seeds from it. Each finished job appends one row
to the run directory's results file through :class:`acdb_gym.results.ResultsAppender` (one
``write`` on an ``O_APPEND`` descriptor, then ``fsync``), from the parent process only. Rerunning
the same command skips jobs that already have an ``ok`` row; failed jobs (an exception, e.g. an
LLM provider that stayed down) are recorded as ``failed`` rows with the error and retried by
the next run. A torn last line (the process died mid-write) is cut off on resume, never parsed
as a result; any other unreadable line stops the resume with a
:class:`~acdb_gym.results.ResultsFileError` naming the file and line.

With ``concurrency`` above 1, each worker runs up to that many LLM jobs at once in an event loop
(:mod:`acdb_gym.sweep.concurrent`); the rows are those of a serial run apart from ``wall_time``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from acdb_gym.core.graphs import TOPOLOGY_SIZES
from acdb_gym.core.ladders.custom import CUSTOM_LADDER, MAX_CUSTOM_SEEDS, CustomLevel
from acdb_gym.core.ladders.shipped import LEVEL_NAMES, get_level
from acdb_gym.core.types import PANEL_ACTIVE, PANEL_OBSERVATIONAL, PANELS, Panel
from acdb_gym.core.untrusted import UntrustedInputError, write_nofollow
from acdb_gym.registry import OFFLINE_AGENTS, AgentEntry, get_agent
from acdb_gym.results import RESULTS_FILE, Location, ResultRow, ResultsAppender, read_results
from acdb_gym.row_values import MAX_AGENT_CHARS, MAX_MODEL_CHARS
from acdb_gym.sweep.guards import FailureWatch, check_custom_levels
from acdb_gym.sweep.jobs import Job, run_job
from acdb_gym.sweep.lock import RunDirectoryLock

__all__ = [
    "Job",
    "SweepConfig",
    "SweepSummary",
    "plan_jobs",
    "run_job",
    "run_sweep",
]

Backend = Literal["process", "ray"]

MAX_JOBS: Final = 1_000_000
"""The most jobs one sweep plans (each job and its id are held in memory while planning)."""


# --------------------------------------------------------------------------- the config
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
        for agent in self.agents:
            get_agent(agent)
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
        per_repeat = sum(len(_panels_for(get_agent(agent), self.panels)) for agent in self.agents)
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


def _panels_for(spec: AgentEntry, requested: Sequence[Panel]) -> list[Panel]:
    if spec.panels == (PANEL_OBSERVATIONAL,):
        # Agents that never intervene behave the same in both panels: run them once.
        preferred = [p for p in (PANEL_OBSERVATIONAL, PANEL_ACTIVE) if p in requested]
        return preferred[:1]
    return [p for p in requested if p in spec.panels]


def _agent_config(spec: AgentEntry, options: dict[str, Any]) -> dict[str, Any]:
    config = {k: options[k] for k in spec.options if options.get(k) is not None}
    if spec.takes_path:
        # The model's content is part of the job: a replaced file is a new job, not "done".
        from acdb_gym.agents.rl.agent import policy_digest

        config["model_sha256"] = policy_digest(spec.model_path)
    return config


def plan_jobs(config: SweepConfig) -> list[Job]:
    """Every job of ``config``, in a deterministic order."""
    jobs = []
    specs = {level: config.level_spec(level) for level in config.levels}
    for agent in config.agents:
        spec = get_agent(agent)
        agent_config = _agent_config(spec, config.agent_options)
        for panel in _panels_for(spec, config.panels):
            for level in config.levels:
                for index in config.indices:
                    for repeat in range(config.repeats):
                        jobs.append(
                            Job(
                                config.ladder,
                                level,
                                index,
                                agent,
                                panel,
                                spec.tools,
                                repeat,
                                agent_config,
                                specs[level],
                            )
                        )
    return jobs


# --------------------------------------------------------------------------- running one job
# --------------------------------------------------------------------------- the sweep
@dataclass(frozen=True)
class SweepSummary:
    """What a sweep run did.

    Attributes:
        planned: jobs of the config.
        skipped: jobs already done (an ``ok`` row) before this run.
        finished: jobs run now (rows written), ``ok`` or ``failed``.
        failed: of those, the failed ones.
        wall_time: seconds.
        results: the results file.
        not_run: jobs left unrun because their agent was stopped (the next run retries them).
        stopped_agents: agent name -> the error its jobs kept failing with.
    """

    planned: int
    skipped: int
    finished: int
    failed: int
    wall_time: float
    results: Path
    not_run: int = 0
    stopped_agents: dict[str, str] = field(default_factory=dict)


def _execute(
    jobs: Sequence[Job], config: SweepConfig, skip: Callable[[Job], bool]
) -> Iterator[dict[str, Any]]:
    """Run ``jobs`` and yield their rows as they finish; a job for which ``skip`` is true when
    its turn comes is not run (its agent was stopped)."""
    options = config.agent_options
    if config.backend == "ray":
        yield from _execute_ray(jobs, config, skip)
    elif config.concurrency > 1 and (config.workers == 1 or len(jobs) <= 1):
        from acdb_gym.sweep.concurrent import iter_concurrent

        yield from iter_concurrent(jobs, options, config.out, config.concurrency, skip)
    elif config.workers == 1 or len(jobs) <= 1:
        for job in jobs:
            if not skip(job):
                yield run_job(job, options, config.out)
    else:
        yield from _execute_pool(jobs, config, skip)


def _execute_pool(
    jobs: Sequence[Job], config: SweepConfig, skip: Callable[[Job], bool]
) -> Iterator[dict[str, Any]]:
    from acdb_gym.sweep.concurrent import batches, run_batch
    from acdb_gym.sweep.workers import one_blas_thread, worker_context

    with ProcessPoolExecutor(
        max_workers=config.workers, mp_context=worker_context(), initializer=one_blas_thread
    ) as pool:
        pending: set[Future[list[dict[str, Any]]]] = set()
        # A task is one job, or with concurrency up to that many LLM jobs run at once.
        queue = batches(jobs, config.concurrency)
        # Keep a bounded number of tasks in flight so results stream back as they finish.
        while queue or pending:
            while queue and len(pending) < 2 * config.workers:
                batch = [job for job in queue.pop(0) if not skip(job)]
                if batch:
                    args = (batch, config.agent_options, config.out, config.concurrency)
                    pending.add(pool.submit(run_batch, *args))
            if not pending:
                break
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield from future.result()


def _execute_ray(
    jobs: Sequence[Job], config: SweepConfig, skip: Callable[[Job], bool]
) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ModuleNotFoundError:
        raise SystemExit(
            "the ray backend needs Ray: pip install 'acdb_gym[ray]' (or use --backend process)"
        ) from None
    if not ray.is_initialized():
        ray.init(num_cpus=config.workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_job)
    queue = list(jobs)
    pending: list[Any] = []
    while queue or pending:
        while queue and len(pending) < 2 * config.workers:
            job = queue.pop(0)
            if not skip(job):
                pending.append(remote.remote(job, config.agent_options, config.out))
        if not pending:
            break
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])


def run_sweep(config: SweepConfig) -> SweepSummary:
    """Run every unfinished job of ``config`` and append its rows; see the module docstring.

    Before any job runs, every agent is checked (:meth:`AgentEntry.check_ready`: an LLM
    agent's SDK, key and server; a saved policy's extra and file), every custom level's seeds
    are preflighted (a bounded preflight: a level that cannot be generated stops the sweep
    here, naming the fields to change) and the run directory is locked for this sweep alone.

    Raises:
        AgentNotReadyError: an agent cannot work here; nothing was run.
        ValueError: a custom level cannot be generated; nothing was run.
        RunDirectoryBusyError: another sweep is running in ``config.out``; nothing was run.
        ResultsFileError: the results file has an unreadable line before its end.
    """
    start = time.perf_counter()
    for name in dict.fromkeys(config.agents):
        get_agent(name).check_ready(config.agent_options)
    for custom in config.custom_levels:
        custom.level(config.indices.stop)
    with RunDirectoryLock(config.out):
        return _run_locked(config, start)


RUN_FILES: Final = (RESULTS_FILE, "sweep_config.json", "transcripts", "llm_rate_limit.json")
"""What a sweep writes in its run directory beside the lock; none may be a symbolic link."""


def _refuse_links(out: Path) -> None:
    """A link planted where the sweep writes would be written through: refuse it at once."""
    for name in RUN_FILES:
        if (out / name).is_symlink():
            raise UntrustedInputError(
                f"{out / name} is a symbolic link; acdb_gym does not follow links it did not "
                "make (remove it)"
            )


def _run_locked(config: SweepConfig, start: float) -> SweepSummary:
    results = config.out / RESULTS_FILE
    _refuse_links(config.out)
    rows = read_results(results, mode="strict", repair=True).rows
    if config.ladder == CUSTOM_LADDER:
        specs = {level: config.level_spec(level) for level in config.levels}
        check_custom_levels(specs, rows, results)
    done = {row.job_id for row in rows if row.status == "ok"}
    jobs = plan_jobs(config)
    todo = [job for job in jobs if job.job_id not in done]
    _write_config(config)
    writer = ResultsAppender(results)
    watch = FailureWatch()
    finished = failed = 0
    earlier = len(jobs) - len(todo)
    bar = _progress(
        len(todo),
        config.progress,
        label="sweep" if not earlier else f"sweep ({earlier} of {len(jobs)} done by earlier runs)",
    )
    try:
        for data in _execute(todo, config, watch.skips):
            # Checked before writing: the file never holds a row the resume cannot read.
            row = ResultRow.from_dict(data, where=Location(results))
            writer.append(row)
            finished += 1
            failed += row.status == "failed"
            stop = watch.record(row)
            if stop is not None:
                bar.write(
                    f"acdb: stopping agent {row.agent}: its last {watch.limit} jobs failed with "
                    f"the same error: {stop}",
                    file=sys.stderr,
                )
            bar.set_postfix(failed=failed, refresh=False)
            bar.update(1)
    finally:
        bar.close()
        writer.close()
    return SweepSummary(
        planned=len(jobs),
        skipped=len(jobs) - len(todo),
        finished=finished,
        failed=failed,
        wall_time=time.perf_counter() - start,
        results=results,
        not_run=len(todo) - finished,
        stopped_agents=dict(watch.stopped),
    )


def _write_config(config: SweepConfig) -> None:
    data = asdict(config)
    data["out"] = str(config.out)
    data["agent_options"] = {
        k: v for k, v in config.agent_options.items() if "key" not in k.lower()
    }
    text = json.dumps(data, indent=2, default=str) + "\n"
    write_nofollow(config.out / "sweep_config.json", text.encode())


def _progress(total: int, enabled: bool, label: str) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=label,
        unit="job",
        disable=not enabled,
        file=sys.stderr,
        dynamic_ncols=True,
    )


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
