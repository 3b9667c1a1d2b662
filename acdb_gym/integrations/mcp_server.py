"""ACDB episodes as an MCP server over stdio: ``acdb mcp --ladder v1 --level L2 --out RUN_DIR``.

Over 500 lines because the server's two modes (one episode, or a run directory of many) share
its tool list, transcript limits and run-directory rules, which are its security surface
(SECURITY.md) and read best in one place; the episode protocol itself is
:class:`~acdb_gym.integrations.episode.ToolEpisode`.

Needs ``pip install 'acdb_gym[mcp]'``. Any MCP-capable agent (an IDE assistant, an agent SDK,
``mcp`` client code) can then play episodes with the LLM agents' protocol
(:class:`~acdb_gym.integrations.episode.ToolEpisode`):

- ``observe`` returns the task (the LLM agents' system prompt) and the session (variables,
  budget, step limit, the observational data); it is free;
- ``intervene``, the statistics tools (``llm_stats``) and ``submit_graph`` are the LLM agents'
  tools with the same JSON schemas; every call is one step, valid or not (an unknown tool or bad
  arguments is an error result, ``isError`` true, that still uses a step), up to the env's step
  limit;
- after the end (a valid submission, or the step limit: the empty graph is scored) every call
  returns an error result and changes nothing;
- ``start_episode`` (with ``--multi``) starts the next episode by ladder, level and seed index
  (an episode left unfinished after a step gets a ``failed`` row, one never played none); the tool list then changes (the server
  sends ``notifications/tools/list_changed``), since the variable names depend on ``d``.

Every tool carries annotations (``observe`` is read-only and idempotent; none reaches outside
the server) and an output schema; every result holds structured content (the episode, its
steps, whether it ended and its score) beside the text.

When the episode ends, its row (agent ``mcp:<variant>``, the sweep's job id, every score field)
is appended to ``RUN_DIR/results.jsonl`` and its transcript is in
``RUN_DIR/transcripts/<job_id>.jsonl``; ``acdb report RUN_DIR`` shows it beside the sweep's
agents. A client that leaves before the end, after a step, leaves a ``failed`` row; an episode
never played leaves none.

The server holds the run directory's lock (:mod:`acdb_gym.sweep.lock`) while it runs, so it never
runs beside a sweep or a second server there; it refuses a job that already has an ``ok`` row
(its transcript is never overwritten; use another ``--repeat``). Transcripts record each value
capped as the LLM agents' are (:func:`~acdb_gym.agents.llm.records.capped_record`), and only
the first :data:`MAX_FREE_CALLS_RECORDED` free calls (``observe``, calls after the end) of an
episode, so no client can grow a transcript without bound.
"""

from __future__ import annotations

import argparse
import sys
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

from acdb_gym import __version__
from acdb_gym.agents.llm.function_tools import Variant
from acdb_gym.agents.llm.records import Redactor, TranscriptWriter, capped_record
from acdb_gym.core.types import Panel
from acdb_gym.integrations.episode import (
    ENDED_ERROR,
    ToolEpisode,
    ToolOutcome,
    episode_record,
    job_id,
    result_row,
)
from acdb_gym.integrations.mcp_stdio import GuardedLines
from acdb_gym.results import RESULTS_FILE, ResultsAppender, read_results
from acdb_gym.sweep.lock import RunDirectoryLock

__all__ = [
    "AGENT_PREFIX",
    "DEFAULT_OUT",
    "MAX_FREE_CALLS_RECORDED",
    "OBSERVE_TOOL",
    "START_TOOL",
    "EpisodeServer",
    "JobDoneError",
    "McpRun",
    "build_server",
    "run_stdio",
]

DEFAULT_OUT = Path("runs") / "mcp"
"""``acdb mcp``'s run directory when ``--out`` is not given."""

MAX_FREE_CALLS_RECORDED = 16
"""Free calls (``observe``, any call after the end) a transcript records per episode; later ones
are counted, not written."""

AGENT_PREFIX = "mcp:"
"""Agent names of MCP rows are this prefix and the LLM variant."""

OBSERVE_TOOL = mcp_types.Tool(
    name="observe",
    description=(
        "Read the task: the rules of the session, the variables, the intervention budget, the "
        "step limit and the observational data. Free: it does not use a step. Call it first."
    ),
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    annotations=mcp_types.ToolAnnotations(
        read_only_hint=True, idempotent_hint=True, open_world_hint=False
    ),
)

START_TOOL_NAME = "start_episode"

_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {"type": ["string", "null"]},
        "ladder": {"type": ["string", "null"]},
        "level": {"type": ["string", "null"]},
        "seed_index": {"type": ["integer", "null"]},
        "steps": {"type": "integer", "minimum": 0},
        "invalid_actions": {"type": "integer", "minimum": 0},
        "ended": {"type": "boolean"},
        "score": {"type": ["object", "null"]},
    },
    "required": ["job_id", "steps", "invalid_actions", "ended", "score"],
}
"""What every result's structured content holds: the episode served and where it stands."""


def _start_tool(ladders: list[str]) -> mcp_types.Tool:
    return mcp_types.Tool(
        name=START_TOOL_NAME,
        description=(
            "Start the next episode: ladder, level and manifest seed index. An episode still "
            "running is abandoned (recorded as failed). The other tools then act on the new "
            "episode; list the tools again, since the variable names depend on its size. Free."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "ladder": {"type": "string", "enum": ladders},
                "level": {"type": "string", "description": "A level of the ladder, e.g. L2."},
                "seed_index": {"type": "integer", "minimum": 0},
                "repeat": {"type": "integer", "minimum": 0, "default": 0},
            },
            "required": ["ladder", "level", "seed_index"],
            "additionalProperties": False,
        },
        output_schema=_OUTPUT_SCHEMA,
        annotations=mcp_types.ToolAnnotations(
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )


START_TOOL = _start_tool(["v0", "v1"])
"""The ``start_episode`` tool (its ``ladder`` enum is filled with every ladder when served)."""


class JobDoneError(ValueError):
    """The run directory already holds an ``ok`` row of this job."""


class EpisodeServer:
    """One episode behind an MCP server: its tools, its transcript and its result row.

    Args:
        episode: the episode to serve.
        run_dir: the run directory the row and the transcript go to.
        agent_config: what names the player in the report (e.g. ``{"model": "..."}``); part of
            the job id.
        repeat: the repeat number of the job.

    Raises:
        JobDoneError: ``run_dir`` already holds an ``ok`` row of this job (its transcript is
            left alone).
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
        if self.job_id in _finished_jobs(self.run_dir):
            raise JobDoneError(
                f"job {self.job_id} ({episode.ladder}/{episode.level} seed index "
                f"{episode.manifest_index}, repeat {repeat}) already has an ok row in "
                f"{self.run_dir / RESULTS_FILE}; choose another repeat or run directory"
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
        self._free_calls = 0
        self.unrecorded_calls = 0
        self.written = False

    def tools(self) -> list[mcp_types.Tool]:
        """``observe`` and the episode's tools, with annotations and output schemas."""
        return [OBSERVE_TOOL.model_copy(update={"output_schema": _OUTPUT_SCHEMA})] + [
            mcp_types.Tool(
                name=t.name,
                description=t.description,
                input_schema=t.parameters,
                output_schema=_OUTPUT_SCHEMA,
                annotations=mcp_types.ToolAnnotations(
                    read_only_hint=False,
                    destructive_hint=False,
                    idempotent_hint=False,
                    open_world_hint=False,
                ),
            )
            for t in self.episode.tools
        ]

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolOutcome:
        """Run one call; write the row and close the transcript when the episode ends."""
        episode = self.episode
        free = name == OBSERVE_TOOL.name or episode.ended
        if name == OBSERVE_TOOL.name and not episode.ended:
            outcome = ToolOutcome(
                f"{episode.system_prompt}\n\n{episode.session_prompt}", False, False
            )
        elif episode.ended:
            outcome = ToolOutcome(ENDED_ERROR, True, True)
        else:
            outcome = episode.call(name, {} if arguments is None else dict(arguments))
        self._record(name, arguments, outcome, free=free)
        if outcome.ended and not self.written:
            self._finish(None)
        return outcome

    def structured(self) -> dict[str, Any]:
        """The structured content of a result: the episode and where it stands."""
        episode = self.episode
        return {
            "job_id": self.job_id,
            "ladder": episode.ladder,
            "level": episode.level,
            "seed_index": episode.manifest_index,
            "steps": episode.steps,
            "invalid_actions": episode.invalid_actions,
            "ended": episode.ended,
            "score": episode.score,
        }

    def close(self) -> None:
        """End the session: a client that leaves before the end, after a step, leaves a
        ``failed`` row; an episode never played (no step taken: ``--multi``'s first call was
        ``start_episode``, or the client left at once) leaves no row, only its transcript's
        ``episode_end`` with status ``not played``."""
        if not self.written and self.episode.steps == 0:
            self._transcript.write("episode_end", status="not played", error=None, score=None)
            self.written = True
        elif not self.written:
            self._finish(
                f"the MCP client left after {self.episode.steps} step(s), before the episode ended"
            )
        self.episode.close()

    def _record(self, name: str, arguments: Any, outcome: ToolOutcome, *, free: bool) -> None:
        """Write a call to the transcript, each value capped; free calls past the bound are
        only counted."""
        if free:
            self._free_calls += 1
            if self._free_calls > MAX_FREE_CALLS_RECORDED:
                self.unrecorded_calls += 1
                return
        self._transcript.write(
            "call",
            name=capped_record(name),
            arguments=capped_record(arguments),
            step=self.episode.steps,
            is_error=outcome.is_error,
            text=capped_record(outcome.text),
        )

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
            "episode_end",
            status=row.status,
            error=error,
            score=record.get("score"),
            unrecorded_calls=self.unrecorded_calls,
        )
        self.written = True


def _finished_jobs(run_dir: Path) -> set[str]:
    """The job ids with an ``ok`` row in the run directory's results file."""
    read = read_results(Path(run_dir) / RESULTS_FILE, mode="lenient")
    return {row.job_id for row in read.rows if row.status == "ok"}


class McpRun:
    """What one ``acdb mcp`` process serves: the current episode and, with ``multi``, the
    ``start_episode`` tool that replaces it, every episode scored into the same run directory.

    Args:
        first: the first episode's server.
        variant: the tools every episode offers.
        panel: every episode's panel.
        multi: offer ``start_episode``.
    """

    def __init__(
        self, first: EpisodeServer, *, variant: Variant, panel: Panel, multi: bool
    ) -> None:
        self.current = first
        self.variant: Variant = variant
        self.panel: Panel = panel
        self.multi = multi
        self.episodes = 1

    def tools(self) -> list[mcp_types.Tool]:
        """The current episode's tools, then ``start_episode`` with ``multi``."""
        tools = self.current.tools()
        if self.multi:
            from acdb_gym.core.ladders.shipped import ALL_LADDERS

            tools.append(_start_tool(sorted(ALL_LADDERS)))
        return tools

    def call(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> tuple[ToolOutcome, dict[str, Any], bool]:
        """Run one call: its outcome, its structured content, and whether the tools changed."""
        if self.multi and name == START_TOOL_NAME:
            outcome = self._start(arguments)
            return outcome, self.current.structured(), not outcome.is_error
        outcome = self.current.call(name, arguments)
        return outcome, self.current.structured(), False

    def close(self) -> None:
        """End the session (the current episode's row when it has none)."""
        self.current.close()

    def _start(self, arguments: Mapping[str, Any] | None) -> ToolOutcome:
        arguments = dict(arguments or {})
        try:
            ladder, level, index, repeat = _start_arguments(arguments)
            episode = ToolEpisode(
                ladder=ladder,
                level=level,
                manifest_index=index,
                variant=self.variant,
                panel=self.panel,
            )
        except (ValueError, KeyError) as error:
            return ToolOutcome(f"Error: start_episode: {_one_line(error)}", True, False)
        previous = self.current
        try:
            served = EpisodeServer(
                episode,
                run_dir=previous.run_dir,
                agent_config=previous.agent_config,
                repeat=repeat,
            )
        except JobDoneError as error:
            episode.close()
            return ToolOutcome(f"Error: start_episode: {error}", True, False)
        previous.close()
        self.current = served
        self.episodes += 1
        text = (
            f"Episode {self.episodes} started: {ladder}/{level} seed index {index} "
            f"(job {served.job_id}). List the tools again: the variables are "
            f"X0..X{episode.n_nodes - 1}.\n\n{episode.system_prompt}\n\n{episode.session_prompt}"
        )
        return ToolOutcome(text, False, False)


def _start_arguments(arguments: Mapping[str, Any]) -> tuple[str, str, int, int]:
    """``start_episode``'s arguments, checked."""
    unexpected = sorted(str(k)[:40] for k in arguments if k not in _START_KEYS)
    if unexpected:
        raise ValueError(f"unexpected argument(s) {unexpected}; it takes {list(_START_KEYS)}")
    missing = [key for key in _START_KEYS[:3] if key not in arguments]
    if missing:
        raise ValueError(f"missing required argument(s) {missing}")
    ladder, level = arguments["ladder"], arguments["level"]
    index, repeat = arguments["seed_index"], arguments.get("repeat", 0)
    if not isinstance(ladder, str) or not isinstance(level, str):
        raise ValueError("ladder and level must be strings")
    for key, value in (("seed_index", index), ("repeat", repeat)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**6:
            raise ValueError(f"{key} must be an integer in [0, 1000000], got {str(value)[:40]}")
    return ladder[:40], level[:40], index, repeat


_START_KEYS = ("ladder", "level", "seed_index", "repeat")


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


def build_server(served: EpisodeServer | McpRun) -> Server[Any]:
    """The low-level MCP server: ``tools/list`` and ``tools/call``, with the package version."""
    run = (
        served
        if isinstance(served, McpRun)
        else McpRun(served, variant=served.episode.variant, panel=served.episode.panel, multi=False)
    )

    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=run.tools())

    async def call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        outcome, structured, changed = run.call(params.name, params.arguments)
        if changed:
            await ctx.session.send_tool_list_changed()
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=outcome.text)],
            structured_content=structured,
            is_error=outcome.is_error,
        )

    return Server(
        "acdb",
        version=__version__,
        instructions=run.current.episode.system_prompt,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run_stdio(served: EpisodeServer | McpRun) -> None:
    """Serve over stdin/stdout until the client closes the connection."""
    server = build_server(served)

    async def main() -> None:
        # A request the SDK cannot parse is answered, never dropped (mcp_stdio).
        lines = GuardedLines(sys.stdin.buffer)
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.replies_to(write_stream)
            options = server.create_initialization_options(notification_options=_tools_changed())
            await server.run(read_stream, write_stream, options)

    try:
        anyio.run(main)
    finally:
        served.close()


def _tools_changed() -> Any:
    from mcp.server.lowlevel.server import NotificationOptions

    return NotificationOptions(tools_changed=True)


def main(args: argparse.Namespace) -> int:
    """``acdb mcp``: serve one episode, or many with ``--multi`` (options: ``acdb mcp --help``).

    Holds the run directory's lock while it serves.

    Raises:
        ValueError: a bad option, or a job that already has an ``ok`` row.
        RunDirectoryBusyError: a sweep or another server holds the run directory.
    """
    variant: Variant = args.variant
    panel: Panel = args.panel
    if args.repeat < 0:
        raise ValueError(f"--repeat must be >= 0, got {args.repeat}")
    out = Path(args.out) if args.out is not None else DEFAULT_OUT
    with RunDirectoryLock(out):
        episode = ToolEpisode(
            ladder=args.ladder,
            level=args.level,
            manifest_index=args.seed_index,
            variant=variant,
            panel=panel,
        )
        config = {"model": args.model} if args.model else {}
        try:
            first = EpisodeServer(episode, run_dir=out, agent_config=config, repeat=args.repeat)
        except JobDoneError:
            episode.close()
            raise
        run_stdio(McpRun(first, variant=variant, panel=panel, multi=args.multi))
    return 0
