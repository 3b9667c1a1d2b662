"""Orienting undirected edges from single-node interventional samples.

Under a hard intervention ``do(X_t = v)`` the distribution of ``X_j`` changes only if ``X_j`` is
a descendant of ``t``. For an undirected edge ``t - j`` that means: ``X_j`` shifts iff
``t -> j``. Two rules turn that into orientations:

* :func:`orient_from_interventions` tests for a shift in mean or variance
  (:func:`acdb_gym.discovery.shift.distribution_shift_pvalue`) and then applies Meek's rules;
  :class:`ShiftOrienter` computes the same graph one experiment at a time. A significant shift
  orients ``t -> j``; what a test that sees *nothing* may say is the :data:`OrientationRule`:
  by default (``"power"``) ``j -> t`` only when the test had the power to see a shift of a
  stated size (:func:`no_shift_power`), else the edge stays undirected;
* :func:`orient_by_mean_shift` is the paper's ``pc_greedy`` heuristic (a fixed threshold on the
  change of the mean, no Meek closure).

Both consider only edges that are undirected in the input and incident to an intervened node,
visit experiments in the given order (an edge oriented by an earlier experiment is not revisited)
and neighbours in ascending order, and skip any orientation that would close a directed cycle,
leaving that edge undirected. Inputs are never modified.
"""

from __future__ import annotations

import copy
import operator
import warnings
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from acdb_gym.core.graphs import PDAG, has_directed_path
from acdb_gym.core.graphs.meek import _ALL_RULES, _close
from acdb_gym.core.types import BoolMatrix, FloatArray, IntArray
from acdb_gym.discovery._common import as_data_matrix, check_min_rows, check_probability
from acdb_gym.discovery._two_sample import ShiftReference

__all__ = [
    "DETECTABLE_SHIFT",
    "MIN_POWER",
    "ORIENTATION_RULES",
    "Experiment",
    "OrientationRule",
    "ShiftOrienter",
    "decide_orientations",
    "no_shift_power",
    "orient_by_mean_shift",
    "orient_from_interventions",
]

Experiment = tuple[int, ArrayLike]
"""One single-node intervention: ``(target, samples)`` with samples of shape ``(n_int, d)``."""

Decision = Literal["forward", "backward"] | None
"""``"forward"`` orients ``target -> j``, ``"backward"`` orients ``j -> target``, None abstains."""

OrientationRule = Literal["power", "significant", "band", "always"]
"""How an undirected edge ``t - j`` is read from the shift test of ``X_j`` under ``do(X_t)``
(p-value ``p``). Every rule orients ``t -> j`` when ``p < alpha``; they differ in what a test
that finds no shift says (DESIGN §8, "The design env's estimator"):

* ``"power"`` (the default): ``j -> t`` when ``p >= no_shift_threshold`` *and* the test had
  power at least :data:`MIN_POWER` to detect a mean shift of ``detectable_shift`` observational
  standard deviations with the experiment's sample sizes (:func:`no_shift_power`); otherwise
  the edge stays undirected. A test too small to see a shift is no evidence of its absence.
* ``"significant"``: a test that finds nothing never orients.
* ``"band"``: ``j -> t`` when ``p > no_shift_threshold``, undirected in between (``pc_active``'s
  abstention band, with no regard to power).
* ``"always"``: ``j -> t`` whenever ``p >= alpha``: the design env's rule before version 0.2,
  under which an experiment too small to detect anything orients every neighbour as a parent.
  Kept for replaying old results; never a default.
"""

ORIENTATION_RULES: tuple[OrientationRule, ...] = get_args(OrientationRule)

MIN_POWER = 0.8
"""The power a test must have had before its finding nothing may orient an edge (``"power"``)."""

DETECTABLE_SHIFT = 1.0
"""The default shift (in observational standard deviations of ``X_j``) that the ``"power"``
rule asks a test to be able to see: about the 10th percentile of the mean shift of a true child
under a 3-sd intervention on its parent in the linear worlds of the ladders (DESIGN §8)."""


def no_shift_power(n_int: int, n_obs: int, *, detectable_shift: float, alpha: float) -> float:
    """Power of the shift test's mean half to detect a shift of ``detectable_shift``
    standard deviations with ``n_int`` interventional and ``n_obs`` observational rows.

    The shift test combines Welch's t-test with the Brown–Forsythe test by Bonferroni
    (:func:`~acdb_gym.discovery.shift.shift_pvalues`), so its mean test runs at level
    ``alpha / 2``. With unit variances in both samples and the normal approximation, the
    noncentrality is ``lambda = delta / sqrt(1 / n_int + 1 / n_obs)`` and the power is
    ``Phi(lambda - z) + Phi(-lambda - z)`` with ``z = Phi^-1(1 - alpha / 4)``.

    >>> round(no_shift_power(3, 1000, detectable_shift=1.0, alpha=0.01), 2)
    0.14
    >>> round(no_shift_power(200, 1000, detectable_shift=1.0, alpha=0.01), 2)
    1.0

    Raises:
        ValueError: a sample size below 1, a negative or non-finite shift, or ``alpha``
            outside ``(0, 1)``.
    """
    if n_int < 1 or n_obs < 1:
        raise ValueError(f"sample sizes must be at least 1, got n_int={n_int}, n_obs={n_obs}")
    if not (np.isfinite(detectable_shift) and detectable_shift >= 0.0):
        raise ValueError(f"detectable_shift must be finite and >= 0, got {detectable_shift}")
    check_probability(alpha, "alpha")
    noncentrality = detectable_shift / np.sqrt(1.0 / n_int + 1.0 / n_obs)
    z = special.ndtri(1.0 - alpha / 4.0)
    return float(special.ndtr(noncentrality - z) + special.ndtr(-noncentrality - z))


def decide_orientations(
    p_values: ArrayLike,
    *,
    rule: OrientationRule,
    alpha: float,
    no_shift_threshold: float,
    powered: bool,
) -> list[Decision]:
    """The decision of each tested edge ``t - j`` from its shift p-value under ``rule``
    (:data:`OrientationRule`); ``powered`` says whether the experiment had
    :data:`MIN_POWER` (read by ``"power"`` only).

    >>> decide_orientations([0.001, 0.5], rule="power", alpha=0.01, no_shift_threshold=0.01,
    ...                     powered=False)
    ['forward', None]
    >>> decide_orientations([0.001, 0.5], rule="always", alpha=0.01, no_shift_threshold=0.01,
    ...                     powered=False)
    ['forward', 'backward']
    """
    backward_ok = rule == "always" or (rule == "band") or (rule == "power" and powered)
    threshold = alpha if rule == "always" else no_shift_threshold
    decisions: list[Decision] = []
    for p in np.asarray(p_values, dtype=np.float64).tolist():
        if p < alpha:
            decisions.append("forward")
        elif backward_ok and (p > threshold if rule == "band" else p >= threshold):
            decisions.append("backward")
        else:
            decisions.append(None)
    return decisions


def orient_from_interventions(
    pdag: PDAG,
    observational: ArrayLike,
    experiments: Sequence[Experiment],
    *,
    alpha: float = 0.01,
    rule: OrientationRule = "power",
    no_shift_threshold: float | None = None,
    detectable_shift: float = DETECTABLE_SHIFT,
    abstain: bool | None = None,
) -> PDAG:
    """Orient undirected edges at intervened nodes by testing for a distribution shift, then
    apply Meek's rules R1–R4.

    For each experiment ``(t, samples)`` and each undirected edge ``t - j``, let ``p`` be
    :func:`~acdb_gym.discovery.shift.distribution_shift_pvalue` of ``X_j`` observational vs
    interventional. ``p < alpha`` orients ``t -> j``; what a larger ``p`` does is ``rule``
    (:data:`OrientationRule`): by default ``j -> t`` only if ``p >= no_shift_threshold`` and the
    experiment had power :data:`MIN_POWER` to see a mean shift of ``detectable_shift``
    standard deviations (:func:`no_shift_power`), else the edge stays undirected.

    Meek's rules then run to closure. If noisy orientations made the graph inconsistent, so that
    a Meek rule would close a directed cycle, that rule's orientation is skipped (the edge stays
    undirected) and the closure goes on.

    Args:
        pdag: current graph over ``d`` nodes, e.g. PC's CPDAG.
        observational: observational samples, shape ``(n_obs, d)``, ``n_obs >= 2``.
        experiments: ``(target, samples)`` pairs, samples of shape ``(n_int, d)``,
            ``n_int >= 2``.
        alpha: significance level for "the neighbour shifted", in ``(0, 1)``.
        rule: how a test that finds no shift is read (:data:`OrientationRule`).
        no_shift_threshold: the p-value from which "no shift" is accepted (``"power"``:
            ``p >= threshold``, default ``alpha``; ``"band"``: ``p > threshold``, default 0.2);
            in ``[alpha, 1)``. Unused by ``"significant"`` and ``"always"``.
        detectable_shift: the shift (observational standard deviations) the ``"power"`` rule
            asks a test to be able to see; finite and ``>= 0``.
        abstain: deprecated: ``True`` is ``rule="band"``, ``False`` is ``rule="always"``.

    Returns:
        A new PDAG over the same nodes.

    Raises:
        ValueError: a bad rule or threshold, a target outside ``[0, d)``, or samples of the
            wrong shape, with too few rows or non-finite values.
    """
    check_probability(alpha, "alpha")
    rule, threshold = _resolve_rule(rule, abstain, alpha, no_shift_threshold)
    orienter = ShiftOrienter(
        pdag,
        observational,
        alpha=alpha,
        rule=rule,
        no_shift_threshold=threshold,
        detectable_shift=detectable_shift,
    )
    checked = [
        _check_experiment(item, index, pdag.n_nodes, min_rows=2)
        for index, item in enumerate(experiments)
    ]
    for target, samples in checked:
        orienter._add_checked(target, samples)
    return orienter.graph


def _resolve_rule(
    rule: OrientationRule, abstain: bool | None, alpha: float, no_shift_threshold: float | None
) -> tuple[OrientationRule, float]:
    """The rule and its no-shift threshold after the deprecated ``abstain`` and the defaults."""
    if abstain is not None:
        warnings.warn(
            "abstain= is deprecated: pass rule='band' (abstain=True) or rule='always' "
            "(abstain=False)",
            DeprecationWarning,
            stacklevel=3,
        )
        rule = "band" if abstain else "always"
    if rule not in ORIENTATION_RULES:
        raise ValueError(f"rule must be one of {list(ORIENTATION_RULES)}, got {rule!r}")
    threshold = no_shift_threshold
    if threshold is None:
        threshold = 0.2 if rule == "band" else alpha
    if rule in ("power", "band") and not alpha <= threshold < 1.0:
        raise ValueError(
            f"no_shift_threshold must be in [alpha, 1) = [{alpha}, 1), got {no_shift_threshold}"
        )
    return rule, float(threshold)


class ShiftOrienter:
    """:func:`orient_from_interventions`, one experiment at a time.

    After experiments ``e_1 ... e_k`` were added, :attr:`graph` is
    ``orient_from_interventions(pdag, observational, [e_1, ..., e_k], ...)``, bit for bit, but
    each experiment is tested once (all its incident edges in one batch of shift tests) instead
    of at every call, the observational half of the tests is computed once, and Meek's rules
    run only when an orientation changed. An environment that adds one experiment per step
    keeps one orienter per episode.

    Args:
        pdag: starting graph over ``d`` nodes, e.g. PC's CPDAG.
        observational: observational samples, shape ``(n_obs, d)``, ``n_obs >= 2``.
        alpha, rule, no_shift_threshold, detectable_shift, abstain: as
            :func:`orient_from_interventions`.
        reference: the observational half of the tests when already computed:
            ``ShiftReference(np.ascontiguousarray(observational.T))`` or its twin from
            :meth:`ShiftReference.many <acdb_gym.discovery._two_sample.ShiftReference.many>`
            (the caller vouches that it is of this sample).

    Raises:
        ValueError: as :func:`orient_from_interventions`.
    """

    def __init__(
        self,
        pdag: PDAG,
        observational: ArrayLike,
        *,
        alpha: float = 0.01,
        rule: OrientationRule = "power",
        no_shift_threshold: float | None = None,
        detectable_shift: float = DETECTABLE_SHIFT,
        abstain: bool | None = None,
        reference: ShiftReference | None = None,
    ) -> None:
        check_probability(alpha, "alpha")
        self._rule, self._no_shift = _resolve_rule(rule, abstain, alpha, no_shift_threshold)
        if not (np.isfinite(detectable_shift) and detectable_shift >= 0.0):
            raise ValueError(f"detectable_shift must be finite and >= 0, got {detectable_shift}")
        obs = as_data_matrix(observational, "observational", n_columns=pdag.n_nodes)
        check_min_rows(obs, "observational", 2)
        self._alpha = alpha
        self._detectable_shift = float(detectable_shift)
        self._n_obs = obs.shape[0]
        self._powered: dict[int, bool] = {}
        # One contiguous row per variable: the layout of a one-column test, which
        # orient_from_interventions always ran (see acdb_gym.discovery._two_sample).
        self._reference = (
            ShiftReference(np.ascontiguousarray(obs.T)) if reference is None else reference
        )
        self._directed = pdag.directed.copy()
        self._undirected = pdag.undirected.copy()
        self._graph: PDAG | None = None

    @property
    def rule(self) -> OrientationRule:
        """How a test that finds no shift is read (:data:`OrientationRule`)."""
        return self._rule

    @property
    def graph(self) -> PDAG:
        """The experiments' orientations closed under Meek's rules (the starting graph closed
        under Meek's rules before any experiment)."""
        if self._graph is None:
            # The raw state is a valid PDAG (the start, plus orientations that never close a
            # cycle), and Meek's closure of one is valid: meek_closure without its checks.
            self._graph = PDAG._valid(*_close(self._directed, self._undirected, _ALL_RULES))
        return self._graph

    def copy(self) -> ShiftOrienter:
        """An independent orienter in the same state (the observational half of the tests,
        which never changes, is shared)."""
        twin = copy.copy(self)
        twin._directed = self._directed.copy()
        twin._undirected = self._undirected.copy()
        return twin

    def powered(self, n_int: int) -> bool:
        """Whether an experiment of ``n_int`` rows has :data:`MIN_POWER` to see a shift of
        the orienter's ``detectable_shift`` (:func:`no_shift_power`)."""
        if n_int not in self._powered:
            power = no_shift_power(
                n_int, self._n_obs, detectable_shift=self._detectable_shift, alpha=self._alpha
            )
            self._powered[n_int] = power >= MIN_POWER
        return self._powered[n_int]

    def add(self, target: int, samples: ArrayLike) -> None:
        """Test and orient the undirected edges at ``target`` with one experiment's samples
        ``(n_int, d)``, ``n_int >= 2``.

        Raises:
            ValueError: a target outside ``[0, d)`` or samples of the wrong shape, with too
                few rows or non-finite values.
        """
        checked = _check_experiment((target, samples), 0, self._directed.shape[0], min_rows=2)
        self._add_checked(*checked)

    def decide(self, p_values: ArrayLike, n_int: int) -> list[Decision]:
        """The decisions of one experiment of ``n_int`` rows from its neighbours' p-values
        (:func:`decide_orientations` with this orienter's rule)."""
        return decide_orientations(
            p_values,
            rule=self._rule,
            alpha=self._alpha,
            no_shift_threshold=self._no_shift,
            powered=self._rule == "power" and self.powered(n_int),
        )

    def _add_checked(self, target: int, samples: FloatArray) -> None:
        neighbours = np.flatnonzero(self._undirected[target])
        if neighbours.size == 0:
            return
        p_values = self._reference.pvalues(np.ascontiguousarray(samples.T))[neighbours]
        decisions = self.decide(p_values, samples.shape[0])
        if _orient_at(self._directed, self._undirected, target, neighbours, decisions):
            self._graph = None


def orient_by_mean_shift(
    pdag: PDAG,
    observational: ArrayLike,
    experiments: Sequence[Experiment],
    *,
    threshold: float = 0.5,
) -> PDAG:
    """The paper's ``pc_greedy`` orientation rule: a fixed threshold on the shift of the mean.

    For each experiment ``(t, samples)`` and each undirected edge ``t - j``: orient ``t -> j`` if
    ``|mean_int(X_j) - mean_obs(X_j)| > threshold``, else ``j -> t``. No Meek closure follows,
    because the paper's heuristic does not apply one; call
    :func:`acdb_gym.core.graphs.meek_closure` on the result to add it.

    Args:
        pdag: current graph over ``d`` nodes.
        observational: observational samples, shape ``(n_obs, d)``, ``n_obs >= 1``.
        experiments: ``(target, samples)`` pairs, samples of shape ``(n_int, d)``,
            ``n_int >= 1``.
        threshold: the absolute mean shift above which the neighbour counts as affected;
            finite and ``>= 0``.

    Returns:
        A new PDAG over the same nodes.

    Raises:
        ValueError: a negative or non-finite threshold, a target outside ``[0, d)``, or samples
            of the wrong shape, with no rows or non-finite values.
    """
    if not (np.isfinite(threshold) and threshold >= 0.0):
        raise ValueError(f"threshold must be finite and >= 0, got {threshold}")

    n_nodes = pdag.n_nodes
    obs = as_data_matrix(observational, "observational", n_columns=n_nodes)
    check_min_rows(obs, "observational", 1)
    checked = [
        _check_experiment(item, index, n_nodes, min_rows=1)
        for index, item in enumerate(experiments)
    ]
    directed = pdag.directed.copy()
    undirected = pdag.undirected.copy()
    for target, samples in checked:
        neighbours = np.flatnonzero(undirected[target])
        decisions: list[Decision] = [
            "forward"
            if abs(float(samples[:, j].mean()) - float(obs[:, j].mean())) > threshold
            else "backward"
            for j in neighbours
        ]
        _orient_at(directed, undirected, target, neighbours, decisions)
    return PDAG(directed, undirected)


def _orient_at(
    directed: BoolMatrix,
    undirected: BoolMatrix,
    target: int,
    neighbours: IntArray,
    decisions: Sequence[Decision],
) -> bool:
    """Orient the undirected edges ``target - j`` for ``j`` in ``neighbours`` as decided, in
    place, skipping an orientation that would close a directed cycle; True if any changed."""
    changed = False
    for j, decision in zip(neighbours, decisions, strict=True):
        if decision is None:
            continue
        tail, head = (target, int(j)) if decision == "forward" else (int(j), target)
        if has_directed_path(directed, head, tail):
            continue  # tail -> head would close a directed cycle
        directed[tail, head] = True
        undirected[tail, head] = undirected[head, tail] = False
        changed = True
    return changed


def _check_experiment(
    item: Experiment, index: int, n_nodes: int, *, min_rows: int
) -> tuple[int, FloatArray]:
    try:
        target_raw, samples_raw = item
    except (TypeError, ValueError):
        raise ValueError(
            f"experiments[{index}] must be a (target, samples) pair, got {item!r}"
        ) from None
    try:
        target = operator.index(target_raw)
    except TypeError:
        raise ValueError(
            f"experiments[{index}] target must be an integer, got {target_raw!r}"
        ) from None
    if not 0 <= target < n_nodes:
        raise ValueError(f"experiments[{index}] target must be in [0, {n_nodes}), got {target}")
    name = f"experiments[{index}] samples"
    samples = as_data_matrix(samples_raw, name, n_columns=n_nodes)
    check_min_rows(samples, name, min_rows)
    return target, samples
