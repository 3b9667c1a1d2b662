"""Concurrent LLM episodes: sweep wall time with ``--concurrency N`` against a 0.5 s server.

Runs the same LLM sweep (``llm_raw``, active panel, ACDB-v0 levels L0-L3, the first 8 manifest
seeds each: 32 jobs of two requests) against the project's local test model server
(``tests/agents/llm/conftest.py``) answering every request after 0.5 s, through the real
``openai`` SDK, with concurrency 1 (the serial peer, measured in the same run) and then 2, 4, 8
and 16, one worker process each time (the sweep runs in this process). Each run writes to a
fresh directory and gets a fresh server-side prompt cache; every run's rows are checked equal
to the serial run's apart from ``wall_time``. The ideal time of concurrency N is
``ceil(32 / N) * 2 * 0.5 s``; the table gives the speedup over the serial run and its share of
the ideal N x.

Run: ``python benchmarks/llm_concurrency.py [--smoke] [--latency 0.5]``
(``--smoke``: 8 jobs, concurrency 1 and 4).
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import base_parser, load_average, load_test_server, markdown_table, print_header  # noqa: E402

from acdb_gym.core.ladders.shipped import get_level  # noqa: E402
from acdb_gym.results import read_results  # noqa: E402
from acdb_gym.sweep.run import SweepConfig, run_sweep  # noqa: E402

REQUESTS_PER_JOB = 2
"""The scripted model intervenes once, then submits."""


def run(server: Any, out: Path, levels: tuple[str, ...], seeds: int, concurrency: int) -> Any:
    """One sweep; its wall time and its rows without ``wall_time``, keyed by job id."""
    server.cache = type(server.cache)()
    server.max_in_flight = 0
    config = SweepConfig(
        out=out,
        levels=levels,
        seeds=seeds,
        agents=("llm_raw",),
        panels=("active",),
        concurrency=concurrency,
        agent_options={
            "provider": "openai",
            "model": "test-model",
            "base_url": server.base_url("openai"),
        },
        progress=False,
    )
    start = time.perf_counter()
    summary = run_sweep(config)
    elapsed = time.perf_counter() - start
    assert summary.failed == 0, "every job must succeed"
    rows = read_results(out / "results.jsonl", mode="strict").as_dicts()
    return elapsed, {r["job_id"]: {k: v for k, v in r.items() if k != "wall_time"} for r in rows}


def _diff(rows: dict[str, Any], serial: dict[str, Any]) -> list[Any]:
    """The first differing fields, for the error message."""
    found = []
    for job_id in sorted(set(rows) | set(serial)):
        a, b = rows.get(job_id, {}), serial.get(job_id, {})
        found += [
            (job_id, k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)
        ]
    return found[:5]


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per request")
    args = parser.parse_args()
    module = load_test_server()
    levels = ("L0",) if args.smoke else ("L0", "L1", "L2", "L3")
    seeds = 8
    levels_count = len(levels)
    jobs = levels_count * seeds
    truth = get_level("v0", "L0").instance(0).dag
    server = module.FakeModelServer(module.competent(truth), latency_s=args.latency)
    levels_n = [1, 4] if args.smoke else [1, 2, 4, 8, 16]
    print_header(
        f"Sweep wall time with --concurrency N ({jobs} llm_raw jobs, {args.latency:g} s per "
        "request, openai SDK, one worker)",
        "Serial peer (N = 1) measured in the same run; rows of every run equal the serial "
        "rows apart from wall_time.",
    )
    table = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            serial_time, serial_rows = run(server, Path(tmp) / "n1", levels, seeds, 1)
            for n in levels_n:
                if n == 1:
                    elapsed, rows, in_flight = serial_time, serial_rows, 1
                else:
                    elapsed, rows = run(server, Path(tmp) / f"n{n}", levels, seeds, n)
                    in_flight = server.max_in_flight
                if rows != serial_rows:
                    raise AssertionError(
                        f"concurrency {n} changed the rows: {_diff(rows, serial_rows)}"
                    )
                ideal = math.ceil(jobs / n) * REQUESTS_PER_JOB * args.latency
                speedup = serial_time / elapsed
                table.append(
                    [
                        n,
                        in_flight,
                        f"{elapsed:.2f} s",
                        f"{ideal:.1f} s",
                        f"{speedup:.2f}x",
                        f"{speedup / min(n, jobs):.0%}",
                        "yes",
                    ]
                )
    finally:
        server.close()
    headers = [
        "N",
        "most requests in flight",
        "wall time",
        "ideal",
        "speedup",
        "of N x",
        "rows = serial",
    ]
    print(markdown_table(headers, table))
    print(f"\nLoad average at end: {load_average()}.")


if __name__ == "__main__":
    main()
