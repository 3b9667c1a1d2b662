"""Inspect logs of the ACDB task as result rows, so ``acdb report`` shows them beside the sweep's.

Every sample of a log of :func:`~acdb_gym.integrations.inspect_task.acdb` becomes one row:
agent ``inspect:<variant>`` (``inspect:llm_raw``) with the inspect model in its
``agent_config`` (the report labels it ``inspect:llm_raw[openai/gpt-4o] (active)``), the epoch
as the repeat, the job id the sweep would give it, and the episode's scores, steps, invalid
calls, token counts and wall time as the solver stored them. A sample that raised becomes a
``failed`` row. ``acdb inspect-import LOG... --out RUN_DIR`` appends them to the run's results
file, skipping jobs that already have a successful row.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

try:
    from inspect_ai.log import EvalLog, EvalSample, read_eval_log
except ImportError as error:  # pragma: no cover - the extra is part of dev
    raise ImportError(
        "reading inspect logs needs inspect-ai: pip install 'acdb_gym[inspect]'"
    ) from error

from acdb_gym.integrations.episode import result_row
from acdb_gym.integrations.inspect_task import EPISODE_KEY
from acdb_gym.results import (
    RESULTS_FILE,
    ResultRow,
    ResultsAppender,
    check_row_values,
    read_results,
)

__all__ = ["AGENT_PREFIX", "import_logs", "rows_from_log"]

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
        log = read_eval_log(str(log))
    if not log.samples:
        raise ValueError(f"inspect log {log.location or '?'} has no samples (status {log.status})")
    rows = [_row(log, sample) for sample in log.samples]
    for row in rows:
        try:
            check_row_values(row)
        except ValueError as error:
            raise ValueError(f"inspect log {log.location or '?'}: {error}") from None
    return rows


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
        from acdb_gym.agents.llm.tools import env_kwargs_for

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
    each failed attempt.

    Every log is read and checked before the first row is appended, so a bad log adds nothing.

    Returns:
        ``(appended, skipped)`` row counts.
    """
    path = Path(run_dir) / RESULTS_FILE
    existing = read_results(path, mode="strict").rows
    done = {row.job_id for row in existing if row.status == "ok"}
    failed = [row for row in existing if row.status != "ok"]
    every_log = [rows_from_log(log) for log in logs]
    appended = skipped = 0
    with ResultsAppender(path) as appender:
        for rows in every_log:
            for row in rows:
                if row.job_id in done or row in failed:
                    skipped += 1
                    continue
                appender.append(row)
                if row.status == "ok":
                    done.add(row.job_id)
                else:
                    failed.append(row)
                appended += 1
    return appended, skipped
