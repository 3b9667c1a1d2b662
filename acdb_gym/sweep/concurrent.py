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
from typing import Any

from acdb_gym.registry import get_agent
from acdb_gym.sweep.jobs import Job, run_job, run_job_async

__all__ = ["batches", "iter_concurrent", "run_batch"]


def _is_async(job: Job) -> bool:
    return get_agent(job.agent).construction == "llm"


async def _run_one(job: Job, options: dict[str, Any], out: Path | None) -> dict[str, Any]:
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
) -> list[dict[str, Any]]:
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
) -> Iterator[dict[str, Any]]:
    """Run ``jobs`` up to ``concurrency`` at once in a private event loop and yield each row
    as its job finishes; a job for which ``skip`` is true when its turn comes is not run."""
    loop = asyncio.new_event_loop()
    queue = list(jobs)
    pending: set[asyncio.Task[dict[str, Any]]] = set()
    try:
        while queue or pending:
            while queue and len(pending) < concurrency:
                job = queue.pop(0)
                if not skip(job):
                    pending.add(loop.create_task(_run_one(job, options, out)))
            if not pending:
                break
            done, pending = loop.run_until_complete(
                asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            )
            for task in done:
                yield task.result()
    finally:
        for task in pending:  # the consumer stopped early: end the jobs still running
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()
