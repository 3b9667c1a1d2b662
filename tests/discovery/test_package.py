"""Tests for the acdb_gym.discovery package surface and its place in the layers."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import acdb_gym.discovery as discovery

PACKAGE_DIR = Path(discovery.__file__).parent
THIRD_PARTY = {"numpy", "scipy", "causallearn"}
OWN_LAYERS = ("acdb_gym.core", "acdb_gym.discovery")


def test_public_names_are_exported() -> None:
    assert sorted(discovery.__all__) == [
        "AnmDecision",
        "CLASS_FEATURES",
        "CombinedGraph",
        "Experiment",
        "FeatureBIC",
        "InterventionalBIC",
        "MARGINAL_FEATURES",
        "MarginalFeature",
        "ScoreSearchResult",
        "ShiftEvidence",
        "ShiftOrienter",
        "SortDirection",
        "anm_direction",
        "anm_graph",
        "class_interventional_search",
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
    for name in discovery.__all__:
        assert hasattr(discovery, name)


def imported_modules(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.append(node.module)
    return names


def test_discovery_imports_only_core_numpy_scipy_and_causallearn() -> None:
    # Checked on the source: importing acdb_gym itself registers the envs, so sys.modules
    # cannot tell which layer pulled what in.
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        for module in imported_modules(ast.parse(path.read_text())):
            top = module.split(".")[0]
            allowed = (
                top in sys.stdlib_module_names
                or top in THIRD_PARTY
                or module.startswith(OWN_LAYERS)
            )
            assert allowed, f"{path.name} imports {module}"


def test_causallearn_is_imported_lazily() -> None:
    # Importing causal-learn takes seconds (it loads scikit-learn); only the reference PC
    # (pc_cpdag) and FCI, which call it, should pay, and the hash guard around their calls
    # (_common.stable_causallearn_hashes imports its node and edge classes when it runs).
    lazy_sites: list[str] = []
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        tree = ast.parse(path.read_text())
        module_level = [s for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom)]
        assert not any(
            m.startswith("causallearn") for s in module_level for m in imported_modules(s)
        ), f"{path.name} imports causal-learn at module level"
        lazy_sites += [path.name for m in imported_modules(tree) if m.startswith("causallearn")]
    assert sorted(lazy_sites) == ["_common.py", "_common.py", "fci.py", "pc.py"]
