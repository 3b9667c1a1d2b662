"""A masked ``MultiDiscrete`` view of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` (DESIGN §8).

:class:`DiscreteActions` gives standard RL algorithms (PPO, sb3-contrib's MaskablePPO, TorchRL's
categorical policies) the full env as one ``MultiDiscrete`` action with an action mask, and a
graph encoding in which every submission is acyclic by construction: a node order (one
priority per node) and, per pair, no edge, an edge along the order, or an undirected edge.

>>> import gymnasium as gym
>>> from acdb_gym.envs import actions
>>> env = DiscreteActions(gym.make("ACDB-L1-v0"))
>>> _ = env.reset(seed=0)
>>> env.action_space.nvec[:5].tolist()  # kind, i, j, regime, value step
[2, 6, 6, 7, 4]
>>> env.decode(env.encode(actions.Submit(PDAG.from_edges(6, directed=[(0, 1)]))))
Submit(graph=PDAG(n_nodes=6, directed=[(0, 1)], undirected=[]))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.types import PANEL_ACTIVE
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv, Observation
from acdb_gym.envs.actions import Action, ActionKind, EncodedAction

__all__ = ["VALUE_STEPS", "DiscreteActions", "DiscreteLayout"]

VALUE_STEPS: tuple[float, ...] = (-3.0, -1.5, 1.5, 3.0)
"""The intervention values on offer, in observational standard deviations from the target's
observational mean (the design env intervenes at +3)."""

_KIND, _NODE_I, _NODE_J, _REGIME, _VALUE = range(5)
_HEAD = 5
_NONE, _ALONG, _UNDIRECTED = range(3)
"""States of the pair entry of ``(i, j)``, ``i < j``: no edge, an edge from the earlier of the
two in the node order to the later, an undirected edge."""


@dataclass(frozen=True)
class DiscreteLayout:
    """The layout of a discrete action (see :class:`DiscreteActions`).

    Args:
        n_nodes: the number of variables ``d``.
        n_regimes: ``max_interventions + 1`` (regime 0 is the observational data).
        kinds: the ``OneOf`` indices the kind entry selects among, in order.
    """

    n_nodes: int
    n_regimes: int
    kinds: tuple[int, ...]
    kind_names: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.n_nodes < 2:
            raise ValueError(f"n_nodes must be at least 2, got {self.n_nodes}")
        names = actions.kind_names()
        if not self.kinds or not all(0 <= k < len(names) for k in self.kinds):
            raise ValueError(f"kinds must be action kinds in [0, {len(names)}), got {self.kinds}")
        object.__setattr__(self, "kind_names", tuple(names[k] for k in self.kinds))

    @property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows and columns of the pairs ``i < j``, in the order of the pair entries."""
        rows, columns = np.triu_indices(self.n_nodes, k=1)
        return rows, columns

    @property
    def nvec(self) -> np.ndarray:
        """The choices of each entry: kind, ``i``, ``j``, regime, value step, ``d`` condition
        bits, ``d`` node priorities, one 3-way entry per pair ``i < j``."""
        d = self.n_nodes
        head = [len(self.kinds), d, d, self.n_regimes, len(VALUE_STEPS)]
        return np.array(head + [2] * d + [d] * d + [3] * (d * (d - 1) // 2), dtype=np.int64)

    @property
    def space(self) -> spaces.MultiDiscrete:
        return spaces.MultiDiscrete(self.nvec)

    @property
    def _order_slice(self) -> slice:
        return slice(_HEAD + self.n_nodes, _HEAD + 2 * self.n_nodes)

    @property
    def _pair_slice(self) -> slice:
        return slice(_HEAD + 2 * self.n_nodes, None)

    # ------------------------------------------------------------------ decoding
    def decode(self, vector: Any, mean: np.ndarray, sd: np.ndarray) -> EncodedAction:
        """The ``OneOf`` action of a discrete vector; ``mean`` and ``sd`` are the observational
        sample's, which turn a value step into an intervention value.

        Raises:
            ValueError: ``vector`` is not an element of :attr:`space`.
        """
        entries = np.asarray(vector)
        if not self.space.contains(entries.astype(np.int64)) or entries.dtype.kind not in "iu":
            raise ValueError(
                f"a discrete action must be an element of {self.space}, got {vector!r}"
            )
        values = entries.astype(np.int64).tolist()
        name = self.kind_names[values[_KIND]]
        if name == "submit_graph":
            return int(ActionKind.SUBMIT_GRAPH), {"graph": self._graph_codes(entries)}
        i = values[_NODE_I]
        if name == "intervene":
            value = mean[i] + VALUE_STEPS[values[_VALUE]] * sd[i]
            bound = actions.VALUE_BOUND
            return actions.intervene(i, float(np.clip(value, -bound, bound)))
        j = values[_NODE_J]
        bits = entries[_HEAD : _HEAD + self.n_nodes]
        regime = values[_REGIME]
        arguments: dict[str, Any] = {
            "i": i,
            "j": j,
            # i and j are never conditioned on: their bits are ignored.
            "cond": tuple(int(c) for c in np.flatnonzero(bits) if c not in (i, j)),
            "regime": None if regime == 0 else regime - 1,
        }
        tool = actions.action_class(name)
        return actions.encode(
            tool(**{key: arguments[key] for key in tool.tool.fields}), n_nodes=self.n_nodes
        )

    def order(self, entries: np.ndarray) -> np.ndarray:
        """The node order of the priority entries: by priority, ties by node index."""
        priorities = np.asarray(entries)[self._order_slice]
        return np.lexsort((np.arange(self.n_nodes), priorities))

    def _graph_codes(self, entries: np.ndarray) -> np.ndarray:
        """The ``submit_graph`` code matrix: every directed edge runs forward in the order, so
        the graph is acyclic whatever the entries."""
        rank = np.empty(self.n_nodes, dtype=np.int64)
        rank[self.order(entries)] = np.arange(self.n_nodes)
        states = np.asarray(entries)[self._pair_slice]
        rows, columns = self.pairs
        forward = rank[rows] < rank[columns]
        sources = np.where(forward, rows, columns)
        targets = np.where(forward, columns, rows)
        codes = np.zeros((self.n_nodes, self.n_nodes), dtype=np.int64)
        along, undirected = states == _ALONG, states == _UNDIRECTED
        codes[sources[along], targets[along]] = actions.DIRECTED
        codes[rows[undirected], columns[undirected]] = actions.UNDIRECTED
        codes[columns[undirected], rows[undirected]] = actions.UNDIRECTED
        return codes

    # ------------------------------------------------------------------ encoding
    def encode(self, action: Action, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
        """A discrete vector that decodes to ``action`` (a typed action); an ``intervene`` takes
        the value step nearest its value.

        Raises:
            ValueError: the kind is not among :attr:`kinds`, or a submission is not a PDAG.
        """
        vector = np.zeros(len(self.nvec), dtype=np.int64)
        if isinstance(action, actions.Submit):
            vector[_KIND] = self._kind_index(int(ActionKind.SUBMIT_GRAPH))
            self._graph_entries(action.graph, vector)
        elif isinstance(action, actions.Intervene):
            vector[_KIND] = self._kind_index(int(ActionKind.INTERVENE))
            vector[_NODE_I] = action.var
            step = (action.value - mean[action.var]) / sd[action.var]
            vector[_VALUE] = int(np.argmin(np.abs(np.asarray(VALUE_STEPS) - step)))
        else:
            vector[_KIND] = self._kind_index(actions.kind_names().index(action.tool.name))
            fields = action.tool.fields
            vector[_NODE_I] = getattr(action, "i", 0)
            vector[_NODE_J] = getattr(action, "j", 0)
            if "cond" in fields:
                vector[list(_HEAD + c for c in action.arguments["cond"])] = 1
            if "regime" in fields:
                regime = action.data_regime
                vector[_REGIME] = 0 if regime is None else regime + 1
        return vector

    def _kind_index(self, kind: int) -> int:
        if kind not in self.kinds:
            raise ValueError(
                f"kind {actions.kind_names()[kind]!r} is not in this layout's kinds "
                f"{list(self.kind_names)}"
            )
        return self.kinds.index(kind)

    def _graph_entries(self, graph: object, vector: np.ndarray) -> None:
        if not isinstance(graph, PDAG) or graph.n_nodes != self.n_nodes:
            raise ValueError(f"the discrete layout encodes PDAGs over {self.n_nodes} nodes")
        order = _topological_order(np.asarray(graph.directed))
        vector[self._order_slice][order] = np.arange(self.n_nodes)
        rows, columns = self.pairs
        states = np.full(rows.size, _NONE)
        directed, undirected = np.asarray(graph.directed), np.asarray(graph.undirected)
        states[directed[rows, columns] | directed[columns, rows]] = _ALONG
        states[undirected[rows, columns]] = _UNDIRECTED
        vector[self._pair_slice] = states


def _topological_order(directed: np.ndarray) -> np.ndarray:
    """Nodes in an order where every edge of the (acyclic) ``directed`` runs forward."""
    remaining = list(range(len(directed)))
    order: list[int] = []
    while remaining:
        sources = [v for v in remaining if not directed[remaining, v].any()]
        order.append(sources[0])
        remaining.remove(sources[0])
    return np.array(order, dtype=np.int64)


class DiscreteActions(
    gym.ActionWrapper[Observation, np.ndarray, EncodedAction], gym.utils.RecordConstructorArgs
):
    """The full env driven by one masked ``MultiDiscrete`` action (DESIGN §8, "Discrete
    actions"), for PPO, MaskablePPO and categorical policies.

    ## Action Space

    ``MultiDiscrete`` with one entry per choice (:attr:`DiscreteLayout.nvec`):

    | entries | choices | meaning |
    |---------|---------|---------|
    | ``0`` | the variant's kinds | the kind (``intervene`` and ``submit_graph`` in the raw active variant) |
    | ``1`` | ``d`` | ``var`` of ``intervene``, ``i`` of a statistics tool |
    | ``2`` | ``d`` | ``j`` of a statistics tool |
    | ``3`` | ``max_interventions + 1`` | ``regime`` of a statistics tool (0: the observational data) |
    | ``4`` | 4 | the value of ``intervene``: the target's observational mean plus -3, -1.5, 1.5 or 3 observational sd (:data:`VALUE_STEPS`) |
    | ``5 .. 5 + d`` | 2 each | ``cond`` of a statistics tool (bits of ``i`` and ``j`` ignored) |
    | next ``d`` | ``d`` each | a priority per node: the node order is by priority, ties by index |
    | then ``d (d - 1) / 2`` | 3 each | per pair ``i < j`` (row-major): no edge, an edge from the earlier node in the order to the later, an undirected edge |

    Every submission is acyclic by construction: its directed edges all run forward in one
    order. Entries the decoded kind does not use are ignored.

    ## Action masks

    :meth:`action_masks` (sb3-contrib's MaskablePPO reads it) is one boolean per choice,
    entry after entry (length ``sum(nvec)``): ``intervene`` only while the budget lasts (active
    panel), a ``regime`` only once its data exist; every other choice is always allowed. A
    decoded action the env still refuses (``i == j``, a constant variable) is an invalid step.

    ## Arguments

    * ``env``: an :class:`~acdb_gym.envs.acdb_env.ACDBEnv`, wrapped or not.
    * ``kinds``: ``"variant"`` (default: the kinds the variant carries out) or ``"all"``.
    """

    def __init__(self, env: gym.Env[Observation, EncodedAction], *, kinds: str = "variant") -> None:
        gym.utils.RecordConstructorArgs.__init__(self, kinds=kinds)
        gym.ActionWrapper.__init__(self, env)
        base = env.unwrapped
        if not isinstance(base, ACDBEnv):
            raise TypeError(f"DiscreteActions wraps an ACDBEnv, got {type(base).__name__}")
        if kinds not in ("variant", "all"):
            raise ValueError(f"kinds must be 'variant' or 'all', got {kinds!r}")
        oneof = base.action_space
        assert isinstance(oneof, spaces.OneOf)
        every = tuple(range(len(oneof.spaces)))
        chosen = getattr(oneof, "sampled_kinds", every) if kinds == "variant" else every
        self.layout = DiscreteLayout(base.n_nodes, base.max_interventions + 1, tuple(chosen))
        self.action_space = self.layout.space
        self._mean = np.zeros(base.n_nodes)
        self._sd = np.ones(base.n_nodes)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        sample = self._base.session.observe()  # the agent's own data: the observational sample
        sd = sample.std(axis=0, ddof=1)
        self._mean, self._sd = sample.mean(axis=0), np.where(sd > 0, sd, 1.0)
        return observation, info

    @property
    def _base(self) -> ACDBEnv:
        base = self.env.unwrapped
        assert isinstance(base, ACDBEnv)
        return base

    def action(self, action: np.ndarray) -> EncodedAction:
        """The env's ``OneOf`` action of a discrete vector (:meth:`DiscreteLayout.decode`)."""
        return self.layout.decode(action, self._mean, self._sd)

    def decode(self, vector: np.ndarray) -> Action:
        """The typed action of a discrete vector (for logs and tests)."""
        return actions.decode(self.action(vector), n_nodes=self.layout.n_nodes)

    def encode(self, action: Action) -> np.ndarray:
        """A discrete vector of a typed action (:meth:`DiscreteLayout.encode`)."""
        return self.layout.encode(action, self._mean, self._sd)

    def action_masks(self) -> np.ndarray:
        """One boolean per choice of every entry (see the class docstring); call after
        ``reset``."""
        base = self._base
        session = base.session
        layout = self.layout
        masks = [np.ones(int(n), dtype=bool) for n in layout.nvec]
        can_intervene = base.panel == PANEL_ACTIVE and session.budget_remaining > 0
        for index, name in enumerate(layout.kind_names):
            if name == "intervene":
                masks[_KIND][index] = can_intervene and not session.sealed
        masks[_REGIME] = np.arange(layout.n_regimes) <= session.interventions_used
        return np.concatenate(masks)
