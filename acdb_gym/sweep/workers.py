"""The sweep's worker processes: how they start (a forkserver with the sweep's modules
preloaded) and how they use the CPU (one BLAS thread each)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["one_blas_thread", "worker_context"]

_WORKER_PRELOAD = (
    "acdb_gym.sweep.run",
    "acdb_gym.sweep.concurrent",
    "acdb_gym.agents.base",
    "acdb_gym.baselines",
    "gymnasium",
)
"""What every worker imports before its first job: a forkserver imports it once and forks the
workers from it, so they do not each pay the import (about a second each)."""


_BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Variables by which a user sets BLAS threads; when one is set, the workers keep it."""


def one_blas_thread() -> None:
    """Worker initializer: one BLAS thread per worker, unless the user set a thread count.

    Workers already use every core; OpenBLAS's own threads on top of them oversubscribe the
    machine, and its busy-waiting threads then take the CPU from the other workers (measured
    in `benchmarks/RESULTS.md`, "One BLAS thread per sweep worker"). Single-threaded BLAS gives
    the same rows bit for bit on the shipped ladders (checked against the v0 fixture)."""
    if any(name in os.environ for name in _BLAS_THREAD_VARIABLES):
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def worker_context() -> Any:
    """A forkserver with the sweep's modules preloaded where the platform has one, else spawn
    (never plain fork: a forked copy of this process would inherit its threads and locks).
    Either way each worker imports the main script as spawn does, so agents a script registers
    at top level exist in the workers too."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(_WORKER_PRELOAD))
    return context
