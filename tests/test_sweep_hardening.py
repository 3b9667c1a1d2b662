"""Sweep hardening (SECURITY.md): one sweep per run directory, LLM runs that cannot work stop
before any job, agents whose jobs keep failing stop, saved policies are identified by content
and never unpickled unless trusted, and rows say whether an agent was privileged."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from acdb_gym.registry import AgentNotReadyError
from acdb_gym.results import read_results
from acdb_gym.sweep.jobs import run_job
from acdb_gym.sweep.lock import LOCK_FILE, RunDirectoryBusyError, RunDirectoryLock
from acdb_gym.sweep.run import SweepConfig, plan_jobs, run_sweep

COMMITTED = Path(__file__).resolve().parent.parent / "models" / "acdb_design_l1_v0" / "model.zip"
ENV = {**os.environ, "MPLBACKEND": "Agg"}
for _variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
    ENV.pop(_variable, None)


def _acdb(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acdb_gym.cli", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
        check=False,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --------------------------------------------------------------------------- one sweep per folder
@pytest.mark.slow
def test_a_second_sweep_on_a_busy_folder_exits_at_once_naming_the_holder(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from acdb_gym.sweep.lock import RunDirectoryLock\n"
            "with RunDirectoryLock(Path(sys.argv[1])):\n"
            "    print('locked', flush=True); time.sleep(60)",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        second = _acdb("sweep", "--agents", "oracle", "--levels", "L0", "--seeds", "1",
                       "--out", str(tmp_path), "--no-progress")  # fmt: skip
        # It did not wait for the lock: the holder still holds it.
        assert holder.poll() is None
    finally:
        holder.kill()
        holder.wait()
    assert second.returncode == 2
    assert f"process {holder.pid}" in second.stderr and "RunDirectoryLock" in second.stderr
    assert not (tmp_path / "results.jsonl").exists()


@pytest.mark.slow
def test_two_concurrent_sweeps_never_run_a_job_twice(tmp_path: Path) -> None:
    args = ["sweep", "--agents", "random,pc", "--levels", "L0,L1", "--seeds", "2",
            "--out", str(tmp_path), "--no-progress", "--no-report"]  # fmt: skip
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "acdb_gym.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for _ in range(2)
    ]
    outcomes = [(p.wait(timeout=300), p.communicate()[1]) for p in procs]
    rows = read_results(tmp_path / "results.jsonl", mode="strict").rows
    assert len(rows) == len({row.job_id for row in rows}) == 8
    codes = sorted(code for code, _ in outcomes)
    # Either the second one found the folder busy, or it started after the first had finished
    # and found every job done; no job ran twice either way.
    assert codes[0] == 0 and codes[1] in (0, 2)
    if codes[1] == 2:
        assert any("is in use" in err for _, err in outcomes)


@pytest.mark.slow
def test_the_lock_is_released_when_the_holder_dies(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from acdb_gym.sweep.lock import "
         "RunDirectoryLock; RunDirectoryLock(Path(sys.argv[1])).acquire(); print('x', "
         "flush=True); time.sleep(60)", str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline()
    with pytest.raises(RunDirectoryBusyError, match=str(holder.pid)):
        RunDirectoryLock(tmp_path).acquire()
    holder.kill()
    holder.wait()
    with RunDirectoryLock(tmp_path):
        assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] == os.getpid()


# --------------------------------------------------------------------------- LLM runs that cannot work
@pytest.mark.slow
def test_an_llm_sweep_without_a_key_exits_before_any_job_naming_the_variable(
    tmp_path: Path,
) -> None:
    # No row is written: the key check runs before the first job (no timing assertion; the
    # machines are noisy).
    done = _acdb("sweep", "--agents", "llm_raw", "--provider", "anthropic", "--model", "m",
                 "--out", str(tmp_path), "--no-progress")  # fmt: skip
    assert done.returncode == 2 and "ANTHROPIC_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results.jsonl").exists()


@pytest.mark.slow
def test_a_dead_base_url_ends_the_sweep_at_once_with_the_connection_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    done = _acdb("sweep", "--agents", "llm_raw", "--provider", "openai", "--model", "m",
                 "--base-url", url, "--levels", "L0,L1", "--seeds", "2", "--panels", "active",
                 "--out", str(tmp_path), "--no-progress")  # fmt: skip
    assert done.returncode == 2
    assert "cannot connect to http://127.0.0.1" in done.stderr and "refused" in done.stderr.lower()
    assert not (tmp_path / "results.jsonl").exists()


# --------------------------------------------------------------------------- saved policies
def test_a_replaced_model_file_is_a_new_job(tmp_path: Path) -> None:
    model = tmp_path / "m.zip"
    shutil.copy(COMMITTED, model)
    config = SweepConfig(out=tmp_path / "run", agents=(f"rl:{model}",), levels=("L1",), seeds=1)
    before = {job.job_id for job in plan_jobs(config)}
    with zipfile.ZipFile(model, "a") as archive:
        archive.writestr("note.txt", "retrained")
    after = {job.job_id for job in plan_jobs(config)}
    assert before.isdisjoint(after)
    assert all("model_sha256" in job.agent_config for job in plan_jobs(config))


def test_a_model_file_swapped_after_planning_is_refused_not_run_under_the_old_digest(
    tmp_path: Path,
) -> None:
    pytest.importorskip("sb3_contrib")
    model = tmp_path / "m.zip"
    shutil.copy(COMMITTED, model)
    config = SweepConfig(out=tmp_path / "run", agents=(f"rl:{model}",), levels=("L1",), seeds=2)
    first, second = plan_jobs(config)
    assert run_job(first, {}, tmp_path).status == "ok"
    with zipfile.ZipFile(model, "a") as archive:  # retrained while the sweep runs
        archive.writestr("note.txt", "retrained")
    row = run_job(second, {}, tmp_path)
    assert row.status == "failed" and row.error is not None
    assert "changed since the sweep was planned" in row.error, row.error


@pytest.mark.slow
def test_an_untrusted_model_stops_the_sweep_unless_trusted(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(COMMITTED) as old, zipfile.ZipFile(plain, "w") as new:
        for name in old.namelist():
            if name != "acdb_gym.json":
                new.writestr(name, old.read(name))
    args = ["sweep", "--agents", f"rl:{plain}", "--levels", "L1", "--seeds", "1",
            "--no-progress", "--no-report"]  # fmt: skip
    refused = _acdb(*args, "--out", str(tmp_path / "a"), timeout=300)
    assert refused.returncode == 2 and "--trust-model" in refused.stderr
    assert not (tmp_path / "a" / "results.jsonl").exists()
    trusted = _acdb(*args, "--trust-model", "--out", str(tmp_path / "b"), timeout=300)
    assert trusted.returncode == 0, trusted.stderr
    (row,) = read_results(tmp_path / "b" / "results.jsonl", mode="strict").rows
    assert row.status == "ok"


def test_the_preflight_names_what_a_policy_lacks(tmp_path: Path) -> None:
    bogus = tmp_path / "m.zip"
    bogus.write_bytes(b"not a zip")
    with pytest.raises(AgentNotReadyError, match=r"not a \.zip"):
        run_sweep(SweepConfig(out=tmp_path / "run", agents=(f"rl:{bogus}",), progress=False))


# --------------------------------------------------------------------------- privileged access
def test_rows_record_privileged_access(tmp_path: Path) -> None:
    run_sweep(
        SweepConfig(out=tmp_path, agents=("oracle", "pc"), levels=("L0",), seeds=1, progress=False)
    )
    rows = read_results(tmp_path / "results.jsonl", mode="strict").rows
    assert {row.agent: row.privileged for row in rows} == {"oracle": True, "pc": False}


# --------------------------------------------------------------------------- hostile run folders
@pytest.mark.slow
@pytest.mark.parametrize("name", [LOCK_FILE, "results.jsonl", "sweep_config.json", "transcripts"])
def test_a_sweep_never_writes_through_a_link_in_its_run_directory(
    tmp_path: Path, name: str
) -> None:
    """A link planted where the sweep writes (its lock, its results, its config, the
    transcripts folder) stops the sweep before the first job; the target is left as it was."""
    run = tmp_path / "run"
    run.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir() if name == "transcripts" else victim.write_text("precious\n")
    (run / name).symlink_to(victim)
    done = _acdb("sweep", "--agents", "oracle", "--levels", "L0", "--seeds", "1",
                 "--out", str(run), "--no-progress", "--no-report")  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "is a symbolic link" in done.stderr, done.stderr
    if name == "transcripts":
        assert list(victim.iterdir()) == []
    else:
        assert victim.read_text() == "precious\n"


@pytest.mark.slow
def test_a_sweep_too_large_to_plan_is_refused_before_planning(tmp_path: Path) -> None:
    """``--repeats 100000000`` would hold 10**8 jobs in memory while planning: the number of
    jobs is checked against a bound first, in the config."""
    from acdb_gym.sweep.run import MAX_JOBS

    with pytest.raises(ValueError, match=rf"100000000 jobs, more than {MAX_JOBS}"):
        SweepConfig(out=tmp_path, levels=("L0",), seeds=1, agents=("oracle",), repeats=10**8)
    done = _acdb("sweep", "--agents", "oracle", "--repeats", "100000000",
                 "--out", str(tmp_path / "r"), "--no-progress")  # fmt: skip
    assert (
        done.returncode == 2 and done.stderr.count("\n") == 1 and "jobs, more than" in done.stderr
    )
    assert not (tmp_path / "r").exists()
