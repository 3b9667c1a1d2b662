"""Smoke tests of the benchmark scripts: each runs with ``--smoke`` and prints a table.

The benchmarks are never run by the test suite otherwise. All scripts start at once as
subprocesses of this interpreter, so the whole module takes about as long as the slowest one
(well under 30 s on two cores).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = (
    "cpdag_vs_peers.py",
    "mis_timing.py",
    "reset_timing.py",
    "intervene_throughput.py",
    "score_vs_gcastle.py",
    "design_env_steps.py",
    "design_env_rl.py",
    "sweep_walltime.py",
    "bic_search_vs_gies.py",
    "pc_batched_vs_causallearn.py",
    "pc_many.py",
    "sign_flip_vs_scipy.py",
    "family_reset.py",
    "marginal_orders.py",
    "observation_modes.py",
    "large_worlds.py",
    "report_html.py",
    "real_reset.py",
    "wiring_weight_rules.py",
    "main_command.py",
    "stats_step.py",
    "train_command.py",
)
WITH_PEERS = (
    "cpdag_vs_peers.py",
    "reset_timing.py",
    "score_vs_gcastle.py",
    "bic_search_vs_gies.py",
    "pc_batched_vs_causallearn.py",
    "large_worlds.py",
)
PEER_PACKAGES = ("causallearn", "graphical_models", "castle", "gies")
TIMEOUT = 300


def _environment(extra_path: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"}
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(extra_path), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
    return env


def _run_all(scripts: tuple[str, ...], env: dict[str, str]) -> dict[str, tuple[int, str, str]]:
    """Start every script at once; wait for all; exit code, stdout and stderr per script."""
    processes = {
        script: subprocess.Popen(
            [sys.executable, str(BENCHMARKS / script), "--smoke"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for script in scripts
    }
    results = {}
    for script, process in processes.items():
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        results[script] = (process.returncode, stdout, stderr)
    return results


def _is_table(output: str) -> bool:
    lines = output.splitlines()
    return any(
        line.startswith("| ") and following.startswith("|---")
        for line, following in itertools.pairwise(lines)
    )


@pytest.mark.slow
def test_every_script_runs_and_prints_a_table() -> None:
    # One test rather than one per script: with pytest-xdist, a shared fixture would run once
    # per worker, and the scripts are cheapest started together.
    failures = []
    for script, (code, stdout, stderr) in _run_all(SCRIPTS, _environment()).items():
        if code != 0:
            failures.append(f"{script} exited with {code}:\n{stderr[-3000:]}")
        elif not _is_table(stdout):
            failures.append(f"{script} printed no Markdown table:\n{stdout}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.slow
def test_scripts_without_peers_run_their_own_side(tmp_path: Path) -> None:
    # A package that fails to import stands in for a peer that is not installed.
    for package in PEER_PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(
            f"raise ImportError('{package} is hidden by the benchmark smoke test')\n"
        )
    results = _run_all(WITH_PEERS, _environment(tmp_path))
    for script, (code, stdout, stderr) in results.items():
        assert code == 0, f"{script} exited with {code}:\n{stderr[-3000:]}"
        assert _is_table(stdout), script
        assert "peer not installed" in stdout, script


@pytest.mark.slow
def test_run_all_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    process = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "run_all.py"),
            "--smoke",
            "--only",
            "mis",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=_environment(),
        timeout=TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, process.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert "benchmarks/mis_timing.py --smoke" in text
    assert "- CPU:" in text and "- logical cores:" in text and "numpy" in text
    assert _is_table(text)
