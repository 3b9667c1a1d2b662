"""The hypotheses an agent states during an episode, and their compact text form (DESIGN §8).

An agent may attach its current graph to an ``intervene`` action
(``actions.intervene(var, value, hypothesis=graph)``). The env records, per experiment, the
hypothesis stated with it (what the agent believed *before* seeing the result) and, at the end,
the scored submission: a :class:`RevisionRecord`, returned in the final ``info["revision"]``.
The hypothesis after ``k`` experiments is the one stated with experiment ``k + 1``, or the
submission after the last one.

A graph is written as comma-separated edges: ``"i>j"`` for ``i -> j`` (row-major), then
``"i-j"`` for an undirected ``i - j`` (``i < j``); the empty graph is ``""``.

>>> graph = PDAG.from_edges(4, directed=[(0, 1), (3, 2)], undirected=[(1, 2)])
>>> graph_to_text(graph)
'0>1,3>2,1-2'
>>> graph_from_text("0>1,3>2,1-2", n_nodes=4) == graph
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.types import is_integer

__all__ = ["RevisionRecord", "graph_from_text", "graph_to_text"]

_EDGE = re.compile(r"(\d+)([>-])(\d+)")


def graph_to_text(graph: PDAG) -> str:
    """The compact text of ``graph``: ``"i>j"`` directed edges, then ``"i-j"`` undirected ones."""
    directed = [f"{i}>{j}" for i, j in graph.directed_edges()]
    undirected = [f"{i}-{j}" for i, j in graph.undirected_edges()]
    return ",".join(directed + undirected)


def graph_from_text(text: str, *, n_nodes: int) -> PDAG:
    """Parse :func:`graph_to_text`'s form.

    Raises:
        ValueError: a token that is not ``i>j`` or ``i-j``, a node outside ``[0, n_nodes)``, or
            an invalid mixed graph (the message names the edges).
    """
    if not isinstance(text, str):
        raise ValueError(f"a graph must be an edge string like '0>1,1-2', got {text!r}")
    directed: list[tuple[int, int]] = []
    undirected: list[tuple[int, int]] = []
    for token in filter(None, text.split(",")):
        match = _EDGE.fullmatch(token.strip())
        if match is None:
            raise ValueError(f"an edge must read 'i>j' or 'i-j', got {token!r} in {text!r}")
        i, mark, j = int(match.group(1)), match.group(2), int(match.group(3))
        if max(i, j) >= n_nodes:
            raise ValueError(f"edge {token!r} names a node outside [0, {n_nodes})")
        (directed if mark == ">" else undirected).append((i, j))
    return PDAG.from_edges(n_nodes, directed=directed, undirected=undirected)


@dataclass(frozen=True)
class RevisionRecord:
    """What an agent believed along an episode.

    Attributes:
        n_nodes: the number of variables ``d``.
        targets: the target of each experiment, in order.
        hypotheses: per experiment, the hypothesis stated with it (None: none was stated).
        final: the scored submission (the empty graph when the step limit ended the episode).
    """

    n_nodes: int
    targets: tuple[int, ...]
    hypotheses: tuple[PDAG | None, ...]
    final: PDAG

    def __post_init__(self) -> None:
        if len(self.hypotheses) != len(self.targets):
            raise ValueError(
                f"one hypothesis (or None) per experiment: {len(self.targets)} targets, "
                f"{len(self.hypotheses)} hypotheses"
            )
        for graph in (*self.hypotheses, self.final):
            if graph is not None and graph.n_nodes != self.n_nodes:
                raise ValueError(f"graphs must have {self.n_nodes} nodes, got {graph.n_nodes}")

    @property
    def n_experiments(self) -> int:
        """The number of experiments."""
        return len(self.targets)

    @property
    def stated(self) -> bool:
        """Whether any experiment came with a hypothesis."""
        return any(graph is not None for graph in self.hypotheses)

    def after(self, k: int) -> PDAG | None:
        """The hypothesis after ``k`` experiments (``0 <= k <= n_experiments``): the one stated
        with experiment ``k + 1``, or the submission for ``k = n_experiments``."""
        if not 0 <= k <= self.n_experiments:
            raise ValueError(f"k must be in [0, {self.n_experiments}], got {k}")
        return self.final if k == self.n_experiments else self.hypotheses[k]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of a result row's ``revision`` field.

        >>> RevisionRecord(3, (2,), (PDAG.from_edges(3, undirected=[(0, 1)]),),
        ...                PDAG.from_edges(3, directed=[(1, 0)])).to_dict()
        {'n_nodes': 3, 'targets': [2], 'before': ['0-1'], 'final': '1>0'}
        """
        return {
            "n_nodes": self.n_nodes,
            "targets": list(self.targets),
            "before": [None if g is None else graph_to_text(g) for g in self.hypotheses],
            "final": graph_to_text(self.final),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RevisionRecord:
        """Read :meth:`to_dict`'s form.

        Raises:
            ValueError: a missing key or a value of the wrong kind, named in the message.
        """
        missing = [key for key in ("n_nodes", "targets", "before", "final") if key not in data]
        if missing:
            raise ValueError(f"a revision record needs {missing}, got keys {sorted(data)}")
        if not is_integer(data["n_nodes"]) or data["n_nodes"] < 1:
            raise ValueError(f"n_nodes must be a positive integer, got {data['n_nodes']!r}")
        n_nodes = int(data["n_nodes"])
        targets, before = data["targets"], data["before"]
        if not _is_list(targets) or not all(is_integer(t) for t in targets):
            raise ValueError(f"targets must be a list of node indices, got {targets!r}")
        if not _is_list(before):
            raise ValueError(f"before must be a list of edge strings or nulls, got {before!r}")
        return cls(
            n_nodes,
            tuple(int(t) for t in targets),
            tuple(None if g is None else graph_from_text(g, n_nodes=n_nodes) for g in before),
            graph_from_text(data["final"], n_nodes=n_nodes),
        )


def _is_list(value: object) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)
