"""The report's hidden-confounder section: latent rows get a table of their further fields, in
report.md and report.html alike, and a run without latent rows gets none."""

from __future__ import annotations

from pathlib import Path

import pytest

from acdb_gym.report import write_report
from acdb_gym.report.document import markdown_lines
from acdb_gym.report.latent import latent_parts
from acdb_gym.report.load import as_rows
from acdb_gym.results import example_row
from acdb_gym.sweep.run import SweepConfig, run_sweep


def _row(agent: str, level: str, bidirected_f1: float, mistyped: int) -> dict[str, object]:
    return example_row(
        job_id=f"{agent}-{level}",
        ladder="v1-latent",
        level=level,
        agent=agent,
        panel="active",
        bidirected_precision=1.0,
        bidirected_recall=bidirected_f1,
        bidirected_f1=bidirected_f1,
        pag_arrowhead_f1=0.5,
        pag_tail_f1=0.25,
        shd_mistyped=mistyped,
    )


def test_the_section_means_each_field_over_episodes() -> None:
    rows = as_rows([_row("a", "L0", 1.0, 0), _row("a", "L1", 0.5, 2), example_row(agent="b")])
    text = "\n".join(markdown_lines(latent_parts(rows)))
    assert text.startswith("## Hidden confounders")
    assert "### Ladder v1-latent" in text
    assert "| a (active) | 2 | 100.0 | 75.0 | 75.0 [75.0, 75.0] | 50.0 [50.0, 50.0] |" in text
    assert text.rstrip().endswith("| 25.0 [25.0, 25.0] | 1.00 |")
    assert "b (" not in text
    assert latent_parts(as_rows([example_row(agent="c")])) == []  # no latent field


@pytest.mark.slow
@pytest.mark.parametrize("ladder", ["v1-latent"])
def test_a_latent_sweep_reports_the_section_in_both_files(ladder: str, tmp_path: Path) -> None:
    config = SweepConfig(
        out=tmp_path, ladder=ladder, levels=("L0",), seeds=2, agents=("oracle", "random"),
        progress=False,
    )  # fmt: skip
    run_sweep(config)
    files = write_report(tmp_path)
    markdown = files.markdown.read_text(encoding="utf-8")
    assert "## Hidden confounders" in markdown
    section = markdown.split("## Hidden confounders", 1)[1]
    oracle = next(line for line in section.splitlines() if line.startswith("| oracle"))
    assert "| 100.0 [100.0, 100.0] |" in oracle and oracle.endswith("| 0.00 |")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Hidden confounders" in html and "PAG arrowhead F1" in html
