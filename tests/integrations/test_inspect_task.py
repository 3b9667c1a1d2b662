"""The inspect_ai task: manifest seeds as samples, the LLM agents' tools, the protocol played by
inspect's mock model, every ScoreReport field as the score, and logs converted to result rows."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from acdb_gym.agents.llm import build_tools
from acdb_gym.cli import main as cli_main
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.integrations.episode import ToolEpisode
from acdb_gym.integrations.inspect_log import import_logs, rows_from_log
from acdb_gym.integrations.inspect_model import EMPTY_GRAPH_MODEL
from acdb_gym.integrations.inspect_task import EPISODE_KEY, acdb, tool_info
from acdb_gym.report import write_report
from acdb_gym.results import RESULTS_FILE, read_results

MODEL = "mockllm/model"


def test_samples_are_the_manifest_seeds() -> None:
    task = acdb(ladder="v1", levels="L0, L2", seeds=3, variant="llm_stats")
    samples = list(task.dataset)
    assert [s.id for s in samples] == [f"v1-{lv}-{i:03d}" for lv in ("L0", "L2") for i in range(3)]
    for sample in samples:
        meta = sample.metadata or {}
        level = get_level("v1", meta["level"])
        assert meta["seed"] == level.manifest_seed(meta["manifest_index"])
        assert (meta["variant"], meta["panel"]) == ("llm_stats", "active")
    probe = acdb(ladder="v0", levels=["L1"], seeds=1, variant="llm_corr_obs")
    assert next(iter(probe.dataset)).metadata["panel"] == "observational"
    with pytest.raises(ValueError, match="L9"):
        acdb(ladder="v1", levels="L9")
    with pytest.raises(ValueError, match="seeds must be an integer in"):
        acdb(ladder="v1", levels="L0", seeds=0)
    with pytest.raises(ValueError, match="panel must be one of"):
        acdb(ladder="v1", levels="L0", panel="passive")


def test_the_real_ladder_runs_with_all_its_levels_by_default() -> None:
    task = acdb(ladder="real", seeds=1)
    ids = [sample.id for sample in task.dataset]
    assert ids[:3] == ["real-SF-L3-000", "real-SF-Nonlinear-L3-000", "real-Sachs-000"]
    assert len(ids) == 11
    fitted = acdb(ladder="real", levels="Sachs-Fitted-Spline", seeds=2)
    assert [s.id for s in fitted.dataset] == [f"real-Sachs-Fitted-Spline-{i:03d}" for i in range(2)]
    with pytest.raises(ValueError, match="ladder must be one of"):
        acdb(ladder="large", levels="L0")


def test_tools_are_the_llm_agents_tools() -> None:
    for spec in build_tools("llm_stats", panel="active", n_nodes=4):
        info = tool_info(spec)
        params = info.parameters.model_dump(exclude_none=True)
        assert (info.name, info.description) == (spec.name, spec.description)
        assert params["required"] == spec.parameters["required"]
        assert params["properties"].keys() == spec.parameters["properties"].keys()
        for key, schema in spec.parameters["properties"].items():
            assert schema.get("enum") == params["properties"][key].get("enum")


def _output(name: str | None, arguments: dict[str, Any] | None = None) -> ModelOutput:
    if name is None:
        output = ModelOutput.from_content(MODEL, "Let me think about it.")
    else:
        output = ModelOutput.for_tool_call(MODEL, name, arguments or {})
    # Set usage, or inspect's mock model counts tokens with a tokenizer it downloads.
    output.usage = ModelUsage(input_tokens=1000, output_tokens=20, total_tokens=1020)
    return output


@pytest.mark.slow
def test_mock_model_plays_a_full_episode_and_the_log_becomes_rows(tmp_path: Path) -> None:
    truth = get_level("v0", "L0").instance(0).dag.edges()
    submission = {
        "directed_edges": [[f"X{i}", f"X{j}"] for i, j in truth[:-1]],
        "undirected_edges": [],
    }
    calls: list[tuple[str | None, dict[str, Any] | None]] = [
        ("intervene", {"variable": "X0", "value": 2.5}),
        ("intervene", {"variable": "X7", "value": 1.0}),
        (None, None),
        ("submit_graph", submission),
    ]
    model = get_model(MODEL, custom_outputs=[_output(*call) for call in calls])
    task = acdb(ladder="v0", levels="L0", seeds=1)
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    [sample] = log.samples or []
    score = sample.scores["acdb_score"] if sample.scores else None
    # Every field but the anytime F1, undefined for a solver that states no graphs.
    expected = set(SCORE_FIELDS) - {"anytime_f1"}
    assert score is not None and set(score.value) == expected  # type: ignore[arg-type]

    replay = ToolEpisode(ladder="v0", level="L0", manifest_index=0)
    texts = []
    for name, arguments in calls:
        texts.append(replay.call(name, arguments).text if name else replay.no_call().text)
    replayed = {name: value for name, value in replay.score.items() if name in expected}
    assert replayed == score.value and replay.score["directed_recall"] < 1.0
    shown = [m.text for m in sample.messages if m.role in ("tool", "user")][1:]
    assert shown == texts
    assert log.results is not None
    metrics = {s.name: s.metrics for s in log.results.scores}
    assert metrics["directed_f1"]["mean"].value == replay.score["directed_f1"]

    [row] = rows_from_log(log.location)
    assert (row.agent, dict(row.agent_config)) == ("inspect:llm_raw", {"model": MODEL})
    assert (row.status, row.steps, row.invalid_actions, row.truncated) == ("ok", 4, 2, False)
    assert (row.tokens_in, row.tokens_out) == (4000, 80)
    assert row.directed_f1 == replay.score["directed_f1"]
    run = tmp_path / "run"
    assert import_logs([log.location], run) == (1, 0)
    assert import_logs([log.location], run) == (0, 1)  # a second import adds nothing
    assert read_results(run / RESULTS_FILE, mode="strict").rows == (row,)
    # The sample's episode, turn by turn, is on the row's episode page.
    events = [
        json.loads(line)
        for line in (run / "transcripts" / f"{row.job_id}.jsonl").read_text().splitlines()
    ]
    replies = [e for e in events if e["event"] == "reply"]
    assert [c["name"] for e in replies for c in e["tool_calls"]] == [
        name for name, _ in calls if name
    ]
    assert sum(e["usage"]["tokens_in"] for e in replies) == row.tokens_in
    assert [e["text"] for e in events if e["event"] == "tool_result"] == [
        text for (name, _), text in zip(calls, texts, strict=True) if name
    ]
    write_report(run)
    page = (run / "episodes" / "e0.html").read_text(encoding="utf-8")
    assert f"{len(events)} events from <code>transcripts/{row.job_id}.jsonl</code>" in page
    assert page.count("<td>reply</td>") == len(calls)


@pytest.fixture(scope="module")
def one_episode_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """A log of one short episode (an empty graph submitted at once)."""
    empty = {"directed_edges": [], "undirected_edges": []}
    model = get_model(MODEL, custom_outputs=[_output("submit_graph", empty)])
    logs = tmp_path_factory.mktemp("logs")
    [log] = inspect_eval(acdb(ladder="v0", levels="L0", seeds=1), model=model, log_dir=str(logs))
    assert log.status == "success", log.error
    return log


@pytest.mark.slow
@pytest.mark.parametrize(
    ("forge", "message"),
    [
        ({"directed_f1": math.nan}, "directed_f1 must be in [0, 1], got nan"),
        ({"skeleton_f1": 2.0}, "skeleton_f1 must be in [0, 1], got 2.0"),
        ({"shd": math.inf}, "shd must be finite and >= 0, got inf"),
        ({"epoch": 0}, "epoch must be an integer >= 1, got 0"),
    ],
)
def test_a_forged_log_is_refused_and_adds_nothing(
    one_episode_log: EvalLog,
    forge: dict[str, Any],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = one_episode_log.model_copy(deep=True)
    [sample] = log.samples or []
    if "epoch" in forge:
        sample.epoch = forge["epoch"]
    else:
        sample.store[EPISODE_KEY]["score"].update(forge)
    path = tmp_path / "forged.json"
    write_eval_log(log, str(path))
    run = tmp_path / "run"
    assert cli_main(["inspect-import", str(path), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acdb: error: ") and message in err, err
    assert err.count("\n") == 1
    assert not (run / RESULTS_FILE).exists() or not (run / RESULTS_FILE).read_text()


def test_a_missing_log_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["inspect-import", str(tmp_path / "none.eval"), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acdb: error: ") and "none.eval" in err and err.count("\n") == 1


@pytest.mark.slow
def test_offline_model_runs_inspect_eval_with_no_network(tmp_path: Path) -> None:
    # An empty tokenizer cache and a dead proxy: any download (inspect's mock model fetches
    # tiktoken's encoding) fails at once, so a run that succeeds needed none. inspect finds the
    # task through the installed package's entry point, so the package's own path is not added
    # (an editable install leaves an egg-info beside it that has no entry point).
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    command = [sys.executable, "-m", "inspect_ai", "eval", "acdb_gym/acdb", "-T", "ladder=v1"]
    command += ["-T", "levels=L0", "-T", "seeds=1", "--model", EMPTY_GRAPH_MODEL]
    command += ["--log-dir", str(tmp_path / "logs"), "--display", "none"]
    process = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert process.returncode == 0, process.stderr[-2000:]
    [log] = (tmp_path / "logs").glob("*.eval")
    evaluated = read_eval_log(str(log))
    assert evaluated.status == "success", evaluated.error  # inspect exits 0 on a failed sample
    [row] = rows_from_log(str(log))
    empty = ToolEpisode(ladder="v1", level="L0", manifest_index=0)
    empty.call("submit_graph", {"directed_edges": [], "undirected_edges": []})
    assert (row.status, row.steps, row.agent_config["model"]) == ("ok", 1, EMPTY_GRAPH_MODEL)
    assert row.shd == empty.score["shd"] > 0


@pytest.mark.slow
def test_importing_a_log_with_failed_samples_twice_adds_nothing(tmp_path: Path) -> None:
    # One reply, then the mock model runs out of outputs: both samples fail.
    model = get_model(MODEL, custom_outputs=[_output("intervene", {"variable": "X0", "value": 1})])
    task = acdb(ladder="v0", levels="L0", seeds=2)
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    rows = rows_from_log(log.location)
    assert [row.status for row in rows] == ["failed", "failed"]
    run = tmp_path / "run"
    assert import_logs([log.location], run) == (2, 0)
    assert import_logs([log.location], run) == (0, 2)
    assert import_logs([log.location, log.location], run) == (0, 4)
    assert read_results(run / RESULTS_FILE, mode="strict").rows == tuple(rows)


@pytest.mark.parametrize(
    ("where", "key", "value", "message"),
    [
        ("metadata", "manifest_index", 10**30, "manifest_index must be in [0, 999]"),
        ("metadata", "ladder", "/../../PWNED", "ladder must be 1-64 letters"),
        ("metadata", "level", "../x", "level must be 1-64 letters"),
        ("model", "model", "m" * 5000, "model must be at most 256 characters"),
    ],
)
def test_a_forged_identity_is_refused_and_adds_nothing(
    one_episode_log: EvalLog,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    key: str,
    value: object,
    message: str,
) -> None:
    log = one_episode_log.model_copy(deep=True)
    [sample] = log.samples or []
    if where == "model":
        log.eval.model = str(value)
    else:
        sample.metadata[key] = value
        sample.store[EPISODE_KEY][key] = value
    path = tmp_path / "forged.json"
    write_eval_log(log, str(path))
    run = tmp_path / "run"
    assert cli_main(["inspect-import", str(path), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acdb: error: ") and message in err and err.count("\n") == 1, err
    assert not (run / RESULTS_FILE).exists() or not (run / RESULTS_FILE).read_text()
    assert not list(tmp_path.rglob("PWNED*"))


def test_imported_message_text_is_capped_as_on_the_llm_path(
    one_episode_log: EvalLog, tmp_path: Path
) -> None:
    """A 1 MB message is kept to its first 64 KiB in the transcript, as the LLM agents'
    transcripts keep it (before: whole, 105 MB of transcripts for 50 MB of messages)."""
    log = one_episode_log.model_copy(deep=True)
    [sample] = log.samples or []
    sample.messages[0].content = "x" * 1_000_000
    path = tmp_path / "big.json"
    write_eval_log(log, str(path))
    run = tmp_path / "run"
    assert import_logs([path], run) == (1, 0)
    [transcript] = (run / "transcripts").iterdir()
    assert transcript.stat().st_size < 100_000
    first = json.loads(transcript.read_text().splitlines()[0])
    assert first["text"]["truncated"] is True and first["text"]["chars"] == 1_000_002
