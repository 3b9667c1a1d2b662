"""One job of a sweep: what defines it (:class:`Job`, whose id is stable across runs) and how
it runs to its result row (:func:`run_job`, :func:`run_job_async` for LLM agents in an event
loop). The sweep (:mod:`acdb_gym.sweep.run`) plans and schedules jobs; this module knows nothing of
schedules, so both the sweep and its concurrent runner (:mod:`acdb_gym.sweep.concurrent`) build
on it without importing each other."""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from acdb_gym import __version__
from acdb_gym.core.graphs import PDAG
from acdb_gym.core.ladders.custom import resolve_level
from acdb_gym.core.ladders.shipped import Level
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS, SCORE_FIELDS
from acdb_gym.envs.hypotheses import graph_to_text
from acdb_gym.registry import AgentEntry, get_agent
from acdb_gym.results import Location, ResultRow, ResultsFileError, row_scores
from acdb_gym.row_values import clip_error

__all__ = ["Job", "run_job", "run_job_async"]


@dataclass(frozen=True)
class Job:
    """One unit of work: one agent on one manifest instance in one panel, one repeat.

    ``level_spec`` is empty for a shipped ladder's level and the spec's canonical text
    (:func:`~acdb_gym.core.ladders.custom.format_level_spec`) for a custom level. ``entry`` is
    the agent's resolved :class:`~acdb_gym.registry.AgentEntry` (the planner sets it, so a
    worker never looks the agent up again); a job made by name alone resolves it when it runs.
    Neither is part of the job id beyond the agent's name.
    """

    ladder: str
    level: str
    manifest_index: int
    agent: str
    panel: str
    tools: str
    repeat: int
    agent_config: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    level_spec: str = ""
    entry: AgentEntry | None = field(default=None, hash=False, compare=False, repr=False)

    @property
    def agent_entry(self) -> AgentEntry:
        """The agent's registry entry: :attr:`entry`, or looked up by name when not given.

        Raises:
            ValueError: an unknown agent name (:func:`~acdb_gym.registry.get_agent`).
        """
        return self.entry if self.entry is not None else get_agent(self.agent)

    @property
    def job_id(self) -> str:
        """A stable id over everything that defines the job (a custom level's spec is part of
        it; shipped levels' ids are as before the spec existed)."""
        parts: list[Any] = [
            self.ladder,
            self.level,
            self.manifest_index,
            self.agent,
            self.panel,
            self.tools,
            self.repeat,
            self.agent_config,
        ]
        if self.level_spec:
            parts.append(self.level_spec)
        key = json.dumps(parts, sort_keys=True)
        return hashlib.sha256(key.encode()).hexdigest()[:20]

    def level_of(self) -> Level:
        """The job's level (a custom one rebuilt from its spec, seeds up to this job's)."""
        return resolve_level(self.ladder, self.level, self.level_spec, self.manifest_index + 1)

    @property
    def agent_seed(self) -> int:
        """The agent's own seed, derived from the job id (same job, same draws)."""
        return int(self.job_id[:12], 16)


def run_job(
    job: Job, agent_options: dict[str, Any] | None = None, out: Path | None = None
) -> ResultRow:
    """Run one job and return its result row; an exception becomes a ``failed`` row."""
    start = time.perf_counter()
    entry = job.agent_entry
    try:
        env, agent = _prepare(job, entry, dict(agent_options or {}), out)
        from acdb_gym.agents.draws import run_draws

        try:
            results = run_draws(env, agent, draws=entry.draws, manifest_index=job.manifest_index)
        finally:
            env.close()
        row = _scored_row(results, entry.draws, getattr(agent, "states_hypotheses", False))
    except Exception as error:  # a failed episode is recorded, never scored as zero
        row = _failed_row(error)
    return _finish_row(job, entry, row, start)


async def run_job_async(
    job: Job, agent_options: dict[str, Any] | None = None, out: Path | None = None
) -> ResultRow:
    """:func:`run_job` for an agent with ``act_async`` (LLM agents), from an event loop: the
    same row, while other jobs of the loop run during its HTTP waits."""
    start = time.perf_counter()
    entry = job.agent_entry
    try:
        env, agent = _prepare(job, entry, dict(agent_options or {}), out)
        from acdb_gym.agents.base import run_episode_async

        try:
            results = [
                await run_episode_async(env, agent, manifest_index=job.manifest_index)
                for _ in range(entry.draws)
            ]
        finally:
            env.close()
            await agent.aclose()  # the async client belongs to this loop
        row = _scored_row(results, entry.draws, getattr(agent, "states_hypotheses", False))
    except Exception as error:
        row = _failed_row(error)
    return _finish_row(job, entry, row, start)


_WHERE: Final = Location(Path("<job>"))
"""Where a row not yet written is, for the checks' messages."""


def _finish_row(job: Job, entry: AgentEntry, row: dict[str, Any], start: float) -> ResultRow:
    """The job's typed row: its fields checked as the results file checks them (types, then
    ranges). A row the file would refuse (a value out of its range) becomes a failed job, so
    the sweep's one writer never meets a row it cannot write."""
    try:
        return ResultRow.parse(_row_with_identity(job, entry, row, start), where=_WHERE)
    except ResultsFileError as error:
        failed = _failed_row(ValueError(f"the job's row is out of range: {error.problem}"))
        return ResultRow.parse(_row_with_identity(job, entry, failed, start), where=_WHERE)


def _row_with_identity(
    job: Job, entry: AgentEntry, row: dict[str, Any], start: float
) -> dict[str, Any]:
    level = job.level_of()
    base: dict[str, Any] = {
        "job_id": job.job_id,
        "ladder": job.ladder,
        "level": job.level,
        "manifest_index": job.manifest_index,
        "seed": level.manifest_seed(job.manifest_index),
        "agent": job.agent,
        "agent_config": job.agent_config,
        "panel": job.panel,
        "tools": job.tools,
        "repeat": job.repeat,
        "version": __version__,
        "privileged": entry.privileged,
        **({"level_spec": job.level_spec} if job.level_spec else {}),
    }
    row["wall_time"] = time.perf_counter() - start
    return {**base, **row}


def _failed_row(error: Exception) -> dict[str, Any]:
    last = traceback.format_exception_only(type(error), error)[-1].strip()
    row: dict[str, Any] = {"status": "failed", "error": clip_error(last)}
    row.update(row_scores(dict.fromkeys(SCORE_FIELDS), failed=True))
    row.update(
        steps=None,
        invalid_actions=None,
        truncated=None,
        draws=0,
        tokens_in=None,
        tokens_out=None,
    )
    return row


def _prepare(
    job: Job, entry: AgentEntry, options: dict[str, Any], out: Path | None
) -> tuple[Any, Any]:
    """The job's env and agent (with its transcript path under ``out``)."""
    import gymnasium as gym

    env_kwargs: dict[str, Any] = {"panel": job.panel, "tools": job.tools}
    if entry.max_steps is not None:
        env_kwargs["max_steps"] = entry.max_steps
    if job.agent_config.get("named"):  # the LLM agents' named option reads the env's names
        env_kwargs["named"] = True
    level = job.level_of()
    if job.level_spec:
        from acdb_gym.envs.registration import make_custom

        env = make_custom(level, **env_kwargs)
    else:
        env = gym.make(level.env_id, **env_kwargs)
    agent = entry.build(job.agent_seed, {**options, **job.agent_config})
    transcript_dir = None if out is None else out / "transcripts"
    if hasattr(agent, "transcript_path") and transcript_dir is not None:
        transcript_dir.mkdir(parents=True, exist_ok=True)
        agent.transcript_path = transcript_dir / f"{job.job_id}.jsonl"
    return env, agent


_TOKEN_FIELDS = ("tokens_in", "tokens_out", "tokens_cached_in", "tokens_cache_write")
"""Agent statistics that are row fields of their own (the last two only when reported)."""


def _scored_row(results: Sequence[Any], draws: int, states_hypotheses: bool) -> dict[str, Any]:
    """The row fields of a finished job's episodes (``draws`` of them, averaged); the revision
    record of the last one when the agent states hypotheses; the submitted graph of a
    single-draw job."""
    revision = results[-1].revision if states_hypotheses else None
    # The edge text holds a mixed graph; an ADMG or PAG (a latent level) is not recorded, and its
    # episode page draws the truth alone.
    submission = results[0].submission if draws == 1 else None
    submission = submission if isinstance(submission, PDAG) else None
    # A level with hidden confounders scores further fields (DESIGN §6.3), only there.
    latent = results[0].score.is_latent
    names = SCORE_FIELDS + LATENT_SCORE_FIELDS if latent else SCORE_FIELDS
    scores = {name: float(np.mean([getattr(r.score, name) for r in results])) for name in names}
    counts = ("shd", "shd_extra", "shd_missing", "shd_reversed", "shd_unresolved")
    for name in (*counts, "shd_mistyped") if latent else counts:
        if draws == 1:
            scores[name] = int(scores[name])
    scores = row_scores(scores)  # an undefined anytime F1 (NaN) is left out
    scores["interventions_used"] = results[0].score.interventions_used
    scores["i_star_size"] = results[0].score.i_star_size
    extra = results[-1].extra
    tokens = {name: extra.get(name) for name in _TOKEN_FIELDS if name in extra}
    return {
        "status": "ok",
        "error": None,
        **scores,
        "steps": float(np.mean([r.steps for r in results])) if draws > 1 else results[0].steps,
        "invalid_actions": sum(r.invalid_actions for r in results),
        "truncated": any(r.truncated for r in results),
        "draws": draws,
        "tokens_in": extra.get("tokens_in"),
        "tokens_out": extra.get("tokens_out"),
        **tokens,
        "agent_stats": {k: v for k, v in extra.items() if k not in _TOKEN_FIELDS},
        **({} if revision is None else {"revision": revision.to_dict()}),
        **({} if submission is None else {"submission": _submission_record(submission)}),
    }


def _submission_record(graph: PDAG) -> dict[str, Any]:
    """The row's ``submission``: ``{"n_nodes", "graph"}`` with the graph as ``"0>1,2-3"``."""
    return {"n_nodes": graph.n_nodes, "graph": graph_to_text(graph)}
