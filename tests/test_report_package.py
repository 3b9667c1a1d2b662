"""Tests for the shape of the acdb_gym.report package: its public names and its imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import acdb_gym
from acdb_gym import report

PACKAGE_DIR = Path(report.__file__).parent
MAX_MODULE_LINES = 600


@pytest.mark.slow
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


def test_every_section_module_is_one_line_of_the_table() -> None:
    """Adding a section is one module of report/sections and one line of SECTIONS."""
    from acdb_gym.report.sections import SECTIONS

    modules = {path.stem for path in (PACKAGE_DIR / "sections").glob("*.py")} - {"__init__"}
    assert sorted(type(section).__module__.rsplit(".", 1)[1] for section in SECTIONS) == sorted(
        modules
    )
    names = [section.name for section in SECTIONS]
    assert len(set(names)) == len(names)
    for section in SECTIONS:
        assert section.slot in ("ladder", "run"), section.name
        assert all(callable(getattr(section, m)) for m in ("compute", "write", "parts"))


@pytest.mark.slow
def test_a_new_section_needs_only_its_module_and_a_table_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recipe of DESIGN §10: a section class, registered in SECTIONS, gets its file into
    the file list and its parts into report.md and report.html, in its ladder blocks."""
    from acdb_gym.report import sections, write
    from acdb_gym.report.document import Table
    from acdb_gym.report.section import ReportContext, SectionFiles
    from acdb_gym.report.tables import write_csv
    from tests.test_report import make_row, write_jsonl

    class Episodes:
        name = "episode_count"
        slot = "ladder"
        files_order = 100

        def compute(self, context: ReportContext) -> dict[str, int]:
            counts: dict[str, int] = {}
            for row in context.rows:
                counts[row.ladder] = counts.get(row.ladder, 0) + 1
            return counts

        def write(self, result: dict[str, int], context: ReportContext) -> SectionFiles:
            path = context.run_dir / "episode_count.csv"
            return SectionFiles(csvs=(write_csv(path, ["ladder", "rows"], result.items()),))

        def parts(self, result: dict[str, int], context: ReportContext, ladder: str | None) -> list:
            return ["### Episodes", "", Table.of(["rows"], [[str(result[str(ladder)])]])]

    monkeypatch.setattr(write, "SECTIONS", (*sections.SECTIONS, Episodes()))
    run = write_jsonl(tmp_path / "run", [make_row(index=i) for i in range(3)])
    files = write.write_report(run)
    text = files.markdown.read_text(encoding="utf-8")
    assert "### Episodes\n\n| rows |\n|---|\n| 3 |" in text
    assert text.index("### Episodes") < text.index("## Paired sign-flip tests")
    assert files.csvs[-1].name == "episode_count.csv"
    assert (run / "episode_count.csv").read_text().splitlines() == ["ladder,rows", "v0,3"]
    assert "[episode_count.csv](episode_count.csv)" in text
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "<h3>Episodes</h3>" in html and '<th scope="col">rows</th>' in html
