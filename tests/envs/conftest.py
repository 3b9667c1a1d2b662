"""Shared fixtures of the environment tests.

Tests run with ``--import-mode=importlib``, so this module cannot be imported by name; helpers
reach the tests as fixtures.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from acdb_gym.core.ladders.shipped import Level, LevelSpec
from acdb_gym.envs.acdb_env import ACDBEnv

INFINITE_BOUNDS = r".*A Box (observation|action) space (minimum|maximum) value is -?infinity"
"""Gymnasium's notice about unbounded Boxes (the data are unbounded by nature)."""


@pytest.fixture
def strict_warnings() -> Iterator[None]:
    """Turn every warning into an error, except Gymnasium's infinite-bounds notice and the
    version notice that ``acdb_gym`` silences on import (``ACDB-L2-v0`` is not an old ``v1``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=INFINITE_BOUNDS)
        warnings.filterwarnings(
            "ignore", message=r".*The environment ACDB-(Flat-|Design-)?L[0-5]-v0 is out of date"
        )
        yield


@pytest.fixture
def make_custom_env(monkeypatch: pytest.MonkeyPatch) -> Callable[..., ACDBEnv]:
    """Build an :class:`ACDBEnv` on a level spec that no ladder registers (e.g. ``d = 2``)."""

    def make(spec: LevelSpec, **kwargs: Any) -> ACDBEnv:
        return ACDBEnv(Level("custom", "T", "custom test world", spec, manifest=()), **kwargs)

    return make
