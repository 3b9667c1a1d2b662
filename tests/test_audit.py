"""``acdb audit``: the shortcut gate on every shipped ladder (few seeds), and a verdict it must
reach (v0's raw SCMs are variance-sortable)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from acdb_gym.cli import main
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.report.gate import gate_agents, has_design_env

# The levels a CI run can afford: every level of the small ladders, the large ladder's d = 20
# and the real ladder's small wirings (DREAM4 at d = 100 takes about 15 s an episode).
AFFORDABLE = {
    "large": "L0",
    "real": "SF-L3,Sachs,Sachs-Nonlinear,Sachs-Fitted",
}


@pytest.mark.slow
@pytest.mark.parametrize("ladder", sorted(ALL_LADDERS))
def test_the_audit_runs_on_every_shipped_ladder(ladder: str, tmp_path: Path) -> None:
    levels = AFFORDABLE.get(ladder, ",".join(ALL_LADDERS[ladder]))
    out = tmp_path / ladder
    arguments = ["--ladder", ladder, "--levels", levels, "--indices", "0:1", "--out", str(out)]
    status = main(["audit", *arguments, "--no-progress"])
    assert status == 0
    table = (out / "audit.md").read_text(encoding="utf-8")
    with (out / "audit.csv").open(encoding="utf-8") as handle:
        checks = list(csv.DictReader(handle))
    for level in levels.split(","):
        assert f"| {ladder} | {level} |" in table
        mine = [row for row in checks if row["level"] == level]
        kinds = [row["kind"] for row in mine]
        spec = ALL_LADDERS[ladder][level].spec
        assert kinds.count("cap") == len(gate_agents(spec)) // 2
        assert kinds.count("design") == has_design_env(ladder, level)
        if spec.d <= 100:
            assert kinds.count("order") == 13  # 12 marginal orders and the hub order
        caps = [row for row in mine if row["kind"] == "cap"]
        # Stopping early buys the paper's η; it never buys the headline anytime F1 here.
        assert all(float(row["eta_gain"]) >= 0 for row in caps)


@pytest.mark.slow
def test_the_gate_fails_a_level_whose_variance_sorts_the_order(tmp_path: Path) -> None:
    arguments = ["--ladder", "v0", "--levels", "L0", "--indices", "0:12", "--out", str(tmp_path)]
    status = main(["audit", *arguments, "--no-progress", "--strict"])
    assert status == 1
    table = (tmp_path / "audit.md").read_text(encoding="utf-8")
    assert "| v0 | L0 | 12 |" in table and "**fail**" in table
    assert "msort:variance:asc gains" in table


def test_shortcuts_computed_in_workers_are_the_ones_computed_here() -> None:
    from acdb_gym.report import order_shortcuts as gate

    level = ALL_LADDERS["v1"]["L1"]
    pairs = [(level.spec, int(level.manifest[i].seed)) for i in (3, 4)]
    assert gate.prefetch_order_shortcuts(pairs, workers=1) == 2
    assert gate.prefetch_order_shortcuts(pairs, workers=1) == 0  # kept: nothing to compute
    for spec, seed in pairs:
        kept = gate.order_audit_of(spec, seed)
        here = gate.instance_order_audit(spec, seed)
        assert kept is not here  # the kept audit came from the worker
        assert kept == here
        assert gate.hub_order_f1(spec, seed) == gate._computed_hub_f1(spec, seed)
    with pytest.raises(ValueError, match="workers must be at least 1, got 0"):
        gate.prefetch_order_shortcuts(pairs, workers=0)
