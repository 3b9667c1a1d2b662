"""Prompt caching and cost: the markers on the wire, the usage the providers report, the row
fields, and the price table."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import env_kwargs_for
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.report import write_report
from acdb_gym.report.cost import check_prices_cover, job_costs, load_prices
from acdb_gym.report.load import as_rows
from acdb_gym.results import Location, ResultRow, example_row, read_results
from acdb_gym.sweep.run import SweepConfig, run_sweep

PROVIDERS = ("openai", "anthropic")
TRUTH = get_level("v0", "L0").instance(0).dag


def explorer(fake: SimpleNamespace) -> Any:
    """Intervenes on X0, X1, X2 (the whole budget of L0), then submits the truth."""

    def behave(request: Any) -> Any:
        if request.turn < 3:
            return fake.Reply(
                (fake.Call("intervene", {"variable": f"X{request.turn}", "value": 2.0}),)
            )
        return fake.submit_reply(TRUTH.edges())

    return behave


def play(fake: SimpleNamespace, provider: str, **kwargs: Any) -> tuple[Any, Any, Any]:
    server = fake.serve(explorer(fake))
    agent = fake.agent(server, provider, **kwargs)
    env = gym.make("ACDB-L0-v0", panel="active", **env_kwargs_for("llm_raw"))
    return server, agent, run_episode(env, agent, manifest_index=0)


def marked_paths(body: Any, path: str = "") -> list[str]:
    """Where a request body carries ``cache_control``."""
    if isinstance(body, dict):
        here = [path] if "cache_control" in body else []
        return here + [p for k, v in body.items() for p in marked_paths(v, f"{path}/{k}")]
    if isinstance(body, list):
        return [p for k, v in enumerate(body) for p in marked_paths(v, f"{path}/{k}")]
    return []


@pytest.mark.slow
def test_anthropic_marks_tools_system_data_block_and_newest_message(
    fake: SimpleNamespace,
) -> None:
    server, _, result = play(fake, "anthropic")
    assert result.steps == 4
    first, last = server.requests[0].body, server.requests[-1].body
    assert sorted(marked_paths(first)) == [
        "/messages/0/content/0",
        "/system/0",
        f"/tools/{len(first['tools']) - 1}",
    ]
    n = len(last["messages"]) - 1
    assert sorted(marked_paths(last)) == [
        "/messages/0/content/0",
        f"/messages/{n}/content/0",
        "/system/0",
        f"/tools/{len(last['tools']) - 1}",
    ]
    assert last["messages"][n]["content"][0]["type"] == "tool_result"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cached_and_written_tokens_are_read_from_the_usage_fields(
    fake: SimpleNamespace, provider: str, tmp_path: Path
) -> None:
    server, _, result = play(fake, provider, transcript_path=tmp_path / "t.jsonl")
    usages = [r["usage"] for r in server.responses]
    if provider == "openai":
        cached = [u["prompt_tokens_details"]["cached_tokens"] for u in usages]
        written = [0] * len(usages)
        total = [u["prompt_tokens"] for u in usages]
    else:
        cached = [u["cache_read_input_tokens"] for u in usages]
        written = [u["cache_creation_input_tokens"] for u in usages]
        total = [u["input_tokens"] + c + w for u, c, w in zip(usages, cached, written, strict=True)]
    # Every request after the first repeats the previous one: most of it is a cache read.
    assert cached[0] == 0 and all(c > 0.5 * t for c, t in zip(cached[1:], total[1:], strict=True))
    assert (provider == "anthropic") == (written[0] > 0)
    stats = result.extra
    assert stats["tokens_in"] == sum(total)
    assert stats["tokens_cached_in"] == sum(cached)
    assert stats["tokens_cache_write"] == sum(written)
    replies = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    recorded = [e["usage"] for e in replies if e["event"] == "reply"]
    assert [u["tokens_cached_in"] for u in recorded] == cached
    assert [u["tokens_cache_write"] for u in recorded] == written


def test_without_prompt_cache_anthropic_gets_no_markers_and_reads_nothing(
    fake: SimpleNamespace,
) -> None:
    server, _, result = play(fake, "anthropic", prompt_cache=False)
    assert all(not marked_paths(r.body) for r in server.requests)
    assert isinstance(server.requests[0].body["system"], str)
    assert result.extra["tokens_cached_in"] == 0 and result.extra["tokens_cache_write"] == 0


def test_sweep_rows_keep_the_four_token_counts_and_old_rows_stay_readable(
    fake: SimpleNamespace, tmp_path: Path
) -> None:
    server = fake.serve(explorer(fake))
    config = SweepConfig(
        out=tmp_path,
        levels=("L0",),
        seeds=1,
        agents=("llm_raw", "oracle"),
        panels=("active",),
        agent_options={
            "provider": "anthropic",
            "model": "test-model",
            "base_url": server.base_url("anthropic"),
        },
        progress=False,
    )
    run_sweep(config)
    rows = {r.agent: r for r in read_results(tmp_path / "results.jsonl", mode="strict").rows}
    llm, oracle = rows["llm_raw"], rows["oracle"]
    assert llm.tokens_in and llm.tokens_cached_in and llm.tokens_cache_write
    # The newest message carries the last marker: every prompt token is read or written.
    assert llm.tokens_in == llm.tokens_cached_in + llm.tokens_cache_write
    assert llm.agent_stats is not None and "tokens_cached_in" not in llm.agent_stats
    # An agent that reports no caching writes no such keys: offline rows keep their bytes.
    assert "tokens_cached_in" not in oracle.to_dict()
    old = llm.to_dict()
    del old["tokens_cached_in"], old["tokens_cache_write"]
    again = ResultRow.from_dict(old, where=Location(tmp_path))
    assert again.tokens_cached_in is None and again.to_dict() == old


PRICES_TOML = """
[models."test-model"]
input = 3.0
cached_input = 0.3
cache_write = 3.75
output = 15.0

[models.other]
input = 1.0
output = 2.0
"""


def test_prices_from_toml_and_json_agree_and_defaults_are_the_input_price(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text(PRICES_TOML)
    toml = load_prices(tmp_path / "p.toml")
    data = {"test-model": vars(toml["test-model"]), "other": {"input": 1.0, "output": 2.0}}
    (tmp_path / "p.json").write_text(json.dumps(data))
    assert load_prices(tmp_path / "p.json") == toml
    assert toml["other"].cached_input == 1.0 and toml["other"].cache_write == 1.0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"m": {"input": 1.0}}, "need 'output'"),
        ({"m": {"input": 1.0, "output": -2}}, "must be >= 0"),
        ({"m": {"input": 1.0, "output": 2, "cache_read": 1}}, "unknown keys"),
        ({"m": {"input": "cheap", "output": 2}}, "must be a number"),
        ([1, 2], "table of models"),
    ],
)
def test_bad_price_tables_name_the_problem(tmp_path: Path, table: Any, message: str) -> None:
    (tmp_path / "p.json").write_text(json.dumps(table))
    with pytest.raises(ValueError, match=message):
        load_prices(tmp_path / "p.json")


def test_job_cost_by_hand(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text(PRICES_TOML)
    prices = load_prices(tmp_path / "p.toml")
    row = example_row(
        job_id="j", agent="llm_raw", panel="active", agent_config={"model": "test-model"},
        tokens_in=1_000_000, tokens_cached_in=600_000, tokens_cache_write=100_000,
        tokens_out=10_000,
    )  # fmt: skip
    old = {**row, "job_id": "k"}
    del old["tokens_cached_in"], old["tokens_cache_write"]
    unpriced = {**row, "job_id": "u", "agent_config": {"model": "unknown"}}
    costs = job_costs(as_rows([row, old, unpriced]), prices)
    assert [c.job_id for c in costs] == ["j", "k"]
    # 0.3 M plain * 3 + 0.6 M * 0.3 + 0.1 M * 3.75 + 0.01 M * 15
    assert costs[0].cost == pytest.approx(0.9 + 0.18 + 0.375 + 0.15)
    assert costs[0].cost_uncached == pytest.approx(3.0 + 0.15)
    assert costs[1].cost == pytest.approx(costs[1].cost_uncached)


@pytest.mark.slow
def test_report_with_prices_writes_costs_per_job_and_per_agent(
    fake: SimpleNamespace, tmp_path: Path
) -> None:
    server = fake.serve(explorer(fake))
    out = tmp_path / "run"
    run_sweep(
        SweepConfig(
            out=out,
            levels=("L0",),
            seeds=2,
            agents=("llm_raw",),
            panels=("active",),
            agent_options={
                "provider": "anthropic",
                "model": "test-model",
                "base_url": server.base_url("anthropic"),
            },
            progress=False,
        )
    )
    (tmp_path / "p.toml").write_text(PRICES_TOML)
    files = write_report(out, prices=tmp_path / "p.toml")
    lines = (out / "costs.csv").read_text().splitlines()
    assert len(lines) == 3 and lines[0].startswith("job_id,agent,panel,model")
    report = files.markdown.read_text()
    row = next(line for line in report.splitlines() if line.startswith("| llm_raw | active"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2:4] == ["test-model", "2"]
    assert float(cells[8]) < float(cells[10])  # caching made it cheaper
    other = tmp_path / "other.json"
    other.write_text('{"gpt-other": {"input": 1.0, "output": 2.0}}')
    with pytest.raises(ValueError, match=r"names none of the run's models \['test-model'\]"):
        write_report(out, prices=other)


def test_prices_for_a_run_without_llm_rows_are_an_error() -> None:
    row = example_row(agent_config={}, tokens_in=None)
    with pytest.raises(ValueError, match="no LLM rows with token counts"):
        check_prices_cover(as_rows([row]), {})
