"""The MCP server: a real subprocess (``acdb mcp``) driven by the ``mcp`` client SDK over stdio,
with an invalid call, an unknown tool and a call after the end; its row and transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from acdb_gym.agents.llm import build_tools
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.integrations.episode import ENDED_ERROR, ToolEpisode
from acdb_gym.integrations.mcp_server import EpisodeServer
from acdb_gym.results import RESULTS_FILE, read_results


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def _session(run_dir: Path, mcp_command: Any) -> list[tuple[str, bool]]:
    truth = get_level("v0", "L0").instance(0).dag.edges()
    async with (
        stdio_client(mcp_command(run_dir, "--model", "tester")) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert "active causal discovery" in (init.instructions or "")
        listed = (await session.list_tools()).tools
        specs = build_tools("llm_raw", panel="active", n_nodes=5)
        assert [t.name for t in listed] == ["observe", *(s.name for s in specs)]
        assert [t.input_schema for t in listed[1:]] == [s.parameters for s in specs]
        calls = [
            ("observe", {}),
            ("intervene", {"variable": "X0", "value": 2.0}),
            ("intervene", {"variable": "X42", "value": 2.0}),  # invalid: a step
            ("fly", {}),  # unknown tool: a step
            ("submit_graph", {"directed_edges": [[f"X{i}", f"X{j}"] for i, j in truth]}),
            (
                "submit_graph",
                {"directed_edges": [[f"X{i}", f"X{j}"] for i, j in truth], "undirected_edges": []},
            ),
            ("intervene", {"variable": "X1", "value": 1.0}),  # after the end
        ]
        seen = []
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            seen.append((_text(result), result.is_error))
        return seen


@pytest.mark.slow
def test_a_client_session_over_stdio(tmp_path: Path, mcp_command: Any) -> None:
    seen = anyio.run(_session, tmp_path, mcp_command)
    replay = ToolEpisode(ladder="v0", level="L0", manifest_index=0)
    observe, *played = seen
    assert observe == (f"{replay.system_prompt}\n\n{replay.session_prompt}", False)
    assert [error for _, error in played] == [False, True, True, True, False, True]
    assert "Intervention 1" in played[0][0] and "X42" in played[1][0]
    assert "unknown tool 'fly'" in played[2][0]
    assert "missing required argument(s) ['undirected_edges']" in played[3][0]
    assert "[Budget remaining: 2. Steps remaining: 12.]" in played[3][0]
    assert played[4][0].endswith("The episode has ended.")
    assert played[5][0] == ENDED_ERROR

    [row] = read_results(tmp_path / RESULTS_FILE, mode="strict").rows
    assert (row.agent, dict(row.agent_config), row.status) == (
        "mcp:llm_raw",
        {"model": "tester"},
        "ok",
    )
    assert (row.steps, row.invalid_actions, row.interventions_used) == (5, 3, 1)
    assert (row.directed_f1, row.efficiency) == (1.0, 1.0)
    transcript = [
        json.loads(line) for line in Path(row.agent_stats["transcript"]).read_text().splitlines()
    ]  # type: ignore[index]
    assert [e["event"] for e in transcript] == ["episode_start"] + ["call"] * 6 + [
        "episode_end",
        "call",
    ]
    assert transcript[-2]["score"]["directed_f1"] == 1.0


def test_a_client_that_leaves_early_leaves_a_failed_row(tmp_path: Path) -> None:
    episode = ToolEpisode(ladder="v1", level="L2", manifest_index=1, variant="llm_stats")
    served = EpisodeServer(episode, run_dir=tmp_path, agent_config={"model": "quitter"})
    assert not served.call("correlation", {"i": "X0", "j": "X1"}).is_error
    served.close()
    [row] = read_results(tmp_path / RESULTS_FILE, mode="strict").rows
    assert (row.status, row.agent, row.tools, row.directed_f1) == (
        "failed",
        "mcp:llm_stats",
        "stats",
        None,
    )
    assert row.error == "the MCP client left after 1 step(s), before the episode ended"
    assert row.job_id == served.job_id and served.transcript_path.exists()


async def _hostile_session(run_dir: Path, mcp_command: Any) -> list[tuple[str, bool]]:
    big = "X" * 2_000_000
    async with (
        stdio_client(mcp_command(run_dir)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        calls: list[tuple[str, dict[str, Any]]] = [
            ("intervene", {"variable": "X0", "value": 10**400}),
            ("intervene", {"variable": "X" + "9" * 5000, "value": 1.0}),
            ("intervene", {"variable": "X\u0661", "value": 1.0}),
            ("intervene", {"variable": big, "value": 1.0}),
            (
                "submit_graph",
                {"directed_edges": [["X0", "X" + "9" * 5000]], "undirected_edges": []},
            ),
            *[("observe", {"junk": big})] * 3,
            *[("observe", {})] * 40,
            ("submit_graph", {"directed_edges": [], "undirected_edges": []}),
            *[("intervene", {"variable": big, "value": 1.0})] * 3,
            *[("observe", {})] * 20,
        ]
        seen = []
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            seen.append((_text(result), result.is_error))
        return seen


@pytest.mark.slow
def test_arguments_no_number_holds_are_invalid_steps_and_transcripts_stay_bounded(
    tmp_path: Path, mcp_command: Any
) -> None:
    seen = anyio.run(_hostile_session, tmp_path, mcp_command)
    assert [error for _, error in seen[:5]] == [True] * 5
    assert "finite number" in seen[0][0] and "variable must be" in seen[1][0]
    assert "variable must be" in seen[2][0] and "each endpoint in directed_edges" in seen[4][0]
    assert all(len(text) < 5_000 for text, _ in seen[:5])
    [row] = read_results(tmp_path / RESULTS_FILE, mode="strict").rows
    assert (row.status, row.steps, row.invalid_actions) == ("ok", 6, 5)
    transcript = Path(row.agent_stats["transcript"])  # type: ignore[index]
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    # About 20 MB was sent; each value is capped at 64 KiB and free calls past 16 are counted.
    assert transcript.stat().st_size < 1_500_000
    calls = [e for e in events if e["event"] == "call"]
    assert len(calls) == 6 + 16
    end = next(e for e in events if e["event"] == "episode_end")
    assert end["unrecorded_calls"] == 43 - 16 + 0


@pytest.mark.slow
def test_a_finished_job_and_a_locked_run_directory_are_refused(
    tmp_path: Path, mcp_command: Any
) -> None:
    import subprocess

    from acdb_gym.sweep.lock import RunDirectoryLock

    params = mcp_command(tmp_path, "--model", "tester")

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [params.command, *params.args],
            env=params.env,
            input="",
            capture_output=True,
            text=True,
            timeout=120,
        )

    with RunDirectoryLock(tmp_path):
        locked = run()
    assert locked.returncode == 2 and "Traceback" not in locked.stderr
    assert locked.stderr.count("\n") == 1 and "is in use" in locked.stderr

    episode = ToolEpisode(ladder="v0", level="L0", manifest_index=0)
    served = EpisodeServer(episode, run_dir=tmp_path, agent_config={"model": "tester"})
    served.call("submit_graph", {"directed_edges": [], "undirected_edges": []})
    served.close()
    before = served.transcript_path.read_bytes()

    again = run()
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert again.stderr.count("\n") == 1 and "already has an ok row" in again.stderr
    assert served.transcript_path.read_bytes() == before
    rows = read_results(tmp_path / RESULTS_FILE, mode="strict").rows
    assert [row.status for row in rows] == ["ok"]


def test_a_negative_repeat_is_refused(tmp_path: Path) -> None:
    from acdb_gym.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["mcp", "--repeat", "-5", "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    assert not (tmp_path / RESULTS_FILE).exists()


async def _three_episodes(run_dir: Path, mcp_command: Any) -> dict[str, Any]:
    from acdb_gym import __version__

    async with (
        stdio_client(mcp_command(run_dir, "--multi", "--model", "tester")) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.server_info.version == __version__
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert listed["observe"].annotations.read_only_hint is True
        assert listed["start_episode"].annotations.destructive_hint is True
        assert listed["intervene"].output_schema is not None
        structured = []
        # Episode 1 is the one the options name (v0 L0 seed 0); then two more.
        for start in (None, ("v0", "L1", 3), ("v1", "L0", 2)):
            if start is not None:
                ladder, level, index = start
                started = await session.call_tool(
                    "start_episode", {"ladder": ladder, "level": level, "seed_index": index}
                )
                assert not started.is_error, _text(started)
                assert started.structured_content["seed_index"] == index
            names = [t.name for t in (await session.list_tools()).tools]
            assert "submit_graph" in names and "start_episode" in names
            await session.call_tool("intervene", {"variable": "X1", "value": 1.0})
            result = await session.call_tool(
                "submit_graph", {"directed_edges": [["X0", "X1"]], "undirected_edges": []}
            )
            assert result.structured_content["ended"] is True
            structured.append(result.structured_content)
        repeated = await session.call_tool(
            "start_episode", {"ladder": "v0", "level": "L1", "seed_index": 3}
        )
        bad = await session.call_tool("start_episode", {"ladder": "v0", "level": "L9"})
        return {
            "structured": structured,
            "repeated": (_text(repeated), repeated.is_error),
            "bad": (_text(bad), bad.is_error),
        }


@pytest.mark.slow
def test_one_server_process_serves_three_episodes(tmp_path: Path, mcp_command: Any) -> None:
    seen = anyio.run(_three_episodes, tmp_path, mcp_command)
    rows = read_results(tmp_path / RESULTS_FILE, mode="strict").rows
    assert [(r.ladder, r.level, r.manifest_index, r.status) for r in rows] == [
        ("v0", "L0", 0, "ok"),
        ("v0", "L1", 3, "ok"),
        ("v1", "L0", 2, "ok"),
    ]
    assert len({row.job_id for row in rows}) == 3
    assert [s["job_id"] for s in seen["structured"]] == [row.job_id for row in rows]
    for row, structured in zip(rows, seen["structured"], strict=True):
        assert (row.steps, row.directed_f1) == (2, structured["score"]["directed_f1"])
        transcript = (tmp_path / "transcripts" / f"{row.job_id}.jsonl").read_text()
        events = [json.loads(line)["event"] for line in transcript.splitlines()]
        assert events == ["episode_start", "call", "call", "episode_end"]
    # The same job again is refused (it has an ok row); a bad start changes nothing.
    assert seen["repeated"][1] and "already has an ok row" in seen["repeated"][0]
    assert seen["bad"][1] and "missing required argument(s) ['seed_index']" in seen["bad"][0]
    assert len(read_results(tmp_path / RESULTS_FILE, mode="strict").rows) == 3


async def _start_first(run_dir: Path, mcp_command: Any) -> None:
    async with (
        stdio_client(mcp_command(run_dir, "--multi", "--model", "tester")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        # The episode the options name is never played: start_episode is the first call.
        started = await session.call_tool(
            "start_episode", {"ladder": "v0", "level": "L1", "seed_index": 3}
        )
        assert not started.is_error, _text(started)
        await session.call_tool("observe", {})
        await session.call_tool(
            "submit_graph", {"directed_edges": [["X0", "X1"]], "undirected_edges": []}
        )
        # The next one is started and left before any step.
        await session.call_tool("start_episode", {"ladder": "v0", "level": "L2", "seed_index": 0})


@pytest.mark.slow
def test_an_episode_never_played_records_no_row(tmp_path: Path, mcp_command: Any) -> None:
    anyio.run(_start_first, tmp_path, mcp_command)
    rows = read_results(tmp_path / RESULTS_FILE, mode="strict").rows
    assert [(r.ladder, r.level, r.manifest_index, r.status) for r in rows] == [
        ("v0", "L1", 3, "ok")
    ]
    unplayed = [
        path
        for path in (tmp_path / "transcripts").iterdir()
        if '"status": "not played"' in path.read_text()
    ]
    assert len(unplayed) == 2  # the first episode and the last one, each with its transcript


@pytest.mark.slow
def test_a_request_nested_too_deeply_gets_an_error_reply(tmp_path: Path, mcp_command: Any) -> None:
    """A JSON-RPC request nested 300 levels deep (past the SDK's parser) is answered with a
    JSON-RPC error carrying its id, and the server goes on serving."""
    import subprocess

    params = mcp_command(tmp_path, "--model", "tester")
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    call = {"name": "intervene", "arguments": {"variable": "X0", "value": 1.0, "deep": deep}}
    lines = [
        hello,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines) + "[" * 100_000 + "\n"
    done = subprocess.run(
        [params.command, *params.args],
        env=params.env,
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {reply.get("id"): reply for reply in replies}
    assert "error" in by_id[2] and "nested" in by_id[2]["error"]["message"], replies
    assert "result" in by_id[3]  # still serving after the bad request
    assert by_id[None]["error"]["code"] == -32700  # a line that is no JSON at all: a parse error
