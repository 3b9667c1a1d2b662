"""PC on normal scores: Fisher-z tests of the data's ranks (the nonparanormal PC of Harris &
Drton, JMLR 2013), a conditional-independence test that is exact for Gaussian copulas and sees
every monotone nonlinear dependence, at the cost of Fisher-z PC.

It is the PC the ``pc_rank`` agent runs on nonlinear worlds. Kernel tests (causal-learn's KCI)
see non-monotone dependences too, but cost minutes per instance at the v1 sizes (measured in
the README's SCM families section), which a sweep cannot afford.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.types import FloatArray
from acdb_gym.discovery._common import as_data_matrix
from acdb_gym.discovery.pc import pc_cpdag

__all__ = ["normal_scores", "rank_pc_cpdag"]


def normal_scores(data: ArrayLike) -> FloatArray:
    """Each column replaced by the standard normal quantiles of its ranks, ``Phi^-1(r / (n+1))``
    (ties get their average rank).

    >>> normal_scores(np.array([[3.0], [1.0], [2.0]])).round(3).ravel().tolist()
    [0.674, -0.674, 0.0]
    """
    array = as_data_matrix(data, "data")
    from scipy import stats  # imported when used: it costs a few tenths of a second

    ranks = stats.rankdata(array, axis=0)
    return np.asarray(special.ndtri(ranks / (array.shape[0] + 1)), dtype=np.float64)


def rank_pc_cpdag(data: ArrayLike, *, alpha: float = 0.05) -> PDAG:
    """:func:`~acdb_gym.discovery.pc.pc_cpdag` on :func:`normal_scores` of ``data``."""
    return pc_cpdag(normal_scores(data), alpha=alpha)
