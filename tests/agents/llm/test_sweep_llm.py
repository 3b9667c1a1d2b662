"""LLM rows land in the same sweep and report: `acdb sweep --agents llm_raw ...` end to end."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from acdb_gym.cli import main as cli_main
from acdb_gym.core.ladders.shipped import LEVEL_NAMES, get_level
from acdb_gym.report import write_report
from acdb_gym.results import read_results
from acdb_gym.sweep.run import SweepConfig, run_sweep

TRUTH = get_level("v0", "L0").instance(0).dag


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_sweep_runs_llm_agents_through_the_cli(
    fake: SimpleNamespace, provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake.serve(fake.competent(TRUTH))
    monkeypatch.setenv("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY", fake.KEY)
    out = tmp_path / "run"
    argv = [
        "sweep", "--levels", "L0", "--seeds", "1", "--agents", "llm_raw,llm_stats,oracle",
        "--provider", provider, "--model", "test-model", "--base-url", server.base_url(provider),
        "--out", str(out), "--no-progress",
    ]  # fmt: skip
    assert cli_main(argv) == 0
    rows = read_results(out / "results.jsonl", mode="strict").as_dicts()
    llm = [r for r in rows if r["agent"].startswith("llm_")]
    # llm_raw and llm_stats, each in both panels.
    assert len(llm) == 4 and all(r["status"] == "ok" for r in llm)
    assert all(r["directed_f1"] == 1.0 for r in llm)
    assert all(r["tokens_in"] > 0 and r["tokens_out"] > 0 for r in llm)
    assert {r["tools"] for r in llm} == {"raw", "stats"}
    assert all(r["agent_config"]["model"] == "test-model" for r in llm)
    for row in llm:
        transcript = out / "transcripts" / f"{row['job_id']}.jsonl"
        assert transcript.exists() and transcript.read_text().strip()
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in {".jsonl", ".json", ".md", ".csv", ".html"}:
            assert fake.KEY not in path.read_text(), path
    # Each LLM row's episode page shows its transcript turn by turn, with each reply's tokens.
    for index, row in enumerate(rows):
        page = (out / "episodes" / f"e{index}.html").read_text(encoding="utf-8")
        if not row["agent"].startswith("llm_"):
            assert "<h2>Transcript</h2>" not in page
            continue
        events = [
            json.loads(line)
            for line in (out / "transcripts" / f"{row['job_id']}.jsonl").read_text().splitlines()
        ]
        table = page.split('<table class="transcript">')[1].split("</table>")[0]
        assert table.count("<tr>") == len(events) + 1
        replies = re.findall(
            r"<td>\d+</td><td>reply</td><td>\d+</td><td><pre>.*?</pre></td>"
            r"<td>(\d+)</td><td>(\d+)</td>",
            table,
            flags=re.S,
        )
        assert len(replies) == sum(e["event"] == "reply" for e in events) > 0
        assert sum(int(tokens_in) for tokens_in, _ in replies) == row["tokens_in"]
        assert sum(int(tokens_out) for _, tokens_out in replies) == row["tokens_out"]
        assert "submit_graph" in table
    # Given prices, each reply's cost and the episode's, as costs.csv has it.
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."test-model"]\ninput = 2.0\ncached_input = 1.0\noutput = 8.0\n')
    write_report(out, prices=prices)
    with (out / "costs.csv").open() as handle:
        costs = {line["job_id"]: float(line["cost"]) for line in csv.DictReader(handle)}
    for index, row in enumerate(rows):
        if not row["agent"].startswith("llm_"):
            continue
        page = (out / "episodes" / f"e{index}.html").read_text(encoding="utf-8")
        assert f"Episode cost: {costs[row['job_id']]:.5f} USD." in page
        turns = re.findall(r"<td>reply</td>.*?<td>(\d+\.\d{5})</td></tr>", page, flags=re.S)
        assert turns and abs(sum(map(float, turns)) - costs[row["job_id"]]) < 1e-4
    report = (out / "report.md").read_text()
    assert "llm_raw[test-model] (active)" in report
    assert (
        json.loads((out / "sweep_config.json").read_text())["agent_options"]["model"]
        == "test-model"
    )


def test_llm_agent_without_model_stops_the_sweep_before_any_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["sweep", "--levels", "L0", "--seeds", "1", "--agents", "llm_raw", "--panels",
            "active", "--out", str(out), "--no-progress", "--no-report"]  # fmt: skip
    assert cli_main(argv) == 2
    assert "llm_raw needs --provider and --model" in capsys.readouterr().err
    assert not (out / "results.jsonl").exists()


def test_an_agent_whose_jobs_keep_failing_alike_is_stopped(
    fake: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server that refuses every request (a revoked key, say): the endpoint answers, so the
    # preflight passes, and every job fails the same way.
    server = fake.serve(lambda request: fake.Fault("status", status=401))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-revoked-0123456789")
    config = SweepConfig(
        out=tmp_path,
        agents=("llm_raw", "oracle"),
        levels=("L0", "L1", "L2"),
        seeds=2,
        panels=("active",),
        agent_options={
            "provider": "openai",
            "model": "m",
            "base_url": server.base_url("openai"),
        },
        progress=False,
    )
    summary = run_sweep(config)
    rows = read_results(tmp_path / "results.jsonl", mode="strict").rows
    llm = [row for row in rows if row.agent == "llm_raw"]
    assert len(llm) == 3 and all(row.status == "failed" for row in llm)
    assert summary.not_run == 3 and "401" in summary.stopped_agents["llm_raw"]
    assert sum(row.agent == "oracle" and row.status == "ok" for row in rows) == 6


def _strong_correlations(session: str) -> list[tuple[int, int]]:
    """The pairs whose correlation in the prompt's matrix exceeds 0.3 in magnitude."""
    lines = session.split("Correlation matrix (rounded to 3 decimals):\n")[1].splitlines()
    n_nodes = len(lines[0].split(","))
    matrix = np.array([[float(v) for v in line.split(",")] for line in lines[1 : 1 + n_nodes]])
    return [
        (i, j) for i in range(n_nodes) for j in range(i + 1, n_nodes) if abs(matrix[i, j]) > 0.3
    ]


@pytest.mark.slow
@pytest.mark.parametrize("ladder", ["v0", "v1"])
def test_the_correlation_probe_runs_on_every_level_and_reports_skeleton_f1(
    fake: SimpleNamespace, ladder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model that reads the correlation matrix and submits the strongly correlated pairs as
    # undirected edges: a skeleton guess that orients nothing.
    server = fake.serve(
        lambda request: fake.submit_reply([], _strong_correlations(request.session))
    )
    monkeypatch.setenv("OPENAI_API_KEY", fake.KEY)
    config = SweepConfig(
        out=tmp_path,
        ladder=ladder,
        agents=("llm_corr_obs", "pc"),
        seeds=1,
        agent_options={"provider": "openai", "model": "m", "base_url": server.base_url("openai")},
        progress=False,
    )
    run_sweep(config)
    rows = read_results(tmp_path / "results.jsonl", mode="strict").as_dicts()
    probe = [row for row in rows if row["agent"] == "llm_corr_obs"]
    assert sorted(row["level"] for row in probe) == list(LEVEL_NAMES)
    assert all(row["status"] == "ok" and row["panel"] == "observational" for row in probe)
    assert all(row["directed_f1"] == 0.0 for row in probe)
    assert np.mean([row["skeleton_f1"] for row in probe]) > 0.3
    report = write_report(tmp_path).markdown.read_text()
    section = report.split("### Observational rows by skeleton F1")[1].split("###")[0]
    assert "llm_corr_obs[m] (observational)" in section and "pc (observational)" in section
    assert "Skel F1 L5" in section


def test_a_run_replays_from_the_cache_with_the_server_down(
    fake: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake.serve(fake.competent(TRUTH))
    monkeypatch.setenv("OPENAI_API_KEY", fake.KEY)
    url, cache = server.base_url("openai"), tmp_path / "cache"

    def sweep(out: Path) -> list[dict[str, object]]:
        argv = [
            "sweep", "--levels", "L0", "--seeds", "1", "--agents", "llm_raw", "--panels",
            "active", "--provider", "openai", "--model", "test-model", "--base-url", url,
            "--cache-dir", str(cache), "--out", str(out), "--no-progress", "--no-report",
        ]  # fmt: skip
        assert cli_main(argv) == 0
        return read_results(out / "results.jsonl", mode="strict").as_dicts()

    [first] = sweep(tmp_path / "live")
    asked = len(server.requests)
    server.close()
    with pytest.warns(UserWarning, match="replaying from the response cache"):
        [replay] = sweep(tmp_path / "replay")
    assert len(server.requests) == asked and replay["status"] == "ok"
    kept = ("job_id", "directed_f1", "shd", "steps", "tokens_in", "tokens_out")
    assert {k: replay[k] for k in kept} == {k: first[k] for k in kept}
    # Without a cache that holds entries, the server being down still stops the sweep.
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [
        "sweep", "--levels", "L0", "--seeds", "1", "--agents", "llm_raw", "--panels", "active",
        "--provider", "openai", "--model", "test-model", "--base-url", url,
        "--cache-dir", str(empty), "--out", str(tmp_path / "none"), "--no-progress",
    ]  # fmt: skip
    assert cli_main(argv) == 2
