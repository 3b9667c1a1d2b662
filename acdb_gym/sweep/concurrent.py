"""Several LLM episodes at once per sweep worker (``acdb sweep --concurrency N``).

An LLM agent spends nearly all of an episode waiting for HTTP replies. With ``concurrency``
above 1 each worker runs up to that many jobs in one asyncio event loop: jobs whose agent has
``act_async`` (:class:`~acdb_gym.agents.base.AsyncAgent`, the LLM agents) run through
:func:`~acdb_gym.sweep.jobs.run_job_async` and the SDKs' async clients; any other job runs as usual,
blocking the loop while it computes. Every job is the same episode as in a serial run (the
agents are deterministic given their replies, and the server or the response cache answers
each request alone), so the rows are the same apart from ``wall_time`` and their order in the
file. A rate limiter shared through a file (:class:`~acdb_gym.agents.llm.ratelimit.RateLimiter`)
keeps all workers of the sweep within the provider's requests and tokens per minute.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from acdb_gym.results import ResultRow
from acdb_gym.sweep.in_flight import in_flight
from acdb_gym.sweep.jobs import Job, run_job, run_job_async

__all__ = ["batches", "iter_concurrent", "run_batch"]

_Task: TypeAlias = "asyncio.Task[ResultRow]"


def _is_async(job: Job) -> bool:
    return job.agent_entry.construction == "llm"


async def _run_one(job: Job, options: dict[str, Any], out: Path | None) -> ResultRow:
    if _is_async(job):
        return await run_job_async(job, options, out)
    return run_job(job, options, out)


def batches(jobs: Sequence[Job], size: int) -> list[list[Job]]:
    """Consecutive LLM jobs in groups of up to ``size``; every other job alone."""
    groups: list[list[Job]] = []
    for job in jobs:
        if _is_async(job) and groups and _is_async(groups[-1][0]) and len(groups[-1]) < size:
            groups[-1].append(job)
        else:
            groups.append([job])
    return groups


def run_batch(
    jobs: Sequence[Job], options: dict[str, Any], out: Path | None, concurrency: int
) -> list[ResultRow]:
    """Run ``jobs`` in a new event loop, up to ``concurrency`` at once (a worker's task)."""
    if len(jobs) == 1 and not _is_async(jobs[0]):
        return [run_job(jobs[0], options, out)]  # no event loop for a plain job
    return list(iter_concurrent(jobs, options, out, concurrency, lambda job: False))


def iter_concurrent(
    jobs: Sequence[Job],
    options: dict[str, Any],
    out: Path | None,
    concurrency: int,
    skip: Callable[[Job], bool],
) -> Iterator[ResultRow]:
    """Run ``jobs`` up to ``concurrency`` at once in a private event loop and yield each row
    as its job finishes; a job for which ``skip`` is true when its turn comes is not run."""
    loop = asyncio.new_event_loop()

    def start(job: Job) -> _Task | None:
        return None if skip(job) else loop.create_task(_run_one(job, options, out))

    def wait_any(pending: list[_Task]) -> tuple[list[_Task], list[_Task]]:
        done, rest = loop.run_until_complete(
            asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        )
        return list(done), list(rest)

    def cancel(pending: list[_Task]) -> None:
        # The consumer stopped early: end the jobs still running.
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

    flight = in_flight(jobs, start, wait_any, limit=concurrency, cancel=cancel)
    try:
        for task in flight:
            yield task.result()
    finally:
        flight.close()
        loop.close()
