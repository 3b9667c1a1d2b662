"""Tests for acdb_gym.report: loading, aggregation, CIs, paired tests, files and text."""

from __future__ import annotations

import csv
import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imread

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.report import (
    SCORE_FIELDS,
    Estimate,
    bootstrap_ci,
    compare_agents,
    format_terminal,
    load_results,
    paired_test,
    sign_flip_pvalue,
    summarize,
    write_report,
)
from acdb_gym.results import Location, ResultRow

_counter = iter(range(10**9))


def make_row(
    agent: str = "pc",
    *,
    level: str = "L0",
    index: int = 0,
    f1: float = 0.5,
    ladder: str = "v0",
    panel: str = "active",
    tools: str = "raw",
    repeat: int = 0,
    status: str = "ok",
    error: str | None = None,
    **scores: float,
) -> dict[str, Any]:
    """A complete results row; every score field is ``f1`` unless given in ``scores``."""
    row: dict[str, Any] = {
        "job_id": f"job-{next(_counter)}",
        "status": status,
        "error": error,
        "ladder": ladder,
        "level": level,
        "manifest_index": index,
        "seed": 1000 + index,
        "agent": agent,
        "agent_config": {},
        "panel": panel,
        "tools": tools,
        "repeat": repeat,
        "steps": 4,
        "invalid_actions": 0,
        "truncated": False,
        "draws": 100 if agent == "random" else 1,
        "tokens_in": None,
        "tokens_out": None,
        "wall_time": 0.01,
        "version": "0.1.0",
    }
    for name in SCORE_FIELDS:
        row[name] = None if status == "failed" else scores.get(name, f1)
    if status == "failed":
        del row["anytime_f1"]  # optional: absent, never null
    return row


def make_typed(agent: str = "pc", **fields: Any) -> ResultRow:
    """:func:`make_row` as the report holds it: a typed row."""
    return ResultRow.parse(make_row(agent, **fields), where=Location(Path("<test>")))


def typed(*rows: dict[str, Any]) -> list[ResultRow]:
    """Rows as the report holds them, their types checked but not their ranges, so that a row
    the reader would skip can reach the function under test."""
    return [ResultRow.from_dict(row, where=Location(Path("<test>"))) for row in rows]


def write_jsonl(run_dir: Path, rows: list[dict[str, Any]], tail: str = "") -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "results.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + tail, encoding="utf-8")
    return run_dir


def labelled(summary_rows: Any, label: str) -> Any:
    return next(row for row in summary_rows if row.label == label)


# ----------------------------------------------------------------------------- loading


def test_load_results_skips_a_torn_last_line_with_a_warning(tmp_path: Path) -> None:
    rows = [make_row(index=0), make_row(index=1, status="failed", error="boom")]
    write_jsonl(tmp_path, rows, tail='{"job_id": "x", "status": "o')
    with pytest.warns(UserWarning, match=r"results\.jsonl:3: invalid JSON \(torn last line"):
        loaded = load_results(tmp_path)
    assert [row["job_id"] for row in loaded] == [rows[0]["job_id"], rows[1]["job_id"]]
    assert [row["status"] for row in loaded] == ["ok", "failed"]


def test_load_results_skips_invalid_middle_lines_and_keeps_the_rest(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path, []) / "results.jsonl"
    good = [make_row(index=0), make_row(index=1)]
    path.write_text(
        json.dumps(good[0]) + "\nnot json\n[1, 2]\n\n" + json.dumps(good[1]), encoding="utf-8"
    )
    with pytest.warns(UserWarning) as caught:
        loaded = load_results(tmp_path)
    messages = [str(warning.message) for warning in caught]
    assert any("results.jsonl:2: invalid JSON" in message for message in messages)
    assert any("results.jsonl:3: not a JSON object" in message for message in messages)
    # A complete object without the final newline is a whole row, not a torn one.
    assert [row["job_id"] for row in loaded] == [good[0]["job_id"], good[1]["job_id"]]


def test_load_results_keeps_the_successful_retry_of_a_failed_job(tmp_path: Path) -> None:
    failed = make_row(status="failed", error="timeout")
    retried = {**make_row(f1=0.7), "job_id": failed["job_id"]}
    write_jsonl(tmp_path, [failed, retried])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_results(tmp_path)
    assert loaded == [retried]


def test_load_results_without_a_results_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"results\.jsonl"):
        load_results(tmp_path)


# ----------------------------------------------------------------------------- aggregation


def test_table2_weights_levels_by_their_episodes() -> None:
    rows = [make_row(level="L0", index=i, f1=f) for i, f in enumerate([0.2, 0.4, 0.6])]
    rows.append(make_row(level="L1", index=0, f1=1.0, shd=3))
    table = summarize(rows).ladder("v0")
    (row,) = table.rows
    # Pooled over seeds: (0.2 + 0.4 + 0.6 + 1.0) / 4, not the mean of the level means 0.7.
    assert row.metrics["directed_f1"].mean == pytest.approx(0.55, abs=1e-12)
    assert row.metrics["shd"].mean == pytest.approx((0.2 + 0.4 + 0.6 + 3) / 4, abs=1e-12)
    assert row.per_level["L0"].mean == pytest.approx(0.4, abs=1e-12)
    assert row.per_level["L1"].mean == pytest.approx(1.0, abs=1e-12)
    assert (row.n_seeds, row.n_episodes, row.n_failed) == (4, 4, 0)
    assert table.levels == ("L0", "L1")


def test_repeats_are_averaged_into_one_per_seed_value() -> None:
    rows = [
        make_row(index=0, repeat=0, f1=0.2),
        make_row(index=0, repeat=1, f1=0.6),
        make_row(index=1, f1=1.0),
    ]
    (row,) = summarize(rows).ladder("v0").rows
    # Seeds 0.4 and 1.0, not the episode mean (0.2 + 0.6 + 1.0) / 3.
    assert row.metrics["directed_f1"].mean == pytest.approx(0.7, abs=1e-12)
    assert (row.n_seeds, row.n_episodes) == (2, 3)
    assert row.metrics["directed_f1"].n == 2


def test_every_table2_metric_is_averaged_exactly() -> None:
    values = {"skeleton_f1": 0.9, "compelled_f1": 0.3, "directed_precision": 0.8}
    values |= {"directed_recall": 0.1, "efficiency": 0.75, "essential_f1": 0.45, "shd": 7}
    rows = [make_row(index=i) | values for i in range(3)]
    (row,) = summarize(rows).ladder("v0").rows
    for name, value in values.items():
        estimate = row.metrics[name]
        assert estimate.n == 3
        assert (estimate.mean, estimate.low, estimate.high) == pytest.approx(
            (value,) * 3, abs=1e-12
        )


def test_ci_contains_the_mean_and_is_deterministic() -> None:
    rng = np.random.default_rng(5)
    rows = [
        make_row(level=level, index=i, f1=float(rng.uniform()))
        for level in ("L0", "L1", "L2")
        for i in range(6)
    ]
    first, second = summarize(rows), summarize(list(reversed(rows)))
    assert first == second
    for estimate in [
        *first.ladder("v0").rows[0].metrics.values(),
        *first.ladder("v0").rows[0].per_level.values(),
    ]:
        assert estimate.low <= estimate.mean <= estimate.high
    overall = first.ladder("v0").rows[0].metrics["directed_f1"]
    assert overall.low < overall.high


def test_bootstrap_ci_is_stratified_and_handles_degenerate_input() -> None:
    # Two constant strata: resampling within strata cannot move the mean.
    assert bootstrap_ci([[0.0, 0.0], [1.0]]) == Estimate(1 / 3, 1 / 3, 1 / 3, 3)
    pooled = bootstrap_ci([[0.0, 0.0, 1.0]])
    assert pooled.mean == pytest.approx(1 / 3)
    assert pooled.low == 0.0 and pooled.high == 1.0
    assert bootstrap_ci([[], [math.nan]]).n == 0
    assert math.isnan(bootstrap_ci([]).mean)


def test_labels_name_tools_only_for_agents_run_with_several() -> None:
    rows = [
        make_row("pc_greedy", panel="active"),
        make_row("pc_greedy", panel="observational"),
        make_row("llm", tools="raw"),
        make_row("llm", tools="stats"),
    ]
    assert summarize(rows).labels == (
        "llm (active, raw)",
        "llm (active, stats)",
        "pc_greedy (active)",
        "pc_greedy (observational)",
    )


def test_failed_rows_are_counted_and_listed() -> None:
    rows = [
        make_row("llm", index=0, f1=0.4),
        make_row("llm", index=1, status="failed", error="rate limit"),
        make_row("pc", index=0, status="failed", error="crash"),
    ]
    summary = summarize(rows)
    llm = labelled(summary.ladder("v0").rows, "llm (active)")
    pc = labelled(summary.ladder("v0").rows, "pc (active)")
    assert (llm.n_seeds, llm.n_episodes, llm.n_failed) == (1, 1, 1)
    assert (pc.n_seeds, pc.n_failed) == (0, 1)
    assert math.isnan(pc.metrics["directed_f1"].mean)
    assert (summary.n_ok, summary.n_failed) == (1, 2)
    assert {(f.label, f.error) for f in summary.failures} == {
        ("llm (active)", "rate limit"),
        ("pc (active)", "crash"),
    }


def test_rows_with_different_configs_under_one_label_warn() -> None:
    rows = [make_row("llm", index=0), make_row("llm", index=1)]
    rows[1]["agent_config"] = {"base_url": "http://127.0.0.1:8000/v1"}
    with pytest.warns(UserWarning, match="different agent_config"):
        summary = summarize(rows)
    assert summary.mixed_configs == ("llm (active)",)


def test_models_of_one_agent_are_separate_rows() -> None:
    rows = [make_row("llm", index=i) for i in range(2)] + [
        make_row("llm", index=i) for i in range(2)
    ]
    for row in rows[:2]:
        row["agent_config"] = {"model": "model-a"}
    for row in rows[2:]:
        row["agent_config"] = {"model": "model-b"}
    labels = {row.label for row in summarize(rows).ladder("v0").rows}
    assert labels == {"llm[model-a] (active)", "llm[model-b] (active)"}


def test_random_floor_reports_closed_form_and_measured() -> None:
    rows = [make_row("random", level="L0", index=i, f1=0.2 + 0.1 * i) for i in range(2)]
    rows += [make_row("random", level="L3", index=0, f1=0.3)]
    rows += [make_row("pc", level=level, index=0) for level in ("L0", "L3")]
    floors = {floor.level: floor for floor in summarize(rows).ladder("v0").random_floor}
    assert list(floors) == ["L0", "L3", "overall"]
    spec = {level: LADDERS["v0"][level].spec.random_floor for level in ("L0", "L3")}
    assert floors["L0"].closed_form == spec["L0"]
    assert floors["L0"].measured.mean == pytest.approx(0.25)
    # Overall: weighted by instances per level (two at L0, one at L3).
    assert floors["overall"].closed_form == pytest.approx((2 * spec["L0"] + spec["L3"]) / 3)
    assert floors["overall"].measured.mean == pytest.approx(0.8 / 3)


def test_the_summary_does_not_depend_on_row_order() -> None:
    # Several sweep workers write rows in the order jobs finish.
    rng = np.random.default_rng(3)
    rows = [
        make_row(agent, level=level, index=index, f1=float(rng.uniform()))
        for agent in ("random", "pc")
        for level in ("L0", "L3")
        for index in range(6)
    ]
    shuffled = [rows[k] for k in rng.permutation(len(rows))]
    assert format_terminal(summarize(shuffled)) == format_terminal(summarize(rows))
    assert (
        summarize(shuffled).ladder("v0").random_floor == summarize(rows).ladder("v0").random_floor
    )


def test_random_floor_without_a_random_agent_has_no_measurement() -> None:
    floors = summarize([make_row("pc", ladder="v1", level="L5")]).ladder("v1").random_floor
    assert floors[0].closed_form == LADDERS["v1"]["L5"].spec.random_floor
    assert floors[0].measured.n == 0


# ----------------------------------------------------------------------------- paired tests


def _paired_rows(differences: list[float], base: float = 0.3) -> list[dict[str, Any]]:
    rows = []
    for i, difference in enumerate(differences):
        level, index = ("L0", "L1")[i % 2], i // 2
        rows.append(make_row("a", level=level, index=index, f1=base + difference))
        rows.append(make_row("b", level=level, index=index, f1=base))
    return rows


def test_paired_test_matches_a_direct_mean_difference() -> None:
    rng = np.random.default_rng(3)
    a_values, b_values = rng.uniform(size=9), rng.uniform(size=9)
    rows = [make_row("a", index=i, f1=float(v)) for i, v in enumerate(a_values)]
    rows += [make_row("b", index=i, f1=float(v)) for i, v in enumerate(b_values)]
    rows.append(make_row("b", index=99, f1=0.0))  # unmatched: ignored
    test = paired_test(rows, "a (active)", "b (active)", "directed_f1")
    assert test.n == 9
    assert test.mean_difference == pytest.approx(float(np.mean(a_values - b_values)), abs=1e-12)
    assert test.mean_a == pytest.approx(float(a_values.mean()))
    assert 0.0 < test.p_value <= 1.0


def test_paired_test_averages_repeats_before_differencing() -> None:
    rows = [make_row("a", index=0, f1=0.2, repeat=r) for r in range(2)]
    rows[1]["directed_f1"] = 0.6
    rows.append(make_row("b", index=0, f1=0.1))
    test = paired_test(rows, "a (active)", "b (active)", "directed_f1")
    assert (test.n, test.mean_difference, test.p_value) == (1, pytest.approx(0.3), 1.0)


def test_identical_agents_have_p_one() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for i, value in enumerate(rng.uniform(size=8)):
        rows += [make_row("a", index=i, f1=float(value)), make_row("b", index=i, f1=float(value))]
    test = paired_test(rows, "a (active)", "b (active)", "shd")
    assert (test.n, test.mean_difference, test.p_value) == (8, 0.0, 1.0)


def test_a_consistent_large_difference_has_a_small_p() -> None:
    rng = np.random.default_rng(1)
    rows = _paired_rows(list(0.3 + rng.uniform(-0.05, 0.05, size=10)))
    test = paired_test(rows, "a (active)", "b (active)", "directed_f1")
    assert test.n == 10
    assert test.mean_difference == pytest.approx(0.3, abs=0.05)
    # Exact test: only the all-positive and all-negative sign patterns are as extreme.
    assert test.p_value == pytest.approx(2 / 2**10)


def test_paired_test_counts_the_pairs_above_below_and_tied() -> None:
    rows = _paired_rows([0.2, -0.1, 0.0, 0.3, 0.0])
    test = paired_test(rows, "a (active)", "b (active)", "directed_f1")
    assert (test.n, test.n_higher, test.n_lower) == (5, 2, 1)
    unmatched = paired_test(rows, "a (active)", "b (active)", "directed_f1", ladder="v1")
    assert (unmatched.n, unmatched.n_higher, unmatched.n_lower) == (0, 0, 0)
    assert math.isnan(unmatched.p_value)


def test_paired_test_draws_sign_patterns_beyond_twenty_pairs() -> None:
    exact = _paired_rows([0.3] * 20)
    test = paired_test(exact, "a (active)", "b (active)")
    assert (test.p_value, test.p_exact) == (pytest.approx(2 / 2**20), True)
    rows = _paired_rows([0.3] * 25)
    # Only the all-same-sign patterns (2 of 2**25) are as extreme, so no draw is: the observed
    # pattern counts as one draw, p = 1 / (1 + draws), never 0.
    drawn = paired_test(rows, "a (active)", "b (active)")
    assert (drawn.p_value, drawn.p_exact) == (pytest.approx(1 / 200_001), False)
    few = paired_test(rows, "a (active)", "b (active)", n_resamples=100)
    assert few.p_value == pytest.approx(1 / 101)


def test_sign_flip_pvalue_of_one_difference_is_one() -> None:
    assert sign_flip_pvalue(np.array([0.5])) == 1.0
    assert sign_flip_pvalue(np.array([0.5, 0.5])) == pytest.approx(0.5)


def test_paired_test_rejects_unknown_labels_and_metrics() -> None:
    rows = _paired_rows([0.1, 0.2])
    with pytest.raises(ValueError, match="unknown agent row 'c'"):
        paired_test(rows, "a (active)", "c", "directed_f1")
    with pytest.raises(ValueError, match="metric must be one of"):
        paired_test(rows, "a (active)", "b (active)", "accuracy")


def test_default_comparisons_use_the_best_non_oracle_row() -> None:
    rows = _paired_rows([0.1] * 4)
    rows += [make_row("oracle", level=("L0", "L1")[i % 2], index=i // 2, f1=1.0) for i in range(4)]
    tests = compare_agents(rows, pairs=[("b (active)", "oracle (active)")])
    pairs = [(t.agent_a, t.agent_b, t.metric) for t in tests if t.level is None]
    assert pairs == [
        ("a (active)", "oracle (active)", "directed_f1"),
        ("a (active)", "oracle (active)", "shd"),
        ("a (active)", "b (active)", "directed_f1"),
        ("a (active)", "b (active)", "shd"),
        ("b (active)", "oracle (active)", "directed_f1"),
        ("b (active)", "oracle (active)", "shd"),
    ]
    with pytest.raises(ValueError, match="unknown agent row"):
        compare_agents(rows, pairs=[("a (active)", "nobody")])


# ----------------------------------------------------------------------------- files and text


def _sweep_rows() -> list[dict[str, Any]]:
    rng = np.random.default_rng(7)
    rows = []
    for ladder in ("v0", "v1"):
        for level in ("L0", "L1", "L2"):
            for index in range(3):
                for agent, centre in (("oracle", 1.0), ("pc_greedy", 0.5), ("random", 0.2)):
                    f1 = float(np.clip(centre + rng.normal(0, 0.05), 0, 1))
                    rows.append(
                        make_row(agent, ladder=ladder, level=level, index=index, f1=f1)
                        | {"directed_precision": min(1.0, f1 * 1.3), "directed_recall": f1 * 0.8}
                    )
    rows.append(make_row("pc_greedy", level="L2", index=3, status="failed", error="solver | died"))
    return rows


@pytest.mark.slow
def test_write_report_creates_every_file(tmp_path: Path) -> None:
    write_jsonl(tmp_path, _sweep_rows(), tail='{"job_id": "torn"')
    with pytest.warns(UserWarning, match="torn last line"):
        files = write_report(tmp_path, compare=[("random (active)", "oracle (active)")])
    names = {path.name for path in files.all}
    assert names == {
        "report.md",
        "report.html",
        "paired_tests.csv",
        "random_floor.csv",
        "sortability.csv",
        "order_audit.csv",
        "headroom.csv",
        *(f"table{n}_{ladder}.csv" for n in (2, 3) for ladder in ("v0", "v1")),
        *(
            f"{kind}_{ladder}.png"
            for kind in ("f1_per_level", "precision_recall")
            for ladder in ("v0", "v1")
        ),
    }
    assert all(path.parent == tmp_path and path.stat().st_size > 0 for path in files.all)
    for plot in files.plots:
        image = imread(plot)
        assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
        assert image.shape[2] in (3, 4)
    with (tmp_path / "headroom.csv").open() as handle:
        headroom = list(csv.DictReader(handle))
    # The best non-privileged row of every level and overall: pc_greedy (0.5) beats random (0.2).
    assert len(headroom) == 2 * (3 + 1)
    assert {row["best_agent"] for row in headroom} == {"pc_greedy (active)"}
    with (tmp_path / "table2_v0.csv").open() as handle:
        table2 = {row["label"]: row for row in csv.DictReader(handle)}
    assert set(table2) == {"oracle (active)", "pc_greedy (active)", "random (active)"}
    assert table2["pc_greedy (active)"]["n_failed"] == "1"
    with (tmp_path / "paired_tests.csv").open() as handle:
        tests = list(csv.DictReader(handle))
    assert {(t["agent_a"], t["agent_b"]) for t in tests} >= {
        ("pc_greedy (active)", "oracle (active)"),
        ("random (active)", "oracle (active)"),
    }


@pytest.mark.slow
def test_report_markdown_has_every_section(tmp_path: Path) -> None:
    write_jsonl(tmp_path, _sweep_rows())
    text = write_report(tmp_path).markdown.read_text(encoding="utf-8")
    for heading in (
        "## Ladder v0",
        "### Table 2",
        "### Table 3",
        "### Random floor",
        "### Precision vs recall",
        "## Paired sign-flip tests",
        "## Ladders side by side",
        "## Failed jobs",
    ):
        assert heading in text
    assert "solver \\| died" in text  # the error, escaped for the table
    assert "pc_greedy (active)**: precision" in text and "under-commits" in text
    assert f"{100 * LADDERS['v0']['L1'].spec.random_floor:.1f}" in text
    assert "![directed F1 per level](f1_per_level_v0.png)" in text


def test_format_terminal_aligns_tables_with_every_label() -> None:
    summary = summarize(_sweep_rows())
    text = format_terminal(summary)
    for label in summary.labels:
        assert label in text
    assert "Table 2" in text and "Table 3" in text and "ladders side by side" in text
    table2 = text.split("== ladder v0: Table 2")[1].split("\n\n")[0].splitlines()[1:]
    assert len({len(line) for line in table2[:2]}) == 1  # header and rule align


def test_a_single_ladder_has_no_side_by_side_section() -> None:
    text = format_terminal(summarize([make_row(), make_row("oracle", f1=1.0)]))
    assert "side by side" not in text
    assert "oracle (active)" in text


@pytest.mark.slow
def test_shortcut_checks_compare_sortnregress_with_its_random_order_control(
    tmp_path: Path,
) -> None:
    rows = []
    for index in range(8):
        wobble = 0.01 * (index % 3)
        rows.append(make_row("sortnregress", index=index, f1=0.8 + wobble, panel="observational"))
        rows.append(make_row("randregress", index=index, f1=0.4 + wobble, panel="observational"))
        rows.append(make_row("random", index=index, f1=0.25, panel="observational"))
        rows.append(make_row("sortnregress", ladder="v1", index=index, f1=0.3 + wobble))
        rows.append(make_row("randregress", ladder="v1", index=index, f1=0.31 + 2 * wobble))
    rows.append(make_row("r2sortnregress", ladder="v1", index=0, f1=0.5))
    write_jsonl(tmp_path, rows)
    text = write_report(tmp_path).markdown.read_text(encoding="utf-8")
    # 8 seeds, all +40 points: only the two one-signed patterns of 256 are as extreme.
    assert (
        "variance order is worth +40.0 points (95% CI [+40.0, +40.0], p = 0.0078, "
        "8 paired seeds; minimum detectable difference 0.0 points; a 5-point difference needs "
        "6 seeds): a shortcut on this ladder." in text
    )
    assert "variance order is worth -1.9 points" in text
    assert "p = 0.0078, 8 paired seeds" in text.split("## Ladder v1")[1]
    assert "worse than a random order on this ladder" in text
    # r2sortnregress ran on one v1 seed but randregress shares it: too few seeds to test.
    assert "R² order is worth +19.0 points" in text
    assert "too few seeds for the test to detect any difference (it needs 6)" in text
    assert "not resolved at these seeds." in text
    assert "structure-blind random DAG scores 27.5% directed F1" in text
    assert "| level | var-sortability | R²-sortability | instances |" in text
