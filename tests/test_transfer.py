"""The transfer table across SCM families (acdb_gym.report.transfer)."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import FAMILY_LADDERS, LADDERS
from acdb_gym.report.load import as_rows
from acdb_gym.report.transfer import transfer_markdown
from acdb_gym.results import ResultRow, example_row


def _row(ladder: str, index: int, f1: float) -> ResultRow:
    (row,) = as_rows(
        [
            example_row(
                job_id=f"{ladder}-{index}",
                ladder=ladder,
                manifest_index=index,
                directed_f1=f1,
                shd=10.0 * (1.0 - f1),
            )
        ]
    )
    return row


def test_transfer_table_pairs_every_instance() -> None:
    indices = range(8)
    rows = [_row("v1", i, 0.8) for i in indices] + [_row("v1-nonlinear", i, 0.5) for i in indices]
    lines = transfer_markdown(rows)
    table_row = next(line for line in lines if line.startswith("| pc (observational)"))
    assert "80.0 [80.0, 80.0]" in table_row and "50.0 [50.0, 50.0]" in table_row
    assert f"-30.0 (n={len(indices)}," in table_row


@pytest.mark.parametrize("ladder", list(FAMILY_LADDERS))
def test_family_ladders_pair_with_v1_index_for_index(ladder: str) -> None:
    """Every level holds v1's manifest seeds in v1's order, and an instance has the graph and
    (for the linear family) the weights of v1's instance of the same index."""
    for level, linear in LADDERS["v1"].items():
        family = LADDERS[ladder][level]
        assert [e.seed for e in family.manifest] == [e.seed for e in linear.manifest]
    for level, index in (("L0", 0), ("L1", 57), ("L2", 199)):
        paired, base = LADDERS[ladder][level].instance(index), LADDERS["v1"][level].instance(index)
        np.testing.assert_array_equal(paired.dag.adjacency, base.dag.adjacency)
        assert paired.i_star == base.i_star and paired.budget == base.budget
        if ladder == "v1-nongaussian":
            np.testing.assert_array_equal(paired.scm.weights, base.scm.weights)


def test_no_table_for_a_single_family() -> None:
    assert transfer_markdown([_row("v1", 0, 0.5)]) == []
