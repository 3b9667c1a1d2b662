"""The episode viewer's transcripts: ``RUN/transcripts/<job_id>.jsonl`` turn by turn.

LLM agents, the MCP server and inspect imports write one JSON event per line (requests,
responses, replies with tool calls, tool results, actions); :func:`transcript_html` shows every
event in order with its text (cut at :data:`MAX_TEXT` characters), its tokens and, given a price
table, its cost (priced by :func:`acdb_gym.report.cost.job_costs`, as ``costs.csv`` is). A
request's payload (the whole conversation so far) is summarized by its message count.

A transcript is read as hostile input (:func:`load_transcript`): a line at a time, each within
:data:`MAX_TRANSCRIPT_LINE_BYTES` and the JSON bounds of :func:`acdb_gym.core.untrusted.loads`,
the first :data:`MAX_EVENTS` events kept; a line that is no event is counted and skipped. The
file is found from the row's job id only when that is a safe file name, and neither the file
nor its folder is followed when it is a symbolic link.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from acdb_gym.core.untrusted import (
    UntrustedInputError,
    is_safe_name,
    iter_lines,
    loads,
    open_nofollow,
)
from acdb_gym.report.cost import Price, job_costs, token_cost
from acdb_gym.report.types import Row

__all__ = [
    "MAX_EVENTS",
    "MAX_TEXT",
    "MAX_TRANSCRIPT_LINE_BYTES",
    "Transcript",
    "cell_text",
    "load_transcript",
    "read_transcript",
    "transcript_html",
    "transcript_path",
]

MAX_TEXT: Final = 4000
"""Longest transcript text shown whole on a page; the rest is cut with a note."""

MAX_EVENTS: Final = 2000
"""The most events of one transcript shown on its page; the rest are counted."""

MAX_TRANSCRIPT_LINE_BYTES: Final = 4 << 20
"""The longest transcript line read (a writer caps each value at 64 KiB); a longer line is
skipped without being read whole."""


@dataclass(frozen=True)
class Transcript:
    """What a transcript file holds, read as hostile input.

    Attributes:
        events: its events (JSON objects), at most :data:`MAX_EVENTS`.
        skipped: lines that were no event (not JSON, nested too deeply, too long, not an
            object).
        more: events past :data:`MAX_EVENTS`, counted, not kept.
    """

    events: tuple[dict[str, Any], ...]
    skipped: int = 0
    more: int = 0


def cell_text(value: object) -> str:
    """A value as a table cell: floats to 4 significant digits, None and NaN as a dash."""
    if isinstance(value, float):
        return "—" if not math.isfinite(value) else f"{value:.4g}"
    return "—" if value is None else str(value)


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: object) -> str:
    return cell_text(value)


def transcript_path(run_dir: Path, row: Row) -> Path | None:
    """Where a row's transcript is, if it has one: None for a job id that is no safe file name
    (:func:`~acdb_gym.core.untrusted.is_safe_name`), which could name a file elsewhere."""
    if not is_safe_name(row.job_id):
        return None
    return run_dir / "transcripts" / f"{row.job_id}.jsonl"


def _clip(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters in the transcript)"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _event_content(event: Mapping[str, Any]) -> str:
    kind = event.get("event")
    if kind == "reply":
        calls = event.get("tool_calls") or []
        lines = [_as_text(event.get("text") or "")]
        lines += [f"→ {c.get('name')}({_as_text(c.get('arguments'))})" for c in calls]
        return "\n".join(line for line in lines if line)
    if kind == "request":
        payload = event.get("payload") or {}
        messages = payload.get("messages") if isinstance(payload, Mapping) else None
        return f"request of {len(messages) if isinstance(messages, list) else '?'} messages"
    if kind == "response":
        cached = "from the cache" if event.get("cached") else f"{event.get('latency_s')} s"
        return f"response ({cached})"
    if kind == "tool_result" or kind == "call":
        name = (
            f"{event.get('name')}({_as_text(event.get('arguments'))})\n" if kind == "call" else ""
        )
        error = " [error]" if event.get("is_error") else ""
        return f"{name}{_as_text(event.get('text') or '')}{error}"
    if kind == "message":
        return f"[{event.get('role')}] {_as_text(event.get('text') or '')}"
    if kind == "action":
        return _as_text(event.get("action") or event.get("error") or "")
    if kind == "episode_start":
        return _as_text({k: event.get(k) for k in ("env", "max_steps")})
    rest = {k: v for k, v in event.items() if k not in ("event", "time")}
    return _as_text(rest)


def _turn_cost(row: Row, usage: Mapping[str, Any], prices: Mapping[str, Price] | None) -> str:
    """The cost of one turn's tokens at the row's model's price ("—" without one)."""
    model = row.model
    if not prices or model is None or model not in prices or usage.get("tokens_in", 0) is None:
        return "—"
    tokens_in, tokens_out = _count(usage, "tokens_in"), _count(usage, "tokens_out")
    cached, written = _count(usage, "tokens_cached_in"), _count(usage, "tokens_cache_write")
    cost = token_cost(prices[model], tokens_in, tokens_out, cached=cached, written=written)
    return f"{cost:.5f}"


def _count(usage: Mapping[str, Any], key: str) -> int:
    """A token count of a transcript's usage record (the file is hostile: 0 unless an int)."""
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The events of a transcript file (:func:`load_transcript`'s, without its counts)."""
    return list(load_transcript(path).events)


def load_transcript(path: Path) -> Transcript:
    """The events of a transcript file, a line at a time, skipping lines that are not JSON
    objects within the bounds of :func:`acdb_gym.core.untrusted.loads` (counted).

    Raises:
        UntrustedInputError: ``path`` or its folder is a symbolic link (not followed).
        OSError: the file cannot be opened.
    """
    if path.parent.is_symlink():
        raise UntrustedInputError(f"{path.parent} is a symbolic link")
    events: list[dict[str, Any]] = []
    skipped = more = 0
    with os.fdopen(open_nofollow(path, os.O_RDONLY), "rb") as handle:
        for line in iter_lines(handle, max_line_bytes=MAX_TRANSCRIPT_LINE_BYTES):
            try:
                event = None if line.text is None else loads(line.text, max_bytes=line.length)
            except ValueError:
                event = None
            if not isinstance(event, dict):
                skipped += 1
            elif len(events) < MAX_EVENTS:
                events.append(event)
            else:
                more += 1
    return Transcript(tuple(events), skipped, more)


def _read(path: Path | None) -> Transcript | None:
    """The transcript at ``path``, or None when there is none to show (no file, or a link)."""
    if path is None:
        return None
    try:
        return load_transcript(path)
    except (OSError, UntrustedInputError):
        return None


def transcript_html(row: Row, run_dir: Path, prices: Mapping[str, Price] | None) -> str:
    """The transcript section of a row's page, or "" when the row has no transcript."""
    path = transcript_path(run_dir, row)
    transcript = _read(path)
    if path is None or transcript is None:
        return ""
    events = transcript.events
    body = []
    for number, event in enumerate(events):
        raw_usage = event.get("usage")
        usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
        body.append(
            "<tr>"
            f"<td>{number}</td><td>{_esc(event.get('event'))}</td>"
            f"<td>{_esc(_cell(event.get('turn')))}</td>"
            f"<td><pre>{_esc(_clip(_event_content(event)))}</pre></td>"
            f"<td>{_esc(_cell(usage.get('tokens_in')))}</td>"
            f"<td>{_esc(_cell(usage.get('tokens_out')))}</td>"
            f"<td>{_esc(_turn_cost(row, usage, prices) if usage else '—')}</td>"
            "</tr>"
        )
    total = ""
    if prices:
        costs = job_costs([row], prices)
        total = f" Episode cost: {costs[0].cost:.5f} USD." if costs else ""
    head = "".join(
        f"<th>{h}</th>"
        for h in ("#", "event", "turn", "content", "tokens in", "tokens out", "cost (USD)")
    )
    unread = ""
    if transcript.skipped or transcript.more:
        unread = f" {transcript.skipped} lines skipped (not an event); {transcript.more} more"
        unread += " events not shown."
    return (
        f'<h2>Transcript</h2><p class="note">{len(events)} events from '
        f"<code>transcripts/{_esc(path.name)}</code>; tokens in: {_esc(_cell(row.tokens_in))}, "
        f"out: {_esc(_cell(row.tokens_out))}.{_esc(total)}{_esc(unread)}</p>"
        f'<table class="transcript"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )
