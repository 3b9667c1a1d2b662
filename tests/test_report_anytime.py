"""The anytime measure: directed F1 after each experiment, its curve and area."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from matplotlib.image import imread

from acdb_gym.report import write_report
from acdb_gym.report.anytime import (
    anytime_area,
    anytime_curve,
    anytime_parts,
    anytime_rows,
    plot_anytime,
)
from acdb_gym.report.document import markdown_lines
from acdb_gym.report.revision import truth_and_budget
from tests.test_report import make_row, typed, write_jsonl
from tests.test_report_revision import LEVEL, _row


def test_the_curve_carries_unstated_graphs_and_the_submission_to_the_budget() -> None:
    assert anytime_curve([0.1, None, 0.4], budget=5) == (0.1, 0.1, 0.4, 0.4, 0.4, 0.4)
    assert anytime_curve([0.3], budget=0) == (0.3,)
    assert anytime_curve([None, 0.3], budget=2) is None  # nothing stated before experiment 1
    with pytest.raises(ValueError, match="got 3 experiments and budget 2"):
        anytime_curve([0.1, 0.2, 0.3, 0.4], budget=2)
    assert anytime_area((0.0, 0.5, 1.0, 1.0)) == 0.625


def test_scripted_episodes_have_their_hand_computed_curves_and_areas() -> None:
    # Episode 0 (budget 3): F1 0, 1/2, 1/2, 8/13; episode 1 (budget 4): the truth throughout.
    rows = typed(_row(0) | {"efficiency": 1.0}, _row(1) | {"efficiency": 0.5})
    assert [truth_and_budget(row)[1] for row in rows] == [3, 4]
    (summary,) = anytime_rows(rows)
    assert (summary.ladder, summary.level, summary.label) == ("v0", "L0", "scripted (active)")
    first = (0.0 + 0.5 + 0.5 + 8 / 13) / 4
    assert summary.area.n == 2 and summary.area.mean == pytest.approx((first + 1.0) / 2)
    assert summary.curve == pytest.approx([0.5, 0.75, 0.75, (8 / 13 + 1) / 2, (8 / 13 + 1) / 2])
    assert summary.efficiency == 0.75
    text = "\n".join(markdown_lines(anytime_parts([summary], plot="anytime_v0.png")))
    area = f"{100 * summary.area.mean:.1f} [{100 * summary.area.low:.1f}, "
    assert f"| scripted (active) | L0 | 2 | {area}" in text
    assert "| 50.0 | 80.8 | 75.0 |" in text and "![anytime directed F1](anytime_v0.png)" in text


def test_rows_without_revisions_or_a_known_level_are_left_out() -> None:
    unknown = _row(0) | {"ladder": "v9"}
    plain = {k: v for k, v in _row(1).items() if k != "revision"}
    assert anytime_rows(typed(unknown, plain)) == ()
    with pytest.raises(ValueError, match="row 'job0': bad revision record"):
        anytime_rows(typed(_row(0) | {"revision": {"n_nodes": 5}}))


def test_the_plot_is_a_png_with_a_panel_per_level(tmp_path: Path) -> None:
    rows = anytime_rows(typed(_row(0), _row(1)))
    path = plot_anytime(rows, tmp_path / "anytime.png")
    assert imread(path).shape[2] in (3, 4)
    with pytest.raises(ValueError, match="no anytime rows"):
        plot_anytime([], tmp_path / "none.png")


@pytest.mark.slow
def test_the_report_has_the_anytime_section_csv_and_plot(tmp_path: Path) -> None:
    rows = []
    for index in (0, 1):
        scripted = _row(index)
        rows.append(
            make_row("scripted", index=index, f1=scripted["directed_f1"])
            | {"seed": LEVEL.manifest_seed(index), "revision": scripted["revision"]}
        )
    files = write_report(write_jsonl(tmp_path / "run", rows))
    text = files.markdown.read_text(encoding="utf-8")
    assert "## Anytime directed F1" in text and "(anytime_v0.png)" in text
    assert tmp_path / "run" / "anytime_v0.png" in files.plots
    with (tmp_path / "run" / "anytime.csv").open(encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    assert [int(line["k"]) for line in lines] == [0, 1, 2, 3, 4]
