"""Structure-learning algorithms as pure functions from sample arrays to PDAGs.

This layer sits on :mod:`acdb_gym.core` (it imports numpy, scipy and causal-learn, never
gymnasium or anything above it); environments and baselines share it.

* :func:`pc_cpdag`: causal-learn's PC with Fisher-z tests, decoded by
  :func:`pdag_from_causallearn` (and encoded back by :func:`pdag_to_causallearn`);
  :func:`shared_pc_cpdag` computes it once per dataset and process, for the baselines.
* :func:`shift_pvalues`: distribution-shift tests of every variable under an intervention
  (:func:`distribution_shift_pvalue` for one variable); :func:`shift_evidence` adds a
  direct-effect test and :func:`combine_shift_evidence` corrects and completes PC's graph with
  the evidence of every experiment (the estimator of ``pc_active``).
* :func:`orient_from_interventions`: orient edges at intervened nodes by the shift test, then
  Meek's rules.
* :func:`orient_by_mean_shift`: the paper's ``pc_greedy`` orientation rule.
* :func:`sortnregress`: the variance-sortability baseline; :func:`regress_in_order` is its
  control with any given order.
* :func:`greedy_interventional_search`: a greedy search over DAGs on the interventional
  Gaussian BIC (:class:`InterventionalBIC`, the score of GIES, not its search), returning the
  interventional essential graph (the estimator of ``bic_active``).
"""

from acdb_gym.discovery.bic_search import (
    InterventionalBIC,
    ScoreSearchResult,
    greedy_interventional_search,
    hill_climb,
)
from acdb_gym.discovery.orientation import (
    Experiment,
    orient_by_mean_shift,
    orient_from_interventions,
)
from acdb_gym.discovery.pc import (
    pc_cpdag,
    pdag_from_causallearn,
    pdag_to_causallearn,
    shared_pc_cpdag,
)
from acdb_gym.discovery.shift import (
    CombinedGraph,
    ShiftEvidence,
    combine_shift_evidence,
    distribution_shift_pvalue,
    shift_evidence,
    shift_pvalues,
)
from acdb_gym.discovery.sortnregress import regress_in_order, sortnregress

__all__ = [
    "CombinedGraph",
    "Experiment",
    "InterventionalBIC",
    "ScoreSearchResult",
    "ShiftEvidence",
    "combine_shift_evidence",
    "distribution_shift_pvalue",
    "greedy_interventional_search",
    "hill_climb",
    "orient_by_mean_shift",
    "orient_from_interventions",
    "pc_cpdag",
    "pdag_from_causallearn",
    "pdag_to_causallearn",
    "regress_in_order",
    "shared_pc_cpdag",
    "shift_evidence",
    "shift_pvalues",
    "sortnregress",
]
