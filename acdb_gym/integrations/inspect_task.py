"""ACDB as an inspect_ai task: ``inspect eval acdb_gym/acdb --model PROVIDER/MODEL``.

Needs ``pip install 'acdb_gym[inspect]'``. One task per ladder, levels, panel and LLM variant:

- **samples** are the levels' manifest seeds (the first ``seeds`` of each level, the sweep's
  seeds), with the ladder, level, index, seed, variant and panel as metadata;
- **the solver** (:func:`acdb_agent`) plays the episode exactly as
  :class:`~acdb_gym.agents.llm.LLMAgent` does, through a :class:`ToolEpisode`: the same system
  and session prompts, the same tools (the statistics tools' specs; inspect's tool schema keeps
  every keyword but ``minItems``/``maxItems``/``uniqueItems``, which the parser enforces
  anyway), one tool call per turn (``tool_choice`` any, no parallel calls), every turn a step
  (no call, several calls and invalid calls included), the env's step limit (16 raw, 32 stats)
  and the level's budget;
- **the scorer** (:func:`acdb_score`) returns every
  :class:`~acdb_gym.core.scoring.ScoreReport` field, with the mean of each (and the standard
  error of directed F1) as the task's metrics.

inspect's own limits (``--message-limit``, ``--token-limit``, ``--time-limit``) are not part
of the protocol: a sample they stop before the episode ends has no score and becomes a
``failed`` row. Any inspect model string works (``openai/...``, ``anthropic/...``, ``mockllm/model``, a local
server through ``--model-base-url``). :mod:`acdb_gym.integrations.inspect_log` turns the log
into result rows (``acdb inspect-import``) for ``acdb report``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

try:
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        GenerateConfig,
        get_model,
    )
    from inspect_ai.scorer import Metric, Score, Scorer, Target, mean, scorer, stderr
    from inspect_ai.solver import Generate, Solver, TaskState, solver
    from inspect_ai.tool import ToolInfo, ToolParams
except ImportError as error:  # pragma: no cover - the extra is part of dev
    raise ImportError(
        "the inspect_ai task needs inspect-ai: pip install 'acdb_gym[inspect]'"
    ) from error

from acdb_gym.agents.llm.conversation import ToolSpec
from acdb_gym.agents.llm.function_tools import Variant, check_variant, env_kwargs_for
from acdb_gym.core.ladders.shipped import (
    FRONTIER,
    FRONTIER_LADDER,
    LADDERS,
    LEVEL_NAMES,
    REAL,
    REAL_LADDER,
    get_level,
)
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.core.types import PANEL_ACTIVE, PANELS, Panel
from acdb_gym.integrations.episode import ToolEpisode, ToolOutcome, episode_record

__all__ = ["EPISODE_KEY", "acdb", "acdb_agent", "acdb_samples", "acdb_score", "tool_info"]

EPISODE_KEY = "acdb_episode"
"""The sample store key of the episode record (:func:`~.episode.episode_record`, plus token
counts and wall time); the scorer and the log converter read it."""


# --------------------------------------------------------------------------- the task
@task
def acdb(
    ladder: str = "v1",
    levels: str | Sequence[str] = LEVEL_NAMES,
    seeds: int = 8,
    variant: str = "llm_raw",
    panel: str = PANEL_ACTIVE,
) -> Task:
    """ACDB on a ladder's preflighted seeds (``-T ladder=v1 -T levels=L0,L2 -T seeds=8``).

    Args:
        ladder: ``"v0"``, ``"v1"``, a family ladder, ``"real"`` or ``"frontier"`` (whose default
            levels are all their levels; names stay ``X0..`` in the prompts).
        levels: level names, a list or one comma-separated string.
        seeds: the first ``seeds`` manifest seeds of each level (the sweep's ``--seeds``).
        variant: ``"llm_raw"`` (intervene + submit_graph), ``"llm_stats"`` (+ the statistics
            tools) or ``"llm_corr_obs"`` (observational, one submission).
        panel: ``"active"`` or ``"observational"`` (``llm_corr_obs`` is always observational).

    Raises:
        ValueError: an unknown ladder, level, variant or panel, or ``seeds`` out of range.
    """
    check_variant(variant)
    if panel not in PANELS:
        raise ValueError(f"panel must be one of {list(PANELS)}, got {panel!r}")
    names = _level_names(ladder, levels)
    played = str(env_kwargs_for(variant).get("panel", panel))  # type: ignore[arg-type]
    samples = acdb_samples(ladder=ladder, levels=names, seeds=seeds, variant=variant, panel=played)
    return Task(
        dataset=MemoryDataset(samples, name=f"acdb-{ladder}"),
        solver=acdb_agent(),
        scorer=acdb_score(),
        name=f"acdb_{ladder}_{variant}_{played}",
        metadata={"ladder": ladder, "levels": list(names), "variant": variant, "panel": played},
    )


INSPECT_LADDERS = {**LADDERS, REAL: REAL_LADDER, FRONTIER: FRONTIER_LADDER}
"""The ladders the task runs: L0-L5 ladders, ``real`` and ``frontier`` (the large ladder's
worlds are too big for a prompt)."""


def _level_names(ladder: str, levels: str | Sequence[str]) -> tuple[str, ...]:
    if ladder not in INSPECT_LADDERS:
        raise ValueError(f"ladder must be one of {sorted(INSPECT_LADDERS)}, got {ladder!r}")
    if tuple(levels) == LEVEL_NAMES and set(LEVEL_NAMES) - set(INSPECT_LADDERS[ladder]):
        levels = tuple(INSPECT_LADDERS[ladder])  # the default: every level of the ladder
    items = levels.split(",") if isinstance(levels, str) else list(levels)
    names = tuple(str(item).strip() for item in items if str(item).strip())
    if not names:
        raise ValueError(f"levels must name at least one level, got {levels!r}")
    for name in names:
        get_level(ladder, name)
    return names


def acdb_samples(
    *, ladder: str, levels: Sequence[str], seeds: int, variant: str, panel: str
) -> list[Sample]:
    """One sample per level and manifest seed, in the sweep's order (level, then index)."""
    size = min(len(get_level(ladder, name).manifest) for name in levels)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= size:
        raise ValueError(f"seeds must be an integer in [1, {size}], got {seeds!r}")
    samples = []
    for name in levels:
        level = get_level(ladder, name)
        for index in range(seeds):
            samples.append(
                Sample(
                    id=f"{ladder}-{name}-{index:03d}",
                    input=f"ACDB {ladder} {name}, manifest seed {index} ({variant}, {panel})",
                    metadata={
                        "ladder": ladder,
                        "level": name,
                        "manifest_index": index,
                        "seed": level.manifest_seed(index),
                        "variant": variant,
                        "panel": panel,
                    },
                )
            )
    return samples


# --------------------------------------------------------------------------- the solver
def tool_info(spec: ToolSpec) -> ToolInfo:
    """An inspect tool description from an LLM agent's tool spec (same name, description and
    JSON schema)."""
    return ToolInfo(
        name=spec.name,
        description=spec.description,
        parameters=ToolParams.model_validate(spec.parameters),
    )


@solver
def acdb_agent() -> Solver:
    """Play the sample's episode with the task's model, one tool call per turn, until the
    episode ends (a valid submission or the step limit)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        variant: Variant = meta["variant"]
        panel: Panel = meta["panel"]
        episode = ToolEpisode(
            ladder=meta["ladder"],
            level=meta["level"],
            manifest_index=int(meta["manifest_index"]),
            variant=variant,
            panel=panel,
        )
        state.messages = [
            ChatMessageSystem(content=episode.system_prompt),
            ChatMessageUser(content=episode.session_prompt),
        ]
        tools = [tool_info(spec) for spec in episode.tools]
        model = get_model()
        config = GenerateConfig(parallel_tool_calls=False)
        start = time.perf_counter()
        tokens_in = tokens_out = calls = 0
        try:
            while not episode.ended:
                output = await model.generate(
                    state.messages, tools=tools, tool_choice="any", config=config
                )
                calls += 1
                state.output = output
                state.messages.append(output.message)
                if output.usage is not None:
                    tokens_in += output.usage.input_tokens
                    tokens_out += output.usage.output_tokens
                state.messages.extend(_play_turn(episode, output.message))
        finally:
            episode.close()
        state.store.set(
            EPISODE_KEY,
            {
                **episode_record(episode),
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "llm_calls": calls,
                "wall_time": time.perf_counter() - start,
            },
        )
        state.completed = True
        return state

    return solve


def _play_turn(episode: ToolEpisode, message: ChatMessageAssistant) -> list[ChatMessage]:
    """Execute a reply as one step and return what the model is shown next."""
    calls = message.tool_calls or []
    if not calls:
        return [ChatMessageUser(content=episode.no_call().text)]
    if len(calls) > 1:
        outcome = episode.several_calls(len(calls))
        return [_tool_message(outcome, call.id, call.function) for call in calls]
    call = calls[0]
    outcome = episode.call(call.function, call.arguments, argument_error=call.parse_error)
    return [_tool_message(outcome, call.id, call.function)]


def _tool_message(outcome: ToolOutcome, call_id: str, function: str) -> ChatMessageTool:
    # The text carries the error (as the LLM agents send it); no inspect ToolCallError, whose
    # rendering differs between providers.
    return ChatMessageTool(content=outcome.text, tool_call_id=call_id, function=function)


# --------------------------------------------------------------------------- the scorer
# The inspect solver states no hypotheses, so its anytime F1 is undefined (DESIGN §6): the
# scorer leaves it out.
_FIELDS = tuple(name for name in SCORE_FIELDS if name != "anytime_f1")
_METRICS: dict[str, list[Metric]] = {name: [mean()] for name in _FIELDS}
_METRICS["directed_f1"] = [mean(), stderr()]


@scorer(metrics=_METRICS)
def acdb_score() -> Scorer:
    """Every ScoreReport field of the sample's episode (the record :func:`acdb_agent` stored)."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.store.get(EPISODE_KEY)
        if record is None:
            raise ValueError(
                f"sample {state.sample_id!r} has no finished episode ({EPISODE_KEY!r} is not in "
                "its store): an inspect limit stopped it, or its solver is not acdb_agent()"
            )
        values = {name: float(record["score"][name]) for name in _FIELDS}
        end = "step limit (empty graph scored)" if record["truncated"] else "submitted"
        return Score(
            value=values,
            explanation=(
                f"directed F1 {values['directed_f1']:.3f}, SHD {values['shd']:g}, "
                f"{record['steps']} steps ({record['invalid_actions']} invalid), {end}"
            ),
            metadata={key: record[key] for key in ("steps", "invalid_actions", "truncated")},
        )

    return score
