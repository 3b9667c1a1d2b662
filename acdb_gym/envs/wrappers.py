"""A flat-action view of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` for RL stacks (DESIGN §8).

The full env's actions are a ``OneOf`` of ``(kind, payload)`` pairs, which RL libraries that act
only on ``Box``, ``Discrete`` or ``MultiDiscrete`` spaces (stable-baselines3 among them) cannot
sample, store or learn. :class:`FlatActions` gives such a library one ``Box`` and decodes each
of its vectors into the exact ``OneOf`` action the env takes.

>>> import gymnasium as gym
>>> from acdb_gym.envs import actions
>>> env = FlatActions(gym.make("ACDB-L1-v0"))
>>> env.action_space
Box(-1.0, 1.0, (26,), float32)
>>> flat = env.encode_flat(actions.Intervene(2, 2.5))
>>> env.action(flat)[0], env.decode(flat)
(0, Intervene(var=2, value=2.5))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from acdb_gym.core.graphs import PDAG
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv, Observation
from acdb_gym.envs.actions import Action, ActionKind, EncodedAction

__all__ = [
    "FLAT_ACTIONS",
    "KIND",
    "NODE_I",
    "NODE_J",
    "REGIME",
    "VALUE",
    "FlatActions",
    "FlatLayout",
    "FlatObservation",
    "KindSet",
    "make_flat",
]

FlatActionName = Literal["box", "discrete"]
FLAT_ACTIONS: tuple[FlatActionName, ...] = ("box", "discrete")
"""The flat ids' action layouts: ``"box"`` (:class:`FlatActions`, the default) and
``"discrete"`` (:class:`~acdb_gym.envs.discrete_actions.DiscreteActions`: masked, and every
submission acyclic by construction)."""

KindSet = Literal["variant", "all"]
"""Which action kinds the ``kind`` entry selects among: the variant's (those its
``action_space.sample()`` draws) or every kind of the ``OneOf``."""

KIND, NODE_I, NODE_J, REGIME, VALUE = range(5)
"""Indices of the five leading entries of a flat action."""
_HEAD = 5

_PAIR_NONE, _PAIR_FORWARD, _PAIR_BACKWARD, _PAIR_UNDIRECTED = range(4)
"""States of the pair entry of ``(i, j)``, ``i < j``: no edge, ``i -> j``, ``j -> i``, ``i - j``."""
_PAIR_STATES = 4


def _bins(x: np.ndarray, n: int) -> np.ndarray:
    """The bin of each entry of ``x`` (in [-1, 1]) among ``n`` equal bins of [-1, 1]."""
    return np.minimum(((x + 1.0) / 2.0 * n).astype(np.int64), n - 1)


def _bin(x: np.floating[Any], n: int) -> int:
    return int(_bins(np.asarray(x), n))


def _centre(index: int, n: int) -> float:
    """The centre of bin ``index`` of ``n``: decodes back to ``index`` in float32 too."""
    return -1.0 + (2 * index + 1) / n


@dataclass(frozen=True)
class FlatLayout:
    """The layout of a flat action and its two directions (see :class:`FlatActions`).

    Args:
        n_nodes: the number of variables ``d``.
        n_regimes: ``max_interventions + 1`` (regime 0 is the observational data).
        kinds: the ``OneOf`` indices the ``kind`` entry selects among, in order.
        value_scale: an ``intervene`` value is ``value_scale`` times its entry.
    """

    n_nodes: int
    n_regimes: int
    kinds: tuple[int, ...]
    value_scale: float
    kind_names: tuple[str, ...] = field(init=False, repr=False)
    """The name of each of :attr:`kinds` (read from the tool registry once)."""

    def __post_init__(self) -> None:
        if self.n_nodes < 2:
            raise ValueError(f"n_nodes must be at least 2, got {self.n_nodes}")
        names = actions.kind_names()
        if not self.kinds or not all(0 <= k < len(names) for k in self.kinds):
            raise ValueError(f"kinds must be action kinds in [0, {len(names)}), got {self.kinds}")
        object.__setattr__(self, "kind_names", tuple(names[k] for k in self.kinds))
        if not (np.isfinite(self.value_scale) and self.value_scale > 0):
            raise ValueError(f"value_scale must be finite and positive, got {self.value_scale!r}")
        if self.value_scale > actions.VALUE_BOUND:
            raise ValueError(
                f"value_scale must be at most VALUE_BOUND = {actions.VALUE_BOUND:g} (the "
                f"action space's bound), got {self.value_scale!r}"
            )

    @property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows and columns of the pairs ``i < j``, in the order of the pair entries."""
        rows, columns = np.triu_indices(self.n_nodes, k=1)
        return rows, columns

    @property
    def size(self) -> int:
        """Length of a flat action: ``5 + d + d (d - 1) / 2``."""
        return _HEAD + self.n_nodes + self.n_nodes * (self.n_nodes - 1) // 2

    @property
    def space(self) -> spaces.Box:
        """``Box(-1, 1, (size,), float32)``."""
        return spaces.Box(-1.0, 1.0, (self.size,), np.float32)

    # ------------------------------------------------------------------ decoding
    def decode(self, flat: Any) -> EncodedAction:
        """The ``OneOf`` action of a flat vector (entries outside [-1, 1] are clipped).

        Raises:
            ValueError: ``flat`` is not a finite real vector of length :attr:`size`.
        """
        vector = np.asarray(flat)
        if vector.shape != (self.size,) or vector.dtype.kind not in "iuf":
            raise ValueError(
                f"a flat action must be a real vector of shape ({self.size},), got "
                f"{vector.dtype} {vector.shape}"
            )
        if not np.isfinite(vector).all():
            raise ValueError(f"a flat action must be finite, got {vector!r}")
        values = np.clip(vector.astype(np.float64), -1.0, 1.0)
        name = self.kind_names[_bin(values[KIND], len(self.kinds))]
        if name == "submit_graph":
            return int(ActionKind.SUBMIT_GRAPH), {"graph": self._graph_codes(values)}
        i = _bin(values[NODE_I], self.n_nodes)
        if name == "intervene":
            return actions.intervene(i, float(values[VALUE]) * self.value_scale)
        arguments: dict[str, Any] = {
            "i": i,
            "j": _bin(values[NODE_J], self.n_nodes),
            "cond": tuple(int(c) for c in np.flatnonzero(values[_HEAD : _HEAD + self.n_nodes] > 0)),
        }
        regime = _bin(values[REGIME], self.n_regimes)
        arguments["regime"] = None if regime == 0 else regime - 1
        tool = actions.action_class(name)
        return actions.encode(
            tool(**{key: arguments[key] for key in tool.tool.fields}), n_nodes=self.n_nodes
        )

    def _graph_codes(self, values: np.ndarray) -> np.ndarray:
        """The ``submit_graph`` code matrix of the pair entries (a cyclic one is passed on: the
        env reports it as an invalid submission)."""
        states = _bins(values[_HEAD + self.n_nodes :], _PAIR_STATES)
        rows, columns = self.pairs
        codes = np.zeros((self.n_nodes, self.n_nodes), dtype=np.int64)
        forward, backward = states == _PAIR_FORWARD, states == _PAIR_BACKWARD
        undirected = states == _PAIR_UNDIRECTED
        codes[rows[forward], columns[forward]] = actions.DIRECTED
        codes[columns[backward], rows[backward]] = actions.DIRECTED
        codes[rows[undirected], columns[undirected]] = actions.UNDIRECTED
        codes[columns[undirected], rows[undirected]] = actions.UNDIRECTED
        return codes

    # ------------------------------------------------------------------ encoding
    def encode(self, action: Action | EncodedAction) -> np.ndarray:
        """The flat vector that decodes to ``action`` (typed, or a ``OneOf`` element).

        Entries the action does not use are 0. The value entry is ``value / value_scale`` in
        float32, so the decoded value equals ``value`` when that quotient is a float32 number
        (2.5 with the default scale 10, say) and is within float32 rounding of it otherwise.

        Raises:
            ValueError: the action cannot be expressed: its kind is not among :attr:`kinds`, an
                index or regime is out of range, ``|value| > value_scale``, or an
                ``intervene`` states a hypothesis (the flat layout carries none).
        """
        typed = (
            actions.decode(action, n_nodes=self.n_nodes) if isinstance(action, tuple) else action
        )
        flat = np.zeros(self.size, dtype=np.float32)
        if isinstance(typed, actions.Submit):
            flat[KIND] = self._kind_entry(int(ActionKind.SUBMIT_GRAPH))
            flat[_HEAD + self.n_nodes :] = self._pair_entries(typed)
        elif isinstance(typed, actions.Intervene):
            if typed.hypothesis is not None:
                raise ValueError("the flat layout carries no stated hypothesis; drop it first")
            if abs(typed.value) > self.value_scale:
                raise ValueError(
                    f"value must be in [-{self.value_scale:g}, {self.value_scale:g}] (the "
                    f"value_scale), got {typed.value!r}"
                )
            flat[KIND] = self._kind_entry(int(ActionKind.INTERVENE))
            flat[NODE_I] = self._node_entry("var", typed.var)
            flat[VALUE] = typed.value / self.value_scale
        else:
            flat[KIND] = self._kind_entry(actions.kind_names().index(typed.tool.name))
            self._tool_entries(typed, flat)
        return flat

    def _tool_entries(self, typed: actions.ToolAction, flat: np.ndarray) -> None:
        fields = typed.tool.fields
        for name, index in (("i", NODE_I), ("j", NODE_J)):
            if name in fields:
                flat[index] = self._node_entry(name, getattr(typed, name))
        if "cond" in fields:
            cond = np.full(self.n_nodes, -1.0, dtype=np.float32)
            cond[[self._node_index("cond entry", c) for c in typed.arguments["cond"]]] = 1.0
            flat[_HEAD : _HEAD + self.n_nodes] = cond
        if "regime" in fields:
            regime = typed.data_regime
            index = 0 if regime is None else regime + 1
            if not 0 <= index < self.n_regimes:
                raise ValueError(f"regime must be in [0, {self.n_regimes - 1}), got {regime}")
            flat[REGIME] = _centre(index, self.n_regimes)

    def _kind_entry(self, kind: int) -> float:
        if kind not in self.kinds:
            names = [actions.kind_names()[k] for k in self.kinds]
            raise ValueError(
                f"kind {actions.kind_names()[kind]!r} is not in this layout's kinds {names}"
            )
        return _centre(self.kinds.index(kind), len(self.kinds))

    def _node_index(self, name: str, node: int) -> int:
        if not 0 <= node < self.n_nodes:
            raise ValueError(f"{name} must be in [0, {self.n_nodes}), got {node}")
        return node

    def _node_entry(self, name: str, node: int) -> float:
        return _centre(self._node_index(name, node), self.n_nodes)

    def _pair_entries(self, submit: actions.Submit) -> np.ndarray:
        graph = submit.graph
        if not isinstance(graph, PDAG):
            raise ValueError(
                f"the flat action layout encodes PDAG submissions only, got {type(graph).__name__}"
            )
        if graph.n_nodes != self.n_nodes:
            raise ValueError(f"graph must have {self.n_nodes} nodes, got {graph.n_nodes}")
        rows, columns = self.pairs
        directed, undirected = np.asarray(graph.directed), np.asarray(graph.undirected)
        states = np.full(rows.size, _PAIR_NONE)
        states[directed[rows, columns]] = _PAIR_FORWARD
        states[directed[columns, rows]] = _PAIR_BACKWARD
        states[undirected[rows, columns]] = _PAIR_UNDIRECTED
        return (-1.0 + (2 * states + 1) / _PAIR_STATES).astype(np.float32)  # bin centres


class FlatActions(
    gym.ActionWrapper[Observation, np.ndarray, EncodedAction], gym.utils.RecordConstructorArgs
):
    """The full env driven by one ``Box`` action: for RL stacks that act only on ``Box``,
    ``Discrete`` or ``MultiDiscrete`` spaces (stable-baselines3's ``check_env`` passes on it;
    :func:`make_flat` adds the flat observation SB3's policies need).

    ## Action Space

    ``Box(-1, 1, (5 + d + d (d - 1) / 2,), float32)``, decoded into the ``OneOf`` action the
    env takes (built with :mod:`acdb_gym.envs.actions`); entries outside [-1, 1] are clipped.
    An entry that picks one of ``n`` choices splits [-1, 1] into ``n`` equal bins.

    | entries | meaning |
    |---------|---------|
    | ``0`` | the kind: one of ``kinds`` (below), by bin |
    | ``1`` | ``var`` of ``intervene``, ``i`` of a statistics tool: a node, by bin |
    | ``2`` | ``j`` of a statistics tool: a node, by bin |
    | ``3`` | ``regime`` of a statistics tool: ``0 .. max_interventions``, by bin |
    | ``4`` | ``value`` of ``intervene``: ``value_scale`` times the entry |
    | ``5 .. 5 + d`` | ``cond`` of a statistics tool: node ``k`` is in it when its entry is > 0 |
    | then ``d (d - 1) / 2`` | ``submit_graph``, one entry per pair ``i < j`` (row-major upper triangle): 4 bins, no edge, ``i -> j``, ``j -> i``, ``i - j`` |

    Entries the decoded kind does not use are ignored. A decoded action the env refuses (a
    kind the variant does not carry out, ``i == j``, the budget spent, a cyclic graph) is
    passed on like any invalid action: it costs a step and ``info["error"]`` says why. The
    flat layout carries no stated hypothesis (DESIGN §8).

    Why a ``Box`` rather than a ``MultiDiscrete`` with a grid of values: the intervention value
    is continuous, every RL stack supports a ``Box``, and a float32 ``Box`` on [-1, 1] is what
    stable-baselines3 asks for (its checker warns otherwise). Why pairs rather than the env's
    ``(d, d)`` code matrix: every decoded matrix is then a mixed graph but for directed cycles
    (no self-loops, no one-sided undirected marks, no pair directed both ways), where uniform
    ``(d, d)`` codes almost never are; and ``d (d - 1) / 2`` entries are half as many.

    :meth:`encode_flat` goes the other way (``decode(encode_flat(a))`` gives back ``a``; the
    value within float32 rounding of ``value / value_scale``). Observations, rewards, episode
    ends and ``info`` are the env's own.

    ## Arguments

    * ``env``: an :class:`~acdb_gym.envs.acdb_env.ACDBEnv`, wrapped or not
      (``gym.make("ACDB-L1-v0")``).
    * ``kinds``: ``"variant"`` (default): the kind entry selects among the kinds the variant
      carries out (``intervene`` and ``submit_graph`` in the active raw panel), so no part of
      its range is wasted; ``"all"``: among every kind of the ``OneOf``, in its order, the
      same layout for every variant.
    * ``value_scale``: the largest intervention value in magnitude (default 10: the v1
      levels' variables have unit variance, the v0 levels' standard deviations reach about 10).

    For stable-baselines3 use :func:`make_flat`, which also flattens the observation (so
    ``check_env`` passes with no warning and ``MlpPolicy`` trains on it):

    ```python
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_checker import check_env
    from acdb_gym.envs.wrappers import make_flat

    env = make_flat("ACDB-L1-v0")  # FlattenObservation(FlatActions(gym.make("ACDB-L1-v0")))
    check_env(env)
    PPO("MlpPolicy", env).learn(10_000)
    ```
    """

    def __init__(
        self,
        env: gym.Env[Observation, EncodedAction],
        *,
        kinds: KindSet = "variant",
        value_scale: float = 10.0,
    ) -> None:
        # Recorded first, so the env's spec lists this wrapper and ``gym.make(env.spec)``
        # rebuilds it (Gymnasium's convention for wrappers).
        gym.utils.RecordConstructorArgs.__init__(self, kinds=kinds, value_scale=value_scale)
        gym.ActionWrapper.__init__(self, env)
        base = env.unwrapped
        if not isinstance(base, ACDBEnv):
            raise TypeError(f"FlatActions wraps an ACDBEnv, got {type(base).__name__}")
        if kinds not in ("variant", "all"):
            raise ValueError(f"kinds must be 'variant' or 'all', got {kinds!r}")
        oneof = base.action_space
        assert isinstance(oneof, spaces.OneOf)  # every ACDBEnv's
        every = tuple(range(len(oneof.spaces)))
        chosen = getattr(oneof, "sampled_kinds", every) if kinds == "variant" else every
        self.layout = FlatLayout(
            n_nodes=base.n_nodes,
            n_regimes=base.max_interventions + 1,
            kinds=tuple(chosen),
            value_scale=float(value_scale),
        )
        self.action_space = self.layout.space

    def action(self, action: np.ndarray) -> EncodedAction:
        """The env's ``OneOf`` action of a flat vector (:meth:`FlatLayout.decode`)."""
        return self.layout.decode(action)

    def decode(self, flat: np.ndarray) -> Action:
        """The typed action of a flat vector (for logs and tests)."""
        return actions.decode(self.layout.decode(flat), n_nodes=self.layout.n_nodes)

    def encode_flat(self, action: Action | EncodedAction) -> np.ndarray:
        """The flat vector of a typed action or ``OneOf`` element (:meth:`FlatLayout.encode`)."""
        return self.layout.encode(action)


class FlatObservation(
    gym.ObservationWrapper[np.ndarray, Any, Any], gym.utils.RecordConstructorArgs
):
    """The observation as one float64 vector (``gymnasium.spaces.flatten``), as Gymnasium's
    ``FlattenObservation`` gives it, but picklable with the standard library (that wrapper
    keeps a local lambda), so a flat env can be pickled mid-episode and sent to a worker."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        self.observation_space = spaces.flatten_space(env.observation_space)  # type: ignore[assignment]

    def observation(self, observation: Any) -> np.ndarray:
        """The flattened observation."""
        return np.asarray(spaces.flatten(self.env.observation_space, observation))


def make_flat(
    env_id: str,
    *,
    action: FlatActionName = "box",
    kinds: KindSet = "variant",
    value_scale: float = 10.0,
    flatten_observation: bool = True,
    **kwargs: Any,
) -> gym.Env[Any, np.ndarray]:
    """The full env as stable-baselines3 checks and trains it: ``gym.make(env_id, **kwargs)``
    under :class:`FlatActions` (``action="box"``) or
    :class:`~acdb_gym.envs.discrete_actions.DiscreteActions` (``action="discrete"``: masked,
    acyclic submissions) and, with ``flatten_observation`` (default), :class:`FlatObservation`
    (one float64 vector; train it with ``MlpPolicy``). ``observation="compact"`` (passed on to
    the env) keeps that vector small (DESIGN §8, "Observation modes").

    With ``flatten_observation=False`` the observation is the env's own ``Dict``, on which
    SB3's ``MultiInputPolicy`` builds (its key ``intervention_values`` was ``values`` before
    0.1.x, which clashed with ``ModuleDict.values``).

    >>> space = make_flat("ACDB-L1-v0").observation_space
    >>> space.shape, space.dtype
    ((3017,), dtype('float64'))
    >>> make_flat("ACDB-L1-v0", observation="compact").observation_space.shape
    (110,)
    >>> make_flat("ACDB-L1-v0", tools="stats", flatten_observation=False).layout.kinds
    (0, 1, 2, 3, 4)
    """
    return _flat(gym.make(env_id, **kwargs), action, kinds, value_scale, flatten_observation)


def flat_env(
    *,
    action: FlatActionName = "box",
    kinds: KindSet = "variant",
    value_scale: float = 10.0,
    flatten_observation: bool = True,
    **kwargs: Any,
) -> gym.Env[Any, np.ndarray]:
    """The entry point of the registered flat ids (``ACDB-Flat-L2-v0`` is ``ACDB-L2-v0`` as
    :func:`make_flat` returns it): :class:`ACDBEnv` of ``kwargs`` under the ``action`` layout
    and, with ``flatten_observation``, :class:`FlatObservation`. For tools that take an id and
    no wrapper code (TorchRL's ``GymEnv``, SB3's ``make_vec_env``).
    """
    return _flat(ACDBEnv(**kwargs), action, kinds, value_scale, flatten_observation)


def _flat(
    env: gym.Env[Any, Any],
    action: str,
    kinds: KindSet,
    value_scale: float,
    flatten_observation: bool,
) -> gym.Env[Any, np.ndarray]:
    if action not in FLAT_ACTIONS:
        raise ValueError(f"action must be one of {list(FLAT_ACTIONS)}, got {action!r}")
    wrapped: gym.Env[Any, Any]
    if action == "discrete":
        from acdb_gym.envs.discrete_actions import DiscreteActions

        if value_scale != 10.0:
            raise ValueError("value_scale applies to action='box' only (discrete values are steps)")
        wrapped = DiscreteActions(env, kinds=kinds)
    else:
        wrapped = FlatActions(env, kinds=kinds, value_scale=value_scale)
    return FlatObservation(wrapped) if flatten_observation else wrapped
