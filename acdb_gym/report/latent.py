"""The report's section for worlds with hidden confounders (DESIGN §6.3).

Rows of a latent level carry further score fields (:data:`~acdb_gym.core.scoring.LATENT_SCORE_FIELDS`):
bidirected-edge precision, recall and F1, the PAG's arrowhead and tail marks, and the count of
mistyped edges. Per ladder that has such rows, one table gives each agent row's means over its
episodes, with the 95% bootstrap CI (levels as strata) of the F1 columns; the directed and
skeleton columns stay in Tables 2 and 3, which every ladder has.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from acdb_gym.report.document import Part, Table
from acdb_gym.report.statistics import bootstrap_ci
from acdb_gym.report.types import Row
from acdb_gym.results import NumericField

__all__ = ["LATENT_COLUMNS", "latent_parts"]

LATENT_COLUMNS: tuple[tuple[NumericField, str, bool], ...] = (
    ("bidirected_precision", "↔ P", False),
    ("bidirected_recall", "↔ R", False),
    ("bidirected_f1", "↔ F1", True),
    ("pag_arrowhead_f1", "PAG arrowhead F1", True),
    ("pag_tail_f1", "PAG tail F1", True),
    ("shd_mistyped", "mistyped edges", False),
)
"""``(row field, column title, with a CI)``: the fractions are shown in %, the count as is."""


def _latent_rows(rows: Iterable[Row]) -> dict[str, dict[str, dict[str, list[Row]]]]:
    """``ladder -> agent label -> level -> rows`` of the ok rows that carry latent fields."""
    grouped: dict[str, dict[str, dict[str, list[Row]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for row in rows:
        if not row.ok or row.shd_mistyped is None:
            continue
        label = f"{row.agent} ({row.panel})"
        grouped[row.ladder][label][row.level].append(row)
    return grouped


def _cell(levels: Sequence[list[Row]], field: NumericField, percent: bool, with_ci: bool) -> str:
    scale = 100.0 if percent else 1.0
    strata = [[scale * row.value(field) for row in level] for level in levels]
    estimate = bootstrap_ci(strata)
    digits = 1 if percent else 2
    if not with_ci:
        return f"{estimate.mean:.{digits}f}"
    return f"{estimate.mean:.{digits}f} [{estimate.low:.{digits}f}, {estimate.high:.{digits}f}]"


def latent_parts(rows: Sequence[Row]) -> list[Part]:
    """The section (:mod:`acdb_gym.report.document`), or nothing when no row scores a world
    with hidden confounders."""
    grouped = _latent_rows(rows)
    if not grouped:
        return []
    parts: list[Part] = ["## Hidden confounders", ""]
    parts.append(
        "On levels with hidden common causes the score adds the bidirected edges (i ↔ j, a "
        "confounded pair), the PAG's arrowhead and tail marks and the edges submitted with the "
        "wrong type (DESIGN §6.3). Means over episodes in % (mistyped edges: a count), with the "
        "95% bootstrap CI of the F1 columns (levels as strata)."
    )
    for ladder, agents in sorted(grouped.items()):
        parts += ["", f"### Ladder {ladder}", ""]
        headers = ["agent", "episodes", *(title for _, title, _ in LATENT_COLUMNS)]
        body = []
        for label, levels in sorted(agents.items()):
            by_level = [levels[name] for name in sorted(levels)]
            cells = [label, str(sum(len(level) for level in by_level))]
            for field, _, with_ci in LATENT_COLUMNS:
                cells.append(_cell(by_level, field, field != "shd_mistyped", with_ci))
            body.append(cells)
        parts.append(Table.of(headers, body))
    return parts
