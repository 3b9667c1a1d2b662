"""PC computed once per dataset and shared by the agents that start from it."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.discovery import pc, pc_cpdag, shared_pc_cpdag


def test_equal_data_gets_the_same_result_as_pc_itself_once() -> None:
    data = np.array(LADDERS["v0"]["L3"].instance(2).d_obs)
    first = shared_pc_cpdag(data, alpha=0.05)
    assert first == pc_cpdag(data, alpha=0.05)
    assert shared_pc_cpdag(data.copy(), alpha=0.05) is first  # equal values, another array
    other_alpha = shared_pc_cpdag(data, alpha=0.01)
    assert other_alpha == pc_cpdag(data, alpha=0.01)
    changed = data.copy()
    changed[0, 0] += 1e-9
    assert shared_pc_cpdag(changed, alpha=0.05) is not first


def test_the_cache_keeps_a_bounded_number_of_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pc, "SHARED_PC_SIZE", 2)
    monkeypatch.setattr(pc, "_SHARED", type(pc._SHARED)())
    rng = np.random.default_rng(0)
    datasets = [rng.standard_normal((50, 4)) for _ in range(3)]
    first = shared_pc_cpdag(datasets[0])
    shared_pc_cpdag(datasets[1])
    shared_pc_cpdag(datasets[2])
    assert len(pc._SHARED) == 2
    assert shared_pc_cpdag(datasets[0]) is not first  # evicted, computed again
    assert shared_pc_cpdag(datasets[0]) == first
