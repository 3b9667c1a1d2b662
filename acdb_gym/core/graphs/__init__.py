"""Graph value types and the graph algorithms of the benchmark.

Conventions (DESIGN §2): nodes are ``0..d-1``; ``DAG.adjacency[i, j]`` is True iff ``i -> j``;
a :class:`PDAG` holds ``directed[i, j]`` (``i -> j``) and a symmetric ``undirected`` matrix.
All algorithms work on boolean matrices; networkx is only the interop layer.

Every public name is importable from here. The modules, bottom up (each imports only the ones
before it):

* :mod:`~acdb_gym.core.graphs.dag`: ``DAG``, ``PDAG``, ``CycleError`` and traversals
  (``topological_order``, ``find_cycle``, ``has_directed_path``, ``reachability``);
* :mod:`~acdb_gym.core.graphs.random_dags`: ``random_order_dag`` and
  ``scale_free_dag``, the benchmark's graph models, and ``orient_by_order``;
* :mod:`~acdb_gym.core.graphs.meek`: Meek's rules R1-R4 and ``meek_closure``;
* :mod:`~acdb_gym.core.graphs.meek_many`: the closure of many consistent PDAGs at once
  (``close_consistent_many``), of many PDAGs of any kind (``close_many``) and
  ``essential_graphs_many``;
* :mod:`~acdb_gym.core.graphs.equivalence`: ``cpdag`` and the interventional
  ``essential_graph``;
* :mod:`~acdb_gym.core.graphs.interventions`: ``covered_edges``,
  ``minimum_intervention_set``, ``minimum_intervention_subset`` (over the nodes an experiment
  exists for) and ``best_intervention_set`` (the most a budget below ``|I*|`` identifies);
* :mod:`~acdb_gym.core.graphs.admg`: graphs with hidden variables: ``ADMG``,
  ``latent_projection``, ``mag``;
* :mod:`~acdb_gym.core.graphs.pag`: the ``PAG`` of a MAG's equivalence class (``pag``) and the
  three together (``latent_truth``).
* :mod:`~acdb_gym.core.graphs.real`: the fixed real topologies (Sachs, DREAM4) read from the
  shipped source files, made acyclic by ``minimum_feedback_arc_set``.

>>> dag = DAG.from_edges(3, [(0, 2), (1, 2)])
>>> cpdag(dag).directed_edges()
[(0, 2), (1, 2)]
>>> sorted(minimum_intervention_set(DAG.from_edges(2, [(0, 1)])))
[0]
"""

from __future__ import annotations

from acdb_gym.core.graphs.admg import (
    ADMG,
    inducing_path_adjacency,
    is_mag,
    latent_projection,
    mag,
)
from acdb_gym.core.graphs.dag import (
    DAG,
    PDAG,
    CycleError,
    find_cycle,
    has_directed_path,
    reachability,
    topological_order,
)
from acdb_gym.core.graphs.equivalence import cpdag, essential_graph
from acdb_gym.core.graphs.interventions import (
    MAX_BEST_SET_CANDIDATES,
    MAX_SUBSET_TARGETS,
    best_intervention_set,
    covered_edges,
    minimum_intervention_set,
    minimum_intervention_subset,
)
from acdb_gym.core.graphs.meek import (
    MeekRule,
    apply_meek_rule1,
    apply_meek_rule2,
    apply_meek_rule3,
    apply_meek_rule4,
    meek_closure,
)
from acdb_gym.core.graphs.meek_many import (
    MANY_MAX_NODES,
    close_consistent_many,
    close_many,
    essential_graphs_many,
)
from acdb_gym.core.graphs.pag import PAG, LatentTruth, latent_truth, pag
from acdb_gym.core.graphs.random_dags import (
    EdgeCount,
    orient_by_order,
    parent_quotas,
    random_order_dag,
    scale_free_dag,
)
from acdb_gym.core.graphs.real import (
    FIXED_GRAPHS,
    REMOVED_EDGES,
    SACHS_PROTEINS,
    TOPOLOGY_SIZES,
    Topology,
    data_file,
    minimum_feedback_arc_set,
    read_edge_list,
    topology,
)

__all__ = [
    "ADMG",
    "DAG",
    "FIXED_GRAPHS",
    "MANY_MAX_NODES",
    "MAX_BEST_SET_CANDIDATES",
    "MAX_SUBSET_TARGETS",
    "PAG",
    "PDAG",
    "REMOVED_EDGES",
    "SACHS_PROTEINS",
    "TOPOLOGY_SIZES",
    "CycleError",
    "EdgeCount",
    "LatentTruth",
    "MeekRule",
    "Topology",
    "apply_meek_rule1",
    "apply_meek_rule2",
    "apply_meek_rule3",
    "apply_meek_rule4",
    "best_intervention_set",
    "close_consistent_many",
    "close_many",
    "covered_edges",
    "cpdag",
    "data_file",
    "essential_graph",
    "essential_graphs_many",
    "find_cycle",
    "has_directed_path",
    "inducing_path_adjacency",
    "is_mag",
    "latent_projection",
    "latent_truth",
    "mag",
    "meek_closure",
    "minimum_feedback_arc_set",
    "minimum_intervention_set",
    "minimum_intervention_subset",
    "orient_by_order",
    "pag",
    "parent_quotas",
    "random_order_dag",
    "reachability",
    "read_edge_list",
    "scale_free_dag",
    "topological_order",
    "topology",
]
