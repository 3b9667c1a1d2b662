"""The jobs of a sweep: :func:`plan_jobs` turns a :class:`~acdb_gym.sweep.config.SweepConfig`
into its jobs, in a deterministic order, each carrying its agent's resolved entry."""

from __future__ import annotations

from typing import Any

from acdb_gym.registry import AgentEntry
from acdb_gym.sweep.config import SweepConfig, panels_for
from acdb_gym.sweep.jobs import Job

__all__ = ["agent_config", "plan_jobs"]


def agent_config(entry: AgentEntry, options: dict[str, Any]) -> dict[str, Any]:
    """The options that define an agent (part of its job id): those the entry names, and a
    saved policy's digest."""
    config = {k: options[k] for k in entry.options if options.get(k) is not None}
    if entry.takes_path:
        # The model's content is part of the job: a replaced file is a new job, not "done".
        from acdb_gym.agents.rl.agent import policy_digest

        config["model_sha256"] = policy_digest(entry.model_path)
    return config


def plan_jobs(config: SweepConfig) -> list[Job]:
    """Every job of ``config``, in a deterministic order: agents, their panels, levels,
    manifest indices, repeats."""
    jobs = []
    spec_texts = {level: config.level_spec(level) for level in config.levels}
    for agent, entry in zip(config.agents, config.entries, strict=True):
        options = agent_config(entry, config.agent_options)
        for panel in panels_for(entry, config.panels):
            for level in config.levels:
                for index in config.indices:
                    for repeat in range(config.repeats):
                        jobs.append(
                            Job(
                                config.ladder,
                                level,
                                index,
                                agent,
                                panel,
                                entry.tools,
                                repeat,
                                options,
                                spec_texts[level],
                                entry=entry,
                            )
                        )
    return jobs
