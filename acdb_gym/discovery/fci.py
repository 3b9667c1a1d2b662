"""The FCI algorithm through causal-learn, with its endpoint marks decoded once into a PAG.

causal-learn's FCI returns a ``GeneralGraph`` whose matrix ``g[a, b]`` is the mark at ``a`` on
the edge between ``a`` and ``b``: ``-1`` tail, ``1`` arrowhead, ``2`` circle, ``0`` no edge (as
PC's, plus the circle). :func:`pag_from_causallearn` reads it into a
:class:`~acdb_gym.core.graphs.admg.PAG`, whose ``arrowhead[i, j]`` / ``tail[i, j]`` are the mark
at ``j``, so the PAG's marks are the transposes.

>>> marks = np.array([[0, 2, 0], [1, 0, 1], [0, 1, 0]])  # X0 o-> X1 <-> X2
>>> pag_from_causallearn(marks).edge_strings()
['X0 o-> X1', 'X1 <-> X2']
"""

from __future__ import annotations

import contextlib
import io
from collections import OrderedDict

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import ADMG, PAG, PDAG
from acdb_gym.discovery._common import (
    as_data_matrix,
    check_full_rank_data,
    check_probability,
    memo_by_data,
    stable_causallearn_hashes,
)
from acdb_gym.discovery.pc import _undirect_cycles

__all__ = ["codable_graph", "fci_pag", "pag_from_causallearn", "shared_fci_pag"]

_TAIL, _ARROW, _CIRCLE = -1, 1, 2


def pag_from_causallearn(matrix: ArrayLike) -> PAG:
    """Decode causal-learn's endpoint-mark matrix (``GeneralGraph.graph`` of FCI) into a PAG.

    Raises:
        ValueError: the matrix is not square, has a non-zero diagonal, holds a value other than
            -1, 0, 1, 2, or marks only one end of a pair.
    """
    marks = np.asarray(matrix)
    if marks.ndim != 2 or marks.shape[0] != marks.shape[1]:
        raise ValueError(f"matrix must be square, got shape {marks.shape}")
    bad = ~np.isin(marks, (_TAIL, 0, _ARROW, _CIRCLE))
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"matrix entries must be -1, 0, 1 or 2, got {marks[i, j]} at ({i}, {j})")
    if np.diag(marks).any():
        node = int(np.flatnonzero(np.diag(marks))[0])
        raise ValueError(f"matrix diagonal must be 0, got {marks[node, node]} at X{node}")
    adjacent = marks != 0
    if not np.array_equal(adjacent, adjacent.T):
        i, j = (int(v) for v in np.argwhere(adjacent != adjacent.T)[0])
        raise ValueError(f"the edge between X{i} and X{j} has a mark at one end only")
    return PAG(adjacent, (marks == _ARROW).T, (marks == _TAIL).T)


def fci_pag(data: ArrayLike, *, alpha: float = 0.05) -> PAG:
    """causal-learn's FCI with Fisher-z tests at ``alpha`` on observational ``data``.

    The call is ``fci(data, "fisherz", alpha, show_progress=False, verbose=False)`` with
    causal-learn's other defaults, decoded with :func:`pag_from_causallearn`. ``data`` is copied.

    Raises:
        ValueError: ``alpha`` outside ``(0, 1)``, or ``data`` of the wrong shape, with fewer
            than ``d + 1`` rows, non-finite values or a constant column.
    """
    check_probability(alpha, "alpha")
    array = as_data_matrix(data, "data")
    n_nodes = array.shape[1]
    if n_nodes < 2:
        empty = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
        return PAG(empty, empty, empty)
    check_full_rank_data(array, "data")
    # Imported here: causal-learn pulls in scikit-learn and takes seconds to import.
    from causallearn.search.ConstraintBased.FCI import fci

    # causal-learn prints some orientations even with verbose=False.
    with contextlib.redirect_stdout(io.StringIO()), stable_causallearn_hashes():
        graph, _ = fci(
            np.ascontiguousarray(array), "fisherz", alpha, show_progress=False, verbose=False
        )
    return pag_from_causallearn(graph.graph)


SHARED_FCI_SIZE = 64
"""Datasets whose FCI result :func:`shared_fci_pag` keeps per process."""

_SHARED: OrderedDict[tuple[object, ...], PAG] = OrderedDict()


def shared_fci_pag(data: ArrayLike, *, alpha: float = 0.05) -> PAG:
    """:func:`fci_pag` computed once per dataset and process (the ``fci`` and ``fci_active``
    agents run it on the same observational sample), keyed by the data's shape, a SHA-256 of
    its float64 bytes and ``alpha``."""
    return memo_by_data(
        _SHARED, SHARED_FCI_SIZE, data, alpha, lambda array, a: fci_pag(array, alpha=a)
    )


def codable_graph(pag: PAG) -> PDAG | ADMG | PAG:
    """``pag`` as a submission the env's code matrix carries, converted like PC's PDAG: its
    ``-->`` edges directed, its ``<->`` edges bidirected, every edge with a circle (``o->``,
    ``o-o``) or an undirected ``---`` edge undirected (``o-o``); the edges of a directed cycle
    (possible on finite samples) become undirected too. A PDAG when there is no ``<->``, an
    ADMG when every edge is directed or bidirected, else a PAG.
    """
    head, tail = pag.arrowhead, pag.tail
    directed = tail.T & head
    bidirected = head & head.T
    undirected = pag.adjacent & ~directed & ~directed.T & ~bidirected
    directed, undirected = _undirect_cycles(directed, undirected)
    if not bidirected.any():
        return PDAG(directed, undirected)
    if not undirected.any():
        return ADMG(directed, bidirected)
    return PAG(pag.adjacent, directed | bidirected, directed.T)
