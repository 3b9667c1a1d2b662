"""The integrations are tested against the LLM agent tests' local model server: its ``fake``
fixture is loaded from ``tests/agents/llm/conftest.py`` (tests run with
``--import-mode=importlib``, so that conftest is not importable as a module)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

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
