"""The resumable ladder sweep (DESIGN §10): :func:`run_sweep`, the face of the sweep.

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

The parts: what defines a sweep (:mod:`acdb_gym.sweep.config`), its jobs
(:mod:`acdb_gym.sweep.planning`), where they run (:mod:`acdb_gym.sweep.schedulers`) and this
module, which runs them to the results file. The names of the parts stay importable from here.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from acdb_gym.core.ladders.custom import CUSTOM_LADDER
from acdb_gym.core.untrusted import UntrustedInputError, write_nofollow
from acdb_gym.results import RESULTS_FILE, ResultsAppender, read_results
from acdb_gym.sweep.config import (
    MAX_JOBS,
    Backend,
    SweepConfig,
    parse_indices,
    parse_list,
    parse_panels,
)
from acdb_gym.sweep.guards import FailureWatch, check_custom_levels, check_shipped_seeds
from acdb_gym.sweep.jobs import Job, run_job
from acdb_gym.sweep.lock import RunDirectoryLock
from acdb_gym.sweep.planning import plan_jobs
from acdb_gym.sweep.schedulers import execute

__all__ = [
    "MAX_JOBS",
    "RUN_FILES",
    "Backend",
    "Job",
    "SweepConfig",
    "SweepSummary",
    "parse_indices",
    "parse_list",
    "parse_panels",
    "plan_jobs",
    "run_job",
    "run_sweep",
]


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


def run_sweep(config: SweepConfig) -> SweepSummary:
    """Run every unfinished job of ``config`` and append its rows; see the module docstring.

    Before any job runs, every agent is checked (:meth:`AgentEntry.check_ready`: an LLM
    agent's SDK, key and server; a saved policy's extra and file), every custom level's seeds
    are preflighted (a bounded preflight: a level that cannot be generated stops the sweep
    here, naming the fields to change) and the run directory is locked for this sweep alone.

    Raises:
        AgentNotReadyError: an agent cannot work here; nothing was run.
        ValueError: a custom level cannot be generated, or the run directory holds rows of
            another version of a level's worlds; nothing was run.
        RunDirectoryBusyError: another sweep is running in ``config.out``; nothing was run.
        ResultsFileError: the results file has an unreadable line before its end.
    """
    start = time.perf_counter()
    for entry in {entry.name: entry for entry in config.entries}.values():
        entry.check_ready(config.agent_options)
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
        spec_texts = {level: config.level_spec(level) for level in config.levels}
        check_custom_levels(spec_texts, rows, results)
    check_shipped_seeds(rows, results)
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
        for row in execute(todo, config, watch.skips):
            writer.append(row)  # checked again: the file never holds a row it cannot read
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
    del data["entries"]  # resolved from ``agents``: nothing of its own
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
