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
