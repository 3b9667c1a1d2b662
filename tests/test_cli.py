"""The ``acdb`` command's help and errors, generated from the agent registry."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from acdb_gym.cli import main as cli_main
from acdb_gym.registry import AGENTS, OFFLINE_AGENTS


def _sweep_help(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as caught:
        cli_main(["sweep", "--help"])
    assert caught.value.code == 0
    return capsys.readouterr().out


def test_sweep_help_lists_every_agent_with_its_summary(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    text = _sweep_help(capsys)
    agents = text.split("\nagents:\n", 1)[1]
    listed = [line.split()[0] for line in agents.splitlines() if not line.startswith(" " * 4)]
    assert listed == [entry.usage for entry in AGENTS.values()]
    assert "randregress" in listed and "rl:PATH" in listed
    for entry in AGENTS.values():
        assert entry.summary in agents
    assert re.search(r"\n  gies_active +alias of bic_active\n", agents)
    assert "msort:FEATURE:DIRECTION" in listed and "FEATURE: variance|r2|range|" in agents
    assert f"(default: {','.join(OFFLINE_AGENTS)})" in " ".join(text.split())


def test_sweep_help_wraps_its_description(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    text = _sweep_help(capsys)
    description = text.split("\n\n")[1]
    assert "results.jsonl" in description
    assert max(len(line) for line in description.splitlines()) <= 60


def test_unknown_agent_is_an_error_listing_the_known_ones(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli_main(["sweep", "--agents", "pc,nonsense", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acdb: error: unknown agent 'nonsense'; known: ")
    for entry in AGENTS.values():
        assert entry.usage in err
    assert not (tmp_path / "results.jsonl").exists()


def test_report_on_a_corrupt_results_file_warns_by_file_and_line(tmp_path: Path) -> None:
    args = ["sweep", "--agents", "oracle", "--levels", "L0", "--seeds", "1"]
    assert cli_main([*args, "--out", str(tmp_path), "--no-progress", "--no-report"]) == 0
    bad = [b"bad \xff utf8\n", b"\x00\x00\n", b"123\n", b'{"status": "ok", "job_id": [1]}\n']
    with (tmp_path / "results.jsonl").open("ab") as handle:
        handle.write(b"".join(bad))
    process = subprocess.run(
        [sys.executable, "-m", "acdb_gym.cli", "report", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        timeout=120,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert "Traceback" not in process.stderr
    warned = [line for line in process.stderr.splitlines() if line.startswith("acdb: warning:")]
    assert [line.split("results.jsonl:")[1].split(":")[0] for line in warned] == [
        "2",
        "3",
        "4",
        "5",
    ]
    assert (tmp_path / "report.md").read_text().count("; skipped") == 4
