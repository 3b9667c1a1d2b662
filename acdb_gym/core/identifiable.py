"""What the best experiments of a level's budget can identify, and a score against it (DESIGN §6,
"Budgets below |I*|").

Where the budget is below ``|I*|`` (``LevelSpec.shortfall``) no agent can orient the whole
graph: even the best experiments it can afford leave some edges undirected. Every agent is
still scored against the true graph (the oracle scores 100%), so a gap to the oracle there is
partly the truth being out of reach. To show the rest of the gap is reachable, the frontier's
reference is scored by :func:`identifiable_f1` against the **identifiable graph**: the
interventional essential graph of the budget's best target set
(:func:`~acdb_gym.core.graphs.best_intervention_set`). Where the budget reaches ``|I*|`` that
graph is the true DAG (interventions on ``I*`` orient every edge) and the score is the
directed F1's, but for submitted undirected pairs (neither).

>>> from acdb_gym.core.graphs import DAG
>>> chains = DAG.from_edges(5, [(0, 1), (1, 2), (3, 4)])
>>> graph = identifiable_graph(chains, 1)  # one experiment: the chain 0 - 1 - 2 is oriented
>>> graph.directed_edges(), graph.undirected_edges()
([(0, 1), (1, 2)], [(3, 4)])
>>> identifiable_f1(graph, chains.to_pdag())  # orienting 3 -> 4 is neither rewarded nor punished
1.0
"""

from __future__ import annotations

from collections.abc import Iterable

from acdb_gym.core.graphs import DAG, PDAG, best_intervention_set, essential_graph

__all__ = ["identifiable_f1", "identifiable_graph"]


def identifiable_graph(dag: DAG, budget: int, allowed: Iterable[int] | None = None) -> PDAG:
    """The interventional essential graph of the at most ``budget`` targets (among
    ``allowed``) that identify the most of ``dag``."""
    targets = best_intervention_set(dag, budget, allowed)
    return essential_graph(dag, sorted(targets))


def identifiable_f1(identifiable: PDAG, submission: PDAG | DAG) -> float:
    """F1 of the submission's directed edges against the identifiable graph's, leaving out
    submitted directions on pairs it leaves undirected (the compelled F1's rule, DESIGN §6,
    with the CPDAG replaced by the identifiable graph). Both empty: 1.

    Raises:
        ValueError: graphs of different sizes.
    """
    graph = submission.to_pdag() if isinstance(submission, DAG) else submission
    if graph.n_nodes != identifiable.n_nodes:
        raise ValueError(
            f"the submission has {graph.n_nodes} nodes, the identifiable graph "
            f"{identifiable.n_nodes}"
        )
    predicted = graph.directed & ~identifiable.undirected
    truth = identifiable.directed
    hits = int((predicted & truth).sum())
    n_predicted, n_truth = int(predicted.sum()), int(truth.sum())
    if n_predicted == 0 and n_truth == 0:
        return 1.0
    precision = hits / n_predicted if n_predicted else 0.0
    recall = hits / n_truth if n_truth else 0.0
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
