"""What a newcomer meets first: the CLI's help and version, the progress label, the report's
empty sections, the text render at reset and the random-action sampler."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import acdb_gym
from acdb_gym.cli import build_parser
from acdb_gym.cli import main as cli_main
from acdb_gym.envs import actions
from acdb_gym.report import format_terminal, load_results, summarize

REPO = Path(__file__).resolve().parent.parent


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli_main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"acdb {acdb_gym.__version__}"


def test_every_sweep_option_says_what_it_does_and_its_default() -> None:
    sweep = next(
        parser
        for action in build_parser()._actions
        if isinstance(action.choices, dict)
        for name, parser in action.choices.items()
        if name == "sweep"
    )
    for action in sweep._actions:
        if action.dest == "help":
            continue
        assert action.help, f"--{action.dest} has no help text"
    text = sweep.format_help()
    flat = " ".join(text.split())
    for default in ("(default: L0,L1,L2,L3,L4,L5)", "(default: 8)", "(default: process)",
                    "(default: active,observational)", "(default: 1)"):  # fmt: skip
        assert default in flat, default
    assert "(default: None)" not in flat and "(default: False)" not in flat
    # Which agents run which panels is said in the help.
    assert "runs once, in the observational panel" in flat
    assert "random a random DAG" in flat and "runs in: observational panel" in flat
    assert "runs in: each panel asked for" in flat


def test_the_progress_label_says_what_earlier_runs_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", "--agents", "oracle", "--levels", "L0", "--seeds", "2", "--out",
            str(tmp_path), "--no-report"]  # fmt: skip
    assert cli_main(args) == 0
    first = capsys.readouterr().err
    assert "sweep" in first and "earlier runs" not in first
    assert cli_main([*args, "--seeds", "3"]) == 0
    assert "sweep (2 of 3 done by earlier runs)" in capsys.readouterr().err


@pytest.mark.slow
def test_paper_grid_script_explains_and_shrinks_its_grid(tmp_path: Path) -> None:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(name, None)
    script = REPO / "experiments" / "paper_v0.py"
    shown = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, check=True
    ).stdout
    for option in ("--levels", "--seeds", "--workers", "--out", "--cache-dir"):
        assert option in shown
    assert "(default: 8)" in shown
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "--levels",
            "L0",
            "--seeds",
            "1",
            "--workers",
            "1",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = load_results(tmp_path)
    assert {row["level"] for row in rows} == {"L0"} and len(rows) == 5  # one panel each
    assert "skipping the openai rows" in done.stdout


@pytest.mark.slow
def test_the_report_leaves_out_an_unmeasured_random_floor(tmp_path: Path) -> None:
    args = ["sweep", "--agents", "oracle", "--levels", "L0", "--seeds", "1", "--out",
            str(tmp_path), "--no-progress"]  # fmt: skip
    assert cli_main(args) == 0
    text = format_terminal(summarize(load_results(tmp_path)))
    floor = text.split("random floor (directed F1) ==")[1]
    assert floor.strip().startswith("not measured: this run has no `random` rows")
    assert "—" not in floor
    assert "Random floor not measured" in (tmp_path / "report.md").read_text()


def test_the_text_render_shows_a_tool_result_only_after_a_tool() -> None:
    env = gym.make("ACDB-L1-v0", tools="stats", render_mode="ansi")
    env.reset(options={"manifest_index": 0})
    assert "tool result" not in env.render()
    env.step(actions.intervene(0, 1.0))
    assert "tool result" not in env.render()
    env.step(actions.correlation(0, 1))
    assert "tool result: statistic=" in env.render()


@pytest.mark.parametrize(
    ("panel", "tools", "kinds"),
    [
        ("active", "raw", {0, 4}),
        ("observational", "raw", {4}),
        ("active", "stats", {0, 1, 2, 3, 4}),
        ("observational", "stats", {1, 2, 3, 4}),
    ],
)
def test_the_sampler_draws_only_what_the_variant_carries_out(
    panel: str, tools: str, kinds: set[int]
) -> None:
    env = gym.make("ACDB-L1-v0", panel=panel, tools=tools)
    env.action_space.seed(0)
    drawn = {int(env.action_space.sample()[0]) for _ in range(300)}
    assert drawn == kinds
    # Every kind is still an element of the space (a refused kind is an invalid step).
    assert env.action_space.contains(actions.correlation(0, 1))


def test_a_random_action_rollout_on_the_raw_variant_submits() -> None:
    env = gym.make("ACDB-L1-v0")
    env.action_space.seed(1)
    submitted = 0
    for episode in range(20):
        env.reset(seed=episode)
        for _ in range(16):
            *_, terminated, truncated, info = env.step(env.action_space.sample())
            if terminated or truncated:
                submitted += terminated
                break
    assert submitted == 20
    assert info["scored"] and np.isfinite(info["score"]).all()
