"""The report's headroom (``report/headroom.py``): oracle minus the best non-privileged agent,
per level, with its CI and the agent's name, in report.md and headroom.csv."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from acdb_gym.report import write_report
from acdb_gym.report.aggregation import prepare, summarize_prepared
from acdb_gym.report.headroom import headroom_rows, privileged_groups
from tests.test_report import make_row, write_jsonl


def _rows(with_oracle: bool = True) -> list[dict[str, object]]:
    rows = []
    for index in range(6):
        rows.append(make_row("pc", level="L0", index=index, f1=0.4 + 0.02 * index))
        rows.append(make_row("pc_greedy", level="L0", index=index, f1=0.6))
        rows.append(make_row("pc", level="L1", index=index, f1=0.8))
        rows.append(make_row("pc_greedy", level="L1", index=index, f1=0.7))
        reference = make_row("class_reference", level="L0", index=index, f1=0.95)
        reference["privileged"] = True
        rows.append(reference)
        if with_oracle:
            rows.append(make_row("oracle", level="L0", index=index, f1=1.0))
            rows.append(make_row("oracle", level="L1", index=index, f1=1.0))
    return rows


def test_the_best_non_privileged_agent_and_its_distance_to_the_oracle() -> None:
    prepared = prepare(_rows())
    room = {row.level: row for row in headroom_rows(prepared, summarize_prepared(prepared))}
    assert room["L0"].best == "pc_greedy (active)"  # not the privileged reference at 0.95
    assert room["L0"].headroom.mean == pytest.approx(0.4)
    assert room["L1"].best == "pc (active)"
    assert room["L1"].headroom.mean == pytest.approx(0.2)
    assert room["L1"].headroom.low == pytest.approx(0.2)  # every instance the same
    assert room["overall"].best == "pc_greedy (active)"  # 0.65 pooled, pc 0.625
    assert room["L0"].oracle_measured and room["L0"].headroom.n == 6
    assert {g[0] for g in privileged_groups(prepared.ok)} == {"oracle", "class_reference"}


def test_without_oracle_rows_the_oracle_counts_as_the_truth() -> None:
    prepared = prepare(_rows(with_oracle=False))
    room = {row.level: row for row in headroom_rows(prepared, summarize_prepared(prepared))}
    assert not room["L0"].oracle_measured
    assert room["L0"].oracle_f1 == 1.0
    assert room["L0"].headroom.mean == pytest.approx(0.4)


def test_every_report_has_the_headroom_table_and_csv(tmp_path: Path) -> None:
    write_jsonl(tmp_path, _rows())
    files = write_report(tmp_path)
    text = files.markdown.read_text(encoding="utf-8")
    assert "### Headroom: oracle − the best agent, per level" in text
    assert "| L0 | pc_greedy (active) | 60.0 [60.0, 60.0] | 100.0 | 40.0 [40.0, 40.0] | 6 |" in text
    with (tmp_path / "headroom.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert [row["level"] for row in table] == ["L0", "L1", "overall"]
    assert float(table[0]["headroom"]) == pytest.approx(0.4)
    assert "Headroom" in (tmp_path / "report.html").read_text(encoding="utf-8")
