"""``experiments/hostile_inputs.py`` runs and judges its cases (a few of them here; the whole run,
at the attack's sizes, is the table in SECURITY.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "hostile_inputs.py"


@pytest.mark.slow
def test_the_script_measures_and_passes_a_few_cases(tmp_path: Path) -> None:
    only = ["nested line: report", "F1 NaN", "--indices 1_0", "report.md"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--keep", str(tmp_path), "--only", *only],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "ok |" in line]
    assert len(rows) == 4, done.stdout
    for row in rows:
        seconds, megabytes = (float(cell) for cell in row.split("|")[6:8])
        assert 0 < seconds < 60 and 10 < megabytes < 1024, row
    assert "4 of 4 cases held" in done.stdout
