"""The capped-efficiency exploit (``cap:AGENT``): an active agent stopped at the ``|I*|`` it
predicts from its own observational graph (DESIGN §6, "Anytime F1"; §9).

The paper's efficiency ``η = |I*| / used`` is 100% for any episode that spends at most ``|I*|``
experiments, whatever its graph is worth, and ``|I*|`` is predictable from what an agent sees:
its own CPDAG before any experiment gives a DAG of the class, whose minimum intervention set
(:func:`~acdb_gym.core.graphs.minimum_intervention_set`) is often exactly the true one.
:class:`CappedAgent` wraps any agent that states its hypotheses (``states_hypotheses``): it
passes the inner agent's actions through until the inner agent has run as many experiments as
that prediction, then submits the graph the inner agent stated with its next intervention (its
current estimate) instead. It is a shortcut to measure, never a policy: the shortcut gate
(``acdb audit``) runs it beside the agent it wraps, to show that it buys η and not the anytime
F1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG, has_directed_path, meek_closure
from acdb_gym.core.graphs.interventions import minimum_intervention_set
from acdb_gym.envs import actions

__all__ = ["CAPPABLE_AGENTS", "CappedAgent", "predicted_i_star"]

CAPPABLE_AGENTS: Final = (
    "pc_greedy",
    "pc_active",
    "bic_active",
    "lingam_active",
    "fci_active",
)
"""The registered agents ``cap:`` may wrap: the active baselines that state their hypotheses."""


def predicted_i_star(graph: PDAG) -> int:
    """``|I*|`` of a DAG in ``graph``'s class, as an agent could predict it from its own CPDAG.

    The DAG: the lowest undirected edge ``i - j`` (row-major) is oriented ``i -> j`` (``j -> i``
    if that closes a cycle), Meek's rules close the graph, and so on until nothing is
    undirected (on a CPDAG every such choice stays in the class).

    >>> predicted_i_star(PDAG.from_edges(3, undirected=[(0, 1), (1, 2)]))
    1
    """
    directed = graph.directed.copy()
    undirected = graph.undirected.copy()
    while undirected.any():
        i, j = (int(k) for k in np.argwhere(np.triu(undirected))[0])
        tail, head = (j, i) if has_directed_path(directed, j, i) else (i, j)
        directed[tail, head] = True
        undirected[tail, head] = undirected[head, tail] = False
        closed = meek_closure(PDAG(directed, undirected))
        directed, undirected = closed.directed.copy(), closed.undirected.copy()
    return len(minimum_intervention_set(DAG(directed)))


class CappedAgent:
    """``inner``, stopped at the ``|I*|`` it predicts from its first stated graph.

    Args:
        inner: an agent that states its hypotheses with every intervention
            (``states_hypotheses = True``), e.g. :class:`~acdb_gym.baselines.active.PCActiveAgent`.
        name: the name in result rows (``cap:<inner>``).

    Raises:
        ValueError: ``inner`` does not state hypotheses.
    """

    states_hypotheses = True

    def __init__(self, inner: Any, *, name: str | None = None) -> None:
        if not getattr(inner, "states_hypotheses", False):
            raise ValueError(
                f"cap: needs an agent that states its hypotheses; {getattr(inner, 'name', inner)!r} "
                "does not"
            )
        self.inner = inner
        self.name = name or f"cap:{getattr(inner, 'name', 'agent')}"
        self._cap: int | None = None
        self._used = 0

    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Reset the inner agent; the cap is set at its first intervention."""
        self.inner.reset(observation, info)
        self._cap = None
        self._used = 0

    def act(self, observation: Any, info: Mapping[str, Any]) -> Any:
        """The inner agent's action, or the submission of its current graph once it has run
        the predicted ``|I*|`` experiments."""
        action = self.inner.act(observation, info)
        n_nodes = int(np.asarray(observation["observational"]).shape[1])
        bare, codes = actions.split_hypothesis(action, n_nodes=n_nodes)
        if codes is None or actions.intervene_request(bare, n_nodes) is None:
            return action
        stated = actions.hypothesis_from_codes(codes)
        if self._cap is None:
            self._cap = max(1, predicted_i_star(stated))
        if self._used >= self._cap:
            return actions.submit(stated)
        self._used += 1
        return action

    def episode_stats(self) -> dict[str, Any]:
        """The cap, with the inner agent's own statistics."""
        inner = getattr(self.inner, "episode_stats", None)
        return {**(inner() if callable(inner) else {}), "cap": self._cap}
