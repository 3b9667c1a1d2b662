"""Targeters on common random numbers: every targeter, every order and every orientation rule
sees the same samples of an experiment on ``X_i`` (DESIGN §8, "Headroom and replays").

The design env draws an episode's experiments from one stream in sequence, so two targeters
that intervene on the same node at different steps see different samples. To compare
targeters with each other, with a hindsight search over target sequences, and with the same
sequence read by another estimator, :class:`CRNWorld` fixes the samples per target instead:
the ``n_int`` rows of ``do(X_i = mean + shift * sd)`` come from the stream
``default_rng([seed, i, stream])``, whatever the order or the targeter. Its estimator is the
design env's (:class:`~acdb_gym.envs.design.env.DesignState`: a starting graph, then shift
tests read by an orientation rule, or the pooled BIC search), and its score is directed F1.

``experiments/headroom.py`` (hindsight-best against the heuristics) and
``experiments/few_sample_replay.py`` (every targeter's sequence re-scored under each rule) run
on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.scoring import directed_f1_of
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.core.worlds.sampler import sampler_for
from acdb_gym.discovery import ShiftOrienter
from acdb_gym.discovery.orientation import OrientationRule
from acdb_gym.envs.design.cache import starting_graph, summary_of
from acdb_gym.envs.design.state import DesignState, detectable_shift_for

__all__ = ["ALPHA", "SHIFT", "STREAM", "CRNWorld", "directed_f1"]

SHIFT: Final = 3.0
"""The interventions' value in observational sds above the mean (the design env's default)."""
ALPHA: Final = 0.01
"""The shift tests' level (the design env's default)."""
STREAM: Final = 31
"""The last entropy word of the per-target sample streams (``32`` gives fresh samples)."""


def directed_f1(truth: DAG, graph: PDAG) -> float:
    """Directed F1 of ``graph`` against the true DAG (:func:`~acdb_gym.core.scoring.score`'s)."""
    return directed_f1_of(truth.adjacency, graph.directed)


class _RememberedReference:
    """A shift-test reference that computes each experiment's p-values once (keyed by the
    bytes of its samples, so equal samples give the very same p-values)."""

    def __init__(self, reference: Any) -> None:
        self._reference = reference
        self._known: dict[bytes, np.ndarray] = {}

    def pvalues(self, rows: np.ndarray) -> np.ndarray:
        key = hashlib.blake2b(np.ascontiguousarray(rows).data, digest_size=16).digest()
        if key not in self._known:
            self._known[key] = self._reference.pvalues(rows)
        return self._known[key]


class CRNWorld:
    """One instance under one estimator and orientation rule, with per-target samples fixed.

    Args:
        instance: the world.
        estimator: ``"pc"``, ``"true_cpdag"`` or ``"bic"`` (the design env's).
        budget: experiments a targeter may run.
        n_int: rows per experiment.
        stream: the sample streams' last entropy word (:data:`STREAM`; another value gives
            fresh samples of the same world).
        rule: how a test that finds no shift is read (``"power"``, the design env's default).
        detectable_shift: the ``"power"`` rule's shift (default: the level's,
            :func:`~acdb_gym.envs.design.env.detectable_shift_for`).
    """

    def __init__(
        self,
        instance: Instance,
        estimator: str,
        budget: int,
        n_int: int,
        *,
        stream: int = STREAM,
        rule: OrientationRule = "power",
        detectable_shift: float | None = None,
    ) -> None:
        self.instance = instance
        self.truth = instance.dag
        self.d = instance.n_nodes
        self.budget = budget
        self.estimator = estimator
        self.rule: OrientationRule = rule
        self.detectable_shift = (
            detectable_shift_for(instance.spec, SHIFT)
            if detectable_shift is None
            else detectable_shift
        )
        self.start = starting_graph(instance, estimator)
        data = instance.d_obs
        # A private copy whose shift tests are remembered per experiment: a search adds the
        # same per-target samples thousands of times, and their p-values never change.
        self.root = summary_of(data, self.start, ALPHA, rule, self.detectable_shift).orienter.copy()
        self.root._reference = _RememberedReference(self.root._reference)  # type: ignore[assignment]
        state = self.state()
        sampler = sampler_for(instance.scm)
        self.samples = [
            sampler.draw(
                target,
                state.intervention_value(target),
                n_int,
                np.random.default_rng([instance.seed, target, stream]),
                None,
            )
            for target in range(self.d)
        ]

    def state(self) -> DesignState:
        """A fresh estimator state of this world (the design env's, with its settings)."""
        return DesignState(
            self.instance.d_obs,
            self.start,
            shift=SHIFT,
            alpha=ALPHA,
            rule=self.rule,
            detectable_shift=self.detectable_shift,
            pooled=self.estimator == "bic",
        )

    def run(
        self, agent: Any, *, observe: Callable[[DesignState, int], Any] | None = None
    ) -> tuple[float, tuple[int, ...]]:
        """Directed F1 and the targets of one episode of a design-env targeter.

        Args:
            agent: anything with ``reset`` and ``act`` on design observations (action ``d``
                or above stops).
            observe: the observation the agent reads, from the state and the budget left
                (default: the flat observation; a graph policy needs
                :func:`~acdb_gym.envs.design.graph_obs.graph_observation` of it).
        """
        state = self.state()
        agent.reset(None, {})
        while True:
            used = len(state.targets)
            left = self.budget - used
            observation = (
                state.observation(budget_remaining=left, budget=self.budget)
                if observe is None
                else observe(state, left)
            )
            action = int(agent.act(observation, {}))
            if action >= self.d or used >= self.budget:
                break
            state.add_experiment(action, self.samples[action])
        return directed_f1(self.truth, state.estimate), state.targets

    def evaluate(self, targets: Sequence[int]) -> float:
        """Directed F1 after the experiments ``targets``, in order."""
        if self.estimator == "bic":
            state = self.state()
            for target in targets:
                state.add_experiment(target, self.samples[target])
            return directed_f1(self.truth, state.estimate)
        orienter = self.root.copy()
        for target in targets:
            orienter.add(target, self.samples[target])
        return directed_f1(self.truth, orienter.graph if targets else self.start)

    def search(
        self, width: int, seeds: Sequence[tuple[int, ...]]
    ) -> tuple[float, tuple[int, ...], bool, int]:
        """Hindsight-best directed F1 over sequences of distinct targets of length at most the
        budget (shift-test estimators only), its targets, whether the search was exhaustive,
        and the evaluations made.

        The search grows sequences one target at a time, merges sequences with the same set
        of targets (keeping the better) and skips a target with no undirected edge left at it.
        While a depth has at most ``width`` distinct sets it keeps them all; otherwise the
        ``width`` best (directed F1, then fewest undirected edges): a beam search, so the
        result is a lower bound on the hindsight optimum. ``seeds`` (heuristics' sequences)
        are candidates too.

        Raises:
            ValueError: the ``"bic"`` estimator (a search over its estimates is too costly).
        """
        if self.estimator == "bic":
            raise ValueError("the hindsight search runs on the shift-test estimators only")
        best, best_targets = max((self.evaluate(s), tuple(s)) for s in [(), *seeds])
        level: list[tuple[tuple[int, ...], ShiftOrienter]] = [((), self.root)]
        exhaustive, evaluations = True, 0
        for _ in range(self.budget):
            children: dict[frozenset[int], tuple[float, int, tuple[int, ...], ShiftOrienter]] = {}
            for targets, orienter in level:
                raw_undirected = orienter._undirected  # the edges an experiment still tests
                for target in range(self.d):
                    if target in targets or not raw_undirected[target].any():
                        continue
                    key = frozenset((*targets, target))
                    child = orienter.copy()
                    child.add(target, self.samples[target])
                    graph = child.graph
                    f1 = directed_f1(self.truth, graph)
                    evaluations += 1
                    entry = (f1, -int(graph.undirected.sum()), (*targets, target), child)
                    if key not in children or entry[:2] > children[key][:2]:
                        children[key] = entry
            if not children:
                break
            ranked = sorted(children.values(), key=lambda e: (e[0], e[1]), reverse=True)
            if len(ranked) > width:
                exhaustive = False
                ranked = ranked[:width]
            if ranked[0][0] > best:
                best, best_targets = ranked[0][0], ranked[0][2]
            level = [(targets, orienter) for _, _, targets, orienter in ranked]
        return best, best_targets, exhaustive, evaluations
