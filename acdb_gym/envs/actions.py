"""Typed actions of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` and their ``OneOf`` encoding.

Callers never hand-build ``OneOf`` tuples: the constructors below return elements of the
action space, and :func:`decode` turns any element back into a typed action.

>>> from acdb_gym.core.graphs import PDAG
>>> action = intervene(2, 3.0)
>>> action[0], decode(action, n_nodes=4)
(0, Intervene(var=2, value=3.0))
>>> decode(submit(PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])), n_nodes=3)
Submit(graph=PDAG(n_nodes=3, directed=[(0, 1)], undirected=[(1, 2)]))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, make_dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium import spaces

from acdb_gym.core import tools
from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.graphs.admg import ADMG, PAG
from acdb_gym.core.tools import StatisticTool
from acdb_gym.core.types import is_integer
from acdb_gym.core.worlds.linear import DO_MATRIX_MAX_D

__all__ = [
    "HYPOTHESIS_KEY",
    "VALUE_BOUND",
    "Action",
    "ActionKind",
    "Correlation",
    "EncodedAction",
    "IndependenceTest",
    "Intervene",
    "PartialCorrelation",
    "Submit",
    "TernaryGrid",
    "ToolAction",
    "action_class",
    "action_space",
    "correlation",
    "decode",
    "encode",
    "graph_from_codes",
    "graph_to_codes",
    "hypothesis_from_codes",
    "independence_test",
    "intervene",
    "intervene_request",
    "kind_names",
    "partial_correlation",
    "split_hypothesis",
    "submit",
    "tool_action",
]

VALUE_BOUND = 1e4
"""Intervention values must lie in ``[-VALUE_BOUND, VALUE_BOUND]`` (the action space's Box)."""

NO_EDGE, DIRECTED, UNDIRECTED, BIDIRECTED = 0, 1, 2, 3
"""Codes of the ``submit_graph`` matrix: ``g[i, j] = 1`` is ``i -> j``; 2 (both ways) is ``i - j``;
3 (both ways, levels with hidden confounders only) is ``i <-> j``."""

HYPOTHESIS_KEY = "hypothesis"
"""The optional annotation key of an ``intervene`` payload (:func:`intervene`)."""

EncodedAction = tuple[int, dict[str, Any]]
"""An element of the action space: ``(kind index, payload)``."""


class ActionKind(IntEnum):
    """Index of each sub-space of the ``OneOf`` action space: the benchmark's layout.

    Kinds never move: statistics tools registered beyond the built-in three
    (:func:`acdb_gym.core.tools.register_tool`) take the indices after ``SUBMIT_GRAPH``
    (5, 6, ...) in registration order, so recorded actions and trained policies keep their
    meaning. :func:`kind_names` lists every kind.
    """

    INTERVENE = 0
    CORRELATION = 1
    PARTIAL_CORRELATION = 2
    INDEPENDENCE_TEST = 3
    SUBMIT_GRAPH = 4


_FIXED_KINDS: tuple[str, ...] = tuple(kind.name.lower() for kind in ActionKind)


def kind_names() -> tuple[str, ...]:
    """The name of each action kind, by index: :class:`ActionKind`'s, then later tools'.

    >>> kind_names()
    ('intervene', 'correlation', 'partial_correlation', 'independence_test', 'submit_graph')
    """
    later = tuple(tool.name for tool in tools.statistics_tools() if tool.name not in _FIXED_KINDS)
    return _FIXED_KINDS + later


def _kind_of(name: str) -> int:
    return kind_names().index(name)


def node_index(name: str, value: Any) -> int:
    """``value`` as a node index: an ``int`` or NumPy integer, never a bool, float or string.

    Ranges are the session's to check (an out-of-range index is an invalid step, not an error
    of the caller's types).

    >>> node_index("var", np.int64(2))
    2
    >>> node_index("var", 1.7)
    Traceback (most recent call last):
    ...
    ValueError: var must be an integer node index, got float 1.7
    """
    if not is_integer(value):
        raise ValueError(
            f"{name} must be an integer node index, got {type(value).__name__} {value!r}"
        )
    return int(value)


def real_number(name: str, value: Any) -> float:
    """``value`` as a float: an ``int``, ``float`` or NumPy real scalar, never a bool or string
    (finiteness and bounds are the action space's to check)."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    if isinstance(value, np.complexfloating):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Intervene:
    """``do(X_var = value)``, optionally stating the agent's current hypothesis graph.

    ``hypothesis`` is an annotation, not part of the experiment: the env records it with the
    experiment (what the agent believed before seeing its result) and the step is otherwise
    exactly the step without it (DESIGN §8). A DAG is stored as a fully directed PDAG.

    >>> Intervene(1, 2.0)
    Intervene(var=1, value=2.0)
    >>> Intervene(1, 2.0, hypothesis=PDAG.from_edges(2, directed=[(0, 1)]))
    Intervene(var=1, value=2.0, hypothesis=PDAG(n_nodes=2, directed=[(0, 1)], undirected=[]))
    """

    var: int
    value: float
    hypothesis: PDAG | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "var", node_index("var", self.var))
        object.__setattr__(self, "value", real_number("value", self.value))
        hypothesis = self.hypothesis
        if isinstance(hypothesis, DAG):
            object.__setattr__(self, "hypothesis", hypothesis.to_pdag())
        elif hypothesis is not None and not isinstance(hypothesis, PDAG):
            raise ValueError(
                f"hypothesis must be a PDAG, a DAG or None, got {type(hypothesis).__name__}"
            )

    def __repr__(self) -> str:
        # Without a hypothesis, the repr of the paper's action (trajectories and renders keep it).
        stated = "" if self.hypothesis is None else f", hypothesis={self.hypothesis!r}"
        return f"Intervene(var={self.var!r}, value={self.value!r}{stated})"


@dataclass(frozen=True)
class Submit:
    """Submit a mixed graph and end the episode: a PDAG, or on a level with hidden confounders
    an ADMG (bidirected edges) or a PAG (circle marks)."""

    graph: PDAG | ADMG | PAG


@dataclass(frozen=True)
class ToolAction:
    """A call of a statistics tool.

    Each tool's own class (:class:`Correlation`, ...) is generated from its spec by
    :func:`action_class`: a frozen dataclass whose fields are the spec's fields in order
    (``i``, ``j``, ``cond``, ``regime``), with ``cond`` defaulting to ``()`` and ``regime``
    (``None`` for the observational data, else an experiment index) to ``None``.
    """

    tool: ClassVar[StatisticTool]

    if TYPE_CHECKING:  # the generated subclasses take their own fields

        def __init__(self, *args: Any, **kwargs: Any) -> None: ...

    def __post_init__(self) -> None:
        for name in self.tool.fields:
            value = getattr(self, name)
            if name == "cond":
                if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                    raise ValueError(f"cond must be a sequence of node indices, got {value!r}")
                value = tuple(node_index("cond entry", c) for c in value)
            elif name == "regime":
                value = None if value is None else node_index("regime", value)
            else:
                value = node_index(name, value)
            object.__setattr__(self, name, value)

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments the statistic is computed from: every field but ``regime``."""
        return {name: getattr(self, name) for name in self.tool.fields if name != "regime"}

    @property
    def data_regime(self) -> int | None:
        """The data used: ``None`` for the observational sample, else an experiment index."""
        regime: int | None = getattr(self, "regime", None)
        return regime


_ACTION_CLASSES: dict[str, type[ToolAction]] = {}


def action_class(name: str) -> type[ToolAction]:
    """The typed action class of the registered tool ``name`` (generated once per spec).

    >>> action_class("partial_correlation")(0, 1, (2,))
    PartialCorrelation(i=0, j=1, cond=(2,), regime=None)
    """
    spec = tools.get_tool(name)
    cls = _ACTION_CLASSES.get(name)
    if cls is None or cls.tool is not spec:
        cls = _ACTION_CLASSES[name] = _make_action_class(spec)
    return cls


def _make_action_class(spec: StatisticTool) -> type[ToolAction]:
    defaults: dict[str, Any] = {"cond": field(default=()), "regime": field(default=None)}
    types = {"i": int, "j": int, "cond": tuple[int, ...], "regime": int | None}
    cls = make_dataclass(
        spec.action_name,
        [(name, types[name], defaults[name]) if name in defaults else (name, types[name])
         for name in spec.fields],
        bases=(ToolAction,),
        frozen=True,
        namespace={
            "tool": spec,
            "__doc__": f"The ``{spec.name}`` statistics tool: {spec.description}",
            "__module__": __name__,
        },
    )  # fmt: skip
    assert issubclass(cls, ToolAction)
    return cls


Correlation = action_class("correlation")
PartialCorrelation = action_class("partial_correlation")
IndependenceTest = action_class("independence_test")

Action = Intervene | ToolAction | Submit


class TernaryGrid(spaces.MultiDiscrete):
    """``MultiDiscrete(np.full((d, d), 3))`` (the ``submit_graph`` codes) whose ``nvec`` and
    ``start`` take no memory: read-only broadcast views of one value each (Gymnasium stores both
    in full, 64 MB at d = 2,000). Used above d = 40; a pickled one is rebuilt from ``d``.

    Args:
        n_nodes: ``d``.
    """

    def __init__(self, n_nodes: int) -> None:
        super().__init__(np.full((1,), 3))
        self._n_nodes = int(n_nodes)
        self._shape = (self._n_nodes, self._n_nodes)
        self.nvec = np.broadcast_to(np.int64(3), self._shape)
        self.start = np.broadcast_to(np.int64(0), self._shape)

    def __repr__(self) -> str:
        return f"MultiDiscrete(3 x {self._shape})"

    def __reduce__(self) -> tuple[type[TernaryGrid], tuple[int]]:
        return (TernaryGrid, (self._n_nodes,))


class VariantOneOf(spaces.OneOf):
    """The action space of one env variant: every kind is an element (a kind the variant
    refuses is an invalid step, not an error), but :meth:`sample` draws only the kinds the
    variant accepts, and a sampled ``submit_graph`` holds a random DAG (a valid submission,
    where uniform codes almost never are), so random-action rollouts end by submitting.
    :meth:`contains` also accepts an ``intervene`` element carrying the optional
    ``hypothesis`` annotation (:func:`intervene`); :meth:`sample` never draws one.

    Args:
        spaces: one sub-space per kind.
        sampled_kinds: the kinds :meth:`sample` draws from (uniformly), by index.
        n_nodes: the number of variables (the size of a sampled graph).
    """

    def __init__(
        self,
        spaces: Sequence[spaces.Space[Any]],
        sampled_kinds: Sequence[int],
        *,
        n_nodes: int,
        seed: Any = None,
    ) -> None:
        super().__init__(spaces, seed=seed)
        self.n_nodes = n_nodes
        if not sampled_kinds or not all(0 <= k < len(self.spaces) for k in sampled_kinds):
            raise ValueError(f"sampled_kinds must be kinds of the space, got {sampled_kinds}")
        self.sampled_kinds = tuple(int(k) for k in sampled_kinds)

    def sample(
        self,
        mask: tuple[Any | None, ...] | None = None,
        probability: tuple[Any | None, ...] | None = None,
    ) -> tuple[int, Any]:
        """A random element of an accepted kind; with ``mask`` or ``probability``, as
        ``OneOf.sample`` (any kind)."""
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        index = int(self.np_random.integers(0, len(self.sampled_kinds)))
        kind = self.sampled_kinds[index]
        if kind == ActionKind.SUBMIT_GRAPH:
            return kind, {"graph": _random_dag_codes(self.np_random, self.n_nodes)}
        return kind, self.spaces[kind].sample()

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is an element, allowing a well-formed ``hypothesis`` on ``intervene``."""
        try:
            element, _ = split_hypothesis(x, n_nodes=self.n_nodes)
        except ValueError:
            return False
        return bool(super().contains(element))


def _random_dag_codes(rng: np.random.Generator, n_nodes: int) -> np.ndarray:
    """Codes of a random DAG: a random order, each forward pair an edge with probability 1/2."""
    order = rng.permutation(n_nodes)
    upper = np.triu(rng.random((n_nodes, n_nodes)) < 0.5, k=1)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    adjacency[np.ix_(order, order)] = upper
    return np.where(adjacency, DIRECTED, NO_EDGE).astype(np.int64)


def action_space(
    n_nodes: int,
    max_interventions: int,
    *,
    sampled_kinds: Sequence[int] | None = None,
    latent: bool = False,
) -> spaces.OneOf:
    """The ``OneOf`` action space for ``n_nodes`` variables (DESIGN §8), one sub-space per
    entry of :func:`kind_names`.

    Statistics tools carry ``regime``: 0 for the observational data, ``k`` for the ``k``-th
    experiment (1-based). With ``sampled_kinds``, a :class:`VariantOneOf` whose ``sample``
    draws only those kinds. With ``latent`` (a level with hidden confounders) the graph codes
    include :data:`BIDIRECTED`.
    """
    # One sub-space object per argument kind, shared by every kind that uses it: seeding and
    # sampling the OneOf then draws exactly as the benchmark always has.
    node = spaces.Discrete(n_nodes)
    by_field: dict[str, spaces.Space[Any]] = {
        "i": node,
        "j": node,
        "cond": spaces.MultiBinary(n_nodes),
        "regime": spaces.Discrete(max_interventions + 1),
    }
    value = spaces.Box(-VALUE_BOUND, VALUE_BOUND, shape=(), dtype=np.float64)
    # A ternary grid packs the edge marks of a large graph; code 3 (bidirected) needs the
    # plain grid.
    graph = (
        TernaryGrid(n_nodes)
        if n_nodes > DO_MATRIX_MAX_D and not latent
        else spaces.MultiDiscrete(np.full((n_nodes, n_nodes), 4 if latent else 3))
    )
    kinds: list[spaces.Space[Any]] = []
    for name in kind_names():
        if name == "intervene":
            kinds.append(spaces.Dict({"var": node, "value": value}))
        elif name == "submit_graph":
            kinds.append(spaces.Dict({"graph": graph}))
        else:
            spec = tools.get_tool(name)
            kinds.append(spaces.Dict({key: by_field[key] for key in spec.fields}))
    if sampled_kinds is None:
        return spaces.OneOf(kinds)
    return VariantOneOf(kinds, sampled_kinds, n_nodes=n_nodes)


# --------------------------------------------------------------------------- constructors


def intervene(var: int, value: float, *, hypothesis: PDAG | DAG | None = None) -> EncodedAction:
    """The action ``do(X_var = value)``.

    Args:
        var: the target node.
        value: the value it is set to.
        hypothesis: the agent's current graph, stated with the experiment (DESIGN §8): the
            payload then carries a third key ``"hypothesis"`` with the ``submit_graph`` code
            matrix. The key is an optional annotation: an env's action space
            (:class:`VariantOneOf`) accepts it, never samples it, and the env removes it
            (:func:`split_hypothesis`) before carrying out the action.

    Raises:
        ValueError: ``var`` is not an integer (a bool, float or string) or ``value`` is not a
            real number.
    """
    payload: dict[str, Any] = {
        "var": np.int64(node_index("var", var)),
        "value": np.asarray(real_number("value", value), dtype=np.float64),
    }
    if hypothesis is not None:
        graph = hypothesis.to_pdag() if isinstance(hypothesis, DAG) else hypothesis
        payload[HYPOTHESIS_KEY] = graph_to_codes(graph)
    return int(ActionKind.INTERVENE), payload


def split_hypothesis(action: Any, *, n_nodes: int) -> tuple[Any, np.ndarray | None]:
    """An action without its hypothesis annotation, and the annotation's code matrix.

    Any action other than an ``intervene`` carrying ``"hypothesis"`` is returned unchanged with
    None, so an action without the annotation is checked and carried out exactly as before.

    Raises:
        ValueError: the annotation is not a ``(n_nodes, n_nodes)`` matrix of the codes 0, 1, 2
            (it is then not an element of the action space with an annotation).
    """
    if type(action) is not tuple or len(action) != 2:
        return action, None
    kind, payload = action
    if not isinstance(payload, Mapping) or HYPOTHESIS_KEY not in payload:
        return action, None
    if not is_integer(kind) or int(kind) != ActionKind.INTERVENE:
        return action, None
    codes = np.asarray(payload[HYPOTHESIS_KEY])
    if codes.shape != (n_nodes, n_nodes) or codes.dtype.kind not in "iu":
        raise ValueError(
            f"hypothesis must be an integer ({n_nodes}, {n_nodes}) code matrix, got "
            f"{codes.dtype} {codes.shape}"
        )
    if not np.isin(codes, (NO_EDGE, DIRECTED, UNDIRECTED)).all():
        raise ValueError(f"hypothesis codes must be 0, 1 or 2, got {np.unique(codes).tolist()}")
    rest = {key: value for key, value in payload.items() if key != HYPOTHESIS_KEY}
    return (kind, rest), codes


def tool_action(
    name: str, *arguments: Any, n_nodes: int | None = None, regime: int | None = None
) -> EncodedAction:
    """The action calling statistics tool ``name`` on ``arguments`` (its fields in order).

    Args:
        name: a registered tool.
        *arguments: the values of its fields but ``regime``, e.g. ``i, j, cond``.
        n_nodes: number of variables ``d``; needed by tools with a conditioning set.
        regime: experiment index, or None for the observational data.

    >>> tool_action("partial_correlation", 0, 1, [2], n_nodes=3)[0]
    2
    """
    cls = action_class(name)
    if regime is not None and "regime" not in cls.tool.fields:
        raise ValueError(f"{name} always uses the observational data, got regime {regime}")
    typed = cls(*arguments) if regime is None else cls(*arguments, regime=regime)
    return encode(typed, n_nodes=n_nodes)


def _constructor(name: str) -> Callable[..., EncodedAction]:
    spec = tools.get_tool(name)

    def construct(
        *arguments: Any, n_nodes: int | None = None, regime: int | None = None
    ) -> EncodedAction:
        return tool_action(name, *arguments, n_nodes=n_nodes, regime=regime)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (
        f"The ``{name}`` action on ({', '.join(f for f in spec.fields if f != 'regime')}); "
        f"keywords ``n_nodes`` and ``regime`` as :func:`tool_action`."
    )
    return construct


correlation = _constructor("correlation")
partial_correlation = _constructor("partial_correlation")
independence_test = _constructor("independence_test")


def submit(graph: PDAG | DAG | ADMG | PAG) -> EncodedAction:
    """Submit ``graph`` (a DAG is submitted fully directed; see :func:`graph_to_codes`)."""
    if isinstance(graph, DAG):
        graph = graph.to_pdag()
    return int(ActionKind.SUBMIT_GRAPH), {"graph": graph_to_codes(graph)}


def encode(action: Action, *, n_nodes: int | None = None) -> EncodedAction:
    """Encode a typed action as an element of the action space.

    ``n_nodes`` is needed for tools with a conditioning set (the length of its mask).
    """
    if isinstance(action, Intervene):
        return intervene(action.var, action.value, hypothesis=action.hypothesis)
    if isinstance(action, Submit):
        return submit(action.graph)
    if not isinstance(action, ToolAction):
        raise TypeError(f"not an ACDB action: {action!r}")
    spec = action.tool
    payload: dict[str, Any] = {name: np.int64(getattr(action, name)) for name in spec.node_fields}
    if "regime" in spec.fields:
        regime = action.data_regime
        payload["regime"] = np.int64(0 if regime is None else regime + 1)
    if "cond" in spec.fields:
        if n_nodes is None:
            raise ValueError(f"encoding {spec.name} needs n_nodes (the cond mask's length)")
        payload["cond"] = _cond_mask(action.arguments["cond"], n_nodes)
    return _kind_of(spec.name), payload


def _cond_mask(cond: Iterable[int], n_nodes: int) -> np.ndarray:
    mask = np.zeros(n_nodes, dtype=np.int8)
    for c in cond:
        if not 0 <= c < n_nodes:
            raise ValueError(f"cond entries must be in [0, {n_nodes}), got {c}")
        mask[c] = 1
    return mask


# --------------------------------------------------------------------------- graph codes


def graph_to_codes(graph: PDAG | ADMG | PAG) -> np.ndarray:
    """The ``(d, d)`` code matrix of ``graph``: 0 none, 1 ``i -> j``, 2 ``i - j`` (symmetric),
    3 ``i <-> j`` (symmetric). A PAG's ``o-o`` edges are coded 2; a PAG with a partially
    oriented edge (``o->``, ``--o``, ``---``) or an ADMG with a bow has no code matrix
    (ValueError): submit it as a typed :class:`Submit`."""
    codes = np.zeros((graph.n_nodes, graph.n_nodes), dtype=np.int64)
    if isinstance(graph, PDAG):
        codes[graph.directed] = DIRECTED
        codes[graph.undirected] = UNDIRECTED
        return codes
    if isinstance(graph, ADMG):
        if (graph.bidirected & (graph.directed | graph.directed.T)).any():
            raise ValueError(f"an ADMG with a bow (i -> j and i <-> j) has no code matrix: {graph}")
        codes[graph.directed] = DIRECTED
        codes[graph.bidirected] = BIDIRECTED
        return codes
    head, tail = graph.arrowhead, graph.tail
    circle = graph.adjacent & ~head & ~tail
    directed = tail.T & head
    both_heads = head & head.T
    both_circles = circle & circle.T
    coded = directed | directed.T | both_heads | both_circles
    if (graph.adjacent & ~coded).any():
        i, j = (int(v) for v in np.argwhere(graph.adjacent & ~coded)[0])
        raise ValueError(
            f"the PAG edge between X{i} and X{j} is partially oriented and has no code; "
            "submit the PAG as a typed Submit action"
        )
    codes[directed] = DIRECTED
    codes[both_circles] = UNDIRECTED
    codes[both_heads] = BIDIRECTED
    return codes


def graph_from_codes(codes: np.ndarray, *, latent: bool = False) -> PDAG | ADMG | PAG:
    """Decode a code matrix; raises ValueError naming the offending edges when it is not a
    valid mixed graph (self-loops, one-sided undirected marks, pairs directed both ways, pairs
    both directed and undirected, directed cycles).

    Code 3 (``i <-> j``) is accepted only with ``latent`` (a level with hidden confounders):
    codes with bidirected and no undirected edges give an :class:`ADMG`, codes with both a
    :class:`PAG` (``i - j`` as ``o-o``); without a 3 the result is a :class:`PDAG`.
    """
    codes = np.asarray(codes)
    allowed = (
        (NO_EDGE, DIRECTED, UNDIRECTED, BIDIRECTED) if latent else (NO_EDGE, DIRECTED, UNDIRECTED)
    )
    bad = ~np.isin(codes, allowed)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        if latent:
            raise ValueError(f"graph codes must be 0 to 3, got {codes[i, j]} at ({i}, {j})")
        hint = " (3, i <-> j, only on levels with hidden confounders)" if codes[i, j] == 3 else ""
        raise ValueError(f"graph codes must be 0, 1 or 2, got {codes[i, j]} at ({i}, {j}){hint}")
    bidirected = codes == BIDIRECTED
    if not bidirected.any():
        return PDAG(codes == DIRECTED, codes == UNDIRECTED)
    if not np.array_equal(bidirected, bidirected.T):
        i, j = (int(v) for v in np.argwhere(bidirected != bidirected.T)[0])
        raise ValueError(f"code 3 (<->) must be symmetric, got it at ({i}, {j}) only")
    directed = codes == DIRECTED
    undirected = codes == UNDIRECTED
    if not undirected.any():
        return ADMG(directed, bidirected)
    PDAG(directed, undirected)  # the PDAG checks (one-sided marks, cycles) on the rest
    adjacent = directed | directed.T | undirected | bidirected
    return PAG(adjacent, directed | bidirected, directed.T)


def hypothesis_from_codes(codes: np.ndarray) -> PDAG:
    """Decode a stated hypothesis: a PDAG, codes 0 to 2 only (:func:`graph_from_codes`)."""
    graph = graph_from_codes(codes)
    assert isinstance(graph, PDAG)
    return graph


# --------------------------------------------------------------------------- decoding


def decode(action: tuple[int, Mapping[str, Any]], *, n_nodes: int, latent: bool = False) -> Action:
    """Turn an action-space element into a typed action.

    Index errors (``i == j``, a node in its own conditioning set) are left to the session, which
    reports them; malformed graphs raise ValueError here. ``latent`` accepts bidirected codes in
    a submitted graph (:func:`graph_from_codes`).
    """
    kind, payload = action
    names = kind_names()
    index = int(kind)
    if not 0 <= index < len(names):
        raise ValueError(f"action kind must be in [0, {len(names)}), got {index}")
    name = names[index]
    if name == "intervene":
        codes = payload.get(HYPOTHESIS_KEY)
        hypothesis = None if codes is None else hypothesis_from_codes(codes)
        return Intervene(int(payload["var"]), float(payload["value"]), hypothesis)
    if name == "submit_graph":
        return Submit(graph_from_codes(payload["graph"], latent=latent))
    cls = action_class(name)
    values: dict[str, Any] = {}
    for field_name in cls.tool.fields:
        if field_name == "cond":
            values["cond"] = tuple(int(c) for c in np.flatnonzero(np.asarray(payload["cond"])))
        elif field_name == "regime":
            regime = int(payload["regime"]) - 1
            values["regime"] = None if regime < 0 else regime
        else:
            values[field_name] = int(payload[field_name])
    return cls(**values)


# --------------------------------------------------------------------------- the env's fast path
_FLOAT64 = np.dtype(np.float64)
_INTERVENE = int(ActionKind.INTERVENE)


def intervene_request(action: Any, n_nodes: int) -> tuple[int, float] | None:
    """``(var, value)`` of an ``intervene`` action exactly as :func:`intervene` builds
    it (an ``int`` kind, a two-key dict, an ``np.int64`` node and a float64 0-d array), after
    every check its sub-space makes; None for anything else, which the space itself checks.

    :class:`~acdb_gym.envs.ACDBEnv`'s step fast path: Gymnasium's generic ``OneOf``/``Dict``/``Box`` check costs
    about 10 µs, more than drawing a small level's samples, and a typed action and the generic
    dispatch cost about as much again as this whole check.
    """
    if type(action) is not tuple or len(action) != 2:
        return None
    kind, payload = action
    if type(kind) is not int or kind != _INTERVENE or type(payload) is not dict:
        return None
    if len(payload) != 2:
        return None
    var = payload.get("var")
    value = payload.get("value")
    if type(var) is not np.int64 or type(value) is not np.ndarray:
        return None
    if value.dtype is not _FLOAT64 or value.shape != ():
        return None
    node = int(var)
    number = float(value)
    if not (0 <= node < n_nodes and -VALUE_BOUND <= number <= VALUE_BOUND):  # NaN fails too
        return None
    return node, number
