"""The transfer table: agents x SCM families on the v1 levels (DESIGN §3.1).

For a run of ``acdb sweep --families ...`` (rows of ``v1`` and its family ladders), each agent
row gets, per family, the mean directed F1 and SHD over per-seed values with 95% bootstrap CIs
(levels as strata), and, against its own ``linear_gaussian`` (v1) row, the paired difference
in directed F1 over every instance both rows ran (a family ladder's instance of a manifest index
has the graph and weights of v1's instance of that index, DESIGN §3.1) with a two-sided
sign-flip p-value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from acdb_gym.core.ladders.shipped import FAMILY_LADDERS
from acdb_gym.report.document import Part, Table, markdown_lines
from acdb_gym.report.statistics import bootstrap_ci, sign_flip_pvalue
from acdb_gym.report.types import Row

__all__ = ["TRANSFER_LADDERS", "transfer_markdown", "transfer_parts"]

TRANSFER_LADDERS: tuple[str, ...] = ("v1", *FAMILY_LADDERS)
"""The ladders of the transfer table, linear-Gaussian first."""

_Unit = tuple[str, int]  # (level, manifest_index)


def _per_seed(rows: Iterable[Row]) -> dict[tuple[str, str], dict[_Unit, tuple[float, float]]]:
    """``(label, ladder) -> (level, index) -> (directed F1, SHD)``, repeats averaged."""
    sums: dict[tuple[str, str], dict[_Unit, list[tuple[float, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for row in rows:
        if not row.ok or row.ladder not in TRANSFER_LADDERS:
            continue
        label = f"{row.agent} ({row.panel})"
        sums[(label, row.ladder)][(row.level, row.manifest_index)].append(
            (row.value("directed_f1"), row.value("shd"))
        )
    return {
        key: {unit: tuple(np.mean(values, axis=0)) for unit, values in units.items()}
        for key, units in sums.items()
    }


def _cell(values: dict[_Unit, tuple[float, float]], metric: int, scale: float) -> str:
    by_level: dict[str, list[float]] = defaultdict(list)
    for (level, _), pair in sorted(values.items()):
        by_level[level].append(pair[metric] * scale)
    estimate = bootstrap_ci(list(by_level.values()))
    return f"{estimate.mean:.1f} [{estimate.low:.1f}, {estimate.high:.1f}]"


def _paired_cell(
    family: dict[_Unit, tuple[float, float]], linear: dict[_Unit, tuple[float, float]]
) -> str:
    shared = [unit for unit in sorted(family) if unit in linear]
    if len(shared) < 2:
        return "–"
    differences = np.array([100.0 * (family[u][0] - linear[u][0]) for u in shared])
    return f"{differences.mean():+.1f} (n={len(shared)}, p={sign_flip_pvalue(differences):.3g})"


def transfer_markdown(rows: Sequence[Row]) -> list[str]:
    """The report section's Markdown lines, or none unless the rows span at least two of
    :data:`TRANSFER_LADDERS`."""
    lines = markdown_lines(transfer_parts(rows))
    while lines and not lines[-1]:
        lines.pop()
    return lines


def transfer_parts(rows: Sequence[Row]) -> list[Part]:
    """The report section (:mod:`acdb_gym.report.document`), or nothing unless the rows span
    at least two of :data:`TRANSFER_LADDERS`."""
    per_seed = _per_seed(rows)
    ladders = [ladder for ladder in TRANSFER_LADDERS if any(k[1] == ladder for k in per_seed)]
    if len(ladders) < 2:
        return []
    labels = sorted({label for label, _ in per_seed})
    header = ["agent"]
    for ladder in ladders:
        family = "linear_gaussian" if ladder == "v1" else FAMILY_LADDERS[ladder]
        header += [f"Dir F1 {family}", f"SHD {family}"]
        if ladder != "v1":
            header.append(f"ΔF1 vs linear_gaussian ({family})")
    lines: list[Part] = ["## Transfer across SCM families", ""]
    lines.append(
        "Directed F1 (%) and SHD, mean [95% bootstrap CI] over per-seed values; ΔF1: paired "
        "difference against the same agent on linear-Gaussian v1 over the instances both ran "
        "(n; a family instance has the graph and weights of v1's instance of the same "
        "manifest index), with a two-sided sign-flip p-value."
    )
    body = []
    for label in labels:
        cells = [label]
        linear = per_seed.get((label, "v1"), {})
        for ladder in ladders:
            values = per_seed.get((label, ladder), {})
            if not values:
                cells += ["–", "–"] + ([] if ladder == "v1" else ["–"])
                continue
            cells += [_cell(values, 0, 100.0), _cell(values, 1, 1.0)]
            if ladder != "v1":
                cells.append(_paired_cell(values, linear))
        body.append(cells)
    return [*lines, "", Table.of(header, body)]
