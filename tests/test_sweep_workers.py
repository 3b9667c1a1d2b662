"""Sweep workers use one BLAS thread each unless the user set a thread count."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = (
    "import numpy, threadpoolctl; from acdb_gym.sweep.workers import one_blas_thread; "
    "one_blas_thread(); "
    "print(max(p['num_threads'] for p in threadpoolctl.threadpool_info() "
    "if p['user_api'] == 'blas'))"
)


def _threads(**env: str) -> int:
    variables = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**variables, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


@pytest.mark.slow
def test_a_worker_limits_blas_to_one_thread() -> None:
    assert _threads() == 1


@pytest.mark.slow
def test_a_thread_count_the_user_set_is_kept() -> None:
    assert _threads(OPENBLAS_NUM_THREADS="2") == 2
