"""The orienter's step stacked over worlds (acdb_gym/discovery/orientation_many.py) against
decide_orientations and _orient_at one world at a time."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.discovery.orientation import _orient_at, decide_orientations
from acdb_gym.discovery.orientation_many import decision_codes, orient_many

_CODES = {"forward": 1, "backward": -1, None: 0}


@pytest.mark.parametrize("rule", ["power", "always", "band"])
@pytest.mark.parametrize("powered", [True, False])
def test_decision_codes_are_decide_orientations(rule: str, powered: bool) -> None:
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.random(300), [0.0, 0.01, 0.2, 1.0, 0.009999, 0.2000001]])
    codes = decision_codes(p, rule=rule, alpha=0.01, no_shift_threshold=0.2, powered=powered)  # type: ignore[arg-type]
    expected = decide_orientations(
        p,
        rule=rule,  # type: ignore[arg-type]
        alpha=0.01,
        no_shift_threshold=0.2,
        powered=powered,
    )
    assert codes.tolist() == [_CODES[decision] for decision in expected]


@pytest.mark.parametrize("d", [3, 6, 10])
def test_orient_many_equals_orient_at_one_world_at_a_time(d: int) -> None:
    """Random partially directed graphs (acyclic directed part, dense enough that many
    orientations would close a cycle), random decisions on the target's undirected edges."""
    rng = np.random.default_rng(d)
    skipped = 0
    for _ in range(40):
        n = 12
        directed = np.zeros((n, d, d), dtype=bool)
        undirected = np.zeros((n, d, d), dtype=bool)
        for w in range(n):
            order = rng.permutation(d)
            rank = np.empty(d, dtype=int)
            rank[order] = np.arange(d)
            pairs = np.triu(rng.random((d, d)) < 0.6, 1)
            pairs |= pairs.T
            lines = np.triu(rng.random((d, d)) < 0.5, 1)
            lines = (lines | lines.T) & pairs
            directed[w] = pairs & ~lines & (rank[:, None] < rank[None, :])
            undirected[w] = lines
        worlds = np.sort(rng.choice(n, size=rng.integers(1, n), replace=False))
        targets = rng.integers(d, size=len(worlds))
        edges = undirected[worlds, targets]
        codes = (rng.integers(-1, 2, size=edges.shape) * edges).astype(np.int8)
        expected_d, expected_u = directed.copy(), undirected.copy()
        expected_changed = []
        for w, t, row in zip(worlds.tolist(), targets.tolist(), codes, strict=True):
            neighbours = np.flatnonzero(edges[worlds.tolist().index(w)])
            decisions = [{1: "forward", -1: "backward", 0: None}[int(c)] for c in row[neighbours]]
            expected_changed.append(
                _orient_at(expected_d[w], expected_u[w], t, neighbours, decisions)  # type: ignore[arg-type]
            )
            skipped += sum(c != 0 for c in row[neighbours]) - int(
                (expected_d[w] != directed[w]).sum()
            )
        changed = orient_many(directed, undirected, worlds, targets, codes)
        np.testing.assert_array_equal(directed, expected_d)
        np.testing.assert_array_equal(undirected, expected_u)
        assert changed.tolist() == expected_changed
    assert skipped > 0  # some orientations closed a cycle and were skipped
