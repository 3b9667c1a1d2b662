"""What the model is shown after each reply: an executed call's result, or the note after a
text-only reply in thinking mode."""

from __future__ import annotations

from typing import Any

import numpy as np

from acdb_gym.envs.acdb_env import VALUES_KEY
from acdb_gym.envs.actions import Action, Intervene, Submit

from . import prompts

__all__ = ["describe_result", "n_experiments", "text_turn_note"]


def describe_result(action: Action, observation: Any, *, n_nodes: int, real: bool = False) -> str:
    """The text of an executed call's result, from the observation after the step: the
    experiment's samples, the submission's acknowledgement, or a statistic with its regime
    (``real``: experiments are real ones, on measured data). Shared by
    :class:`~acdb_gym.agents.llm.LLMAgent` and the integrations' tool episodes, so every
    harness shows the same text."""
    if isinstance(action, Intervene):
        experiment = n_experiments(observation, n_nodes)
        samples = np.asarray(observation["interventional"][experiment - 1])
        return prompts.format_intervention(
            action, experiment=experiment, samples=samples, real=real
        )
    if isinstance(action, Submit):
        return "The graph was submitted."
    statistic, p_value, _ = (float(v) for v in observation["tool_result"])
    regime = getattr(action, "regime", None)
    if regime is None:
        n_obs = np.shape(observation["observational"])[0]
        where = f"the observational data (n = {n_obs})"
    else:
        target = int(observation["targets"][regime])
        value = float(observation[VALUES_KEY][regime])
        n_int = np.shape(observation["interventional"])[1]
        what = prompts.intervention_text(target, value, real=real)
        where = f"intervention {regime + 1}, {what} (n = {n_int})"
    return prompts.format_statistic(action, statistic=statistic, p_value=p_value, regime_text=where)


def text_turn_note(left: int) -> str:
    """What the model is shown after a text-only reply in thinking mode."""
    if left <= 0:
        return "Noted. No text-only replies are left: every reply from now on must call a tool."
    return (
        f"Noted. {left} more text-only repl{'y' if left == 1 else 'ies'} allowed; each uses a "
        "step. Call a tool when you are ready to act."
    )


def n_experiments(observation: Any, n_nodes: int) -> int:
    """Interventions performed so far (unused slots have target ``d``)."""
    return int(np.count_nonzero(np.asarray(observation["targets"]) < n_nodes))
