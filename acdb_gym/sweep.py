"""The resumable ladder sweep (DESIGN §10).

Jobs are ladder × levels × manifest seeds × agents × panels × repeats (an agent's tool variant
is part of its name, e.g. ``llm_raw`` / ``llm_stats``). Each finished job appends one JSON line
to ``OUT/results.jsonl`` with a single ``write`` on an ``O_APPEND`` descriptor followed by
``fsync``, from the parent process only. Rerunning the same command skips jobs that already
have an ``ok`` row; failed jobs (an exception, e.g. an LLM provider that stayed down) are
recorded as ``failed`` rows with the error and retried by the next run. A torn last line (the
process died mid-write) is cut off on resume, never parsed as a result.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from acdb_gym import __version__
from acdb_gym.core.ladder import LADDERS, LEVEL_NAMES, get_level
from acdb_gym.core.scoring import SCORE_FIELDS

__all__ = [
    "AGENTS",
    "AgentSpec",
    "Job",
    "SweepConfig",
    "SweepSummary",
    "load_rows",
    "plan_jobs",
    "run_job",
    "run_sweep",
]

RESULTS_FILE = "results.jsonl"
Backend = Literal["process", "ray"]


# --------------------------------------------------------------------------- agent registry
@dataclass(frozen=True)
class AgentSpec:
    """How the sweep builds and runs one named agent.

    Attributes:
        panels: the panels in which the agent behaves differently; an agent that never
            intervenes runs once, in the first requested panel (observational preferred).
        tools: the env's tool variant for this agent.
        draws: episodes per job, averaged into one row (the random baseline's 100 draws).
        max_steps: overrides the env's step limit (None: the variant's default).
    """

    factory: Callable[[int, dict[str, Any]], Any]
    panels: tuple[str, ...] = ("observational",)
    tools: str = "raw"
    draws: int = 1
    max_steps: int | None = None


def _random(seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.baselines import RandomDAGAgent

    return RandomDAGAgent(seed=seed)


def _pc(seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.baselines import PCAgent

    return PCAgent()


def _pc_greedy(seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.baselines import PCGreedyAgent

    return PCGreedyAgent()


def _oracle(seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.baselines import OracleAgent

    return OracleAgent()


def _sortnregress(seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.baselines import SortnregressAgent

    return SortnregressAgent()


def _randregress(seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.baselines import RandomOrderRegressAgent

    return RandomOrderRegressAgent(seed=seed)


def _pc_active(seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.baselines.active import PCActiveAgent

    return PCActiveAgent()


def _gies_active(seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.baselines.active import GIESActiveAgent

    return GIESActiveAgent()


def _rl(path: str, seed: int, options: dict[str, Any]) -> Any:
    from acdb_gym.agents.rl import RLAgent

    return RLAgent.load(path, name=f"rl:{path}")


def _llm(variant: str) -> Callable[[int, dict[str, Any]], Any]:
    def factory(seed: int, options: dict[str, Any]) -> Any:
        from acdb_gym.agents.llm import LLMAgent

        if not options.get("provider") or not options.get("model"):
            raise ValueError(f"{variant} needs --provider and --model")
        temperature = options.get("temperature")
        return LLMAgent(
            variant,  # type: ignore[arg-type]
            provider=options["provider"],
            model=options["model"],
            base_url=options.get("base_url"),
            # The paper's protocol is temperature 0; the agent drops it where a model refuses.
            temperature=0.0 if temperature is None else float(temperature),
            cache_dir=Path(options["cache_dir"]) if options.get("cache_dir") else None,
        )

    return factory


AGENTS: dict[str, AgentSpec] = {
    "random": AgentSpec(_random, draws=100),
    "pc": AgentSpec(_pc),
    "pc_greedy": AgentSpec(_pc_greedy, panels=("active",)),
    "oracle": AgentSpec(_oracle),
    "sortnregress": AgentSpec(_sortnregress),
    "randregress": AgentSpec(_randregress, draws=20),
    "pc_active": AgentSpec(_pc_active, panels=("active",)),
    "gies_active": AgentSpec(_gies_active, panels=("active",)),
    "llm_raw": AgentSpec(_llm("llm_raw"), panels=("active", "observational"), tools="raw"),
    "llm_stats": AgentSpec(_llm("llm_stats"), panels=("active", "observational"), tools="stats"),
    "llm_corr_obs": AgentSpec(_llm("llm_corr_obs"), tools="raw"),
}
"""Named agents the sweep can run. Other modules add to it (LLM, RL, stronger agents)."""

OFFLINE_AGENTS = ("random", "pc", "pc_greedy", "oracle", "sortnregress")
"""The agents of the README's offline sweep."""


def agent_spec(name: str) -> AgentSpec:
    """Look up an agent; ``rl:PATH`` names a saved RL policy."""
    if name.startswith("rl:"):
        path = name[3:]
        if not Path(path).is_file():
            raise ValueError(f"no saved policy at {path} (agent {name})")
        # The policy is loaded in the worker that runs each job: planning needs no torch.
        return AgentSpec(functools.partial(_rl, path), panels=("active",))
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(sorted(AGENTS))}, rl:PATH")
    return AGENTS[name]


# --------------------------------------------------------------------------- jobs
@dataclass(frozen=True)
class Job:
    """One unit of work: one agent on one manifest instance in one panel, one repeat."""

    ladder: str
    level: str
    manifest_index: int
    agent: str
    panel: str
    tools: str
    repeat: int
    agent_config: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def job_id(self) -> str:
        """A stable id over everything that defines the job."""
        key = json.dumps(
            [
                self.ladder,
                self.level,
                self.manifest_index,
                self.agent,
                self.panel,
                self.tools,
                self.repeat,
                self.agent_config,
            ],
            sort_keys=True,
        )
        return hashlib.sha256(key.encode()).hexdigest()[:20]

    @property
    def agent_seed(self) -> int:
        """The agent's own seed, derived from the job id (same job, same draws)."""
        return int(self.job_id[:12], 16)


@dataclass(frozen=True)
class SweepConfig:
    """Everything that defines a sweep.

    Attributes:
        out: run directory; results go to ``out/results.jsonl``.
        ladder: ``"v0"`` or ``"v1"``.
        levels: level names.
        seeds: the first ``seeds`` manifest seeds of each level (at most 8).
        agents: agent names (see :data:`AGENTS`; ``rl:PATH`` for a saved policy).
        panels: ``"active"`` and/or ``"observational"``.
        repeats: repeats of every job (useful for stochastic agents).
        workers: parallel worker processes (1 runs in this process).
        backend: ``"process"`` (a process pool) or ``"ray"``.
        agent_options: options for configurable agents (LLM provider, model, base URL, ...).
        progress: show a progress bar with ETA on stderr.
    """

    out: Path
    ladder: str = "v0"
    levels: tuple[str, ...] = LEVEL_NAMES
    seeds: int = 8
    agents: tuple[str, ...] = OFFLINE_AGENTS
    panels: tuple[str, ...] = ("active", "observational")
    repeats: int = 1
    workers: int = 1
    backend: Backend = "process"
    agent_options: dict[str, Any] = field(default_factory=dict)
    progress: bool = True

    def __post_init__(self) -> None:
        for level in self.levels:
            get_level(self.ladder, level)
        manifest_size = min(len(lv.manifest) for lv in LADDERS[self.ladder].values())
        if not 1 <= self.seeds <= manifest_size:
            raise ValueError(f"seeds must be in [1, {manifest_size}], got {self.seeds}")
        for panel in self.panels:
            if panel not in ("active", "observational"):
                raise ValueError(f"panels must be 'active' or 'observational', got {panel!r}")
        if not self.panels:
            raise ValueError("at least one panel is needed")
        if self.repeats < 1:
            raise ValueError(f"repeats must be at least 1, got {self.repeats}")
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        if self.backend not in ("process", "ray"):
            raise ValueError(f"backend must be 'process' or 'ray', got {self.backend!r}")
        for agent in self.agents:
            agent_spec(agent)


def _panels_for(spec: AgentSpec, requested: Sequence[str]) -> list[str]:
    if spec.panels == ("observational",):
        # Agents that never intervene behave the same in both panels: run them once.
        preferred = [p for p in ("observational", "active") if p in requested]
        return preferred[:1]
    return [p for p in requested if p in spec.panels]


def _agent_config(agent: str, options: dict[str, Any]) -> dict[str, Any]:
    if agent.startswith("llm_"):
        keys = ("provider", "model", "base_url", "temperature")
        return {k: options[k] for k in keys if options.get(k) is not None}
    return {}


def plan_jobs(config: SweepConfig) -> list[Job]:
    """Every job of ``config``, in a deterministic order."""
    jobs = []
    for agent in config.agents:
        spec = agent_spec(agent)
        agent_config = _agent_config(agent, config.agent_options)
        for panel in _panels_for(spec, config.panels):
            for level in config.levels:
                for index in range(config.seeds):
                    for repeat in range(config.repeats):
                        jobs.append(
                            Job(
                                config.ladder,
                                level,
                                index,
                                agent,
                                panel,
                                spec.tools,
                                repeat,
                                agent_config,
                            )
                        )
    return jobs


# --------------------------------------------------------------------------- running one job
def run_job(
    job: Job, agent_options: dict[str, Any] | None = None, out: Path | None = None
) -> dict[str, Any]:
    """Run one job and return its result row; an exception becomes a ``failed`` row."""
    start = time.perf_counter()
    level = get_level(job.ladder, job.level)
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
    }
    try:
        row = _run_episodes(job, dict(agent_options or {}), out)
    except Exception as error:  # a failed episode is recorded, never scored as zero
        last = traceback.format_exception_only(type(error), error)[-1].strip()
        row = {"status": "failed", "error": last}
        row.update(dict.fromkeys(SCORE_FIELDS))
        row.update(
            steps=None,
            invalid_actions=None,
            truncated=None,
            draws=0,
            tokens_in=None,
            tokens_out=None,
        )
    row["wall_time"] = time.perf_counter() - start
    return {**base, **row}


def _run_episodes(job: Job, options: dict[str, Any], out: Path | None) -> dict[str, Any]:
    import gymnasium as gym

    from acdb_gym.agents.base import run_episode

    spec = agent_spec(job.agent)
    env_kwargs: dict[str, Any] = {"panel": job.panel, "tools": job.tools}
    if spec.max_steps is not None:
        env_kwargs["max_steps"] = spec.max_steps
    env = gym.make(f"ACDB-{job.level}-{job.ladder}", **env_kwargs)
    agent = spec.factory(job.agent_seed, {**options, **job.agent_config})
    transcript_dir = None if out is None else out / "transcripts"
    if hasattr(agent, "transcript_path") and transcript_dir is not None:
        transcript_dir.mkdir(parents=True, exist_ok=True)
        agent.transcript_path = transcript_dir / f"{job.job_id}.jsonl"
    results = [
        run_episode(env, agent, manifest_index=job.manifest_index) for _ in range(spec.draws)
    ]
    env.close()
    scores = {name: float(np.mean([r.score[name] for r in results])) for name in SCORE_FIELDS}
    for name in ("shd", "shd_extra", "shd_missing", "shd_reversed", "shd_unresolved"):
        if spec.draws == 1:
            scores[name] = int(scores[name])
    scores["interventions_used"] = int(results[0].score["interventions_used"])
    scores["i_star_size"] = int(results[0].score["i_star_size"])
    extra = results[-1].extra
    return {
        "status": "ok",
        "error": None,
        **scores,
        "steps": float(np.mean([r.steps for r in results])) if spec.draws > 1 else results[0].steps,
        "invalid_actions": sum(r.invalid_actions for r in results),
        "truncated": any(r.truncated for r in results),
        "draws": spec.draws,
        "tokens_in": extra.get("tokens_in"),
        "tokens_out": extra.get("tokens_out"),
        "agent_stats": {k: v for k, v in extra.items() if k not in ("tokens_in", "tokens_out")},
    }


# --------------------------------------------------------------------------- results file
def load_rows(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """Parse a results file. A torn or unparsable trailing line is dropped (and, with
    ``repair``, cut from the file); an unparsable line elsewhere raises ValueError."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    rows: list[dict[str, Any]] = []
    offset = 0
    for number, line in enumerate(raw.splitlines(keepends=True), start=1):
        complete = line.endswith(b"\n")
        try:
            row = json.loads(line) if complete else None
        except json.JSONDecodeError:
            row = None
        if row is None:
            if offset + len(line) < len(raw):
                raise ValueError(f"{path}:{number} is not a JSON result row")
            warnings.warn(
                f"{path}:{number}: dropping a torn last line ({len(line)} bytes)", stacklevel=2
            )
            if repair:
                with path.open("r+b") as handle:
                    handle.truncate(offset)
            break
        rows.append(row)
        offset += len(line)
    return rows


class _ResultsWriter:
    """Appends rows atomically: one ``os.write`` per line on an ``O_APPEND`` descriptor."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, row: dict[str, Any]) -> None:
        data = (json.dumps(row, sort_keys=True) + "\n").encode()
        written = os.write(self._fd, data)
        if written != len(data):  # pragma: no cover - regular files write whole
            raise OSError(f"short write to results file ({written} of {len(data)} bytes)")
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


# --------------------------------------------------------------------------- the sweep
@dataclass(frozen=True)
class SweepSummary:
    """What a sweep run did."""

    planned: int
    skipped: int
    finished: int
    failed: int
    wall_time: float
    results: Path


def _execute(jobs: Sequence[Job], config: SweepConfig) -> Iterator[dict[str, Any]]:
    options = config.agent_options
    if config.backend == "ray":
        yield from _execute_ray(jobs, config)
    elif config.workers == 1 or len(jobs) <= 1:
        for job in jobs:
            yield run_job(job, options, config.out)
    else:
        yield from _execute_pool(jobs, config)


def _execute_pool(jobs: Sequence[Job], config: SweepConfig) -> Iterator[dict[str, Any]]:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=config.workers, mp_context=context) as pool:
        pending: set[Future[dict[str, Any]]] = set()
        queue = list(jobs)
        # Keep a bounded number of jobs in flight so results stream back as they finish.
        while queue or pending:
            while queue and len(pending) < 2 * config.workers:
                pending.add(pool.submit(run_job, queue.pop(0), config.agent_options, config.out))
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()


def _execute_ray(jobs: Sequence[Job], config: SweepConfig) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ModuleNotFoundError:
        raise SystemExit(
            "the ray backend needs Ray: pip install 'acdb_gym[ray]' (or use --backend process)"
        ) from None
    if not ray.is_initialized():
        ray.init(num_cpus=config.workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_job)
    pending = [remote.remote(job, config.agent_options, config.out) for job in jobs]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])


def run_sweep(config: SweepConfig) -> SweepSummary:
    """Run every unfinished job of ``config`` and append its rows; see the module docstring."""
    start = time.perf_counter()
    config.out.mkdir(parents=True, exist_ok=True)
    results = config.out / RESULTS_FILE
    rows = load_rows(results, repair=True)
    done = {row["job_id"] for row in rows if row.get("status") == "ok"}
    jobs = plan_jobs(config)
    todo = [job for job in jobs if job.job_id not in done]
    _write_config(config)
    writer = _ResultsWriter(results)
    finished = failed = 0
    bar = _progress(len(todo), config.progress, initial_note=f"{len(jobs) - len(todo)} done")
    try:
        for row in _execute(todo, config):
            writer.append(row)
            finished += 1
            failed += row["status"] == "failed"
            bar.set_postfix(failed=failed, refresh=False)
            bar.update(1)
    finally:
        bar.close()
        writer.close()
    return SweepSummary(
        planned=len(jobs),
        skipped=len(jobs) - len(todo),
        finished=finished,
        failed=failed,
        wall_time=time.perf_counter() - start,
        results=results,
    )


def _write_config(config: SweepConfig) -> None:
    data = asdict(config)
    data["out"] = str(config.out)
    data["agent_options"] = {
        k: v for k, v in config.agent_options.items() if "key" not in k.lower()
    }
    (config.out / "sweep_config.json").write_text(json.dumps(data, indent=2, default=str) + "\n")


def _progress(total: int, enabled: bool, initial_note: str) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=f"sweep ({initial_note})",
        unit="job",
        disable=not enabled,
        file=sys.stderr,
        dynamic_ncols=True,
    )


def parse_list(text: str, allowed: Iterable[str] | None = None, *, what: str) -> tuple[str, ...]:
    """Split a comma-separated CLI list, checking each item against ``allowed``."""
    items = tuple(item.strip() for item in text.split(",") if item.strip())
    if not items:
        raise ValueError(f"{what} must not be empty")
    if allowed is not None:
        allowed = tuple(allowed)
        bad = [item for item in items if item not in allowed]
        if bad:
            raise ValueError(f"unknown {what} {bad}; choose from {list(allowed)}")
    return items
