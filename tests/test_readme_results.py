"""The README's v0 table is what its first command prints: the same rows, labels and numbers.

This runs the README's main sweep (240 jobs, about 10 s on two workers), so it also guards the
offline v0 rows on the published seeds, which no change may move unless an issue asks for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from acdb_gym.report import load_results, summarize
from acdb_gym.report.tables import format_number
from acdb_gym.sweep.run import SweepConfig, run_sweep

README = Path(__file__).resolve().parent.parent / "README.md"
COLUMNS = (
    "skeleton_f1",
    "directed_precision",
    "directed_recall",
    "directed_f1",
    "shd",
    "anytime_f1",
    "efficiency",
)


def _readme_rows() -> dict[str, list[str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Results on the v0 ladder", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 1 + len(COLUMNS) and cells[0] not in ("agent", "---"):
            rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.slow
def test_the_readme_v0_table_matches_a_fresh_run(tmp_path: Path) -> None:
    run_sweep(SweepConfig(out=tmp_path, ladder="v0", workers=2, progress=False))
    (table,) = summarize(load_results(tmp_path)).ladders
    printed = {
        row.label: [format_number(row.metrics[metric].mean, metric) for metric in COLUMNS]
        for row in table.rows
    }
    assert _readme_rows() == printed
