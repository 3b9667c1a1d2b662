"""Tests for the fixed real topologies (DESIGN §3.3): the shipped source files are the ones
the NOTICE names, each truth is its source network minus exactly the documented edges (the
Sachs DAG is an explicit edge list), the removal rule is recomputed, and every seed draws new
mechanisms on the same wiring under a fresh labelling."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import re

import numpy as np
import pytest

from acdb_gym.core.graphs import (
    FIXED_GRAPHS,
    REMOVED_EDGES,
    SACHS_PROTEINS,
    TOPOLOGY_SIZES,
    data_file,
    find_cycle,
    minimum_feedback_arc_set,
    read_edge_list,
    topology,
)
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.spec import LevelSpec

SACHS_DAG = {
    ("PIP2", "PKC"),
    ("plcg", "PIP2"),
    ("PIP3", "plcg"),
    ("PIP3", "pakts473"),
    ("PKC", "praf"),
    ("PKC", "pmek"),
    ("PKC", "P38"),
    ("PKC", "pjnk"),
    ("PKA", "praf"),
    ("PKA", "pmek"),
    ("PKA", "p44/42"),
    ("PKA", "pakts473"),
    ("PKA", "P38"),
    ("PKA", "pjnk"),
    ("praf", "pmek"),
    ("pmek", "p44/42"),
    ("plcg", "PKC"),
}
"""The 17 arcs of the Sachs level, as DESIGN §3.3 lists them: the 18-edge consensus graph
without PIP2 -> PIP3."""


def _source_text(graph: str) -> str:
    name = "sachs_consensus.csv" if graph == "sachs" else f"dream4_insilico100_{graph[-1]}.csv"
    return data_file(name).read_text(encoding="utf-8")


def _truth_names(graph: str) -> set[tuple[str, str]]:
    top = topology(graph)
    return {
        (top.names[i], top.names[j]) for i, j in zip(*np.nonzero(top.dag.adjacency), strict=True)
    }


def test_the_shipped_files_are_the_ones_the_notice_names() -> None:
    notice = data_file("NOTICE").read_text(encoding="utf-8")
    listed = dict((name, digest) for digest, name in re.findall(r"([0-9a-f]{64})  (\S+)", notice))
    shipped = {
        path.name for path in data_file("").iterdir() if path.name.endswith((".csv", ".csv.gz"))
    }
    assert set(listed) == shipped and len(shipped) == 10
    for name, digest in listed.items():
        assert hashlib.sha256(data_file(name).read_bytes()).hexdigest() == digest, name
    assert "Apache" in notice and "Sachs" in notice and "Marbach" in notice
    assert "Mooij" in notice


def test_the_compressed_files_decompress_to_the_bytes_the_notice_names() -> None:
    notice = data_file("NOTICE").read_text(encoding="utf-8")
    for name, source in (
        ("sachs_cytometry.csv.gz", "cyto_full_data.csv"),
        ("tuebingen_pairs.csv.gz", "Tuebingen_pairs.csv"),
    ):
        raw = gzip.decompress(data_file(name).read_bytes())
        digest = hashlib.sha256(raw).hexdigest()
        assert re.search(rf"{digest}\s+for\s+{re.escape(source)}", notice), name


def test_the_cytometry_file_has_the_sachs_proteins_and_7466_rows() -> None:
    text = gzip.decompress(data_file("sachs_cytometry.csv.gz").read_bytes()).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == SACHS_PROTEINS
    assert len(rows) - 1 == 7466


def test_the_sachs_dag_is_the_documented_edge_list() -> None:
    source = {tuple(row) for row in csv.reader(io.StringIO(_source_text("sachs")))} - {
        ("Cause", "Effect")
    }
    assert len(source) == 18
    assert source - {("PIP2", "PIP3")} == SACHS_DAG
    assert _truth_names("sachs") == SACHS_DAG
    assert topology("sachs").names == SACHS_PROTEINS


@pytest.mark.parametrize("graph", FIXED_GRAPHS)
def test_each_truth_is_its_source_minus_exactly_the_documented_edges(graph: str) -> None:
    rows = list(csv.reader(io.StringIO(_source_text(graph))))[1:]
    source = {(a, b) for a, b in rows}
    assert len(source) == len(rows)  # no duplicate edges in the file
    removed = set(REMOVED_EDGES[graph])
    assert removed <= source
    truth = _truth_names(graph)
    assert truth == source - removed
    assert (topology(graph).dag.n_nodes, len(truth)) == TOPOLOGY_SIZES[graph]
    # The source has cycles; the truth has none.
    top = topology(graph)
    node = {name: i for i, name in enumerate(top.names)}
    full = np.zeros((len(top.names),) * 2, dtype=bool)
    for a, b in source:
        full[node[a], node[b]] = True
    assert find_cycle(full) is not None
    assert find_cycle(top.dag.adjacency) is None


@pytest.mark.slow
@pytest.mark.parametrize("graph", FIXED_GRAPHS)
def test_the_documented_edges_are_what_the_rule_removes(graph: str) -> None:
    names = topology(graph).names
    node = {name: i for i, name in enumerate(names)}
    edges = [(node[a], node[b]) for a, b in read_edge_list(graph)]
    removed = minimum_feedback_arc_set(len(names), edges)
    assert tuple(sorted((names[a], names[b]) for a, b in removed)) == REMOVED_EDGES[graph]


def test_the_rule_is_minimum_and_prefers_keeping_earlier_edges() -> None:
    # Two disjoint 2-cycles need two removals; within each, the later edge goes.
    edges = [(0, 1), (1, 0), (3, 2), (2, 3)]
    assert minimum_feedback_arc_set(4, edges) == ((1, 0), (2, 3))
    # One edge on both cycles of a figure eight is the unique minimum.
    assert minimum_feedback_arc_set(3, [(0, 1), (1, 0), (1, 2), (2, 1), (0, 2)]) != ()
    assert len(minimum_feedback_arc_set(3, [(0, 1), (1, 2), (2, 0), (2, 1)])) == 1
    assert minimum_feedback_arc_set(3, [(0, 1), (1, 2)]) == ()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("graph", "family", "rule"),
    [
        ("sachs", "linear_gaussian", "reject_world"),
        ("sachs", "nonlinear", "reject_world"),
        ("dream4-5", "linear_gaussian", "redraw_edges"),
    ],
)
def test_each_seed_draws_new_mechanisms_on_the_same_wiring(
    graph: str, family: str, rule: str
) -> None:
    d, k = TOPOLOGY_SIZES[graph]
    spec = LevelSpec(
        d, k, 200, 50, 1.0, 1, standardized=True, family=family, faithfulness_rule=rule, graph=graph
    )
    truth = _truth_names(graph)
    weights = []
    for seed in (1, 2):
        instance = generate_instance(spec, seed)
        names = instance.variable_names
        assert names is not None and sorted(names) == sorted(topology(graph).names)
        relabelled = {
            (names[i], names[j]) for i, j in zip(*np.nonzero(instance.dag.adjacency), strict=True)
        }
        assert relabelled == truth
        weights.append(np.abs(instance.weights[instance.dag.adjacency]).round(6))
        assert instance.dag.n_edges == k
    assert not np.array_equal(np.sort(weights[0]), np.sort(weights[1]))
    first, second = generate_instance(spec, 1), generate_instance(spec, 2)
    assert first.variable_names != second.variable_names


def test_a_fixed_topology_needs_its_own_size() -> None:
    with pytest.raises(ValueError, match=r"graph 'sachs' has \(d, k\) = \(11, 17\)"):
        LevelSpec(11, 16, 200, 50, 1.0, 1, graph="sachs")
