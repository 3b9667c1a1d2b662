"""Structure-learning algorithms as pure functions from sample arrays to PDAGs.

This layer sits on :mod:`acdb_gym.core` (it imports numpy, scipy and causal-learn, never
gymnasium or anything above it); environments and baselines share it.

* :func:`pc_cpdag`: causal-learn's PC with Fisher-z tests, decoded by
  :func:`pdag_from_causallearn` (and encoded back by :func:`pdag_to_causallearn`).
* :func:`orient_from_interventions`: orient edges at intervened nodes by a distribution-shift
  test (:func:`distribution_shift_pvalue`), then Meek's rules.
* :func:`orient_by_mean_shift`: the paper's ``pc_greedy`` orientation rule.
* :func:`sortnregress`: the variance-sortability baseline; :func:`regress_in_order` is its
  control with any given order.
* :func:`greedy_interventional_search`: score-based search with the interventional BIC
  (:class:`InterventionalBIC`, the score of GIES), returning the interventional essential graph.
"""

from acdb_gym.discovery.gies import (
    InterventionalBIC,
    ScoreSearchResult,
    greedy_interventional_search,
    hill_climb,
)
from acdb_gym.discovery.orientation import (
    Experiment,
    distribution_shift_pvalue,
    orient_by_mean_shift,
    orient_from_interventions,
)
from acdb_gym.discovery.pc import pc_cpdag, pdag_from_causallearn, pdag_to_causallearn
from acdb_gym.discovery.sortnregress import regress_in_order, sortnregress

__all__ = [
    "Experiment",
    "InterventionalBIC",
    "ScoreSearchResult",
    "distribution_shift_pvalue",
    "greedy_interventional_search",
    "hill_climb",
    "orient_by_mean_shift",
    "orient_from_interventions",
    "pc_cpdag",
    "pdag_from_causallearn",
    "pdag_to_causallearn",
    "regress_in_order",
    "sortnregress",
]
