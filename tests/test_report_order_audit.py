"""The report's marginal-order audit (acdb_gym/report/order_audit.py)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from acdb_gym.core.ladders.custom import CUSTOM_SEED_BASE, format_level_spec, parse_level_spec
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.discovery import MARGINAL_FEATURES
from acdb_gym.report import write_report
from acdb_gym.report.aggregation import prepare
from acdb_gym.report.document import markdown_lines
from acdb_gym.report.order_audit import (
    MAX_AUDIT_NODES,
    instance_order_audit,
    order_audit_parts,
    order_audit_rows,
    random_orders,
    row_instance,
    strongest_order,
)
from tests.test_report import make_row, make_typed, write_jsonl

# Raw (unstandardized) linear-Gaussian worlds with strong weights: variance rises along every
# path, so ascending variance is the causal order and descending variance its reverse.
VAR_SORTABLE = parse_level_spec("d=5,k=6,n_obs=500,n_int=10,slack=0,weight_low=1.5")


def _custom_row(index: int, level: str = "raw") -> dict[str, object]:
    row = make_row("pc", ladder="custom", level=level, index=index)
    row["seed"] = CUSTOM_SEED_BASE + index
    row["level_spec"] = format_level_spec(VAR_SORTABLE)
    return row


def test_the_variance_order_of_a_var_sortable_world_is_its_causal_order() -> None:
    audit = instance_order_audit(VAR_SORTABLE, CUSTOM_SEED_BASE)
    assert audit.sortability["variance"] == 1.0
    assert audit.order_f1[("variance", "asc")] == 1.0  # regressing in causal order
    assert audit.order_f1[("variance", "desc")] == 0.0  # every edge reversed
    assert 0.0 < audit.random_f1 < 1.0
    assert set(audit.sortability) == set(MARGINAL_FEATURES)
    assert instance_order_audit(VAR_SORTABLE, CUSTOM_SEED_BASE) is audit  # cached


def test_random_orders_are_seeded_permutations() -> None:
    first, again = random_orders(5, 7), random_orders(5, 7)
    assert [o.tolist() for o in first] == [o.tolist() for o in again]
    assert all(sorted(o.tolist()) == list(range(7)) for o in first)
    assert [o.tolist() for o in random_orders(6, 7)] != [o.tolist() for o in first]


def test_rows_cover_every_level_feature_and_direction_with_a_paired_test() -> None:
    rows = [_custom_row(i) for i in range(6)] + [
        make_row("pc", level="L1", index=i) for i in (0, 1)
    ]
    audit = order_audit_rows(prepare(rows))
    assert {(r.ladder, r.level) for r in audit} == {
        ("custom", "raw"),
        ("custom", "overall"),
        ("v0", "L1"),
        ("v0", "overall"),
    }
    assert [r.feature for r in audit if r.ladder == "custom" and r.level == "raw"] == list(
        MARGINAL_FEATURES
    )
    variance = next(
        r for r in audit if (r.ladder, r.level, r.feature) == ("custom", "raw", "variance")
    )
    up, down = variance.gain("asc"), variance.gain("desc")
    assert up.f1 == 1.0 and down.f1 == 0.0 and up.gain.n == 6
    assert up.gain.low <= up.gain.mean <= up.gain.high and up.gain.mean > 0.3
    assert up.p_value == pytest.approx(2 / 2**6) and up.p_exact  # all six pairs one sign
    assert down.gain.mean == pytest.approx(-up.random_f1)
    assert variance.families == ("linear_gaussian",)
    assert strongest_order([variance]) == (variance, up)
    with pytest.raises(KeyError, match="no gain for direction 'up'"):
        variance.gain("up")


def test_a_row_without_a_known_instance_or_too_large_is_left_out() -> None:
    unknown = make_typed("pc", ladder="v9", level="L0")
    outside = make_typed("pc", level="L0", index=500)  # the manifest holds 200
    assert row_instance(unknown) is None and row_instance(outside) is None
    large = make_typed("pc", ladder="large", level="L3")  # d = 200 > MAX_AUDIT_NODES
    assert row_instance(large) is not None and MAX_AUDIT_NODES < 200
    assert order_audit_rows(prepare([unknown, outside, large])) == ()
    assert row_instance(make_typed("pc", level="L2", index=3)) == (
        LADDERS["v0"]["L2"].spec,
        LADDERS["v0"]["L2"].manifest_seed(3),
    )


def test_the_markdown_names_the_strongest_order_and_the_kurtosis_order_off_gaussian() -> None:
    rows = order_audit_rows(prepare([_custom_row(i) for i in range(3)]))
    text = "\n".join(markdown_lines(order_audit_parts(rows)))
    assert "#### Marginal-order audit" in text
    assert all(f"| {feature} |" in text for feature in MARGINAL_FEATURES)
    assert "**Strongest marginal order**: variance asc (`msort:variance:asc`), 100.0%" in text
    assert "(p 0.250; 1.000 corrected for the 12 orders tested): not significant." in text
    assert "Kurtosis order" not in text  # Gaussian worlds: kurtosis is no model signal
    ten = "\n".join(
        markdown_lines(
            order_audit_parts(order_audit_rows(prepare([_custom_row(i) for i in range(10)])))
        )
    )
    assert "(p 0.0020; 0.023 corrected for the 12 orders tested): a shortcut." in ten
    nonlinear = [r.__class__(**{**r.__dict__, "families": ("nonlinear",)}) for r in rows]
    assert "**Kurtosis order** (nonlinear worlds" in "\n".join(
        markdown_lines(order_audit_parts(nonlinear))
    )
    assert order_audit_parts([]) == []


@pytest.mark.slow
def test_the_report_shows_the_audit_of_a_custom_ladder_and_writes_its_csv(tmp_path: Path) -> None:
    run = write_jsonl(tmp_path / "run", [_custom_row(i) for i in range(3)])
    files = write_report(run)
    text = files.markdown.read_text(encoding="utf-8")
    assert "## Ladder custom" in text and "#### Marginal-order audit" in text
    with (run / "order_audit.csv").open(encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    assert len(lines) == 2 * 2 * len(MARGINAL_FEATURES)  # (raw, overall) x directions x features
    variance_up = next(
        line
        for line in lines
        if (line["level"], line["feature"], line["direction"]) == ("raw", "variance", "asc")
    )
    assert float(variance_up["order_f1"]) == 1.0 and int(variance_up["n_instances"]) == 3
    assert math.isfinite(float(variance_up["sortability_mean"]))
