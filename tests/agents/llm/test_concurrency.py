"""Concurrent LLM episodes: the same rows as a serial run, and one rate limit for all workers."""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from acdb_gym.agents.llm.ratelimit import RateLimiter
from acdb_gym.cli import main as cli_main
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.results import read_results
from acdb_gym.sweep.run import SweepConfig, run_sweep

TRUTH = get_level("v0", "L0").instance(0).dag


def sweep_rows(server: Any, out: Path, provider: str, **config: Any) -> dict[str, dict[str, Any]]:
    server.cache = type(server.cache)()  # a fresh provider cache for every run
    server.max_in_flight = 0
    run_sweep(
        SweepConfig(
            out=out,
            levels=("L0", "L1"),
            seeds=2,
            agents=("llm_raw", "oracle", "llm_stats"),
            panels=("active",),
            agent_options={
                "provider": provider,
                "model": "test-model",
                "base_url": server.base_url(provider),
            },
            progress=False,
            **config,
        )
    )
    rows = read_results(out / "results.jsonl", mode="strict").as_dicts()
    assert all(row["status"] == "ok" for row in rows)
    return {row["job_id"]: {k: v for k, v in row.items() if k != "wall_time"} for row in rows}


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_concurrent_sweep_rows_equal_the_serial_rows(
    fake: SimpleNamespace, provider: str, tmp_path: Path
) -> None:
    server = fake.serve(fake.competent(TRUTH), latency_s=0.05)
    serial = sweep_rows(server, tmp_path / "serial", provider)
    assert server.max_in_flight == 1
    concurrent = sweep_rows(server, tmp_path / "concurrent", provider, concurrency=4)
    assert server.max_in_flight == 4
    assert len(serial) == 12 and concurrent == serial
    llm = [row for row in serial.values() if row["agent"].startswith("llm_")]
    assert all(row["tokens_cached_in"] > 0 for row in llm)
    for row in llm:  # the same episodes, call for call (call ids are the server's serials)

        def events(run: str, job_id: str = row["job_id"]) -> list[Any]:
            path = tmp_path / run / "transcripts" / f"{job_id}.jsonl"
            lines = [json.loads(line) for line in path.read_text().splitlines()]
            return [(e["event"], e.get("action"), e.get("usage"), e.get("text")) for e in lines]

        assert events("serial") == events("concurrent")


@pytest.mark.slow
def test_concurrency_in_worker_processes_gives_the_same_rows(
    fake: SimpleNamespace, tmp_path: Path
) -> None:
    server = fake.serve(fake.competent(TRUTH), latency_s=0.05)
    serial = sweep_rows(server, tmp_path / "serial", "openai")
    pooled = sweep_rows(server, tmp_path / "pooled", "openai", workers=2, concurrency=3)
    assert pooled == serial and server.max_in_flight > 1


def test_cli_concurrency_with_a_shared_rate_limit(fake: SimpleNamespace, tmp_path: Path) -> None:
    server = fake.serve(fake.competent(TRUTH))
    out = tmp_path / "run"
    argv = [
        "sweep", "--levels", "L0", "--seeds", "3", "--agents", "llm_raw", "--panels", "active",
        "--provider", "openai", "--model", "m", "--base-url", server.base_url("openai"),
        "--concurrency", "3", "--requests-per-minute", "60", "--tokens-per-minute", "1e7",
        "--out", str(out), "--no-progress", "--no-report",
    ]  # fmt: skip
    assert cli_main(argv) == 0
    assert len(read_results(out / "results.jsonl", mode="strict").rows) == 3
    state = json.loads((out / "llm_rate_limit.json").read_text())
    assert set(state) == {"requests", "tokens"}
    assert state["requests"]["level"] < 58  # 6 requests were taken from a bucket of 60


def test_rate_limiter_grants_the_bucket_then_says_how_long_to_wait(tmp_path: Path) -> None:
    limiter = RateLimiter(tmp_path / "rate.json", requests_per_minute=3, tokens_per_minute=1000)
    assert [limiter.reserve(100) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.reserve(100)
    assert 19.0 < wait <= 20.0  # a third of a minute refills one request
    # A second limiter on the same file shares the buckets: no request left, 700 tokens.
    other = RateLimiter(tmp_path / "rate.json", requests_per_minute=3, tokens_per_minute=1000)
    assert 19.0 < other.reserve(1) <= 20.0
    tokens_only = RateLimiter(tmp_path / "rate.json", tokens_per_minute=1000)
    assert 11.5 < tokens_only.reserve(900) <= 12.0  # 200 more tokens take 12 s
    assert tokens_only.reserve(600) == 0.0


def test_rate_limiter_rejects_bad_limits(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="requests_per_minute must be"):
        RateLimiter(tmp_path / "r", requests_per_minute=0)
    with pytest.raises(ValueError, match="tokens_per_minute must be"):
        RateLimiter(tmp_path / "r", tokens_per_minute=float("inf"))


def _grab(path: str, attempts: int) -> int:
    limiter = RateLimiter(Path(path), requests_per_minute=10)
    return sum(limiter.reserve(1) == 0.0 for _ in range(attempts))


@pytest.mark.slow
def test_rate_limit_is_shared_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "rate.json")
    context = multiprocessing.get_context("spawn")
    start = time.time()
    with context.Pool(3) as pool:
        granted = pool.starmap(_grab, [(path, 8)] * 3)
    # 10 requests in the bucket, plus what refilled while the processes ran (10 per minute).
    refilled = (time.time() - start) * 10 / 60
    assert 10 <= sum(granted) <= 10 + int(refilled) + 1
