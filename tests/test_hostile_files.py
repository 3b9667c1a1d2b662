"""Every file read back is hostile input (SECURITY.md): a run directory planted with nested JSON,
long integers, rows that would allocate without bound, out-of-range scores, names that climb
out of the directory and symbolic links ends in a skipped line (the report, the leaderboard)
or a one-line error (a resume), never a traceback, and nothing is read or written outside it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acdb_gym.cli import main as cli_main
from acdb_gym.results import RESULTS_FILE
from acdb_gym.sweep.run import SweepConfig, run_sweep

NESTED = "[" * 100_000 + "]" * 100_000
LONG_INTEGER = '{"job_id": ' + "7" * 4301 + "}"


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run: pc_greedy (revision records, submissions) and the oracle on v0 L0, 2 seeds."""
    out = tmp_path_factory.mktemp("hostile") / "clean"
    agents = ("pc_greedy", "oracle")
    run_sweep(SweepConfig(out=out, levels=("L0",), seeds=2, agents=agents, progress=False))
    return out


def _rows(run: Path) -> list[dict[str, Any]]:
    lines = (run / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _planted(clean_run: Path, tmp_path: Path, *lines: str, at: int = 1) -> Path:
    """A copy of the clean run with ``lines`` inserted after its first ``at`` rows."""
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    rows = (clean_run / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    (run / RESULTS_FILE).write_text("\n".join([*rows[:at], *lines, *rows[at:]]) + "\n")
    return run


def _with(row: dict[str, Any], **changes: Any) -> str:
    return json.dumps({**row, **changes})


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli_main(args)
    return code, capsys.readouterr().err


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("acdb: warning:")]


def _resume(run: Path) -> list[str]:
    levels = ["--levels", "L0", "--seeds", "2", "--agents", "pc_greedy,oracle"]
    return ["sweep", *levels, "--out", str(run), "--no-progress", "--no-report"]


# ----------------------------------------------------------------------------- item 2
@pytest.mark.slow
@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (NESTED, "JSON nested 100000 levels deep (at most 64)"),
        (LONG_INTEGER, "an integer of 4301 digits (at most 40)"),
        ('{"job_id": "a", "agent": "\\ud800"}', "a string with a lone surrogate"),
    ],
    ids=["nested", "long integer", "lone surrogate"],
)
def test_a_hostile_line_is_skipped_by_the_report_and_refused_by_a_resume(
    clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, problem: str
) -> None:
    run = _planted(clean_run, tmp_path, line)
    code, err = _cli(["report", str(run)], capsys)
    assert code == 0 and "Traceback" not in err
    assert _warnings(err) == [f"acdb: warning: {run / RESULTS_FILE}:2: {problem}; skipped"]
    assert problem in (run / "report.md").read_text(encoding="utf-8")
    code, err = _cli(["leaderboard", str(run), "--out", str(tmp_path / "board")], capsys)
    assert code == 0 and (tmp_path / "board" / "leaderboard.html").is_file()
    before = (run / RESULTS_FILE).read_bytes()
    code, err = _cli(_resume(run), capsys)
    assert code == 2 and err == f"acdb: error: {run / RESULTS_FILE}:2: {problem}\n"
    assert (run / RESULTS_FILE).read_bytes() == before


def _page_of(run: Path, job: str) -> str:
    """The episode page of one job (pages are numbered in ladder, level, index, agent order)."""
    pages = [p.read_text(encoding="utf-8") for p in (run / "episodes").glob("e*.html")]
    found = [page for page in pages if f">{job}<" in page]
    assert len(found) == 1, f"{len(found)} episode pages name job {job}"
    return found[0]


@pytest.mark.slow
def test_a_hostile_transcript_line_is_skipped_and_the_page_still_written(
    clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _planted(clean_run, tmp_path)
    job = _rows(run)[0]["job_id"]
    events = [{"event": "message", "role": "user", "text": "kept before"}, None]
    lines = [json.dumps(events[0]), NESTED, LONG_INTEGER, json.dumps({"event": "message"})]
    (run / "transcripts").mkdir(exist_ok=True)
    (run / "transcripts" / f"{job}.jsonl").write_text("\n".join(lines) + "\n")
    code, err = _cli(["report", str(run)], capsys)
    assert code == 0 and "Traceback" not in err
    page = _page_of(run, job)
    assert "kept before" in page and "2 events" in page and "2 lines skipped" in page


def test_a_hostile_cache_entry_is_a_miss(tmp_path: Path) -> None:
    from acdb_gym.agents.llm.records import Redactor, ResponseCache

    cache = ResponseCache(tmp_path, Redactor([]))
    assert cache.put("ab" * 32, {"response": {"x": 1}})
    assert cache.get("ab" * 32) == {"key": "ab" * 32, "response": {"x": 1}}
    for text in (NESTED, LONG_INTEGER, "{" * 5000):
        (tmp_path / "ab" / f"{'ab' * 32}.json").write_text(text)
        assert cache.get("ab" * 32) is None


def test_an_mcp_server_starts_beside_a_hostile_results_file(
    clean_run: Path, tmp_path: Path
) -> None:
    from acdb_gym.integrations.episode import ToolEpisode
    from acdb_gym.integrations.mcp_server import EpisodeServer

    run = _planted(clean_run, tmp_path, NESTED, LONG_INTEGER)
    episode = ToolEpisode(ladder="v0", level="L0", manifest_index=1)
    served = EpisodeServer(episode, run_dir=run, agent_config={"model": "tester"})
    served.close()


# ----------------------------------------------------------------------------- item 3
@pytest.mark.slow
def test_rows_that_would_allocate_without_bound_are_skipped_by_file_and_line(
    clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ok = _rows(clean_run)[0]
    assert "revision" in ok and "submission" in ok
    big_revision = {"n_nodes": 5000, "targets": [], "before": [], "final": ""}
    many_graphs = {"n_nodes": 1000, "targets": [0] * 199, "before": [""] * 199, "final": ""}
    planted = [
        _with(ok, job_id="rev", revision=big_revision),
        _with(ok, job_id="sub", submission={"n_nodes": 5000, "graph": ""}),
        _with(ok, job_id="many", revision=many_graphs),
    ]
    run = _planted(clean_run, tmp_path, *planted)
    start = time.perf_counter()
    code, err = _cli(["report", str(run)], capsys)
    assert code == 0 and time.perf_counter() - start < 60
    warned = _warnings(err)
    assert len(warned) == 3
    assert ":2: revision n_nodes must be in [1, 2000], got 5000; skipped" in warned[0]
    assert ":3: submission n_nodes must be in [1, 2000], got 5000; skipped" in warned[1]
    assert ":4: revision of 200 graphs of 1000 nodes holds 200000000 cells" in warned[2]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"directed_f1": float("nan")}, "directed_f1 must be in [0, 1], got nan"),
        ({"skeleton_f1": -5}, "skeleton_f1 must be in [0, 1], got -5"),
        ({"compelled_f1": 1e308}, "compelled_f1 must be in [0, 1], got 1e+308"),
        ({"shd": 1e308}, "shd must be at most 1e+12, got 1e+308"),
        ({"manifest_index": 10**30}, "manifest_index must be in [0, 999], got 10"),
        ({"job_id": "j" * 10_000}, "job_id must be 1-64 letters, digits or _.+-"),
        ({"error": "e" * 100_000}, "error must be at most 16384 characters, got 100000"),
        ({"level_spec": "d=abc"}, "level_spec: custom level 'd=abc': d must be an integer"),
        (
            {"revision": {"n_nodes": 5, "targets": [], "before": [], "final": "0>1,1>2,2>0"}},
            "cycle",
        ),
        ({"submission": {"n_nodes": 5, "graph": "0>9"}}, "names a node outside [0, 5)"),
    ],
    ids=[
        "nan",
        "negative",
        "huge fraction",
        "huge count",
        "huge index",
        "long job id",
        "long error",
        "bad spec",
        "cyclic revision",
        "bad submission",
    ],
)
def test_one_bad_row_is_skipped_and_the_report_written(
    clean_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    changes: dict[str, Any],
    problem: str,
) -> None:
    ok = _rows(clean_run)[0]
    if "level_spec" in changes:
        changes = {**changes, "ladder": "custom"}
    run = _planted(clean_run, tmp_path, _with(ok, **{"job_id": "bad", **changes}))
    code, err = _cli(["report", str(run)], capsys)
    assert code == 0 and "Traceback" not in err
    [warned] = _warnings(err)
    assert warned.startswith(f"acdb: warning: {run / RESULTS_FILE}:2: ") and problem in warned
    assert "216.7" not in (run / "report.md").read_text(encoding="utf-8")
    assert len(list((run / "episodes").glob("e*.html"))) == len(_rows(clean_run))


@pytest.mark.slow
def test_a_custom_row_whose_world_cannot_be_regenerated_costs_a_bounded_time(
    clean_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from acdb_gym.core.ladders import custom

    monkeypatch.setattr(custom, "REGENERATION_SECONDS", 2.0)
    spec = "d=300,k=40000,n_obs=1000,n_int=10,noise_var=1.0,slack=0,faithfulness_eps=0.5"
    ok = _rows(clean_run)[0]
    row = {**ok, "job_id": "custom-row", "ladder": "custom", "level": "hard", "level_spec": spec}
    row["seed"] = 300_000
    del row["revision"], row["submission"]
    run = _planted(clean_run, tmp_path, json.dumps(row))
    start = time.perf_counter()
    code, err = _cli(["report", str(run)], capsys)
    assert code == 0 and "Traceback" not in err
    assert time.perf_counter() - start < 45
    page = _page_of(run, "custom-row")
    assert "The true graph could not be regenerated" in page


# ----------------------------------------------------------------------------- item 4
@pytest.mark.slow
def test_names_from_rows_never_leave_the_run_directory(
    clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ok = _rows(clean_run)[0]
    leak = tmp_path / "leakdir"
    leak.mkdir()
    (leak / "secret.jsonl").write_text(json.dumps({"event": "message", "text": "SECRET-1"}))
    planted = [
        _with(ok, job_id="escape", ladder="/../../PWNED"),
        _with(ok, job_id="../../leakdir/secret"),
        _with(ok, job_id="x", level="../../PWNED"),
    ]
    run = _planted(clean_run, tmp_path, *planted)
    for prefix in ("table2_", "table3_", "f1_per_level_", "precision_recall_", "anytime_"):
        (run / prefix).mkdir()
    code, err = _cli(["report", str(run)], capsys)
    assert code == 0 and len(_warnings(err)) == 3
    assert "ladder must be 1-64 letters" in err and "job_id must be 1-64 letters" in err
    assert not list(tmp_path.rglob("PWNED*"))
    pages = "".join(p.read_text(encoding="utf-8") for p in (run / "episodes").glob("*.html"))
    assert "SECRET-1" not in pages


@pytest.mark.slow
def test_a_transcript_that_is_a_link_is_not_followed(
    clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _planted(clean_run, tmp_path)
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"event": "message", "text": "SECRET-2"}) + "\n")
    (run / "transcripts").mkdir(exist_ok=True)
    (run / "transcripts" / f"{_rows(run)[0]['job_id']}.jsonl").symlink_to(secret)
    code, _ = _cli(["report", str(run)], capsys)
    assert code == 0
    assert "SECRET-2" not in (run / "episodes" / "e0.html").read_text(encoding="utf-8")
    shutil.rmtree(run / "transcripts")
    (run / "transcripts").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / f"{_rows(run)[0]['job_id']}.jsonl").write_text(secret.read_text())
    code, _ = _cli(["report", str(run)], capsys)
    assert code == 0
    assert "SECRET-2" not in (run / "episodes" / "e0.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["report.md", "report.html", "random_floor.csv", "episodes"])
def test_the_report_never_writes_through_a_link(
    clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    run = _planted(clean_run, tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir() if name == "episodes" else victim.write_text("precious")
    (run / name).symlink_to(victim)
    code, err = _cli(["report", str(run)], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("acdb: error: ") and "is a symbolic link" in err
    if name == "episodes":
        assert list(victim.iterdir()) == []
    else:
        assert victim.read_text() == "precious"


# ----------------------------------------------------------------------------- item 8
@pytest.mark.parametrize("indices", ["٣:٥", "1_0:12", "１:２", " 1:2"])
def test_indices_are_ascii_digits_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], indices: str
) -> None:
    code, err = _cli(["sweep", "--indices", indices, "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and err.startswith("acdb: error: indices must be START:STOP")
    assert not (tmp_path / "r").exists()


def test_named_with_a_custom_level_stops_before_the_first_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", "--custom-level", "d=5,k=4,n_obs=200,n_int=20,slack=0", "--named"]
    code, err = _cli([*args, "--agents", "llm_raw", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and "--named needs levels over a real topology" in err
    assert not (tmp_path / "r" / RESULTS_FILE).exists()


@pytest.mark.slow
def test_the_torn_line_warning_is_one_line_without_source(clean_run: Path, tmp_path: Path) -> None:
    run = _planted(clean_run, tmp_path)
    with (run / RESULTS_FILE).open("a") as handle:
        handle.write('{"job_id": "torn", "stat')
    process = subprocess.run(
        [sys.executable, "-m", "acdb_gym.cli", *_resume(run)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert process.stderr.splitlines() == [
        f"acdb: warning: {run / RESULTS_FILE}:5: dropping a torn last line (24 bytes), "
        "cut from the file"
    ]


def test_a_job_whose_row_is_out_of_range_is_a_failed_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer refuses what the reader would skip; the sweep's worker turns such a row into
    a failed one (with a long error cut), so the one writer never meets it."""
    from acdb_gym.results import format_row
    from acdb_gym.sweep import jobs

    scored = jobs._scored_row

    def out_of_range(*args: Any) -> dict[str, Any]:
        return {**scored(*args), "directed_f1": 2.0}

    monkeypatch.setattr(jobs, "_scored_row", out_of_range)
    row = jobs.run_job(jobs.Job("v0", "L0", 0, "pc", "observational", "raw", 0), {}, tmp_path)
    assert row.status == "failed" and row.error is not None
    assert "directed_f1 must be in [0, 1], got 2.0" in row.error
    format_row(row)  # writable

    def raising(*args: Any) -> dict[str, Any]:
        raise ValueError("x" * 100_000)

    monkeypatch.setattr(jobs, "_scored_row", raising)
    row = jobs.run_job(jobs.Job("v0", "L0", 0, "pc", "observational", "raw", 0), {}, tmp_path)
    assert row.status == "failed" and row.error is not None and len(row.error) < 4_100


def test_a_transcript_writer_never_writes_through_a_link(tmp_path: Path) -> None:
    """A link planted as ``transcripts/<job_id>.jsonl`` (job ids are predictable) is refused
    by the LLM agents' and the MCP server's transcript writer, the target left as it was."""
    from acdb_gym.agents.llm.records import Redactor, TranscriptWriter
    from acdb_gym.core.untrusted import UntrustedInputError

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "transcripts").mkdir()
    link = tmp_path / "transcripts" / "0123456789abcdef0123.jsonl"
    link.symlink_to(victim)
    with pytest.raises(UntrustedInputError, match="is a symbolic link"):
        TranscriptWriter(link, Redactor([]))
    assert victim.read_text() == "precious\n"
    writer = TranscriptWriter(tmp_path / "t.jsonl", Redactor([]))
    writer.write("message", text="kept")
    assert json.loads((tmp_path / "t.jsonl").read_text())["text"] == "kept"
