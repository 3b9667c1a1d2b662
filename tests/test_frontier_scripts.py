"""The frontier's scripts build their tables from rows a real sweep wrote: a small frontier run
(two test indices, four agents) through ``frontier_claims.py``'s blocks, and a small candidate
run through ``calibrate_frontier.py``'s table. No block is checked for its numbers here (those
are claims, pasted from the test split); each must build, name every level, and say what it
stands on."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from acdb_gym.core.ladders.shipped import FRONTIER_LADDER
from acdb_gym.sweep.run import SweepConfig, run_sweep

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ("random", "oracle", "pc", "pc_active")


def _script(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, script)  # its dataclasses look it up
    spec.loader.exec_module(script)
    return script


@pytest.fixture(scope="module")
def frontier_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("claims")
    config = SweepConfig(
        runs / "frontier",
        "frontier",
        tuple(FRONTIER_LADDER),
        seeds=2,
        first_index=100,
        agents=AGENTS,
        workers=1,
        progress=False,
    )
    summary = run_sweep(config)
    assert summary.failed == 0 and summary.finished == 2 * len(FRONTIER_LADDER) * len(AGENTS)
    return runs


def test_the_frontier_blocks_build_from_a_small_run(
    frontier_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script("frontier_claims", monkeypatch)
    monkeypatch.setattr(script, "RUNS", frontier_run)
    monkeypatch.setattr(script, "COUNT", 2)
    monkeypatch.setattr(script, "WORKERS", 1)
    table = script.block_frontier()
    criteria = script.block_frontier_criteria()
    for level in FRONTIER_LADDER:
        assert f"| {level} |" in criteria
        assert level in table
    # Two of the test split's 100 indices: the blocks must say it is a partial claim.
    assert "2 of the test split's 100: a partial claim" in table + criteria
    # The run's agents are rows: pc_active among the suite, the oracle as a privileged bound.
    assert "\n| pc_active | " in table
    assert "\n| oracle (privileged) | 100.0 [100.0, 100.0] | " in table


def test_the_calibration_table_builds_from_a_small_candidate_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script("calibrate_frontier", monkeypatch)
    (candidate,) = [c for c in script.CANDIDATES if c.name == "NL20-band"]
    rows = script.run(candidate, 2, tmp_path, 1, agents=AGENTS)
    assert {row["agent"] for row in rows} == set(AGENTS)
    table = tmp_path / "calibration.md"
    argv = ["calibrate_frontier.py", "--only", "NL20-band", "--no-sweep", "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", [*argv, "--table", str(table)])
    script.main()
    text = table.read_text(encoding="utf-8")
    assert "| NL20-band | 2/2" in text  # the oracle's column counts the seeds
    assert "r2_sortability_band=0.1" in text
