"""Every script under ``experiments/`` fails on one line: a bad argument names itself and
``--help`` (no usage dump), and an error while running is one line, not a traceback
(``ACDB_TRACEBACK=1`` brings the traceback back)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(
    path.name
    for path in (ROOT / "experiments").glob("*.py")
    if 'if __name__ == "__main__":' in path.read_text()
)


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


def test_every_script_is_covered() -> None:
    assert len(SCRIPTS) >= 14 and "regime_claims.py" in SCRIPTS  # readme_claims runs it


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_a_bad_argument_is_one_line(script: str) -> None:
    result = _run(f"experiments/{script}", "--no-such-option")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    # The unknown option, or first a missing required one: named either way, on one line
    # (train_rl.py is ``acdb train``'s trainer and speaks as it).
    prog = "acdb train" if script == "train_rl.py" else script
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), result.stderr
    assert lines[0].endswith(f"(see {prog} --help)") and "usage:" not in result.stderr


@pytest.mark.slow
def test_an_error_while_running_is_one_line_and_names_the_file() -> None:
    result = _run("experiments/eval_design_policy.py", "--model", "missing/model.zip")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "eval_design_policy.py: error: no policy file at missing/model.zip "
        "(FileNotFoundError; ACDB_TRACEBACK=1 shows the traceback)"
    ]
    traced = _run(
        "experiments/eval_design_policy.py", "--model", "missing/model.zip", ACDB_TRACEBACK="1"
    )
    assert traced.returncode == 1 and "Traceback (most recent call last)" in traced.stderr
