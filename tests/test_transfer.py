"""The transfer table across SCM families (acdb_gym.report.transfer)."""

from __future__ import annotations

from typing import Any

import numpy as np

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.report.transfer import transfer_markdown


def _row(ladder: str, index: int, f1: float) -> dict[str, Any]:
    return {
        "status": "ok",
        "agent": "pc",
        "panel": "observational",
        "ladder": ladder,
        "level": "L0",
        "manifest_index": index,
        "directed_f1": f1,
        "shd": 10.0 * (1.0 - f1),
    }


def test_transfer_table_pairs_only_instances_with_the_same_graph() -> None:
    indices = range(8)
    same = [
        i
        for i in indices
        if np.array_equal(
            LADDERS["v1"]["L0"].instance(i).dag.adjacency,
            LADDERS["v1-nonlinear"]["L0"].instance(i).dag.adjacency,
        )
    ]
    assert 2 <= len(same) < 8  # some graphs coincide, some do not
    rows = [_row("v1", i, 0.8) for i in indices] + [_row("v1-nonlinear", i, 0.5) for i in indices]
    lines = transfer_markdown(rows)
    table_row = next(line for line in lines if line.startswith("| pc (observational)"))
    assert "80.0 [80.0, 80.0]" in table_row and "50.0 [50.0, 50.0]" in table_row
    assert f"-30.0 (n={len(same)}," in table_row


def test_no_table_for_a_single_family() -> None:
    assert transfer_markdown([_row("v1", 0, 0.5)]) == []
