"""Tests for the layout of ``acdb_gym.core``: the graph package's re-exports and module order,
and an import graph without cycles (e.g. ``instance`` and ``ladder`` no longer import each
other: both build on ``level_spec``)."""

from __future__ import annotations

import ast
import importlib
import pickle
from pathlib import Path

import numpy as np
import pytest

import acdb_gym.core
import acdb_gym.core.graphs
from acdb_gym.core.graphs import DAG, cpdag, minimum_intervention_set

CORE = Path(acdb_gym.core.__file__).parent
ROOT = CORE.parent.parent

GRAPH_MODULES = (
    "_matrix",
    "dag",
    "random_dags",
    "meek",
    "meek_many",
    "equivalence",
    "interventions",
    "admg",
    "pag",
    "real",
)
"""The graph package's modules, bottom up, as its docstring lists them."""

NAMES_BEFORE_THE_SPLIT = {
    "DAG",
    "PDAG",
    "CycleError",
    "MeekRule",
    "apply_meek_rule1",
    "apply_meek_rule2",
    "apply_meek_rule3",
    "apply_meek_rule4",
    "covered_edges",
    "cpdag",
    "essential_graph",
    "find_cycle",
    "has_directed_path",
    "meek_closure",
    "minimum_intervention_set",
    "topological_order",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _core_imports(path: Path) -> set[str]:
    """The ``acdb_gym.core`` modules ``path`` imports anywhere (top level, in functions, or
    under ``TYPE_CHECKING``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                # ``from acdb_gym.core import stats`` imports the module acdb_gym.core.stats.
                submodule = f"{node.module}.{alias.name}"
                source = ROOT / submodule.replace(".", "/")
                is_module = source.with_suffix(".py").exists() or source.is_dir()
                found.add(submodule if is_module else node.module)
    return {name for name in found if name.startswith("acdb_gym.core")}


def _import_graph() -> dict[str, set[str]]:
    return {_module_name(path): _core_imports(path) for path in sorted(CORE.rglob("*.py"))}


def test_core_import_graph_has_no_cycle() -> None:
    graph = _import_graph()
    state: dict[str, str] = {}

    def visit(module: str, path: tuple[str, ...]) -> None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            assert state.get(target) != "open", f"import cycle: {' -> '.join((*path, target))}"
            if target not in state:
                visit(target, (*path, target))
        state[module] = "done"

    for module in graph:
        if module not in state:
            visit(module, (module,))


def test_instance_and_ladder_build_on_level_spec() -> None:
    graph = _import_graph()
    assert "acdb_gym.core.ladders.shipped" not in graph["acdb_gym.core.worlds.instance"]
    assert "acdb_gym.core.worlds.spec" in graph["acdb_gym.core.worlds.instance"]
    from acdb_gym.core.ladders.shipped import LevelSpec as FromLadder
    from acdb_gym.core.worlds.spec import LevelSpec

    assert FromLadder is LevelSpec


@pytest.mark.slow
def test_graph_modules_import_only_the_ones_below_them() -> None:
    graph = _import_graph()
    package = "acdb_gym.core.graphs"
    on_disk = {path.stem for path in (CORE / "graphs").glob("*.py")} - {"__init__"}
    assert on_disk == set(GRAPH_MODULES)
    for rank, name in enumerate(GRAPH_MODULES):
        below = {f"{package}.{lower}" for lower in GRAPH_MODULES[:rank]}
        imported = {m for m in graph[f"{package}.{name}"] if m.startswith(package)}
        assert imported <= below, f"{name} imports {sorted(imported - below)}"


def test_graph_package_reexports_every_public_name() -> None:
    package = acdb_gym.core.graphs
    assert NAMES_BEFORE_THE_SPLIT | {"reachability", "random_order_dag"} <= set(package.__all__)
    exported: set[str] = set()
    for name in GRAPH_MODULES[1:]:
        module = importlib.import_module(f"acdb_gym.core.graphs.{name}")
        for public in module.__all__:
            assert getattr(package, public) is getattr(module, public), public
        exported |= set(module.__all__)
    assert exported == set(package.__all__)


def test_derived_graphs_are_computed_once_per_dag_and_survive_pickling() -> None:
    dag = DAG.from_edges(4, [(0, 1), (1, 2), (0, 2), (2, 3)])
    assert cpdag(dag) is cpdag(dag)
    assert minimum_intervention_set(dag) is minimum_intervention_set(dag)
    copy = pickle.loads(pickle.dumps(dag))
    assert copy == dag and hash(copy) == hash(dag)
    assert cpdag(copy) == cpdag(dag) and minimum_intervention_set(copy) == {1}
    fresh = DAG(np.array(dag.adjacency))
    assert fresh == dag and cpdag(fresh) == cpdag(dag)
