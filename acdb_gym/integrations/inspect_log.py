"""Inspect logs of the ACDB task as result rows, so ``acdb report`` shows them beside the sweep's.

Every sample of a log of :func:`~acdb_gym.integrations.inspect_task.acdb` becomes one row:
agent ``inspect:<variant>`` (``inspect:llm_raw``) with the inspect model in its
``agent_config`` (the report labels it ``inspect:llm_raw[openai/gpt-4o] (active)``), the epoch
as the repeat, the job id the sweep would give it, and the episode's scores, steps, invalid
calls, token counts and wall time as the solver stored them. A sample that raised becomes a
``failed`` row. ``acdb inspect-import LOG... --out RUN_DIR`` appends them to the run's results
file, skipping jobs that already have a successful row, and writes each imported sample's
transcript (its model replies with their tokens, its tool results) beside the sweep's LLM
transcripts, for the report's episode pages.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

try:
    from inspect_ai.log import EvalLog, EvalSample, read_eval_log
except ImportError as error:  # pragma: no cover - the extra is part of dev
    raise ImportError(
        "reading inspect logs needs inspect-ai: pip install 'acdb_gym[inspect]'"
    ) from error

from acdb_gym.agents.llm.records import capped_record
from acdb_gym.core.untrusted import UntrustedInputError, write_nofollow
from acdb_gym.integrations.episode import result_row
from acdb_gym.integrations.inspect_task import EPISODE_KEY
from acdb_gym.results import (
    RESULTS_FILE,
    ResultRow,
    ResultsAppender,
    check_row_values,
    read_results,
)

__all__ = [
    "AGENT_PREFIX",
    "MAX_LOG_BYTES",
    "import_logs",
    "read_log",
    "rows_from_log",
    "transcript_events",
]

AGENT_PREFIX = "inspect:"
"""Agent names of inspect rows are this prefix and the LLM variant."""


def rows_from_log(log: EvalLog | str | Path) -> list[ResultRow]:
    """The result rows of an inspect log of the ACDB task, in sample order.

    Args:
        log: an :class:`EvalLog` or the path of a log file (``.eval`` or ``.json``).

    Raises:
        ValueError: the log has no samples, a sample lacks the task's metadata (it is not a
            log of the ACDB task), has an epoch below 1, or holds a non-finite or out-of-range
            score (:func:`~acdb_gym.results.check_row_values`).
        OSError: the log cannot be read.
    """
    if not isinstance(log, EvalLog):
        log = read_log(log)
    if not log.samples:
        raise ValueError(f"inspect log {log.location or '?'} has no samples (status {log.status})")
    rows = [_row(log, sample) for sample in log.samples]
    for row in rows:
        try:
            check_row_values(row)
        except ValueError as error:
            raise ValueError(f"inspect log {log.location or '?'}: {error}") from None
    return rows


MAX_LOG_BYTES = 256 << 20
"""The largest inspect log read: its file, or the members of an ``.eval`` archive as they
declare their sizes (checked before inspect_ai reads it)."""


def read_log(path: str | Path) -> EvalLog:
    """An inspect log read through inspect_ai after its size is checked.

    Raises:
        ValueError: a log past :data:`MAX_LOG_BYTES`, or one inspect_ai cannot parse (nested
            too deeply for its parser included), named.
        OSError: the log cannot be read.
    """
    path = Path(path)
    size = path.stat().st_size
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            size = max(size, sum(info.file_size for info in archive.infolist()))
    if size > MAX_LOG_BYTES:
        raise ValueError(f"inspect log {path} holds {size} bytes, more than {MAX_LOG_BYTES}")
    try:
        return read_eval_log(str(path))
    except RecursionError:
        raise ValueError(f"inspect log {path} is nested too deeply to read") from None


def transcript_events(sample: EvalSample) -> list[dict[str, Any]]:
    """A sample's episode as transcript events, the form of the LLM agents' transcripts (so the
    report's episode pages show it turn by turn): the system and user messages (``message``),
    each model reply with its text, tool calls and the token usage of its model call
    (``reply``), and each tool result (``tool_result``), in the order of the conversation.
    Every text and tool call's arguments is kept as the LLM agents' transcripts keep it
    (:func:`~acdb_gym.agents.llm.records.capped_record`: at most 64 KiB, else its head)."""
    usages = [
        event.output.usage for event in sample.events if event.event == "model" and event.output
    ]
    events: list[dict[str, Any]] = []
    turn = 0
    for message in sample.messages:
        if message.role == "assistant":
            usage = usages[turn] if turn < len(usages) else None
            turn += 1
            events.append(
                {
                    "event": "reply",
                    "turn": turn,
                    "text": capped_record(message.text),
                    "tool_calls": [
                        {
                            "id": capped_record(c.id),
                            "name": capped_record(c.function),
                            "arguments": capped_record(c.arguments),
                        }
                        for c in message.tool_calls or []
                    ],
                    "usage": None
                    if usage is None
                    else {
                        "tokens_in": usage.input_tokens,
                        "tokens_out": usage.output_tokens,
                        "tokens_cached_in": usage.input_tokens_cache_read or 0,
                        "tokens_cache_write": usage.input_tokens_cache_write or 0,
                    },
                }
            )
        elif message.role == "tool":
            events.append(
                {
                    "event": "tool_result",
                    "turn": turn,
                    "name": capped_record(message.function),
                    "text": capped_record(message.text),
                    "is_error": message.error is not None,
                }
            )
        else:
            text = capped_record(message.text)
            events.append({"event": "message", "turn": turn, "role": message.role, "text": text})
    return events


def _row(log: EvalLog, sample: EvalSample) -> ResultRow:
    meta: dict[str, Any] = dict(sample.metadata)
    needed = ("ladder", "level", "manifest_index", "seed", "variant", "panel")
    missing = [key for key in needed if key not in meta]
    if missing:
        raise ValueError(
            f"sample {sample.id!r} of {log.location or 'the log'} lacks metadata {missing}: "
            "not a sample of the ACDB task"
        )
    agent = f"{AGENT_PREFIX}{meta['variant']}"
    config = {"model": log.eval.model}
    if isinstance(sample.epoch, bool) or not isinstance(sample.epoch, int) or sample.epoch < 1:
        raise ValueError(
            f"sample {sample.id!r} of {log.location or 'the log'}: epoch must be an integer "
            f">= 1, got {sample.epoch!r}"
        )
    repeat = sample.epoch - 1
    record = sample.store.get(EPISODE_KEY)
    wall_time = float(sample.total_time or 0.0)
    if sample.error is not None or record is None:
        from acdb_gym.agents.llm.function_tools import env_kwargs_for

        identity = {**meta, "tools": env_kwargs_for(meta["variant"])["tools"]}
        error = sample.error.message if sample.error is not None else "no episode record"
        return result_row(
            identity,
            agent=agent,
            agent_config=config,
            repeat=repeat,
            wall_time=wall_time,
            error=error.strip().splitlines()[-1] if error.strip() else "sample failed",
        )
    return result_row(
        record,
        agent=agent,
        agent_config=config,
        repeat=repeat,
        wall_time=float(record.get("wall_time", wall_time)),
        tokens_in=record.get("tokens_in"),
        tokens_out=record.get("tokens_out"),
        agent_stats={
            "llm_calls": record.get("llm_calls"),
            "inspect_eval_id": log.eval.eval_id,
            "inspect_sample_id": sample.id,
        },
    )


def import_logs(logs: Iterable[EvalLog | str | Path], run_dir: Path) -> tuple[int, int]:
    """Append the rows of inspect logs to ``RUN_DIR/results.jsonl``.

    A job that already has a successful row in the file is skipped, and so is a failed row equal
    to one already there (the same sample of the same log): importing a log twice adds nothing.
    A failed sample of another run of the job (a new log) is appended, as the sweep records
    each failed attempt. Each appended row's episode is written to
    ``RUN_DIR/transcripts/<job_id>.jsonl`` (:func:`transcript_events`), where the report's
    episode page reads it.

    Every log is read and checked before the first row is appended, so a bad log adds nothing.

    Returns:
        ``(appended, skipped)`` row counts.
    """
    path = Path(run_dir) / RESULTS_FILE
    existing = read_results(path, mode="strict").rows
    done = {row.job_id for row in existing if row.status == "ok"}
    failed = [row for row in existing if row.status != "ok"]
    read = [log if isinstance(log, EvalLog) else read_log(log) for log in logs]
    every_log = [(rows_from_log(log), log.samples or []) for log in read]
    appended = skipped = 0
    with ResultsAppender(path) as appender:
        for rows, samples in every_log:
            for row, sample in zip(rows, samples, strict=True):
                if row.job_id in done or row in failed:
                    skipped += 1
                    continue
                _write_transcript(Path(run_dir) / "transcripts" / f"{row.job_id}.jsonl", sample)
                appender.append(row)
                if row.status == "ok":
                    done.add(row.job_id)
                else:
                    failed.append(row)
                appended += 1
    return appended, skipped


def _write_transcript(path: Path, sample: EvalSample) -> None:
    if path.parent.is_symlink():
        raise UntrustedInputError(f"{path.parent} is a symbolic link; remove it")
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(event, ensure_ascii=False, default=str) for event in transcript_events(sample)
    ]
    write_nofollow(path, "".join(line + "\n" for line in lines).encode("utf-8"))
