"""Baselines for levels with hidden confounders (DESIGN §9.3): ``fci`` and ``fci_active``.

* :class:`FCIAgent` (``fci``): causal-learn's FCI on the observational sample, its PAG submitted
  as it is (a typed ``Submit``, circle marks included) on a level with hidden confounders, and
  on a sufficient level as the code matrix carries it
  (:func:`~acdb_gym.discovery.fci.codable_graph`: ``-->`` directed, ``<->`` bidirected, edges
  with a circle undirected).
* :class:`FCIActiveAgent` (``fci_active``): the same PAG, then experiments spent on the edges
  FCI left open (a circle mark) and on its bidirected candidates, read with two facts of hard
  interventions: ``do(X)`` shifts the distribution of ``Y`` iff ``X`` is an ancestor of ``Y``;
  an adjacent pair that neither experiment shifts is dependent through a hidden common cause
  only (``X <-> Y``).

On a causally sufficient level both run as well (FCI's PAG then has no true ``<->``); there a
``<->`` that FCI leaves on a finite or measured sample is submitted as an undirected edge
(:func:`sufficient_submission`), since the sufficient levels' codes carry no ``<->``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from acdb_gym.baselines.classical import experiment_mask
from acdb_gym.core.graphs import ADMG, PAG, PDAG
from acdb_gym.core.latent_scoring import latent_parts, pdag_view
from acdb_gym.discovery import shift_pvalues
from acdb_gym.discovery.fci import codable_graph, shared_fci_pag
from acdb_gym.envs import actions
from acdb_gym.envs.actions import VALUE_BOUND

__all__ = ["FCIActiveAgent", "FCIAgent", "resolve_pag", "sufficient_submission"]

Observation = Mapping[str, Any]


class FCIAgent:
    """Submits causal-learn FCI's PAG of the observational data (Fisher-z, ``alpha``)."""

    name = "fci"

    def __init__(self, *, alpha: float = 0.05) -> None:
        self.alpha = alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._pag = shared_fci_pag(observation["observational"], alpha=self.alpha)
        self._latent = bool(info.get("latent"))

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        if self._latent:  # the PAG with its circle marks, as a typed action
            return actions.Submit(self._pag)
        return actions.submit(sufficient_submission(codable_graph(self._pag)))


def sufficient_submission(graph: PDAG | ADMG | PAG) -> PDAG:
    """A submission for a causally sufficient level, whose codes carry no ``<->``: the directed
    edges kept, every other adjacency (``<->`` included) undirected."""
    if isinstance(graph, PDAG):
        return graph
    marks = latent_parts(graph)
    undirected = marks.adjacent & ~marks.directed & ~marks.directed.T
    return PDAG(marks.directed, undirected)


def resolve_pag(pag: PAG, ancestor: np.ndarray) -> PDAG | ADMG | PAG:
    """FCI's PAG settled by experiments, as a codable submission.

    Args:
        pag: FCI's PAG.
        ancestor: ``(d, d)`` with 1 where ``do(X_i)`` shifted ``X_j`` (``i`` an ancestor of
            ``j``), 0 where it did not, and -1 where ``i`` was not intervened on.

    Each adjacent pair ``i, j`` of the PAG becomes: ``i -> j`` if ``do(X_i)`` shifted ``X_j``
    and ``do(X_j)`` did not shift ``X_i``; ``i <-> j`` if both were tried and neither shifted;
    if only ``do(X_i)`` was tried and did not shift ``X_j``, ``i <-> j`` when the PAG has an
    arrowhead at ``j`` (``j`` is no ancestor of ``i`` either), else ``j -> i``; a pair without
    evidence keeps the PAG's edge. The result goes through
    :func:`~acdb_gym.discovery.fci.codable_graph`.
    """
    n = pag.n_nodes
    arrowhead = np.array(pag.arrowhead)
    tail = np.array(pag.tail)
    for i in range(n):
        for j in range(i + 1, n):
            if not pag.adjacent[i, j]:
                continue
            kind = _settled(int(ancestor[i, j]), int(ancestor[j, i]), pag, i, j)
            if kind is None:
                continue
            arrowhead[i, j] = arrowhead[j, i] = tail[i, j] = tail[j, i] = False
            if kind == "<->":
                arrowhead[i, j] = arrowhead[j, i] = True
            else:
                a, b = (i, j) if kind == "->" else (j, i)  # a -> b
                arrowhead[a, b] = tail[b, a] = True
    return codable_graph(PAG(pag.adjacent, arrowhead, tail))


def _settled(forward: int, backward: int, pag: PAG, i: int, j: int) -> str | None:
    """The edge ``i ? j`` the evidence settles (``"->"``, ``"<-"``, ``"<->"``), or None."""
    if forward == 1 and backward != 1:
        return "->"
    if backward == 1 and forward != 1:
        return "<-"
    if forward == 0 and backward == 0:
        return "<->"
    if forward == 0 and backward == -1:  # i is no ancestor of j: j -> i, or i <-> j
        return "<->" if pag.arrowhead[i, j] else "<-"
    if backward == 0 and forward == -1:
        return "<->" if pag.arrowhead[j, i] else "->"
    return None


class FCIActiveAgent:
    """FCI's PAG, then adaptive experiments on its open edges (module docstring).

    Targeting: the untried node with the most open edges, a PAG edge with a circle mark or
    ``<->`` that no experiment has settled (ties: the lowest index); when none is left, the
    untried node with the most edges of any kind; it stops when the budget is spent or every
    node with an edge was tried; where the level restricts the targets
    (``info["experiment_targets"]``) only those nodes are tried. An experiment is
    ``do(X_t = mean + shift * sd)`` of the observational column; ``X_j`` counts as shifted
    when its distribution-shift p-value (:func:`~acdb_gym.discovery.shift_pvalues`) is below
    ``alpha``.

    Every intervention states the current graph (its PDAG view: directed edges, the rest
    undirected) as the agent's hypothesis.

    Args:
        fci_alpha: FCI's test level.
        alpha: the shift tests' level.
        shift: the intervention value in observational standard deviations from the mean.
    """

    name = "fci_active"
    states_hypotheses = True

    def __init__(self, *, fci_alpha: float = 0.05, alpha: float = 0.01, shift: float = 4.0) -> None:
        self.fci_alpha = fci_alpha
        self.alpha = alpha
        self.shift = shift

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._observational = np.asarray(observation["observational"], dtype=float)
        self._pag = shared_fci_pag(self._observational, alpha=self.fci_alpha)
        n = self._pag.n_nodes
        self._ancestor = np.full((n, n), -1, dtype=np.int64)
        self._pending: int | None = None
        self._tried: set[int] = set()
        self._allowed = experiment_mask(info, n)
        self._latent = bool(info.get("latent"))

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        if self._pending is not None:
            self._absorb(observation, self._pending)
            self._pending = None
        target = self._next_target(observation)
        if target is None:
            resolved = resolve_pag(self._pag, self._ancestor)
            return actions.submit(resolved if self._latent else sufficient_submission(resolved))
        self._pending = target
        self._tried.add(target)
        column = self._observational[:, target]
        value = float(np.clip(column.mean() + self.shift * column.std(), -VALUE_BOUND, VALUE_BOUND))
        # The current graph as a PDAG (its directed edges; the anytime F1 reads those).
        hypothesis = pdag_view(resolve_pag(self._pag, self._ancestor))
        return actions.intervene(target, value, hypothesis=hypothesis)

    def _open_edges(self) -> np.ndarray:
        pag = self._pag
        circle = pag.adjacent & ~pag.arrowhead & ~pag.tail
        open_pairs = circle | circle.T | (pag.arrowhead & pag.arrowhead.T)
        tried = self._ancestor >= 0
        settled = tried | tried.T
        return np.asarray(open_pairs & ~settled)

    def _next_target(self, observation: Observation) -> int | None:
        if int(observation["budget_remaining"][0]) <= 0:
            return None
        untried = self._allowed.copy()
        untried[list(self._tried)] = False
        for edges in (self._open_edges(), np.asarray(self._pag.adjacent)):
            degree = np.where(untried, edges.sum(axis=1), 0)
            if degree.max(initial=0) > 0:
                return int(np.argmax(degree))
        return None

    def _absorb(self, observation: Observation, target: int) -> None:
        slots = np.flatnonzero(observation["targets"] == target)
        if slots.size == 0:  # the intervention was refused; nothing to learn
            return
        samples = np.asarray(observation["interventional"][slots[-1]], dtype=float)
        shifted = shift_pvalues(self._observational, samples) < self.alpha
        self._ancestor[target] = shifted.astype(np.int64)
        self._ancestor[target, target] = -1
