"""The results file: the typed row, the byte format, the appender and both reading modes."""

from __future__ import annotations

import json
import math
import pickle
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from acdb_gym.cli import main as cli_main
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS, SCORE_FIELDS
from acdb_gym.results import (
    NUMERIC_COLUMNS,
    RESULTS_FILE,
    Location,
    ResultRow,
    ResultsAppender,
    ResultsFileError,
    example_row,
    format_row,
    load_run,
    read_results,
)
from acdb_gym.sweep.run import Job, run_job

# Two lines of a v0 sweep's results file, as the sweep wrote them: a single-draw row (integer
# counts) and a 20-draw row (averaged counts).
ORACLE_LINE = (
    b'{"agent": "oracle", "agent_config": {}, "agent_stats": {}, "compelled_f1": 1.0, '
    b'"compelled_precision": 1.0, "compelled_recall": 1.0, "directed_f1": 1.0, '
    b'"directed_precision": 1.0, "directed_recall": 1.0, "draws": 1, "efficiency": 1.0, '
    b'"error": null, "essential_f1": 1.0, "i_star_size": 2, "interventions_used": 0, '
    b'"invalid_actions": 0, "job_id": "f5a57c19627a823b6373", "ladder": "v0", "level": "L0", '
    b'"manifest_index": 1, "panel": "observational", "repeat": 0, "seed": 1, "shd": 0, '
    b'"shd_extra": 0, "shd_missing": 0, "shd_reversed": 0, "shd_unresolved": 0, '
    b'"skeleton_f1": 1.0, "skeleton_precision": 1.0, "skeleton_recall": 1.0, "status": "ok", '
    b'"steps": 1, "tokens_in": null, "tokens_out": null, "tools": "raw", "truncated": false, '
    b'"version": "0.1.0", "wall_time": 0.0009969039999759843}\n'
)
RANDREGRESS_LINE = (
    b'{"agent": "randregress", "agent_config": {}, "agent_stats": {}, "compelled_f1": 0.6, '
    b'"compelled_precision": 0.6, "compelled_recall": 0.6, "directed_f1": 0.5466911764705883, '
    b'"directed_precision": 0.5337500000000001, "directed_recall": 0.5625, "draws": 20, '
    b'"efficiency": 1.0, "error": null, "essential_f1": 0.6, "i_star_size": 2, '
    b'"interventions_used": 0, "invalid_actions": 0, "job_id": "64a9e69f2a7ef22b1686", '
    b'"ladder": "v0", "level": "L0", "manifest_index": 1, "panel": "observational", '
    b'"repeat": 0, "seed": 1, "shd": 4.1, "shd_extra": 0.6, "shd_missing": 0.1, '
    b'"shd_reversed": 3.4, "shd_unresolved": 0.0, "skeleton_f1": 0.9593954248366012, '
    b'"skeleton_precision": 0.9363888888888889, "skeleton_recall": 0.9875, "status": "ok", '
    b'"steps": 1.0, "tokens_in": null, "tokens_out": null, "tools": "raw", "truncated": false, '
    b'"version": "0.1.0", "wall_time": 0.02339570199995933}\n'
)
HERE = Location(Path("results.jsonl"), 7)


def _failed_row(tmp_path: Path) -> dict[str, Any]:
    """A real failed row: an LLM job without a provider fails when its agent is built."""
    row = run_job(Job("v0", "L0", 0, "llm_raw", "active", "raw", 0), {}, tmp_path)
    assert row.status == "failed"
    return row.to_dict()


# ----------------------------------------------------------------------------- the row
@pytest.mark.parametrize("line", [ORACLE_LINE, RANDREGRESS_LINE])
def test_a_real_row_round_trips_to_the_same_bytes(line: bytes) -> None:
    data = json.loads(line)
    row = ResultRow.from_dict(data, where=HERE)
    assert row.to_dict() == data
    assert format_row(row) == line == (json.dumps(data, sort_keys=True) + "\n").encode()


def test_a_failed_row_round_trips_without_agent_stats(tmp_path: Path) -> None:
    data = _failed_row(tmp_path)
    row = ResultRow.from_dict(data, where=HERE)
    assert row.agent_stats is None and "agent_stats" not in row.to_dict()
    assert row.to_dict() == data
    assert row.directed_f1 is None and row.draws == 0 and "needs --provider" in str(row.error)


def test_unknown_keys_are_kept() -> None:
    data = {**json.loads(ORACLE_LINE), "future_metric": [1, 2]}
    row = ResultRow.from_dict(data, where=HERE)
    assert row.extras == {"future_metric": [1, 2]}
    assert format_row(row) == (json.dumps(data, sort_keys=True) + "\n").encode()


def test_the_row_has_every_score_field() -> None:
    names = [f.name for f in fields(ResultRow)]
    assert set(SCORE_FIELDS) <= set(names) and set(LATENT_SCORE_FIELDS) <= set(names)
    score_columns = NUMERIC_COLUMNS[: len(SCORE_FIELDS) + len(LATENT_SCORE_FIELDS)]
    assert score_columns == SCORE_FIELDS + LATENT_SCORE_FIELDS
    assert NUMERIC_COLUMNS[len(score_columns) :] == (
        "steps",
        "invalid_actions",
        "wall_time",
        "tokens_in",
        "tokens_out",
    )


def test_a_latent_row_keeps_its_further_scores_typed_and_round_trips() -> None:
    data = example_row(ladder="v1-latent", bidirected_f1=0.5, shd_mistyped=2)
    row = ResultRow.parse(data, where=HERE)
    assert row.bidirected_f1 == 0.5 and row.shd_mistyped == 2 and row.extras == {}
    assert row.value("bidirected_f1") == 0.5 and math.isnan(row.value("pag_tail_f1"))
    assert row.to_dict() == data
    with pytest.raises(ResultsFileError, match=r"bidirected_f1 must be in \[0, 1\], got 1.5"):
        ResultRow.parse({**data, "bidirected_f1": 1.5}, where=HERE)
    with pytest.raises(ResultsFileError, match="shd_mistyped must be a number, got 'x'"):
        ResultRow.from_dict({**data, "shd_mistyped": "x"}, where=HERE)


def test_a_row_crosses_a_process_boundary_unchanged() -> None:
    """The worker pool and Ray hand rows back pickled: the typed row survives whole."""
    row = ResultRow.from_dict(json.loads(ORACLE_LINE), where=HERE)
    again = pickle.loads(pickle.dumps(row))
    assert again == row and again.to_dict() == row.to_dict()


def test_the_typed_accessors_read_the_row() -> None:
    row = ResultRow.parse(
        example_row(
            agent_config={"model": "m"},
            submission={"n_nodes": 5, "graph": "0>1,2-3"},
            status="ok",
        ),
        where=HERE,
    )
    assert row.ok and row.model == "m" and row.instance_key == ("v0", "L0", 0)
    graph = row.submitted_graph()
    assert graph is not None and graph.directed_edges() == [(0, 1)]
    assert row.revision_record() is None
    failed = ResultRow.parse(example_row(status="failed"), where=HERE)
    assert not failed.ok and math.isnan(failed.value("directed_f1"))
    assert dict(failed.score_columns()) == dict.fromkeys(
        (name for name in SCORE_FIELDS if name != "anytime_f1"), None
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (123, "not a JSON object but a number"),
        ([1], "not a JSON object but an array"),
        ({"status": "ok"}, "missing keys job_id, ladder, level, manifest_index, seed and 32 more"),
        ({"status": "ok", "job_id": [1]}, r"job_id must be a string, got \[1\]"),
        ({**json.loads(ORACLE_LINE), "status": "done"}, "status must be 'ok' or 'failed'"),
        ({**json.loads(ORACLE_LINE), "shd": True}, "shd must be a number or null, got True"),
        ({**json.loads(ORACLE_LINE), "draws": 1.5}, "draws must be an integer, got 1.5"),
        ({**json.loads(ORACLE_LINE), "agent_stats": None}, "agent_stats must be an object"),
    ],
)
def test_from_dict_names_the_place_and_the_problem(data: object, message: str) -> None:
    with pytest.raises(ResultsFileError, match=rf"^results\.jsonl:7: {message}") as caught:
        ResultRow.from_dict(data, where=HERE)
    assert caught.value.path == Path("results.jsonl") and caught.value.line == 7


def test_the_error_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(ResultsFileError(HERE, "bad")))
    assert str(error) == "results.jsonl:7: bad" and error.line == 7


# ----------------------------------------------------------------------------- writing
def test_the_appender_writes_one_line_per_row(tmp_path: Path) -> None:
    path = tmp_path / "run" / RESULTS_FILE
    rows = [ResultRow.from_dict(json.loads(line), where=HERE) for line in (ORACLE_LINE,) * 2]
    with ResultsAppender(path) as appender:
        appender.append(rows[0])
    with ResultsAppender(path) as appender:  # a resumed sweep appends
        appender.append(rows[1])
    assert path.read_bytes() == ORACLE_LINE * 2


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("directed_f1", float("nan"), "directed_f1 must be in [0, 1], got nan"),
        ("skeleton_precision", 1.5, "skeleton_precision must be in [0, 1], got 1.5"),
        ("efficiency", -0.1, "efficiency must be in [0, 1], got -0.1"),
        ("shd", float("inf"), "shd must be finite and >= 0, got inf"),
        ("steps", -1, "steps must be finite and >= 0, got -1"),
        ("repeat", -1, "repeat must be finite and >= 0, got -1"),
        ("wall_time", float("nan"), "wall_time must be finite and >= 0, got nan"),
    ],
)
def test_no_row_with_a_non_finite_or_out_of_range_score_is_written(
    key: str, value: float, message: str, tmp_path: Path
) -> None:
    row = ResultRow.from_dict({**json.loads(ORACLE_LINE), key: value}, where=HERE)
    path = tmp_path / RESULTS_FILE
    with ResultsAppender(path) as appender, pytest.raises(ValueError, match=re.escape(message)):
        appender.append(row)
    assert path.read_bytes() == b""


# ----------------------------------------------------------------------------- reading
# Bad second lines between two good ones, and the problem each must report at line 2.
BAD_LINES = {
    "number": (b"123", "not a JSON object but a number"),
    "status only": (b'{"status": "ok"}', "missing keys job_id"),
    "job_id a list": (b'{"status":"ok","job_id":[1]}', r"job_id must be a string, got \[1\]"),
    "invalid UTF-8": (
        ORACLE_LINE[:30] + b"\xff\xfe" + ORACLE_LINE[30:-1],
        "invalid UTF-8 at byte 31",
    ),
    "NUL bytes": (b"\x00" * 8, "NUL byte at column 1"),
    "bad JSON": (b"not json", r"invalid JSON: Expecting value \(column 1\)"),
}


def _write(tmp_path: Path, middle: bytes) -> Path:
    path = tmp_path / RESULTS_FILE
    path.write_bytes(ORACLE_LINE + middle + b"\n" + RANDREGRESS_LINE)
    return path


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_strict_mode_raises_naming_file_and_line(tmp_path: Path, case: str) -> None:
    line, message = BAD_LINES[case]
    path = _write(tmp_path, line)
    with pytest.raises(ResultsFileError, match=rf"^{path}:2: {message}") as caught:
        read_results(path, mode="strict", repair=True)
    assert (caught.value.path, caught.value.line) == (path, 2)
    assert path.read_bytes() == ORACLE_LINE + line + b"\n" + RANDREGRESS_LINE


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_lenient_mode_skips_the_line_naming_file_and_line(tmp_path: Path, case: str) -> None:
    line, message = BAD_LINES[case]
    path = _write(tmp_path, line)
    read = read_results(path, mode="lenient")
    assert [row.agent for row in read.rows] == ["oracle", "randregress"]
    (problem,) = read.problems
    assert problem.startswith(f"{path}:2: ") and problem.endswith("; skipped")
    assert re.match(rf"{path}:2: {message}", problem)


@pytest.mark.parametrize("tail", [ORACLE_LINE[:40], b"\x00" * 16, b"not json\n"])
def test_strict_mode_drops_a_torn_last_line_and_repairs_on_request(
    tmp_path: Path, tail: bytes
) -> None:
    path = tmp_path / RESULTS_FILE
    path.write_bytes(RANDREGRESS_LINE + tail)
    with pytest.warns(UserWarning, match=rf"{path}:2: dropping a torn last line"):
        read = read_results(path, mode="strict")
    assert [row.agent for row in read.rows] == ["randregress"] and len(read.problems) == 1
    assert path.read_bytes() == RANDREGRESS_LINE + tail  # reading alone changes nothing
    with pytest.warns(UserWarning, match="cut from the file"):
        read_results(path, mode="strict", repair=True)
    assert path.read_bytes() == RANDREGRESS_LINE


def test_strict_mode_drops_a_whole_row_without_its_newline(tmp_path: Path) -> None:
    # The next append would run into it: resume re-runs that job instead.
    path = tmp_path / RESULTS_FILE
    path.write_bytes(RANDREGRESS_LINE + ORACLE_LINE[:-1])
    with pytest.warns(UserWarning, match=":2: dropping a torn last line"):
        read = read_results(path, mode="strict", repair=True)
    assert len(read.rows) == 1 and path.read_bytes() == RANDREGRESS_LINE


def test_strict_mode_raises_on_a_last_line_that_is_json_but_not_a_row(tmp_path: Path) -> None:
    path = tmp_path / RESULTS_FILE
    path.write_bytes(RANDREGRESS_LINE + b'{"status": "ok"}\n')
    with pytest.raises(ResultsFileError, match=rf"{path}:2: missing keys"):
        read_results(path, mode="strict", repair=True)


def test_lenient_mode_reads_a_whole_last_row_without_its_newline(tmp_path: Path) -> None:
    path = tmp_path / RESULTS_FILE
    path.write_bytes(RANDREGRESS_LINE + b"\n" + ORACLE_LINE[:-1] + b"\n" + ORACLE_LINE[:50])
    read = read_results(path, mode="lenient")
    assert [row.agent for row in read.rows] == ["randregress", "oracle"]  # blank line 2 ignored
    (problem,) = read.problems
    assert problem.startswith(f"{path}:4: invalid JSON (torn last line without a newline)")


def test_a_missing_file_has_no_rows(tmp_path: Path) -> None:
    for mode in ("strict", "lenient"):
        read = read_results(tmp_path / RESULTS_FILE, mode=mode)  # type: ignore[arg-type]
        assert read.rows == () and read.problems == ()


def test_read_results_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'sloppy'"):
        read_results(tmp_path / RESULTS_FILE, mode="sloppy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="repair"):
        read_results(tmp_path / RESULTS_FILE, mode="lenient", repair=True)


def test_load_run_returns_dicts_and_problems(tmp_path: Path) -> None:
    _write(tmp_path, b"123")
    rows, problems = load_run(tmp_path)
    assert rows == [json.loads(ORACLE_LINE), json.loads(RANDREGRESS_LINE)]
    assert problems == [f"{tmp_path / RESULTS_FILE}:2: not a JSON object but a number; skipped"]
    with pytest.raises(FileNotFoundError, match=r"no results\.jsonl"):
        load_run(tmp_path / "missing")


# ----------------------------------------------------------------------------- the command
_RESUME = ["sweep", "--levels", "L0", "--seeds", "1", "--agents", "oracle", "--no-progress",
           "--no-report"]  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_cli_resume_on_a_corrupt_file_is_a_one_line_error(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line, message = BAD_LINES[case]
    path = _write(tmp_path, line)
    assert cli_main([*_RESUME, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert re.match(rf"acdb: error: {path}:2: {message}", err)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["job_id a list", "invalid UTF-8"])
def test_acdb_sweep_resume_on_a_corrupt_file_prints_no_traceback(tmp_path: Path, case: str) -> None:
    path = _write(tmp_path, BAD_LINES[case][0])
    command = [sys.executable, "-m", "acdb_gym.cli", *_RESUME, "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert done.stderr.startswith(f"acdb: error: {path}:2: ")
    assert "Traceback" not in done.stderr
