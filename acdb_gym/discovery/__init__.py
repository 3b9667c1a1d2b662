"""Structure-learning algorithms as pure functions from sample arrays to PDAGs.

This layer sits on :mod:`acdb_gym.core` (it imports numpy, scipy and causal-learn, never
gymnasium or anything above it); environments and baselines share it.

* :func:`pc_cpdag`: causal-learn's PC with Fisher-z tests, decoded by
  :func:`pdag_from_causallearn` (and encoded back by :func:`pdag_to_causallearn`);
  :func:`shared_pc_cpdag` computes it once per dataset and process, for the baselines;
  :func:`pc_cpdag_many` runs it on several datasets with their tests pooled.
* :func:`shift_pvalues`: distribution-shift tests of every variable under an intervention
  (:func:`distribution_shift_pvalue` for one variable); :func:`shift_evidence` adds a
  direct-effect test and :func:`combine_shift_evidence` corrects and completes PC's graph with
  the evidence of every experiment (the estimator of ``pc_active``).
* :func:`orient_from_interventions`: orient edges at intervened nodes by the shift test, then
  Meek's rules; :class:`ShiftOrienter` adds the experiments one at a time.
* :func:`orient_by_mean_shift`: the paper's ``pc_greedy`` orientation rule.
* :func:`sortnregress`: the variance-sortability baseline; :func:`r2sortnregress` its
  scale-invariant R² variant; :func:`regress_in_order` is their control with any given order.
* :func:`var_sortability`, :func:`r2_sortability`: how well variance or R² orders the variables
  along the true DAG's paths (:func:`order_alignment`, :func:`r2_scores`);
  :func:`feature_sortability` the same for any of :data:`MARGINAL_FEATURES`
  (:func:`marginal_scores`), and :func:`msortnregress` regresses in that feature's order.
* :func:`direct_lingam`: a DirectLiNGAM order (:func:`direct_lingam_order`) pruned like
  sortnregress, for linear non-Gaussian data.
* :func:`rank_pc_cpdag`: PC with Fisher-z tests on :func:`normal_scores` (ranks), for
  monotone nonlinear data.
* :func:`anm_graph`: adjacencies oriented by additive noise models (kernel ridge regression each
  way, HSIC of the residuals; :func:`anm_direction` for one pair), for cause-effect pairs.
* :func:`greedy_interventional_search`: a greedy search over DAGs on the interventional
  Gaussian BIC (:class:`InterventionalBIC`, the score of GIES, not its search), returning the
  interventional essential graph (the estimator of ``bic_active``).
"""

from acdb_gym.discovery.anm import AnmDecision, anm_direction, anm_graph
from acdb_gym.discovery.bic_search import (
    InterventionalBIC,
    ScoreSearchResult,
    greedy_interventional_search,
    hill_climb,
)
from acdb_gym.discovery.lingam_order import direct_lingam, direct_lingam_order
from acdb_gym.discovery.orientation import (
    Experiment,
    ShiftOrienter,
    orient_by_mean_shift,
    orient_from_interventions,
)
from acdb_gym.discovery.pc import (
    pc_cpdag,
    pc_cpdag_many,
    pdag_from_causallearn,
    pdag_to_causallearn,
    shared_pc_cpdag,
)
from acdb_gym.discovery.pc_rank import normal_scores, rank_pc_cpdag
from acdb_gym.discovery.shift import (
    CombinedGraph,
    ShiftEvidence,
    combine_shift_evidence,
    distribution_shift_pvalue,
    shift_evidence,
    shift_pvalues,
)
from acdb_gym.discovery.sortability import (
    MARGINAL_FEATURES,
    MarginalFeature,
    feature_sortability,
    marginal_scores,
    order_alignment,
    r2_scores,
    r2_sortability,
    var_sortability,
)
from acdb_gym.discovery.sortnregress import (
    SortDirection,
    feature_order,
    msortnregress,
    r2sortnregress,
    regress_in_order,
    sortnregress,
)

__all__ = [
    "MARGINAL_FEATURES",
    "AnmDecision",
    "CombinedGraph",
    "Experiment",
    "InterventionalBIC",
    "MarginalFeature",
    "ScoreSearchResult",
    "ShiftEvidence",
    "ShiftOrienter",
    "SortDirection",
    "anm_direction",
    "anm_graph",
    "combine_shift_evidence",
    "direct_lingam",
    "direct_lingam_order",
    "distribution_shift_pvalue",
    "feature_order",
    "feature_sortability",
    "greedy_interventional_search",
    "hill_climb",
    "marginal_scores",
    "msortnregress",
    "normal_scores",
    "order_alignment",
    "orient_by_mean_shift",
    "orient_from_interventions",
    "pc_cpdag",
    "pc_cpdag_many",
    "pdag_from_causallearn",
    "pdag_to_causallearn",
    "r2_scores",
    "r2_sortability",
    "r2sortnregress",
    "rank_pc_cpdag",
    "regress_in_order",
    "shared_pc_cpdag",
    "shift_evidence",
    "shift_pvalues",
    "sortnregress",
    "var_sortability",
]
