"""Typed actions: constructors, decode/encode round trips, graph codes."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.envs import actions
from acdb_gym.envs.actions import (
    ActionKind,
    Correlation,
    IndependenceTest,
    Intervene,
    PartialCorrelation,
    Submit,
)

D, M = 5, 6
SPACE = actions.action_space(D, M)
GRAPH = PDAG.from_edges(D, directed=[(0, 1), (3, 1)], undirected=[(2, 4)])


def same_action(a: tuple[int, dict[str, Any]], b: tuple[int, dict[str, Any]]) -> bool:
    """Same kind, same keys, equal values (arrays compared elementwise)."""
    return (
        int(a[0]) == int(b[0])
        and a[1].keys() == b[1].keys()
        and all(np.array_equal(a[1][key], b[1][key]) for key in a[1])
    )


CONSTRUCTED = [
    (actions.intervene(2, 3.0), Intervene(2, 3.0)),
    (actions.intervene(0, -1e4), Intervene(0, -1e4)),
    (actions.correlation(0, 4), Correlation(0, 4, None)),
    (actions.correlation(3, 1, regime=0), Correlation(3, 1, 0)),
    (actions.correlation(3, 1, regime=M - 1), Correlation(3, 1, M - 1)),
    (actions.partial_correlation(0, 1, n_nodes=D), PartialCorrelation(0, 1, (), None)),
    (
        actions.partial_correlation(0, 1, [4, 2], n_nodes=D, regime=2),
        PartialCorrelation(0, 1, (2, 4), 2),
    ),
    (actions.independence_test(4, 3, n_nodes=D), IndependenceTest(4, 3, (), None)),
    (
        actions.independence_test(1, 2, (0, 3, 4), n_nodes=D, regime=0),
        IndependenceTest(1, 2, (0, 3, 4), 0),
    ),
    (actions.submit(GRAPH), Submit(GRAPH)),
    (actions.submit(PDAG.empty(D)), Submit(PDAG.empty(D))),
    (
        actions.submit(DAG.from_edges(D, [(0, 1), (1, 2)])),
        Submit(PDAG.from_edges(D, directed=[(0, 1), (1, 2)])),
    ),
]


@pytest.mark.parametrize(("action", "typed"), CONSTRUCTED, ids=[repr(t) for _, t in CONSTRUCTED])
def test_every_constructor_round_trips_through_decode(
    action: tuple[int, dict[str, Any]], typed: actions.Action
) -> None:
    assert SPACE.contains(action)
    assert actions.decode(action, n_nodes=D) == typed
    assert same_action(actions.encode(typed, n_nodes=D), action)
    assert SPACE.contains(actions.encode(typed, n_nodes=D))


def test_kind_indices_follow_the_documented_table() -> None:
    assert [kind.name for kind in ActionKind] == [
        "INTERVENE",
        "CORRELATION",
        "PARTIAL_CORRELATION",
        "INDEPENDENCE_TEST",
        "SUBMIT_GRAPH",
    ]
    assert len(SPACE.spaces) == len(ActionKind)
    assert [kind for kind, _ in (a for a, _ in CONSTRUCTED)] == [0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4, 4]


def test_encode_of_decode_is_the_identity_on_sampled_actions() -> None:
    SPACE.seed(0)
    rng = np.random.default_rng(0)
    decoded_kinds = set()
    for _ in range(500):
        action = SPACE.sample()
        if action[0] == ActionKind.SUBMIT_GRAPH:
            # Random code matrices are rarely valid graphs; use valid ones for this kind.
            action = (action[0], {"graph": actions.graph_to_codes(random_pdag(rng, D))})
        typed = actions.decode(action, n_nodes=D)
        decoded_kinds.add(int(action[0]))
        assert same_action(actions.encode(typed, n_nodes=D), action), typed
        assert actions.decode(actions.encode(typed, n_nodes=D), n_nodes=D) == typed
    assert decoded_kinds == set(range(len(ActionKind)))


def test_encode_rejects_what_is_not_an_action() -> None:
    with pytest.raises(TypeError, match="not an ACDB action"):
        actions.encode("intervene", n_nodes=D)  # type: ignore[arg-type]


def test_cond_out_of_range_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"cond entries must be in \[0, 5\), got 5"):
        actions.partial_correlation(0, 1, [5], n_nodes=D)


# --------------------------------------------------------------------------- graph codes


def random_pdag(rng: np.random.Generator, n_nodes: int) -> PDAG:
    """A random DAG (random order, random density) with a random subset of edges undirected."""
    order = rng.permutation(n_nodes)
    forward = np.triu(rng.random((n_nodes, n_nodes)) < rng.uniform(0.1, 0.9), k=1)
    dag = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    dag[np.ix_(order, order)] = forward
    undirected = dag & (rng.random((n_nodes, n_nodes)) < rng.uniform(0.0, 1.0))
    undirected = undirected | undirected.T
    return PDAG(dag & ~undirected, undirected)


def test_graph_codes_round_trip_on_random_pdags() -> None:
    rng = np.random.default_rng(2024)
    for _ in range(300):
        n_nodes = int(rng.integers(2, 12))
        graph = random_pdag(rng, n_nodes)
        codes = actions.graph_to_codes(graph)
        assert codes.shape == (n_nodes, n_nodes)
        assert set(np.unique(codes)) <= {0, 1, 2}
        assert np.array_equal(codes == 2, (codes == 2).T)
        assert np.array_equal(codes == 1, graph.directed)
        assert actions.graph_from_codes(codes) == graph
        assert actions.decode(actions.submit(graph), n_nodes=n_nodes) == Submit(graph)


def test_graph_codes_follow_the_documented_convention() -> None:
    codes = actions.graph_to_codes(GRAPH)
    expected = np.zeros((D, D), dtype=np.int64)
    expected[0, 1] = expected[3, 1] = 1
    expected[2, 4] = expected[4, 2] = 2
    assert np.array_equal(codes, expected)


@pytest.mark.parametrize(
    ("marks", "message"),
    [
        ({(0, 1): 3}, "graph codes must be 0, 1 or 2, got 3 at (0, 1)"),
        ({(1, 0): -1}, "graph codes must be 0, 1 or 2, got -1 at (1, 0)"),
        ({(0, 1): 2}, "missing mirror of X0 - X1"),
        ({(0, 1): 1, (1, 0): 1}, "directed both ways: X0 <-> X1"),
        ({(3, 3): 1}, "self-loops"),
        ({(0, 1): 1, (1, 2): 1, (2, 0): 1}, "directed cycle"),
    ],
)
def test_graph_from_codes_names_what_is_wrong(
    marks: dict[tuple[int, int], int], message: str
) -> None:
    codes = np.zeros((D, D), dtype=np.int64)
    for (i, j), code in marks.items():
        codes[i, j] = code
    with pytest.raises(ValueError, match=re.escape(message)):
        actions.graph_from_codes(codes)


# --------------------------------------------------------------------------- generated from specs


def test_kind_names_follow_action_kind() -> None:
    assert actions.kind_names() == tuple(kind.name.lower() for kind in ActionKind)
    for name in actions.kind_names()[1:-1]:
        cls = actions.action_class(name)
        assert cls.tool.name == name and cls.__name__ == cls.tool.action_name
        assert issubclass(cls, actions.ToolAction)
    assert actions.action_class("correlation") is Correlation


def test_tool_action_is_the_generic_constructor() -> None:
    assert same_action(
        actions.tool_action("independence_test", 1, 2, [0], n_nodes=D, regime=3),
        actions.independence_test(1, 2, [0], n_nodes=D, regime=3),
    )
    typed = IndependenceTest(1, 2, (0,), 3)
    assert typed.arguments == {"i": 1, "j": 2, "cond": (0,)} and typed.data_regime == 3
    assert Correlation(0, 1).data_regime is None
    with pytest.raises(ValueError, match="unknown statistics tool 'covariance'"):
        actions.tool_action("covariance", 0, 1)
    with pytest.raises(ValueError, match="encoding partial_correlation needs n_nodes"):
        actions.partial_correlation(0, 1, [2])


def test_decode_names_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match=r"action kind must be in \[0, 5\), got 7"):
        actions.decode((7, {}), n_nodes=D)
