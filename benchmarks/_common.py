"""Shared helpers of the benchmark scripts: timing, Markdown tables, peers, timeouts.

Every script measures with :func:`time.perf_counter` over repeated runs and reports the median
with the interquartile range (IQR) of the runs and their count. Peers run in the same process
and the same run as our side, so ratios are not skewed by a busier or quieter machine between
runs. A peer that may take very long runs in a forked child process with a per-call deadline
(:func:`run_capped`), so the script can report "skipped (> 30 s)" instead of waiting.

Not part of the package; the scripts import it as ``_common`` (they put their own directory on
``sys.path`` when run as files).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import multiprocessing as mp
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

PEER_MISSING = "peer not installed"
"""Cell text when a peer library cannot be imported."""


@dataclass(frozen=True)
class Timing:
    """Wall times of repeated runs of one measured call, in seconds, and optionally the CPU
    time (``time.process_time``) of the same runs, which other processes on a busy machine do
    not inflate the way they inflate wall time."""

    times: tuple[float, ...]
    cpu: tuple[float, ...] = ()

    def cpu_cell(self) -> str:
        """Median CPU time, or ``–`` when it was not recorded."""
        return fmt_seconds(statistics.median(self.cpu)) if self.cpu else "–"

    @property
    def median(self) -> float:
        """Median wall time."""
        return statistics.median(self.times)

    @property
    def quartiles(self) -> tuple[float, float]:
        """First and third quartile (inclusive method; the min and max for fewer than 2 runs)."""
        if len(self.times) < 2:
            return self.times[0], self.times[0]
        q1, _, q3 = statistics.quantiles(self.times, n=4, method="inclusive")
        return q1, q3

    @property
    def min(self) -> float:
        """Fastest run: the least disturbed by other processes on a busy machine."""
        return min(self.times)

    def cell(self) -> str:
        """``median (IQR q1–q3, min m, n=runs)`` with one unit for the four numbers."""
        q1, q3 = self.quartiles
        scale, unit = _unit(self.median)
        return (
            f"{self.median * scale:.3g} {unit} (IQR {q1 * scale:.3g}–{q3 * scale:.3g}, "
            f"min {self.min * scale:.3g}, n={len(self.times)})"
        )


def _unit(seconds: float) -> tuple[float, str]:
    if seconds >= 1.0:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def fmt_seconds(seconds: float) -> str:
    """A duration with a readable unit, three significant digits."""
    scale, unit = _unit(seconds)
    return f"{seconds * scale:.3g} {unit}"


def ratio(slow: object, fast: object) -> str:
    """``slow.median / fast.median`` as ``12.3×`` (and the ratio of the fastest runs, which a
    busy machine disturbs least, in parentheses), or ``–`` unless both are :class:`Timing`."""
    if not isinstance(slow, Timing) or not isinstance(fast, Timing) or fast.median <= 0:
        return "–"
    return f"{slow.median / fast.median:.3g}× (min {slow.min / fast.min:.3g}×)"


def measure(
    call: Callable[[], object],
    *,
    repeats: int,
    warmup: int = 1,
    budget: float = 5.0,
    min_repeats: int = 3,
) -> Timing:
    """Time ``call()`` ``repeats`` times after ``warmup`` untimed calls.

    Stops early (after at least ``min_repeats`` runs) once the timed runs add up to ``budget``
    seconds, so slow calls do not dominate a script's wall time.
    """
    for _ in range(warmup):
        call()
    times: list[float] = []
    cpu: list[float] = []
    total = 0.0
    for _ in range(repeats):
        cpu_start = time.process_time()
        start = time.perf_counter()
        call()
        elapsed = time.perf_counter() - start
        cpu.append(time.process_time() - cpu_start)
        times.append(elapsed)
        total += elapsed
        if len(times) >= min_repeats and total >= budget:
            break
    return Timing(tuple(times), tuple(cpu))


def measure_with_setup(
    setup: Callable[[], Any],
    call: Callable[[Any], object],
    *,
    repeats: int,
    warmup: int = 1,
    budget: float = 5.0,
    min_repeats: int = 3,
) -> Timing:
    """Like :func:`measure`, but ``setup()`` runs untimed before every call and its result is
    passed to ``call`` (for calls that consume or mutate their input)."""
    for _ in range(warmup):
        call(setup())
    times: list[float] = []
    total = 0.0
    for _ in range(repeats):
        argument = setup()
        start = time.perf_counter()
        call(argument)
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        total += elapsed
        if len(times) >= min_repeats and total >= budget:
            break
    return Timing(tuple(times))


# --------------------------------------------------------------------------- capped peer runs


@dataclass(frozen=True)
class Skipped:
    """A measurement that was abandoned because one call exceeded its cap."""

    cap: float

    def cell(self) -> str:
        """The table cell."""
        return f"skipped (> {self.cap:g} s)"


def _capped_child(
    connection: Any,
    setup: Callable[[], Any],
    call: Callable[[Any], object],
    repeats: int,
    check: Callable[[Any], object] | None,
) -> None:
    argument = setup()
    connection.send(("ready", None))
    total = 0.0
    result: object = None
    for index in range(repeats + 1):  # the first call is the untimed warm-up
        start = time.perf_counter()
        result = call(argument)
        elapsed = time.perf_counter() - start
        connection.send(("time", elapsed))
        if index > 0:
            total += elapsed
            if index >= 3 and total >= 5.0:
                break
    connection.send(("done", None if check is None else check(result)))


def run_capped(
    setup: Callable[[], Any],
    call: Callable[[Any], object],
    *,
    repeats: int,
    cap: float = 30.0,
    check: Callable[[Any], object] | None = None,
) -> tuple[Timing | Skipped, object]:
    """Time ``call(setup())`` in a forked child; give up when one call takes over ``cap`` s.

    ``setup`` runs once in the child, untimed and uncapped (building a peer's graph object is
    not what is measured). The first call is an untimed warm-up, as in :func:`measure`, but it
    is capped too. Returns the timing (or :class:`Skipped`) and ``check(last result)`` computed
    in the child (None without ``check`` or when skipped). Runs in-process where ``fork`` is
    unavailable.
    """
    if "fork" not in mp.get_all_start_methods():  # pragma: no cover - non-POSIX
        argument = setup()
        timing = measure(lambda: call(argument), repeats=repeats)
        return timing, None if check is None else check(call(argument))
    context = mp.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_capped_child, args=(child, setup, call, repeats, check))
    process.start()
    child.close()
    times: list[float] = []
    warm = False
    try:
        message, value = parent.recv()  # setup: no cap
        assert message == "ready"
        while True:
            if not parent.poll(cap):
                return Skipped(cap), None
            message, value = parent.recv()
            if message == "done":
                break
            if warm:
                times.append(value)
            warm = True
    except EOFError:
        raise RuntimeError("the benchmark child process died") from None
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        parent.close()
    return Timing(tuple(times)), value


# --------------------------------------------------------------------------- peers and output


def peer_available(module: str) -> bool:
    """Import the peer ``module`` now (with its import-time warnings silenced) and say whether
    that worked. Importing up front keeps import time out of the measurements and lets forked
    children (:func:`run_capped`) inherit the module instead of importing it again."""
    try:
        if importlib.util.find_spec(module.split(".")[0]) is None:
            return False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module(module)
    except ImportError:
        return False
    # gCastle configures the root logger at import and logs every simulation at INFO.
    logging.disable(logging.INFO)
    return True


def timed_cold_reset(env: Any, index: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``env.reset`` on manifest index ``index`` with the instance
    cache cleared first, so the reset generates its world from the seed."""
    from acdb_gym.core.worlds import instance as instance_module

    instance_module._generate_cached.cache_clear()
    cpu_start = time.process_time()
    start = time.perf_counter()
    env.reset(options={"manifest_index": index})
    return time.perf_counter() - start, time.process_time() - cpu_start


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def base_parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with ``--smoke`` and ``--repeats``; the description is the first
    line of the script's docstring."""
    first = (doc or "").strip().splitlines()[0] if doc else ""
    parser = argparse.ArgumentParser(description=first)
    parser.add_argument(
        "--smoke", action="store_true", help="only the smallest size, few repeats (for CI)"
    )
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per cell")
    return parser


def load_average() -> str:
    """The 1/5/15-minute load averages, or ``n/a``."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # pragma: no cover
        return "n/a"
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def cpu_model() -> str:
    """The CPU model name from ``/proc/cpuinfo`` (or the platform's processor string)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict[str, str]:
    """CPU model, logical cores, Python, numpy and the load average now."""
    return {
        "cpu": cpu_model(),
        "cores": str(os.cpu_count()),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "platform": platform.platform(),
        "load average (1/5/15 min)": load_average(),
    }


def print_header(title: str, note: str = "") -> None:
    """Print a script's Markdown heading and the load average at its start."""
    print(f"### {title}\n")
    if note:
        print(note + "\n")
    print(f"Load average at start: {load_average()}.\n")


def make_env_for_spec(spec: Any, **kwargs: Any) -> Any:
    """An ``ACDBEnv`` on a level spec that no ladder registers (a large synthetic level).

    ``ACDBEnv`` takes a registered level name only, so the level lookup is patched while the
    constructor runs (as the test-suite's ``make_custom_env`` fixture does).
    """
    from unittest import mock

    from acdb_gym.core.ladders.shipped import Level
    from acdb_gym.envs import acdb_env

    level = Level("bench", "B", "synthetic benchmark level", spec, manifest=())
    with mock.patch.object(acdb_env, "get_level", lambda ladder, name: level):
        return acdb_env.ACDBEnv("B", ladder="bench", **kwargs)


def load_test_server() -> Any:
    """The project's local model server module (the LLM tests' conftest), for the LLM
    benchmarks: the same server the tests drive the real SDKs against."""
    path = Path(__file__).resolve().parent.parent / "tests" / "agents" / "llm" / "conftest.py"
    spec = importlib.util.spec_from_file_location("llm_test_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
