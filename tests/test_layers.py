"""The package's structure, checked by a machine: imports point one way between the rooms
(DESIGN §1, "Layers") and no two modules import each other in a circle, anywhere in the package.

Every import counts: top level, inside functions and under ``TYPE_CHECKING``, so a lazy import
cannot hide an arrow that runs back up.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

import acdb_gym

PACKAGE = Path(acdb_gym.__file__).parent

LAYERS: dict[str, int] = {
    "core": 0,
    "discovery": 1,
    "envs": 2,
    "agents": 3,
    "testing": 3,
    "baselines": 4,
    "registry": 5,
    "results": 5,
    "row_values": 5,
    "sweep": 6,
    "report": 6,
    "integrations": 7,
    "cli": 8,
    "__main__": 9,
}
"""Each top-level room's floor: a module may import only from its own floor or below."""

CORE_ROOMS: dict[str, int] = {
    "types": 0,
    "untrusted": 0,
    "graphs": 1,
    "stats": 1,
    "worlds": 2,
    "ladders": 3,
}
"""Inside ``core``, from the bottom: how a world is drawn sits below the ladders that name worlds."""


def _module_name(path: Path) -> str:
    parts = ("acdb_gym", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(name: str) -> str | None:
    """The package module ``name`` refers to (``acdb_gym.sweep`` the package face), or None."""
    relative = name.split(".")[1:]
    while relative:
        base = PACKAGE.joinpath(*relative)
        if base.with_suffix(".py").exists() or (base / "__init__.py").exists():
            return ".".join(("acdb_gym", *relative))
        relative = relative[:-1]
    return None


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name == "acdb_gym" or name.startswith("acdb_gym."):
                target = _resolve(name)
                if target is not None:
                    found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    graph = {_module_name(path): _imports(path) for path in sorted(PACKAGE.rglob("*.py"))}
    return {module: targets - {module} for module, targets in graph.items()}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _back_up(
    graph: dict[str, set[str]], floors: dict[str, int], room: Callable[[str], str | None]
) -> list[str]:
    return [
        f"{source} -> {target}"
        for source, targets in graph.items()
        for target in targets
        if room(source) in floors
        and room(target) in floors
        and floors[room(target)] > floors[room(source)]
    ]


def _core_room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "core" else None


def _circles(graph: dict[str, set[str]]) -> list[str]:
    """Every loop a depth-first walk meets; a package face importing its own parts is no loop."""
    state: dict[str, str] = {}
    circles: list[str] = []

    def visit(module: str, path: tuple[str, ...]) -> None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if target.startswith(module + "."):
                continue
            if state.get(target) == "open":
                circles.append(" -> ".join((*path, target)))
            elif target not in state:
                visit(target, (*path, target))
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, (module,))
    return circles


@pytest.mark.slow
def test_no_import_runs_back_up_the_layers() -> None:
    assert _back_up(_graph(), LAYERS, _room) == []


@pytest.mark.slow
def test_every_room_has_a_floor() -> None:
    rooms = {_room(module) for module in _graph()} - {"__init__"}
    assert rooms <= set(LAYERS), f"rooms without a floor in LAYERS: {rooms - set(LAYERS)}"


@pytest.mark.slow
def test_core_rooms_point_one_way() -> None:
    assert _back_up(_graph(), CORE_ROOMS, _core_room) == []


@pytest.mark.slow
def test_no_import_circle_between_modules() -> None:
    assert _circles(_graph()) == []


def test_the_checks_see_a_circle_and_an_arrow_up() -> None:
    """The checks above can fail: a hand-made graph with one circle and one upward arrow."""
    graph = {
        "acdb_gym.envs.a": {"acdb_gym.envs.b", "acdb_gym.sweep.run"},
        "acdb_gym.envs.b": {"acdb_gym.envs.a"},
        "acdb_gym.sweep": {"acdb_gym.sweep.run"},
        "acdb_gym.sweep.run": {"acdb_gym.core.types"},
    }
    assert _circles(graph) == ["acdb_gym.envs.a -> acdb_gym.envs.b -> acdb_gym.envs.a"]
    assert _back_up(graph, LAYERS, _room) == ["acdb_gym.envs.a -> acdb_gym.sweep.run"]
    assert _resolve("acdb_gym.sweep.run.run_sweep") == "acdb_gym.sweep.run"
    assert _resolve("acdb_gym.core.ladders.LADDERS") == "acdb_gym.core.ladders"
    assert _resolve("acdb_gym.nowhere") is None


# --------------------------------------------------------------------------- file sizes
MAX_LINES = 500
"""A module longer than this says why in its docstring (a sentence starting ``Over 500 lines``)."""


def _long_modules_without_a_reason() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= MAX_LINES:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if "Over 500 lines" not in docstring:
            found.append(f"{path.relative_to(PACKAGE.parent)} ({text.count(chr(10))} lines)")
    return found


def test_no_long_module_without_a_reason() -> None:
    # One concept per file: split where a reader would, or say in the docstring why not.
    assert _long_modules_without_a_reason() == []
