"""experiments/hidden_slack_cap.py: capping at budget − published slack on v1 and v1-hidden."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from acdb_gym.core.ladders.shipped import ALL_LADDERS

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "hidden_slack_cap.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hidden_slack_cap", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module's annotations
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_capped_episodes_stop_at_budget_minus_the_margin() -> None:
    script = _script()
    for ladder in ("v1", "v1-hidden"):
        level = ALL_LADDERS[ladder]["L1"]
        episodes = script.run_level(level, [0, 1, 2])
        for index, episode in enumerate(episodes["capped"]):
            instance = level.instance(index)
            stopped_at_i_star = instance.budget - level.spec.slack == len(instance.i_star)
            assert (episode.efficiency == 1.0) or not stopped_at_i_star
        assert ("capped_high" in episodes) == (ladder == "v1-hidden")
        assert all(e.efficiency == 1.0 for e in episodes.get("capped_high", []))


@pytest.mark.slow
def test_the_script_prints_both_ladders(capsys: pytest.CaptureFixture[str]) -> None:
    _script().main(["--indices", "0:2", "--levels", "L0"])
    out = capsys.readouterr().out
    assert "## v1, manifest indices 0–1, levels pooled" in out
    assert "## v1-hidden, manifest indices 0–1" in out
    assert "| capped | 2 | 100.0 | 100.0 |" in out  # v1: capping buys η = 100%
    assert "| capped_high | 2 | 100.0 | 100.0 |" in out
