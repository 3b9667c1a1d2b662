"""Tests for the shape of the acdb_gym.report package: its public names and its imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import acdb_gym
from acdb_gym import report

PACKAGE_DIR = Path(report.__file__).parent
MAX_MODULE_LINES = 600


def test_importing_the_report_does_not_import_matplotlib() -> None:
    # A fresh interpreter: this test process may already have imported matplotlib.
    code = (
        "import sys, acdb_gym.report; "
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'matplotlib'))"
    )
    repo = Path(acdb_gym.__file__).parents[1]
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo
    )
    assert result.stdout.strip() == "[]"


def test_the_package_re_exports_the_names_the_cli_and_experiments_use() -> None:
    for name in ("write_report", "summarize", "load_results", "format_terminal", "paired_test"):
        assert callable(getattr(report, name)), name
    assert sorted(report.__all__) == sorted(set(report.__all__))
    for name in report.__all__:
        assert hasattr(report, name), name


def test_every_report_module_is_small_and_says_what_it_owns() -> None:
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= MAX_MODULE_LINES, path.name
        assert text.startswith('"""'), f"{path.name} has no module docstring"
