"""The three ways in, against one local OpenAI-compatible server: ``acdb sweep`` (llm_raw),
``inspect eval`` (inspect's OpenAI provider) and an MCP client session (an agent that relays
the model's tool calls to ``acdb mcp``). Each plays a full episode; ``acdb report`` then shows
the three agents side by side."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("mcp")

import anyio
import openai
from click.testing import CliRunner
from inspect_ai._cli.main import inspect as inspect_cli  # the `inspect` command itself
from mcp import ClientSession
from mcp.client.stdio import stdio_client

import acdb_gym.integrations.inspect_task
from acdb_gym import cli
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.report.episodes import episode_order
from acdb_gym.results import RESULTS_FILE, read_results

TASK_FILE = Path(acdb_gym.integrations.inspect_task.__file__)
MODEL = "acdb-local"


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def _mcp_agent(parameters: Any, base_url: str) -> int:
    """A minimal MCP-capable agent: the model's tool calls go to the MCP server."""
    client = openai.OpenAI(base_url=base_url, api_key="EMPTY")
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        listed = (await session.list_tools()).tools
        tools: Any = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in listed
            if t.name != "observe"
        ]
        observed = _text(await session.call_tool("observe", {}))
        messages: list[Any] = [
            {"role": "system", "content": init.instructions},
            {"role": "user", "content": observed},
        ]
        for turn in range(1, 17):
            reply = client.chat.completions.create(
                model=MODEL, messages=messages, tools=tools, tool_choice="required"
            )
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            ended = False
            for call in message.tool_calls or []:
                arguments = json.loads(call.function.arguments)  # type: ignore[union-attr]
                result = await session.call_tool(call.function.name, arguments)  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": _text(result)})
                ended = ended or _text(result).endswith("The episode has ended.")
            if ended:
                return turn
    raise AssertionError("the MCP episode did not end within 16 turns")


@pytest.mark.slow
def test_three_ways_in_one_report(
    fake: SimpleNamespace, mcp_command: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake.serve(fake.competent(get_level("v0", "L0").instance(0).dag))
    url = server.base_url("openai")
    run = tmp_path / "run"
    sweep = ["sweep", "--ladder", "v0", "--levels", "L0", "--seeds", "1", "--agents", "llm_raw"]
    sweep += ["--panels", "active", "--out", str(run), "--provider", "openai", "--model", MODEL]
    assert cli.main([*sweep, "--base-url", url, "--no-progress", "--no-report"]) == 0

    monkeypatch.setenv("OPENAI_API_KEY", fake.KEY)
    logs = tmp_path / "logs"
    args = ["eval", f"{TASK_FILE}@acdb", "-T", "ladder=v0", "-T", "levels=L0", "-T", "seeds=1"]
    args += ["--model", f"openai/{MODEL}", "--model-base-url", url, "-M", "responses_api=false"]
    outcome = CliRunner().invoke(inspect_cli, [*args, "--log-dir", str(logs), "--display", "none"])
    assert outcome.exit_code == 0, outcome.output
    assert cli.main(["inspect-import", *map(str, logs.glob("*.eval")), "--out", str(run)]) == 0

    assert anyio.run(_mcp_agent, mcp_command(run, "--model", MODEL), url) == 2

    bodies = [request.body for request in server.requests]
    assert len(bodies) == 6  # two turns each: intervene, then submit
    assert all(body["tool_choice"] == "required" for body in bodies)
    assert [b["tools"][0]["function"]["name"] for b in bodies] == ["intervene"] * 6
    rows = read_results(run / RESULTS_FILE, mode="strict").rows
    assert sorted(row.agent for row in rows) == ["inspect:llm_raw", "llm_raw", "mcp:llm_raw"]
    for row in rows:
        assert (row.status, row.steps, row.directed_f1, row.interventions_used) == ("ok", 2, 1.0, 1)

    assert cli.main(["report", str(run)]) == 0
    report = (run / "report.md").read_text()
    for label in (
        f"llm_raw[{MODEL}] (active)",
        f"inspect:llm_raw[openai/{MODEL}] (active)",
        f"mcp:llm_raw[{MODEL}] (active)",
    ):
        assert label in report
    # Each row's episode page shows its transcript; an LLM or inspect row's replies carry the
    # tokens the row counts (an MCP client's tokens are the client's own, so it has only calls).
    for index, row in enumerate(
        rows_in_file := episode_order(read_results(run / RESULTS_FILE, mode="strict").rows)
    ):
        page = (run / "episodes" / f"e{index}.html").read_text(encoding="utf-8")
        assert "<h2>Transcript</h2>" in page, row.agent
        tokens = [
            int(t)
            for t in re.findall(
                r"<td>reply</td><td>\d+</td><td><pre>.*?</pre></td><td>(\d+)</td>", page, flags=re.S
            )
        ]
        if row.agent.startswith("mcp:"):
            assert "<td>call</td>" in page and not tokens
        else:
            assert len(tokens) == 2 and sum(tokens) == row.tokens_in, row.agent
    assert len(rows_in_file) == 3
