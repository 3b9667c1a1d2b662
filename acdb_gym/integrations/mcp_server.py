"""An ACDB episode as an MCP server over stdio: ``acdb mcp --ladder v1 --level L2 --out RUN_DIR``.

Needs ``pip install 'acdb_gym[mcp]'``. Any MCP-capable agent (an IDE assistant, an agent SDK,
``mcp`` client code) can then play one episode with the LLM agents' protocol
(:class:`~acdb_gym.integrations.episode.ToolEpisode`):

- ``observe`` returns the task (the LLM agents' system prompt) and the session (variables,
  budget, step limit, the observational data); it is free;
- ``intervene``, the statistics tools (``llm_stats``) and ``submit_graph`` are the LLM agents'
  tools with the same JSON schemas; every call is one step, valid or not (an unknown tool or bad
  arguments is an error result, ``isError`` true, that still uses a step), up to the env's step
  limit;
- after the end (a valid submission, or the step limit: the empty graph is scored) every call
  returns an error result and changes nothing.

When the episode ends, its row (agent ``mcp:<variant>``, the sweep's job id, every score field)
is appended to ``RUN_DIR/results.jsonl`` and its transcript is in
``RUN_DIR/transcripts/<job_id>.jsonl``; ``acdb report RUN_DIR`` shows it beside the sweep's
agents. A client that leaves before the end leaves a ``failed`` row.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:
    import anyio
    import mcp.types as mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
except ImportError as error:  # pragma: no cover - the extra is part of dev
    raise ImportError("the MCP server needs mcp: pip install 'acdb_gym[mcp]'") from error

from acdb_gym.agents.llm.records import Redactor, TranscriptWriter
from acdb_gym.agents.llm.tools import Variant
from acdb_gym.core.types import Panel
from acdb_gym.integrations.episode import (
    ENDED_ERROR,
    ToolEpisode,
    ToolOutcome,
    episode_record,
    job_id,
    result_row,
)
from acdb_gym.results import RESULTS_FILE, ResultsAppender

__all__ = ["AGENT_PREFIX", "OBSERVE_TOOL", "EpisodeServer", "build_server", "run_stdio"]

AGENT_PREFIX = "mcp:"
"""Agent names of MCP rows are this prefix and the LLM variant."""

OBSERVE_TOOL = mcp_types.Tool(
    name="observe",
    description=(
        "Read the task: the rules of the session, the variables, the intervention budget, the "
        "step limit and the observational data. Free: it does not use a step. Call it first."
    ),
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
)


class EpisodeServer:
    """One episode behind an MCP server: its tools, its transcript and its result row.

    Args:
        episode: the episode to serve.
        run_dir: the run directory the row and the transcript go to.
        agent_config: what names the player in the report (e.g. ``{"model": "..."}``); part of
            the job id.
        repeat: the repeat number of the job.
    """

    def __init__(
        self,
        episode: ToolEpisode,
        *,
        run_dir: Path,
        agent_config: Mapping[str, Any] | None = None,
        repeat: int = 0,
    ) -> None:
        self.episode = episode
        self.run_dir = Path(run_dir)
        self.agent = f"{AGENT_PREFIX}{episode.variant}"
        self.agent_config = dict(agent_config or {})
        self.repeat = repeat
        identity = {
            "ladder": episode.ladder,
            "level": episode.level,
            "manifest_index": episode.manifest_index,
            "seed": episode.seed,
            "panel": episode.panel,
            "tools": episode.env_tools,
        }
        self._identity = identity
        self.job_id = job_id(
            identity, agent=self.agent, agent_config=self.agent_config, repeat=repeat
        )
        self.transcript_path = self.run_dir / "transcripts" / f"{self.job_id}.jsonl"
        self._transcript = TranscriptWriter(self.transcript_path, Redactor([]))
        self._transcript.write(
            "episode_start",
            agent=self.agent,
            agent_config=self.agent_config,
            env={**identity, "variant": episode.variant, "budget": episode.budget},
            max_steps=episode.max_steps,
            tools=[tool.to_dict() for tool in episode.tools],
            system=episode.system_prompt,
            session=episode.session_prompt,
        )
        self._start = time.perf_counter()
        self.written = False

    def tools(self) -> list[mcp_types.Tool]:
        """``observe`` and the episode's tools."""
        return [OBSERVE_TOOL] + [
            mcp_types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
            for t in self.episode.tools
        ]

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolOutcome:
        """Run one call; write the row and close the transcript when the episode ends."""
        episode = self.episode
        if name == OBSERVE_TOOL.name and not episode.ended:
            outcome = ToolOutcome(
                f"{episode.system_prompt}\n\n{episode.session_prompt}", False, False
            )
        elif episode.ended:
            outcome = ToolOutcome(ENDED_ERROR, True, True)
        else:
            outcome = episode.call(name, {} if arguments is None else dict(arguments))
        self._transcript.write(
            "call",
            name=name,
            arguments=arguments,
            step=episode.steps,
            is_error=outcome.is_error,
            text=outcome.text,
        )
        if outcome.ended and not self.written:
            self._finish(None)
        return outcome

    def close(self) -> None:
        """End the session: a client that leaves before the end leaves a ``failed`` row."""
        if not self.written:
            self._finish(
                f"the MCP client left after {self.episode.steps} step(s), before the episode ended"
            )
        self.episode.close()

    def _finish(self, error: str | None) -> None:
        wall_time = time.perf_counter() - self._start
        record = self._identity if error is not None else episode_record(self.episode)
        row = result_row(
            record,
            agent=self.agent,
            agent_config=self.agent_config,
            repeat=self.repeat,
            wall_time=wall_time,
            agent_stats={"transcript": str(self.transcript_path)},
            error=error,
        )
        with ResultsAppender(self.run_dir / RESULTS_FILE) as appender:
            appender.append(row)
        self._transcript.write(
            "episode_end", status=row.status, error=error, score=record.get("score")
        )
        self.written = True


def build_server(served: EpisodeServer) -> Server[Any]:
    """The low-level MCP server of an episode: ``tools/list`` and ``tools/call``."""

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=served.tools())

    async def call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        outcome = served.call(params.name, params.arguments)
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=outcome.text)], is_error=outcome.is_error
        )

    return Server(
        "acdb",
        instructions=served.episode.system_prompt,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run_stdio(served: EpisodeServer) -> None:
    """Serve the episode over stdin/stdout until the client closes the connection."""
    server = build_server(served)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        served.close()


def main(args: argparse.Namespace) -> int:
    """``acdb mcp``: serve one episode (options: ``acdb mcp --help``)."""
    variant: Variant = args.variant
    panel: Panel = args.panel
    episode = ToolEpisode(
        ladder=args.ladder,
        level=args.level,
        manifest_index=args.seed_index,
        variant=variant,
        panel=panel,
    )
    config = {"model": args.model} if args.model else {}
    run_stdio(EpisodeServer(episode, run_dir=args.out, agent_config=config, repeat=args.repeat))
    return 0
