"""Where a sweep's jobs run: in this process, in a process pool, on Ray, or several LLM jobs
at once in an event loop (:mod:`acdb_gym.sweep.concurrent`). Every scheduler yields the typed
rows (:class:`~acdb_gym.results.ResultRow`) as jobs finish, and the three that run jobs side
by side keep them bounded with the one loop of :mod:`acdb_gym.sweep.in_flight`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from acdb_gym.results import ResultRow
from acdb_gym.sweep.config import SweepConfig
from acdb_gym.sweep.in_flight import in_flight
from acdb_gym.sweep.jobs import Job, run_job

__all__ = ["execute"]

Skip = Callable[[Job], bool]
"""Whether a job is not to be run when its turn comes (its agent was stopped)."""


def execute(jobs: Sequence[Job], config: SweepConfig, skip: Skip) -> Iterator[ResultRow]:
    """Run ``jobs`` as ``config`` says and yield their rows as they finish; a job for which
    ``skip`` is true when its turn comes is not run."""
    if config.backend == "ray":
        yield from _on_ray(jobs, config, skip)
    elif config.concurrency > 1 and (config.workers == 1 or len(jobs) <= 1):
        from acdb_gym.sweep.concurrent import iter_concurrent

        options = config.agent_options
        yield from iter_concurrent(jobs, options, config.out, config.concurrency, skip)
    elif config.workers == 1 or len(jobs) <= 1:
        yield from _in_process(jobs, config, skip)
    else:
        yield from _in_pool(jobs, config, skip)


def _in_process(jobs: Sequence[Job], config: SweepConfig, skip: Skip) -> Iterator[ResultRow]:
    for job in jobs:
        if not skip(job):
            yield run_job(job, config.agent_options, config.out)


def _in_pool(jobs: Sequence[Job], config: SweepConfig, skip: Skip) -> Iterator[ResultRow]:
    from acdb_gym.sweep.concurrent import batches, run_batch
    from acdb_gym.sweep.workers import one_blas_thread, worker_context

    with ProcessPoolExecutor(
        max_workers=config.workers, mp_context=worker_context(), initializer=one_blas_thread
    ) as pool:

        def start(batch: list[Job]) -> Future[list[ResultRow]] | None:
            # A task is one job, or with concurrency up to that many LLM jobs run at once.
            kept = [job for job in batch if not skip(job)]
            if not kept:
                return None
            return pool.submit(
                run_batch, kept, config.agent_options, config.out, config.concurrency
            )

        def wait_any(
            pending: list[Future[list[ResultRow]]],
        ) -> tuple[list[Future[list[ResultRow]]], list[Future[list[ResultRow]]]]:
            done, rest = wait(pending, return_when=FIRST_COMPLETED)
            return list(done), list(rest)

        # A bounded number of tasks in flight, so that rows stream back as they finish.
        queue = batches(jobs, config.concurrency)
        for future in in_flight(queue, start, wait_any, limit=2 * config.workers):
            yield from future.result()


def _on_ray(jobs: Sequence[Job], config: SweepConfig, skip: Skip) -> Iterator[ResultRow]:
    try:
        import ray
    except ModuleNotFoundError:
        raise SystemExit(
            "the ray backend needs Ray: pip install 'acdb_gym[ray]' (or use --backend process)"
        ) from None
    if not ray.is_initialized():
        ray.init(num_cpus=config.workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_job)

    def start(job: Job) -> Any:
        return None if skip(job) else remote.remote(job, config.agent_options, config.out)

    def wait_any(pending: list[Any]) -> tuple[list[Any], list[Any]]:
        done, rest = ray.wait(pending, num_returns=1)
        return list(done), list(rest)

    for reference in in_flight(jobs, start, wait_any, limit=2 * config.workers):
        row: ResultRow = ray.get(reference)
        yield row
