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


@pytest.mark.slow
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


def _prices_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    negative = tmp_path / "negative.json"
    negative.write_text('{"gpt": {"input": -1, "output": 2}}', encoding="utf-8")
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    return {
        "missing": (tmp_path / "none.json", "No such file or directory"),
        "directory": (tmp_path, "Is a directory"),
        "negative": (negative, "price 'input' of model 'gpt' must be >= 0, got -1"),
        "nested": (nested, "JSON nested 100000 levels deep"),
    }


@pytest.mark.parametrize("case", ["missing", "directory", "negative", "nested"])
def test_prices_are_checked_before_the_first_job(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices, message = _prices_cases(tmp_path)[case]
    run = tmp_path / "run"
    args = ["sweep", "--agents", "oracle", "--levels", "L0", "--seeds", "1", "--no-progress"]
    assert cli_main([*args, "--out", str(run), "--prices", str(prices)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acdb: error: ") and message in err and err.count("\n") == 1, err
    assert not (run / "results.jsonl").exists()


def test_file_system_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("", encoding="utf-8")
    commands = [
        ["sweep", "--agents", "oracle", "--levels", "L0", "--seeds", "1", "--out", str(a_file)],
        ["mcp", "--out", str(a_file / "run")],
        ["inspect-import", str(tmp_path / "none.eval"), "--out", str(tmp_path / "run")],
    ]
    for command in commands:
        assert cli_main(command) == 2, command
        err = capsys.readouterr().err
        assert err.startswith("acdb: error: ") and err.count("\n") == 1, (command, err)


@pytest.mark.slow
def test_python_dash_m_acdb_gym_runs_the_cli() -> None:
    root = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    process = subprocess.run(
        [sys.executable, "-m", "acdb_gym", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=120,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert process.stdout.startswith("usage: acdb ")
    for command in ("sweep", "report", "levels", "train"):
        assert command in process.stdout
