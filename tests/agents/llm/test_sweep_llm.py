"""LLM rows land in the same sweep and report: `acdb sweep --agents llm_raw ...` end to end."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from acdb_gym.cli import main as cli_main
from acdb_gym.core.ladder import get_level
from acdb_gym.results import read_results

TRUTH = get_level("v0", "L0").instance(0).dag


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
        if path.is_file() and path.suffix in {".jsonl", ".json", ".md", ".csv"}:
            assert fake.KEY not in path.read_text(), path
    report = (out / "report.md").read_text()
    assert "llm_raw[test-model] (active)" in report
    assert (
        json.loads((out / "sweep_config.json").read_text())["agent_options"]["model"]
        == "test-model"
    )


def test_llm_agent_without_model_is_a_failed_row_with_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["sweep", "--levels", "L0", "--seeds", "1", "--agents", "llm_raw", "--panels",
            "active", "--out", str(out), "--no-progress", "--no-report"]  # fmt: skip
    assert cli_main(argv) == 1
    (row,) = read_results(out / "results.jsonl", mode="strict").as_dicts()
    assert row["status"] == "failed" and "needs --provider and --model" in row["error"]
