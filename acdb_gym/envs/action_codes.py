"""Encoding typed actions as elements of the action space and back (DESIGN §8): the
constructors (:func:`intervene`, :func:`submit`, :func:`tool_action` and one per statistics tool),
:func:`encode` / :func:`decode`, the ``submit_graph`` code matrix, and the env's fast path for a
well-formed ``intervene``.

>>> from acdb_gym.core.graphs import PDAG
>>> action = intervene(2, 3.0)
>>> action[0], decode(action, n_nodes=4)
(0, Intervene(var=2, value=3.0))
>>> decode(submit(PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])), n_nodes=3)
Submit(graph=PDAG(n_nodes=3, directed=[(0, 1)], undirected=[(1, 2)]))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from acdb_gym.core import statistic_tools
from acdb_gym.core.graphs import ADMG, DAG, PAG, PDAG
from acdb_gym.core.types import is_integer
from acdb_gym.envs.action_types import (
    BIDIRECTED,
    DIRECTED,
    HYPOTHESIS_KEY,
    NO_EDGE,
    UNDIRECTED,
    VALUE_BOUND,
    Action,
    ActionKind,
    EncodedAction,
    Intervene,
    Submit,
    ToolAction,
    action_class,
    kind_names,
    kind_of,
    node_index,
    real_number,
)

__all__ = [
    "correlation",
    "decode",
    "encode",
    "graph_from_codes",
    "graph_to_codes",
    "hypothesis_from_codes",
    "independence_test",
    "intervene",
    "intervene_request",
    "partial_correlation",
    "split_hypothesis",
    "submit",
    "tool_action",
]

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
    spec = statistic_tools.get_tool(name)

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
    return kind_of(spec.name), payload


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


def _codes_in_range(codes: np.ndarray, top: int) -> bool:
    """Whether integer ``codes`` all lie in ``0..top`` (the cheap test of a well-formed matrix;
    other dtypes take :func:`_check_code_values`)."""
    if codes.dtype.kind not in "iu" or codes.size == 0:
        return False
    return bool(codes.min() >= 0 and codes.max() <= top)


def _check_code_values(codes: np.ndarray, allowed: tuple[int, ...], latent: bool) -> None:
    """Raise ValueError naming the first entry of ``codes`` outside ``allowed``."""
    bad = ~np.isin(codes, allowed)
    if not bad.any():
        return
    i, j = (int(v) for v in np.argwhere(bad)[0])
    if latent:
        raise ValueError(f"graph codes must be 0 to 3, got {codes[i, j]} at ({i}, {j})")
    hint = " (3, i <-> j, only on levels with hidden confounders)" if codes[i, j] == 3 else ""
    raise ValueError(f"graph codes must be 0, 1 or 2, got {codes[i, j]} at ({i}, {j}){hint}")


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
    if not _codes_in_range(codes, allowed[-1]):
        _check_code_values(codes, allowed, latent)
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
