"""Custom levels in the sweep: rows, resume, workers, the report, the CLI and a d = 40 policy."""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from acdb_gym import report
from acdb_gym.cli import main as cli_main
from acdb_gym.core.ladders.custom import (
    CUSTOM_LADDER,
    CUSTOM_SEED_BASE,
    custom_manifest,
    parse_custom_level,
)
from acdb_gym.report.load import as_rows
from acdb_gym.report.revision import summarize_revisions
from acdb_gym.results import RESULTS_FILE, read_results
from acdb_gym.sweep.run import Job, SweepConfig, plan_jobs, run_job, run_sweep

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "models" / "acdb_design_graph" / "model.zip"
SMALL = "small:d=8,k=10,n_obs=200,n_int=50,slack=1,standardized=true"
D40 = "D40:d=40,k=60,n_obs=1000,n_int=200,slack=0,standardized=true"


def _config(out: Path, *texts: str, **kwargs: Any) -> SweepConfig:
    customs = tuple(parse_custom_level(text) for text in texts)
    names = tuple(custom.name for custom in customs)
    options: dict[str, Any] = {"seeds": 2, "agents": ("random", "pc"), "progress": False}
    return SweepConfig(out, CUSTOM_LADDER, names, custom_levels=customs, **{**options, **kwargs})


def _rows(out: Path) -> list[dict[str, Any]]:
    return read_results(out / RESULTS_FILE, mode="strict").as_dicts()


def _stable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: v for k, v in r.items() if k != "wall_time"} for r in rows), key=str)


@pytest.mark.slow
def test_a_custom_sweep_writes_rows_resumes_and_reports(tmp_path: Path) -> None:
    config = _config(tmp_path, SMALL)
    first = run_sweep(config)
    assert (first.planned, first.finished, first.failed) == (4, 4, 0)
    rows = _rows(tmp_path)
    spec_text = parse_custom_level(SMALL).text
    seeds = [entry.seed for entry in custom_manifest(parse_custom_level(SMALL).spec, 2)]
    assert seeds[0] == CUSTOM_SEED_BASE
    assert {(r["ladder"], r["level"], r["level_spec"]) for r in rows} == {
        (CUSTOM_LADDER, "small", spec_text)
    }
    assert sorted({(r["manifest_index"], r["seed"]) for r in rows}) == list(enumerate(seeds))
    assert all(r["status"] == "ok" for r in rows)

    again = run_sweep(config)
    assert (again.skipped, again.finished) == (4, 0)
    assert len(_rows(tmp_path)) == 4

    files = report.write_report(tmp_path)
    table = files.summary.ladder(CUSTOM_LADDER)
    assert table.levels == ("small",)
    floor = table.random_floor[0]
    assert floor.level == "small" and math.isclose(
        floor.closed_form, parse_custom_level(SMALL).spec.random_floor
    )
    assert "## Ladder custom" in files.markdown.read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_report_reads_rows_of_a_ladder_it_does_not_know(tmp_path: Path) -> None:
    run_sweep(_config(tmp_path / "run", SMALL, seeds=1, agents=("pc", "pc_greedy")))
    rows = _rows(tmp_path / "run")
    assert any("revision" in row for row in rows)
    with (tmp_path / RESULTS_FILE).open("w") as out:
        for row in rows:
            del row["level_spec"]
            out.write(json.dumps({**row, "ladder": "elsewhere"}) + "\n")
    files = report.write_report(tmp_path)
    table = files.summary.ladder("elsewhere")
    assert {row.agent for row in table.rows} == {"pc_greedy", "pc"}
    assert math.isnan(table.random_floor[0].closed_form)


def test_workers_rebuild_the_level_from_the_job(tmp_path: Path) -> None:
    run_sweep(_config(tmp_path / "serial", SMALL, agents=("pc", "pc_greedy")))
    run_sweep(_config(tmp_path / "pool", SMALL, agents=("pc", "pc_greedy"), workers=2))
    rows = _rows(tmp_path / "serial")
    assert _stable(_rows(tmp_path / "pool")) == _stable(rows)
    # The report regenerates the truth from the row's spec: pc_greedy's graph before its first
    # experiment is PC's, so it scores as the pc rows do.
    (revision,) = summarize_revisions(as_rows(rows))
    assert (revision.ladder, revision.level, revision.episodes) == (CUSTOM_LADDER, "small", 2)
    pc = [row["directed_f1"] for row in rows if row["agent"] == "pc"]
    assert math.isclose(revision.f1_after[0][0], sum(pc) / len(pc))


def test_the_spec_is_part_of_a_custom_job_id_and_shipped_ids_stay() -> None:
    small = plan_jobs(_config(Path("unused"), SMALL))
    renamed = plan_jobs(_config(Path("unused"), SMALL.replace("slack=1", "slack=2")))
    assert {job.job_id for job in small}.isdisjoint(job.job_id for job in renamed)
    job = Job("v0", "L1", 3, "pc_greedy", "active", "raw", 0, {})
    # The id every v0 row already has: the key without a level spec.
    key = json.dumps(["v0", "L1", 3, "pc_greedy", "active", "raw", 0, {}], sort_keys=True)
    assert job.job_id == hashlib.sha256(key.encode()).hexdigest()[:20]


def test_a_name_holds_one_spec_per_run_directory(tmp_path: Path) -> None:
    run_sweep(_config(tmp_path, SMALL, seeds=1, agents=("pc",)))
    other = _config(tmp_path, SMALL.replace("k=10", "k=11"), seeds=1, agents=("pc",))
    with pytest.raises(ValueError, match="holds custom level 'small' with spec"):
        run_sweep(other)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ladder": "v1"}, "custom levels go with ladder 'custom' only"),
        ({"levels": ("other",)}, "levels must be the custom levels' names"),
        ({"seeds": 1001}, r"seeds must be in \[1, 1000\]"),
    ],
)
def test_a_bad_custom_config_is_refused(kwargs: dict[str, Any], message: str) -> None:
    custom = parse_custom_level(SMALL)
    fields: dict[str, Any] = {"ladder": CUSTOM_LADDER, "levels": ("small",), "progress": False}
    with pytest.raises(ValueError, match=message):
        SweepConfig(Path("unused"), custom_levels=(custom,), **{**fields, **kwargs})
    with pytest.raises(ValueError, match="custom level names must differ"):
        SweepConfig(Path("u"), CUSTOM_LADDER, ("small", "small"), custom_levels=(custom, custom))


@pytest.mark.slow
def test_the_cli_runs_a_custom_level_and_refuses_bad_specs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", "--seeds", "1", "--agents", "pc", "--no-progress", "--out", str(tmp_path)]
    assert cli_main([*args, "--custom-level", SMALL]) == 0
    assert (tmp_path / "report.md").is_file()
    assert [row["level"] for row in _rows(tmp_path)] == ["small"]
    capsys.readouterr()
    bad = [
        (["--custom-level", "d=8,k=10,n_obs=200,n_int=50,slak=1"], "unknown field 'slak'"),
        (["--custom-level", "d=8,k=10"], "missing required fields n_obs, n_int, slack"),
        (["--custom-level", SMALL, "--levels", "L1"], "--levels picks levels of --ladder"),
        (["--custom-level", SMALL, "--families", "nonlinear"], "in place of --families"),
    ]
    for extra, message in bad:
        assert cli_main([*args, *extra]) == 2
        assert message in capsys.readouterr().err


def test_the_committed_policy_acts_on_a_d40_custom_level(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    agent = f"rl:{COMMITTED}"
    (job,) = plan_jobs(_config(tmp_path, D40, seeds=1, agents=(agent,)))
    row = run_job(job)
    assert row.status == "ok", row.error
    assert (row.ladder, row.level, row.agent) == (CUSTOM_LADDER, "D40", agent)
    assert row.agent_stats is not None and row.agent_stats["policy_algo"] is not None
    # It chose experiments on the 40 nodes and submitted within the budget (slack 0).
    assert 1 <= row.value("interventions_used") <= row.value("i_star_size")
    assert row.value("directed_f1") > 0.5


@pytest.mark.slow
def test_a_custom_level_that_cannot_be_generated_stops_the_sweep_before_any_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent preflights every custom level before the first job (45 s at most; 2 s here),
    so the sweep ends with one error naming the fields instead of failing job after job."""
    monkeypatch.setattr("acdb_gym.core.ladders.custom.CUSTOM_PREFLIGHT_SECONDS", 2.0)
    config = _config(tmp_path, "dense:d=8,k=28,n_obs=200,n_int=48,slack=1,faithfulness_eps=0.5")
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"found 0 of 2 seeds .*faithfulness_eps \(now 0\.5\)"):
        run_sweep(config)
    with pytest.raises(ValueError, match="cannot be generated"):  # asked again: at once
        run_sweep(config)
    assert time.monotonic() - start < 15
    assert not (tmp_path / RESULTS_FILE).exists()


def test_rows_of_another_world_version_are_refused_not_resumed(tmp_path: Path) -> None:
    config = SweepConfig(tmp_path, "v0", ("L1",), seeds=2, agents=("pc",), progress=False)
    assert run_sweep(config).finished == 2
    results = tmp_path / RESULTS_FILE
    lines = results.read_text(encoding="utf-8").splitlines()
    # A row as an earlier version of the level's worlds left it: same job id, another seed.
    old = json.loads(lines[1])
    old["seed"] += 1
    results.write_text("\n".join([lines[0], json.dumps(old)]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"holds 1 rows of v0 L1 from other worlds.*index 1"):
        run_sweep(config)
    # Nothing was run or written.
    assert len(results.read_text(encoding="utf-8").splitlines()) == 2
