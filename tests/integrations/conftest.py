"""The integrations are tested against the LLM agent tests' local model server: its ``fake``
fixture is loaded from ``tests/agents/llm/conftest.py`` (tests run with
``--import-mode=importlib``, so that conftest is not importable as a module)."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

_PATH = Path(__file__).parents[1] / "agents" / "llm" / "conftest.py"
_NAME = "_acdb_llm_test_server"


def _load() -> object:
    if _NAME in sys.modules:
        return sys.modules[_NAME]
    spec = importlib.util.spec_from_file_location(_NAME, _PATH)
    assert spec is not None and spec.loader is not None, f"cannot load {_PATH}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = module  # its dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


fake = _load().fake  # type: ignore[attr-defined]


@pytest.fixture
def mcp_command() -> Callable[..., Any]:
    """Builds the ``StdioServerParameters`` of ``acdb mcp`` on v0 L0 seed 0 writing to a run
    directory, as a subprocess running this checkout."""
    from mcp import StdioServerParameters

    root = Path(__file__).parents[2]

    def command(run_dir: Path, *args: str) -> StdioServerParameters:
        env = {**os.environ, "PYTHONPATH": str(root)}
        argv = ["-m", "acdb_gym.cli", "mcp", "--ladder", "v0", "--level", "L0"]
        argv += ["--seed-index", "0", "--out", str(run_dir), *args]
        return StdioServerParameters(command=sys.executable, args=argv, env=env)

    return command
