"""One ACDB episode played one tool call at a time, for harnesses that own the model loop.

inspect_ai and MCP clients call tools themselves; :class:`ToolEpisode` gives them exactly what
:class:`~acdb_gym.agents.llm.LLMAgent` gives a model: the same tools (built by
:func:`~acdb_gym.agents.llm.function_tools.build_tools` from the statistics tools' specs), the same
prompts, the same step limit and budget (the env's, from
:func:`~acdb_gym.agents.llm.function_tools.env_kwargs_for`), the same parser, and the same result texts.
Every call, valid or not, is one ``env.step``: a call that cannot be executed is sent to the env
as :data:`~acdb_gym.agents.llm.INVALID_ACTION`, so it costs a step and changes nothing else.
A call after the end changes nothing and costs nothing.

>>> episode = ToolEpisode(ladder="v0", level="L0", manifest_index=0)
>>> [tool.name for tool in episode.tools]
['intervene', 'submit_graph']
>>> episode.call("intervene", {"variable": "X9", "value": 1.0}).is_error
True
>>> episode.steps, episode.invalid_actions
(1, 1)
>>> outcome = episode.call("submit_graph", {"directed_edges": [], "undirected_edges": []})
>>> outcome.ended, episode.score["directed_f1"]
(True, 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym import __version__
from acdb_gym.agents.llm import INVALID_ACTION, prompts
from acdb_gym.agents.llm.conversation import ToolSpec
from acdb_gym.agents.llm.feedback import describe_result, n_experiments
from acdb_gym.agents.llm.function_tools import Variant, build_tools, check_variant, env_kwargs_for
from acdb_gym.agents.llm.parsing import ToolCallError, parse_tool_arguments
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.core.types import PANEL_ACTIVE, PANELS, Panel
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.results import Location, ResultRow, ResultsFileError, row_scores
from acdb_gym.row_values import clip_error

__all__ = [
    "ENDED_ERROR",
    "IDENTITY_KEYS",
    "RECORD_KEYS",
    "ToolEpisode",
    "ToolOutcome",
    "episode_record",
    "job_id",
    "result_row",
]

ENDED_ERROR = "Error: the episode has ended; no further calls are executed."
"""The result of any call after the end."""


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call returned.

    Attributes:
        text: the result shown to the model (the LLM agents' text, with the status line).
        is_error: the call was not executed (bad tool, bad arguments, refused by the env, or
            made after the end).
        ended: the episode is over after this call (a valid submission, or the step limit).
    """

    text: str
    is_error: bool
    ended: bool


class ToolEpisode:
    """An episode of a level's full env (``get_level(ladder, level).env_id``) on one manifest seed, played through tool calls.

    Args:
        ladder: ``"v0"`` or ``"v1"``.
        level: ``"L0"`` .. ``"L5"``.
        manifest_index: the level's preflighted seed, ``0 .. 199``.
        variant: ``"llm_raw"``, ``"llm_stats"`` or ``"llm_corr_obs"`` (the tools offered).
        panel: ``"active"`` or ``"observational"`` (``llm_corr_obs`` is always observational).

    Raises:
        ValueError: an unknown ladder, level, variant or panel, or an index out of range.
    """

    def __init__(
        self,
        *,
        ladder: str,
        level: str,
        manifest_index: int,
        variant: Variant = "llm_raw",
        panel: Panel = PANEL_ACTIVE,
    ) -> None:
        check_variant(variant)
        if panel not in PANELS:
            raise ValueError(f"panel must be one of {list(PANELS)}, got {panel!r}")
        kwargs = {"panel": panel, **env_kwargs_for(variant)}
        self.ladder = ladder
        self.level = level
        self.manifest_index = manifest_index
        self.seed = get_level(ladder, level).manifest_seed(manifest_index)
        self.variant: Variant = variant
        self.panel: Panel = kwargs["panel"]
        self.env_tools: str = kwargs["tools"]
        self._env = ACDBEnv(level, ladder=ladder, **kwargs)
        self._observation, info = self._env.reset(options={"manifest_index": manifest_index})
        info = {**info, **self._env.details()}
        self.max_steps: int = self._env.max_steps  # the env's default limit for this episode
        self.n_nodes = int(info["n_nodes"])
        self.budget = int(info["budget"])
        world = prompts.world_options(info)  # hidden confounders, measured data, targets
        self.latent, self.real_data = int(world["latent"]), bool(world["real_data"])
        self.tools: tuple[ToolSpec, ...] = build_tools(
            variant, panel=self.panel, n_nodes=self.n_nodes, latent=self.latent > 0
        )
        self._names = tuple(tool.name for tool in self.tools)
        self.system_prompt = prompts.task_prompt(
            variant, panel=self.panel, n_nodes=self.n_nodes, **world
        )
        self.session_prompt = prompts.session_prompt(
            variant,
            observational=np.asarray(self._observation["observational"]),
            panel=self.panel,
            budget=self.budget,
            max_steps=self.max_steps,
            n_int=int(np.shape(self._observation["interventional"])[1]),
        )
        self._info: dict[str, Any] = info
        self._ended = False
        self._truncated = False

    # ------------------------------------------------------------------ state
    @property
    def ended(self) -> bool:
        """The episode is over (submitted, or the step limit was reached)."""
        return self._ended

    @property
    def truncated(self) -> bool:
        """The step limit ended the episode (the empty graph was scored)."""
        return self._truncated

    @property
    def steps(self) -> int:
        """Steps taken (every call before the end, valid or not)."""
        return int(self._info["steps"])

    @property
    def invalid_actions(self) -> int:
        """Steps whose call was not executed."""
        return int(self._info["invalid_actions"])

    @property
    def score(self) -> dict[str, Any] | None:
        """The :class:`~acdb_gym.core.scoring.ScoreReport` fields once ended, else None."""
        return dict(self._info["score"]) if self._ended else None

    # ------------------------------------------------------------------ calls
    def call(self, name: str, arguments: Any, *, argument_error: str | None = None) -> ToolOutcome:
        """Execute one tool call as one step.

        Args:
            name: the tool called.
            arguments: its decoded JSON arguments.
            argument_error: why the arguments could not be decoded (they are then not used).
        """
        if self._ended:
            return ToolOutcome(ENDED_ERROR, True, True)
        try:
            if argument_error is not None:
                raise ToolCallError(
                    f"the arguments of {name} are not valid JSON ({argument_error}); "
                    "send a JSON object"
                )
            action = parse_tool_arguments(
                name,
                arguments,
                offered=self._names,
                n_nodes=self.n_nodes,
                n_experiments=n_experiments(self._observation, self.n_nodes),
                latent=self.latent > 0,
            )
        except ToolCallError as error:
            return self.reject(f"Error: {error}. The call was not executed and used a step.")
        self._step(actions.encode(action, n_nodes=self.n_nodes))
        refusal = self._info.get("error")
        if refusal is not None:
            return self._outcome(f"Error: {refusal}", is_error=True)
        text = describe_result(action, self._observation, n_nodes=self.n_nodes, real=self.real_data)
        return self._outcome(text, is_error=False)

    def reject(self, message: str) -> ToolOutcome:
        """Charge a step for a turn that cannot be executed (no call, several calls, a bad
        call) and return ``message`` with the status line."""
        if self._ended:
            return ToolOutcome(ENDED_ERROR, True, True)
        self._step(INVALID_ACTION)
        return self._outcome(message, is_error=True)

    def no_call(self) -> ToolOutcome:
        """A turn without a tool call: a step, with the LLM agents' error text."""
        return self.reject(prompts.no_tool_call_error(self._names))

    def several_calls(self, n_calls: int) -> ToolOutcome:
        """A turn with ``n_calls > 1`` tool calls: none is executed, one step is used."""
        return self.reject(prompts.multiple_calls_error(n_calls))

    def close(self) -> None:
        """Release the env."""
        self._env.close()

    # ------------------------------------------------------------------ internals
    def _step(self, action: Any) -> None:
        observation, _, terminated, truncated, info = self._env.step(action)
        # The numeric info and the env's details (the refusal's text, the report at the end).
        self._observation, self._info = observation, {**info, **self._env.details()}
        self._ended = bool(terminated or truncated)
        self._truncated = bool(truncated)

    def _outcome(self, text: str, *, is_error: bool) -> ToolOutcome:
        status = prompts.status_line(
            budget_remaining=int(self._observation["budget_remaining"][0]),
            steps_remaining=int(self._observation["steps_remaining"][0]),
            panel=self.panel,
        )
        lines = [text, status]
        if self.truncated:
            lines.append(
                "The step limit was reached: the episode ended and the empty graph was scored."
            )
        elif self._ended:
            lines.append("The episode has ended.")
        return ToolOutcome("\n".join(lines), is_error, self._ended)


# --------------------------------------------------------------------------- result rows
RECORD_KEYS = (
    "ladder",
    "level",
    "manifest_index",
    "seed",
    "variant",
    "panel",
    "tools",
    "score",
    "steps",
    "invalid_actions",
    "truncated",
)
"""The keys of :meth:`ToolEpisode.record`, all a result row needs from the episode."""


def episode_record(episode: ToolEpisode) -> dict[str, Any]:
    """An ended episode as plain JSON values (harnesses store it in their own logs).

    Raises:
        ValueError: the episode has not ended.
    """
    score = episode.score
    if score is None:
        raise ValueError(
            f"episode {episode.ladder}/{episode.level}/{episode.manifest_index} has not ended"
        )
    return {
        "ladder": episode.ladder,
        "level": episode.level,
        "manifest_index": episode.manifest_index,
        "seed": episode.seed,
        "variant": episode.variant,
        "panel": episode.panel,
        "tools": episode.env_tools,
        "score": {name: score[name] for name in SCORE_FIELDS},
        "steps": episode.steps,
        "invalid_actions": episode.invalid_actions,
        "truncated": episode.truncated,
    }


def job_id(
    record: Mapping[str, Any], *, agent: str, agent_config: Mapping[str, Any], repeat: int
) -> str:
    """The sweep's job id of an episode: the same ladder, level, seed, agent, panel, tools,
    repeat and config give the same id, so the report keeps one row per job."""
    from acdb_gym.sweep.jobs import Job

    return Job(
        str(record["ladder"]),
        str(record["level"]),
        int(record["manifest_index"]),
        agent,
        str(record["panel"]),
        str(record["tools"]),
        repeat,
        dict(agent_config),
    ).job_id


IDENTITY_KEYS = ("ladder", "level", "manifest_index", "seed", "panel", "tools")
"""The keys of a record that say which job it is (all a failed row needs)."""


def result_row(
    record: Mapping[str, Any],
    *,
    agent: str,
    agent_config: Mapping[str, Any],
    repeat: int = 0,
    wall_time: float,
    tokens_in: int | None = None,
    tokens_out: int | None = None,
    agent_stats: Mapping[str, Any] | None = None,
    error: str | None = None,
) -> ResultRow:
    """The result row of an episode record (:func:`episode_record`), as the sweep writes one.

    With ``error``, a ``failed`` row (no scores, as the sweep records a job that raised); the
    record then needs only :data:`IDENTITY_KEYS`.

    Raises:
        ResultsFileError: the record lacks a key or holds a value of the wrong type.
    """
    where = Location(Path(f"<{agent} episode>"))
    needed = IDENTITY_KEYS if error is not None else RECORD_KEYS
    missing = [key for key in needed if key not in record]
    if missing:
        raise ResultsFileError(where, f"episode record lacks {missing}")
    row: dict[str, Any] = {
        "job_id": job_id(record, agent=agent, agent_config=agent_config, repeat=repeat),
        **{key: record[key] for key in IDENTITY_KEYS},
        "agent": agent,
        "agent_config": dict(agent_config),
        "repeat": repeat,
        "version": __version__,
        "privileged": False,
        "wall_time": float(wall_time),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
    }
    if error is not None:
        row.update(status="failed", error=clip_error(error), draws=0, steps=None)
        row.update(row_scores(dict.fromkeys(SCORE_FIELDS), failed=True))
        row.update(invalid_actions=None, truncated=None)
        row.update(tokens_in=None, tokens_out=None)
    else:
        score = record["score"]
        row.update(status="ok", error=None, draws=1, agent_stats=dict(agent_stats or {}))
        row.update(row_scores({name: score.get(name) for name in SCORE_FIELDS}))
        row.update({key: record[key] for key in ("steps", "invalid_actions", "truncated")})
    return ResultRow.from_dict(row, where=where)
