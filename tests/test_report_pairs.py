"""The report's cause-effect pairs section: accuracy, dataset-weighted accuracy and the share
of pairs oriented, from rows of the pairs ladder, in report.md and report.html alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from acdb_gym.core.ladders.shipped import TUEBINGEN_LADDER
from acdb_gym.core.worlds.cause_effect_pairs import pair_table
from acdb_gym.report import write_report
from acdb_gym.report.document import markdown_lines
from acdb_gym.report.load import as_rows
from acdb_gym.report.pairs import pair_accuracies, pairs_parts
from acdb_gym.results import example_row
from acdb_gym.sweep.run import SweepConfig, run_sweep


def _row(agent: str, index: int, right: float, reversed_: int) -> dict[str, object]:
    entry = TUEBINGEN_LADDER["Pairs"].manifest[index]
    return example_row(
        job_id=f"{agent}-{index}",
        ladder="tuebingen",
        level="Pairs",
        agent=agent,
        seed=entry.seed,
        manifest_index=index,
        directed_f1=right,
        shd_reversed=reversed_,
    )


def test_the_weighted_accuracy_counts_each_pair_with_its_dataset_weight() -> None:
    # Pairs 0 and 4 are from datasets weighted 0.166 and 0.143 per pair, pair 17 is alone (1).
    rows = [_row("a", 0, 1.0, 0), _row("a", 4, 0.0, 1), _row("a", 17, 0.0, 0)]
    rows.append(example_row(ladder="v1", agent="a"))
    typed = as_rows(rows)
    [accuracy] = pair_accuracies(typed)
    weights = [pair_table()[i].weight for i in (0, 4, 17)]
    assert weights == [0.166, 0.143, 1.0]
    assert accuracy.accuracy == pytest.approx(1 / 3)
    assert accuracy.weighted == pytest.approx(0.166 / sum(weights))
    assert accuracy.decided == pytest.approx(2 / 3) and accuracy.episodes == 3
    text = "\n".join(markdown_lines(pairs_parts(typed)))
    assert text.startswith("## Cause-effect pairs")
    assert (
        "| tuebingen Pairs | a (observational) | 3 | 33.3 [" in text and "| 12.7 | 66.7 |" in text
    )
    assert pairs_parts(as_rows([example_row(ladder="v1")])) == []


@pytest.mark.slow
def test_a_pairs_sweep_reports_the_section_in_both_files(tmp_path: Path) -> None:
    config = SweepConfig(
        out=tmp_path, ladder="tuebingen", levels=("Pairs",), seeds=3,
        agents=("oracle", "random", "pc"), progress=False,
    )  # fmt: skip
    run_sweep(config)
    files = write_report(tmp_path)
    section = files.markdown.read_text(encoding="utf-8").split("## Cause-effect pairs", 1)[1]
    oracle = next(line for line in section.splitlines() if "oracle" in line)
    assert "| 100.0 [100.0, 100.0] | 100.0 | 100.0 |" in oracle
    pc = next(line for line in section.splitlines() if "| pc (" in line)
    assert pc.endswith("| 0.0 [0.0, 0.0] | 0.0 | 0.0 |")
    assert "Cause-effect pairs" in (tmp_path / "report.html").read_text(encoding="utf-8")
