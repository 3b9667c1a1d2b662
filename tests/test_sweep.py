"""The resumable sweep: planning, crash safety, determinism, failure rows (DESIGN §10)."""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

from acdb_gym import registry
from acdb_gym.cli import main as cli_main
from acdb_gym.registry import AgentEntry, get_agent
from acdb_gym.results import ResultsFileError, read_results
from acdb_gym.sweep.in_flight import in_flight
from acdb_gym.sweep.run import Job, SweepConfig, plan_jobs, run_sweep

TIMING = {"wall_time"}


def load_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of a results file, strictly read, as the dicts stored."""
    return read_results(path, mode="strict").as_dicts()


def _stable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows without timings, sorted by job id."""
    return sorted(({k: v for k, v in r.items() if k not in TIMING} for r in rows), key=str)


def _config(out: Path, **kwargs: Any) -> SweepConfig:
    base: dict[str, Any] = {
        "levels": ("L0", "L1"),
        "seeds": 2,
        "agents": ("random", "pc_greedy", "oracle"),
        "progress": False,
    }
    return SweepConfig(out=out, **{**base, **kwargs})


def test_plan_runs_panel_agnostic_agents_once() -> None:
    jobs = plan_jobs(_config(Path("unused")))
    panels = {(j.agent, j.panel) for j in jobs}
    assert panels == {
        ("random", "observational"),
        ("oracle", "observational"),
        ("pc_greedy", "active"),
    }
    assert len(jobs) == 3 * 2 * 2
    assert len({j.job_id for j in jobs}) == len(jobs)


def test_plan_skips_agents_without_a_requested_panel() -> None:
    jobs = plan_jobs(_config(Path("unused"), panels=("observational",)))
    assert {j.agent for j in jobs} == {"random", "oracle"}


def test_job_id_and_seed_are_stable() -> None:
    job = Job("v0", "L0", 3, "random", "observational", "raw", 0)
    assert job.job_id == Job("v0", "L0", 3, "random", "observational", "raw", 0).job_id
    assert job.job_id != Job("v0", "L0", 3, "random", "observational", "raw", 1).job_id
    assert job.agent_seed == int(job.job_id[:12], 16)


# Job ids of rows written before the agent registry (v0, L3, manifest index 5): a resumed sweep
# must recognise them, so no agent's name, panel or tools may change its ids.
_KNOWN_JOB_IDS = {
    ("random", "observational"): "b36d5937fa1324de1c6c",
    ("pc", "observational"): "727d6fdd765a11e64a41",
    ("pc_greedy", "active"): "afbcc4e6dbf11cfc29d9",
    ("oracle", "observational"): "8d81d74ba2d2f034b7e6",
    ("sortnregress", "observational"): "25fb2179b86d8f540dc3",
    ("randregress", "observational"): "9a89b4eb8e40bfdb6b83",
    ("pc_active", "active"): "8e9e972ae5a47611292c",
    ("gies_active", "active"): "4719f255df0285097613",
}
_KNOWN_LLM_JOB_IDS = {
    ("llm_raw", "active", 1): "ffeb15af6b5142154b0d",
    ("llm_raw", "observational", 0): "16f3075a9709c735472d",
    ("llm_corr_obs", "observational", 0): "7a0e844eb47c8e65878e",
    ("llm_stats", "active", 0): "1e3e8622420c6d794db2",
    ("llm_stats", "observational", 1): "7e3336bfceda559ce539",
}


def test_job_ids_of_existing_agents_are_unchanged() -> None:
    agents = tuple(agent for agent, _ in _KNOWN_JOB_IDS)
    jobs = plan_jobs(_config(Path("unused"), levels=("L3",), seeds=8, agents=agents))
    ids = {(j.agent, j.panel): j.job_id for j in jobs if j.manifest_index == 5}
    assert ids == _KNOWN_JOB_IDS


def test_llm_job_ids_keep_their_config() -> None:
    options = {"provider": "openai", "model": "gpt-x", "temperature": 0.0, "cache_dir": "/c"}
    agents = ("llm_raw", "llm_corr_obs", "llm_stats")
    config = _config(Path("unused"), levels=("L2",), agents=agents, agent_options=options)
    ids = {(j.agent, j.panel, j.manifest_index): j.job_id for j in plan_jobs(config)}
    assert {key: ids[key] for key in _KNOWN_LLM_JOB_IDS} == _KNOWN_LLM_JOB_IDS


def test_an_alias_keeps_its_own_name_in_jobs() -> None:
    jobs = plan_jobs(_config(Path("unused"), agents=("gies_active", "bic_active")))
    assert {j.agent for j in jobs} == {"gies_active", "bic_active"}
    assert {j.panel for j in jobs} == {"active"}


def test_config_errors_name_the_bad_value() -> None:
    with pytest.raises(ValueError, match="L9"):
        _config(Path("x"), levels=("L9",))
    with pytest.raises(ValueError, match="201"):
        _config(Path("x"), seeds=201)
    with pytest.raises(ValueError, match="nonsense"):
        _config(Path("x"), agents=("nonsense",))
    with pytest.raises(ValueError, match="sideways"):
        _config(Path("x"), panels=("sideways",))


@pytest.mark.slow
def test_sweep_writes_one_row_per_job_and_resumes(tmp_path: Path) -> None:
    config = _config(tmp_path)
    first = run_sweep(config)
    rows = load_rows(tmp_path / "results.jsonl")
    assert first.finished == len(rows) == first.planned == 12
    assert all(r["status"] == "ok" for r in rows)
    assert {r["job_id"] for r in rows} == {j.job_id for j in plan_jobs(config)}
    oracle = [r for r in rows if r["agent"] == "oracle"]
    assert all(r["directed_f1"] == 1.0 and r["shd"] == 0 for r in oracle)
    random_rows = [r for r in rows if r["agent"] == "random"]
    assert all(r["draws"] == 100 for r in random_rows)
    second = run_sweep(config)
    assert second.finished == 0 and second.skipped == 12
    assert len(load_rows(tmp_path / "results.jsonl")) == 12
    saved = json.loads((tmp_path / "sweep_config.json").read_text())
    assert saved["ladder"] == "v0" and saved["seeds"] == 2


@pytest.mark.slow
def test_same_arguments_give_identical_rows_with_1_and_2_workers(tmp_path: Path) -> None:
    run_sweep(_config(tmp_path / "a"))
    run_sweep(_config(tmp_path / "b"))
    run_sweep(_config(tmp_path / "c", workers=2))
    a, b, c = (_stable(load_rows(tmp_path / name / "results.jsonl")) for name in "abc")
    assert a == b == c


def test_torn_last_line_is_repaired_on_resume(tmp_path: Path) -> None:
    config = _config(tmp_path, agents=("oracle",))
    run_sweep(config)
    results = tmp_path / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    # Drop the last row and leave half of it behind, as a crash mid-write would.
    results.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    with pytest.warns(UserWarning, match="torn last line"):
        summary = run_sweep(config)
    assert summary.finished == 1
    rows = load_rows(results)
    assert len(rows) == len(lines) and len({r["job_id"] for r in rows}) == len(lines)
    assert results.read_bytes().endswith(b"\n")


def test_corrupt_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    run_sweep(_config(tmp_path, agents=("oracle",), levels=("L0",)))
    path = tmp_path / "results.jsonl"
    first, second = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(first + b"not json\n" + second)
    with pytest.raises(ResultsFileError, match=r"results\.jsonl:2: invalid JSON"):
        load_rows(path)
    with pytest.raises(ResultsFileError, match=r"results\.jsonl:2: invalid JSON"):
        run_sweep(_config(tmp_path, agents=("oracle",), levels=("L0",)))
    assert path.read_bytes() == first + b"not json\n" + second  # resume changed nothing


class _FlakyAgent:
    name = "flaky"
    fail = True

    def reset(self, observation: Any, info: Any) -> None:
        if _FlakyAgent.fail:
            raise ConnectionError("provider unreachable (simulated)")

    def act(self, observation: Any, info: Any) -> Any:
        from acdb_gym.core.graphs import PDAG
        from acdb_gym.envs import actions

        return actions.submit(PDAG.empty(int(info["n_nodes"])))


def test_failed_episode_is_recorded_and_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("acdb_flaky_agents")
    module.__dict__["FlakyAgent"] = _FlakyAgent
    monkeypatch.setitem(sys.modules, module.__name__, module)
    entry = AgentEntry("flaky", f"{module.__name__}:FlakyAgent", "fails until told not to")
    monkeypatch.setitem(registry.AGENTS, "flaky", entry)
    config = _config(tmp_path, agents=("flaky", "oracle"), levels=("L0",))
    summary = run_sweep(config)
    rows = load_rows(tmp_path / "results.jsonl")
    failed = [r for r in rows if r["status"] == "failed"]
    assert summary.failed == len(failed) == 2
    assert all("ConnectionError: provider unreachable" in r["error"] for r in failed)
    assert all(r["directed_f1"] is None for r in failed)  # never scored as zero
    assert sum(r["status"] == "ok" for r in rows) == 2  # the sweep carried on
    _FlakyAgent.fail = False
    retry = run_sweep(config)
    assert retry.finished == 2 and retry.failed == 0
    rows = load_rows(tmp_path / "results.jsonl")
    ok_ids = [r["job_id"] for r in rows if r["status"] == "ok"]
    assert len(ok_ids) == len(set(ok_ids)) == 4


def test_ray_backend_without_ray_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(SystemExit, match=r"pip install 'acdb_gym\[ray\]'"):
        run_sweep(_config(tmp_path, backend="ray", agents=("oracle",)))


_SWEEP_ARGS = [
    "sweep", "--levels", "L0,L1,L2", "--seeds", "3", "--agents", "random,pc_greedy,oracle",
    "--no-progress", "--no-report",
]  # fmt: skip


def _cli(out: Path) -> list[str]:
    return [sys.executable, "-m", "acdb_gym.cli", *_SWEEP_ARGS, "--out", str(out)]


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    subprocess.run(_cli(reference), check=True, capture_output=True)
    expected = _stable(load_rows(reference / "results.jsonl"))
    killed = tmp_path / "killed"
    results = killed / "results.jsonl"
    for kill_after in (2, 9):
        proc = subprocess.Popen(_cli(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if results.exists() and results.read_bytes().count(b"\n") >= kill_after:
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.01)
        proc.wait()
    assert 0 < len(load_rows(results)) < len(expected)
    subprocess.run(_cli(killed), check=True, capture_output=True)
    rows = load_rows(results)
    assert len(rows) == len({r["job_id"] for r in rows}) == len(expected)
    assert _stable(rows) == expected


def test_msort_runs_in_a_sweep_and_variance_asc_is_sortnregress(tmp_path: Path) -> None:
    agents = ("sortnregress", "msort:variance:asc", "msort:kurtosis:desc")
    assert (
        cli_main(
            [
                "sweep",
                "--ladder",
                "v1",
                "--levels",
                "L0",
                "--seeds",
                "2",
                "--workers",
                "1",
                "--agents",
                ",".join(agents),
                "--out",
                str(tmp_path),
                "--no-report",
            ]
        )
        == 0
    )
    rows = load_rows(tmp_path / "results.jsonl")
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: r["manifest_index"]):
        by_agent.setdefault(row["agent"], []).append(row)
    assert sorted(by_agent) == sorted(agents) and all(len(v) == 2 for v in by_agent.values())
    fields = ("directed_f1", "shd", "skeleton_f1")
    for mine, theirs in zip(by_agent["msort:variance:asc"], by_agent["sortnregress"], strict=True):
        assert {k: mine[k] for k in fields} == {k: theirs[k] for k in fields}
    assert cli_main(["sweep", "--agents", "msort:kurtosis:up", "--out", str(tmp_path / "x")]) == 2


def test_cli_reports_bad_arguments(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli_main(["sweep", "--levels", "L7", "--out", str(tmp_path)]) == 2
    assert "L7" in capsys.readouterr().err
    assert cli_main(["report", str(tmp_path / "missing")]) == 2
    assert "no results.jsonl" in capsys.readouterr().err


@pytest.mark.slow
def test_ray_backend_gives_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    config = _config(tmp_path / "ray", backend="ray", workers=2, agents=("oracle", "pc_greedy"))
    try:
        run_sweep(config)
    finally:
        ray.shutdown()
    run_sweep(_config(tmp_path / "local", agents=("oracle", "pc_greedy")))
    assert _stable(load_rows(tmp_path / "ray" / "results.jsonl")) == _stable(
        load_rows(tmp_path / "local" / "results.jsonl")
    )


@pytest.mark.slow
def test_sigkill_at_random_times_then_resume(tmp_path: Path) -> None:
    """Several kills at random moments (some may land mid-write), then one resume."""
    reference = tmp_path / "reference"
    subprocess.run(_cli(reference), check=True, capture_output=True)
    reference_rows = load_rows(reference / "results.jsonl")
    expected = _stable(reference_rows)
    # Kill within the time the jobs themselves take (their summed wall times), so a kill lands
    # before the sweep ends however fast its jobs have become.
    span = min(0.5, 0.8 * sum(float(row["wall_time"]) for row in reference_rows))
    killed = tmp_path / "killed"
    rng = random.Random(20261202)
    results = killed / "results.jsonl"
    counts = []
    for _ in range(4):
        proc = subprocess.Popen(_cli(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Start the random clock once this run has written a row (start-up time varies a lot
        # with machine load), then kill at a random moment, mid-write or not.
        before = results.read_bytes().count(b"\n") if results.exists() else 0
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if results.exists() and results.read_bytes().count(b"\n") > before:
                break
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, span))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        counts.append(results.read_bytes().count(b"\n") if results.exists() else 0)
    assert any(0 < count < len(expected) for count in counts), counts
    subprocess.run(_cli(killed), check=True, capture_output=True)
    rows = load_rows(killed / "results.jsonl")
    assert len(rows) == len({r["job_id"] for r in rows}) == len(expected)
    assert _stable(rows) == expected


@pytest.mark.slow
def test_a_script_registering_its_own_agent_runs_it_on_several_workers(tmp_path: Path) -> None:
    # Workers start from a forkserver that imports the script as spawn would, so an agent the
    # script registers at top level exists in every worker.
    script = tmp_path / "my_sweep.py"
    script.write_text(
        "import sys\n"
        "from pathlib import Path\n"
        "from acdb_gym import registry\n"
        "from acdb_gym.sweep.run import SweepConfig, run_sweep\n"
        'registry.AGENTS["my_pc"] = registry.AgentEntry(\n'
        '    "my_pc", "acdb_gym.baselines.classical:PCAgent", "PC under another name")\n'
        'if __name__ == "__main__":\n'
        "    run_sweep(SweepConfig(out=Path(sys.argv[1]), agents=('my_pc',), levels=('L0', 'L1'),\n"
        "                          seeds=2, workers=2, progress=False))\n"
    )
    out = tmp_path / "run"
    subprocess.run([sys.executable, str(script), str(out)], check=True, capture_output=True)
    rows = load_rows(out / "results.jsonl")
    assert len(rows) == 4 and all(row["status"] == "ok" for row in rows)


def test_first_index_runs_the_test_split_indices(tmp_path: Path) -> None:
    config = _config(tmp_path, seeds=2, first_index=198)
    assert config.indices == range(198, 200)
    assert {job.manifest_index for job in plan_jobs(config)} == {198, 199}
    with pytest.raises(ValueError, match="first_index must be in \\[0, 199\\], got 200"):
        _config(tmp_path, first_index=200)
    with pytest.raises(ValueError, match="seeds must be in \\[1, 2\\] from first_index 198"):
        _config(tmp_path, seeds=3, first_index=198)


def test_cli_indices_run_a_manifest_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", "--agents", "oracle", "--levels", "L0", "--no-progress", "--no-report"]
    assert cli_main([*args, "--indices", "100:102", "--out", str(tmp_path)]) == 0
    rows = load_rows(tmp_path / "results.jsonl")
    assert sorted(r["manifest_index"] for r in rows) == [100, 101]
    assert cli_main([*args, "--indices", "100:102", "--seeds", "2", "--out", str(tmp_path)]) == 2
    assert "--indices runs in place of --seeds" in capsys.readouterr().err
    assert cli_main([*args, "--indices", "5:5", "--out", str(tmp_path)]) == 2
    assert "START:STOP with 0 <= START < STOP, got '5:5'" in capsys.readouterr().err


def test_planned_jobs_carry_their_agents_entry_and_survive_pickling(tmp_path: Path) -> None:
    config = SweepConfig(out=tmp_path, levels=("L0",), seeds=1, agents=("pc", "random"))
    jobs = plan_jobs(config)
    assert [job.entry for job in jobs] == [get_agent("pc"), get_agent("random")]
    again = pickle.loads(pickle.dumps(jobs[0]))
    assert again == jobs[0] and again.entry == jobs[0].entry
    by_name = Job("v0", "L0", 0, "pc", "observational", "raw", 0)
    assert by_name.entry is None and by_name.agent_entry == get_agent("pc")
    assert by_name.job_id == jobs[0].job_id  # the entry is no part of the id


def test_in_flight_keeps_the_limit_skips_lazily_and_cancels_what_is_left() -> None:
    started: list[int] = []
    most = 0
    pending_now: list[int] = []

    def start(item: int) -> int | None:
        nonlocal most
        if item % 3 == 2:
            return None  # skipped when its turn comes: not counted
        started.append(item)
        pending_now.append(item)
        most = max(most, len(pending_now))
        return item

    def wait_any(pending: list[int]) -> tuple[list[int], list[int]]:
        pending_now.remove(pending[-1])  # the newest finishes first
        return pending[-1:], pending[:-1]

    assert list(in_flight(range(8), start, wait_any, limit=3)) == [3, 4, 6, 7, 1, 0]
    assert most == 3 and started == [0, 1, 3, 4, 6, 7]
    cancelled: list[int] = []
    flight = in_flight(range(8), lambda i: i, lambda p: (p[:1], p[1:]), limit=2,
                       cancel=cancelled.extend)  # fmt: skip
    assert next(flight) == 0
    flight.close()
    assert cancelled == [1]  # started and still running when the consumer stopped
    with pytest.raises(ValueError, match="limit must be at least 1, got 0"):
        list(in_flight([1], lambda i: i, lambda p: (p, []), limit=0))
