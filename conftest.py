"""Test-session settings shared by ``tests/`` and the doctests of ``acdb_gym/``.

One BLAS thread per test process, as the sweep's workers use (README, "The sweep and the
report"): with ``pytest -n 2`` on a machine whose cores are busy, OpenBLAS's own threads spin
for each other and a 100 x 100 inverse took 57 ms instead of 0.5 ms (measured on this project's
2-core machine at load average 7). ``OPENBLAS_NUM_THREADS`` or ``OMP_NUM_THREADS`` set by the
caller win.
"""

from __future__ import annotations

import os

from threadpoolctl import threadpool_limits

if not any(os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
    threadpool_limits(limits=1, user_api="blas")
