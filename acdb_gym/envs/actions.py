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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np
from gymnasium import spaces

from acdb_gym.core.graphs import DAG, PDAG

__all__ = [
    "VALUE_BOUND",
    "Action",
    "ActionKind",
    "Correlation",
    "IndependenceTest",
    "Intervene",
    "PartialCorrelation",
    "Submit",
    "action_space",
    "correlation",
    "decode",
    "encode",
    "graph_from_codes",
    "graph_to_codes",
    "independence_test",
    "intervene",
    "partial_correlation",
    "submit",
]

VALUE_BOUND = 1e4
"""Intervention values must lie in ``[-VALUE_BOUND, VALUE_BOUND]`` (the action space's Box)."""

NO_EDGE, DIRECTED, UNDIRECTED = 0, 1, 2
"""Codes of the ``submit_graph`` matrix: ``g[i, j] = 1`` is ``i -> j``; 2 (both ways) is ``i - j``."""


class ActionKind(IntEnum):
    """Index of each sub-space of the ``OneOf`` action space."""

    INTERVENE = 0
    CORRELATION = 1
    PARTIAL_CORRELATION = 2
    INDEPENDENCE_TEST = 3
    SUBMIT_GRAPH = 4


@dataclass(frozen=True)
class Intervene:
    """``do(X_var = value)``."""

    var: int
    value: float


@dataclass(frozen=True)
class Correlation:
    """Pearson correlation of ``X_i``, ``X_j`` on the observational data or experiment ``regime``."""

    i: int
    j: int
    regime: int | None = None


@dataclass(frozen=True)
class PartialCorrelation:
    """Partial correlation of ``X_i``, ``X_j`` given ``X_cond``."""

    i: int
    j: int
    cond: tuple[int, ...] = ()
    regime: int | None = None


@dataclass(frozen=True)
class IndependenceTest:
    """Fisher-z test of ``X_i ⊥ X_j | X_cond`` at the session's default ``alpha = 0.05``."""

    i: int
    j: int
    cond: tuple[int, ...] = ()
    regime: int | None = None


@dataclass(frozen=True)
class Submit:
    """Submit a mixed graph and end the episode."""

    graph: PDAG


Action = Intervene | Correlation | PartialCorrelation | IndependenceTest | Submit


def action_space(n_nodes: int, max_interventions: int) -> spaces.OneOf:
    """The ``OneOf`` action space for ``n_nodes`` variables (DESIGN §8).

    Statistics tools carry ``regime``: 0 for the observational data, ``k`` for the ``k``-th
    experiment (1-based).
    """
    node = spaces.Discrete(n_nodes)
    regime = spaces.Discrete(max_interventions + 1)
    pair: dict[str, spaces.Space[Any]] = {"i": node, "j": node, "regime": regime}
    conditional: dict[str, spaces.Space[Any]] = {**pair, "cond": spaces.MultiBinary(n_nodes)}
    return spaces.OneOf(
        [
            spaces.Dict(
                {
                    "var": node,
                    "value": spaces.Box(-VALUE_BOUND, VALUE_BOUND, shape=(), dtype=np.float64),
                }
            ),
            spaces.Dict(pair),
            spaces.Dict(conditional),
            spaces.Dict(conditional),
            spaces.Dict({"graph": spaces.MultiDiscrete(np.full((n_nodes, n_nodes), 3))}),
        ]
    )


# --------------------------------------------------------------------------- constructors


def intervene(var: int, value: float) -> tuple[int, dict[str, Any]]:
    """The action ``do(X_var = value)``."""
    return (
        int(ActionKind.INTERVENE),
        {"var": np.int64(var), "value": np.asarray(value, dtype=np.float64)},
    )


def correlation(i: int, j: int, *, regime: int | None = None) -> tuple[int, dict[str, Any]]:
    """Correlation of ``X_i`` and ``X_j`` (``regime``: experiment index, None = observational)."""
    return int(ActionKind.CORRELATION), _pair(i, j, regime)


def partial_correlation(
    i: int, j: int, cond: Iterable[int] = (), *, n_nodes: int, regime: int | None = None
) -> tuple[int, dict[str, Any]]:
    """Partial correlation of ``X_i`` and ``X_j`` given ``X_cond``."""
    return int(ActionKind.PARTIAL_CORRELATION), {
        **_pair(i, j, regime),
        "cond": _cond_mask(cond, n_nodes),
    }


def independence_test(
    i: int, j: int, cond: Iterable[int] = (), *, n_nodes: int, regime: int | None = None
) -> tuple[int, dict[str, Any]]:
    """Fisher-z independence test of ``X_i`` and ``X_j`` given ``X_cond``."""
    return int(ActionKind.INDEPENDENCE_TEST), {
        **_pair(i, j, regime),
        "cond": _cond_mask(cond, n_nodes),
    }


def submit(graph: PDAG | DAG) -> tuple[int, dict[str, Any]]:
    """Submit ``graph`` (a DAG is submitted fully directed)."""
    if isinstance(graph, DAG):
        graph = graph.to_pdag()
    return int(ActionKind.SUBMIT_GRAPH), {"graph": graph_to_codes(graph)}


def encode(action: Action, *, n_nodes: int) -> tuple[int, dict[str, Any]]:
    """Encode a typed action as an element of the action space."""
    if isinstance(action, Intervene):
        return intervene(action.var, action.value)
    if isinstance(action, Correlation):
        return correlation(action.i, action.j, regime=action.regime)
    if isinstance(action, PartialCorrelation):
        return partial_correlation(
            action.i, action.j, action.cond, n_nodes=n_nodes, regime=action.regime
        )
    if isinstance(action, IndependenceTest):
        return independence_test(
            action.i, action.j, action.cond, n_nodes=n_nodes, regime=action.regime
        )
    if isinstance(action, Submit):
        return submit(action.graph)
    raise TypeError(f"not an ACDB action: {action!r}")


def _pair(i: int, j: int, regime: int | None) -> dict[str, Any]:
    return {
        "i": np.int64(i),
        "j": np.int64(j),
        "regime": np.int64(0 if regime is None else regime + 1),
    }


def _cond_mask(cond: Iterable[int], n_nodes: int) -> np.ndarray:
    mask = np.zeros(n_nodes, dtype=np.int8)
    for c in cond:
        if not 0 <= c < n_nodes:
            raise ValueError(f"cond entries must be in [0, {n_nodes}), got {c}")
        mask[c] = 1
    return mask


# --------------------------------------------------------------------------- graph codes


def graph_to_codes(graph: PDAG) -> np.ndarray:
    """The ``(d, d)`` code matrix of ``graph``: 0 none, 1 ``i -> j``, 2 ``i - j`` (symmetric)."""
    codes = np.zeros((graph.n_nodes, graph.n_nodes), dtype=np.int64)
    codes[graph.directed] = DIRECTED
    codes[graph.undirected] = UNDIRECTED
    return codes


def graph_from_codes(codes: np.ndarray) -> PDAG:
    """Decode a code matrix; raises ValueError naming the offending edges when it is not a
    valid mixed graph (self-loops, one-sided undirected marks, pairs directed both ways, pairs
    both directed and undirected, directed cycles)."""
    codes = np.asarray(codes)
    bad = ~np.isin(codes, (NO_EDGE, DIRECTED, UNDIRECTED))
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"graph codes must be 0, 1 or 2, got {codes[i, j]} at ({i}, {j})")
    return PDAG(codes == DIRECTED, codes == UNDIRECTED)


# --------------------------------------------------------------------------- decoding


def decode(action: tuple[int, Mapping[str, Any]], *, n_nodes: int) -> Action:
    """Turn an action-space element into a typed action.

    Index errors (``i == j``, a node in its own conditioning set) are left to the session, which
    reports them; malformed graphs raise ValueError here.
    """
    kind, payload = action
    if type(kind) is int and kind == ActionKind.INTERVENE:  # the hot case, without the enum
        return Intervene(int(payload["var"]), float(payload["value"]))
    kind = ActionKind(int(kind))
    if kind is ActionKind.INTERVENE:
        return Intervene(int(payload["var"]), float(payload["value"]))
    if kind is ActionKind.SUBMIT_GRAPH:
        return Submit(graph_from_codes(payload["graph"]))
    i, j = int(payload["i"]), int(payload["j"])
    regime = int(payload["regime"]) - 1
    regime_or_none = None if regime < 0 else regime
    if kind is ActionKind.CORRELATION:
        return Correlation(i, j, regime_or_none)
    cond = tuple(int(c) for c in np.flatnonzero(np.asarray(payload["cond"])))
    if kind is ActionKind.PARTIAL_CORRELATION:
        return PartialCorrelation(i, j, cond, regime_or_none)
    return IndependenceTest(i, j, cond, regime_or_none)
