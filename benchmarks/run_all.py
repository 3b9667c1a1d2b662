"""Run every benchmark script and write benchmarks/RESULTS.md.

Each script runs as a subprocess of this interpreter; its Markdown output goes into the results
file under the exact command that produced it, after the machine description (CPU model from
``/proc/cpuinfo``, logical cores, Python and numpy versions, the BLAS build and thread setting)
and the load average before and after the whole run.

``--blas-threads N`` (default 1) sets ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and
``MKL_NUM_THREADS`` for every script, ours and the peers alike; ``--blas-threads 0`` leaves the
environment as it is. One thread is the default because on a machine whose cores are already
busy, multi-threaded OpenBLAS spins for its helper threads and slows small linear algebra by two
orders of magnitude, which would measure the machine's load rather than the code.

``--baseline DIR`` also runs every script on another version of the package, right before the
run on this one (so both see the same machine load): ``DIR`` holds an ``acdb_gym`` package, for
example a checkout of the previous revision, and is put first on ``PYTHONPATH``. Both outputs
go into the results file, each under its own command.

Run: ``python benchmarks/run_all.py [--smoke] [--out benchmarks/RESULTS.md] [--only NAME ...]
[--baseline DIR]``
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import load_average, machine_info  # noqa: E402

SCRIPTS = {
    "cpdag": "cpdag_vs_peers.py",
    "mis": "mis_timing.py",
    "reset": "reset_timing.py",
    "intervene": "intervene_throughput.py",
    "score": "score_vs_gcastle.py",
    "design": "design_env_steps.py",
    "design_vector": "design_vector.py",
    "sweep": "sweep_walltime.py",
    "gies": "bic_search_vs_gies.py",
    "pc": "pc_batched_vs_causallearn.py",
    "pc_many": "pc_many.py",
    "sign_flip": "sign_flip_vs_scipy.py",
    "report_html": "report_html.py",
}
"""The benchmark scripts, in the order of the issue, by short name."""

BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _blas_build() -> str:
    import numpy as np

    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # pragma: no cover - numpy < 1.25 or an unusual build
        return "unknown"


def _display_command(script: str, extra: list[str], env_prefix: list[str]) -> str:
    python = os.path.relpath(sys.executable, Path.cwd())
    if python.startswith(".."):
        python = sys.executable
    parts = [*env_prefix, python, str(Path("benchmarks") / script), *extra]
    return " ".join(shlex.quote(part) if "=" not in part else part for part in parts)


def _driver_command() -> str:
    """This driver's own command line, as it was typed (relative to the repository root)."""
    return " ".join(
        [
            "python",
            str(Path("benchmarks") / "run_all.py"),
            *(shlex.quote(argument) for argument in sys.argv[1:]),
        ]
    )


def run_script(script: str, extra: list[str], env: dict[str, str]) -> tuple[int, str, float]:
    """Run one script; its exit code, its stdout (plus stderr on failure) and its wall time."""
    start = time.perf_counter()
    process = subprocess.run(
        [sys.executable, str(HERE / script), *extra],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - start
    output = process.stdout.rstrip()
    if process.returncode != 0:
        output += f"\n\n**Failed with exit code {process.returncode}.**\n\n```\n"
        output += process.stderr[-4000:] + "\n```"
    return process.returncode, output, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="pass --smoke to every script")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md", help="results file")
    parser.add_argument("--only", nargs="+", choices=sorted(SCRIPTS), help="run only these")
    parser.add_argument("--blas-threads", type=int, default=1, help="0 = leave unset")
    parser.add_argument("--title", default="Benchmark results", help="heading of the file")
    parser.add_argument(
        "--baseline", type=Path, help="directory with another acdb_gym to run each script on too"
    )
    parser.add_argument("--note", default="", help="a paragraph to put under the heading")
    args = parser.parse_args()

    env = dict(os.environ)
    blas_prefix: list[str] = []
    if args.blas_threads > 0:
        for variable in BLAS_VARIABLES:
            env[variable] = str(args.blas_threads)
            blas_prefix.append(f"{variable}={args.blas_threads}")
    path = os.environ.get("PYTHONPATH", "")
    runs: list[tuple[str, dict[str, str], list[str]]] = [
        ("", env, ([f"PYTHONPATH={path}"] if path else []) + blas_prefix)
    ]
    if args.baseline is not None:
        baseline = os.pathsep.join(filter(None, [str(args.baseline.resolve()), path]))
        runs = [
            (
                "### Baseline",
                {**env, "PYTHONPATH": baseline},
                [f"PYTHONPATH={baseline}", *blas_prefix],
            ),
            ("### This code", *runs[0][1:]),
        ]
    extra = ["--smoke"] if args.smoke else []
    names = args.only or list(SCRIPTS)

    info = machine_info()
    started = datetime.datetime.now().isoformat(timespec="seconds")
    lines = [
        f"# {args.title}",
        "",
        f"Produced by `{_driver_command()}` on {started}. Every table below was printed by the "
        "command above it, all in this one run.",
        "",
        *([args.note, ""] if args.note else []),
        "## Machine",
        "",
        f"- CPU: {info['cpu']}",
        f"- logical cores: {info['cores']}",
        f"- Python {info['python']}, numpy {info['numpy']} ({_blas_build()})",
        f"- platform: {info['platform']}",
        "- BLAS threads: "
        + (f"{args.blas_threads} ({', '.join(BLAS_VARIABLES)})" if args.blas_threads else "unset"),
        f"- load average (1 / 5 / 15 min) at start: {info['load average (1/5/15 min)']}",
        "",
    ]
    failures = 0
    for name in names:
        script = SCRIPTS[name]
        lines += [f"## {name}", ""]
        for heading, run_env, prefix in runs:
            command = _display_command(script, extra, prefix)
            print(f"running {command}", file=sys.stderr, flush=True)
            code, output, wall = run_script(script, extra, run_env)
            failures += code != 0
            if heading:
                lines += [heading, ""]
            # Demote the script's own heading below this file's section headings.
            output = output.replace("### ", "#### ", 1) if heading else output
            lines += ["```", command, "```", "", output, "", f"({wall:.0f} s)", ""]
            print(output, flush=True)
    lines += [f"Load average (1 / 5 / 15 min) at the end: {load_average()}.", ""]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
