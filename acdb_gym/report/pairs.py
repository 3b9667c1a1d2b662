"""The report's section for cause-effect pairs (DESIGN §3.6): orientation accuracy, plain and
with the Tübingen dataset weights.

On a pair the truth is one edge, so an episode's directed F1 is 1 when the submission orients
it the right way and 0 otherwise (reversed, undirected or missing). Per agent row and level the
table gives the episodes, the accuracy (the mean directed F1) with its 95% bootstrap CI, the
weighted accuracy (each pair counted with its dataset weight, so a dataset of many pairs counts
once; :func:`~acdb_gym.core.worlds.cause_effect_pairs.pair_table`), and the share of episodes
that oriented the edge at all (right or reversed).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.worlds.cause_effect_pairs import pair_for_seed, pair_table
from acdb_gym.report.document import Part, Table
from acdb_gym.report.statistics import bootstrap_ci
from acdb_gym.report.types import Row

__all__ = ["PairAccuracy", "accuracy_parts", "pair_accuracies", "pairs_parts"]


@dataclass(frozen=True)
class PairAccuracy:
    """One agent row's accuracy on one pairs level.

    Attributes:
        ladder: the ladder.
        level: the level.
        agent: ``"agent (panel)"``.
        episodes: rows counted.
        accuracy: mean directed F1 (share oriented right).
        low: lower end of its 95% bootstrap CI.
        high: upper end.
        weighted: accuracy with each pair weighted by its dataset weight.
        decided: share of episodes that oriented the edge (right or reversed).
    """

    ladder: str
    level: str
    agent: str
    episodes: int
    accuracy: float
    low: float
    high: float
    weighted: float
    decided: float

    @classmethod
    def of(
        cls,
        key: tuple[str, str, str],
        values: Sequence[float],
        weights: Sequence[float],
        decided: Sequence[float],
    ) -> PairAccuracy:
        """The accuracy of ``(ladder, level, agent)`` from its episodes' directed F1, pair
        weights and oriented shares."""
        estimate = bootstrap_ci([list(values)])
        total = float(np.sum(weights))
        weighted = float(np.dot(values, weights) / total) if total > 0 else float("nan")
        return cls(
            *key,
            len(values),
            estimate.mean,
            estimate.low,
            estimate.high,
            weighted,
            float(np.mean(decided)),
        )


def _is_pairs_row(row: Row) -> bool:
    level = ALL_LADDERS.get(row.ladder, {}).get(row.level)
    return level is not None and level.spec.world == "cause-effect-pairs"


def pair_accuracies(rows: Iterable[Row]) -> list[PairAccuracy]:
    """The accuracy of every agent row on every pairs level of ``rows`` (ok rows only)."""
    grouped: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for row in rows:
        if row.ok and _is_pairs_row(row):
            grouped[(row.ladder, row.level, f"{row.agent} ({row.panel})")].append(row)
    table = pair_table()
    results = []
    for (ladder, level, label), mine in sorted(grouped.items()):
        n_obs = ALL_LADDERS[ladder][level].spec.n_obs
        values = [row.value("directed_f1") for row in mine]
        weights = [table[pair_for_seed(row.seed, n_obs)].weight for row in mine]
        decided = [row.value("directed_f1") + row.value("shd_reversed") for row in mine]
        results.append(PairAccuracy.of((ladder, level, label), values, weights, decided))
    return results


def pairs_parts(rows: Sequence[Row]) -> list[Part]:
    """The section (:mod:`acdb_gym.report.document`), or nothing without pairs rows."""
    return accuracy_parts(pair_accuracies(rows))


def accuracy_parts(accuracies: Sequence[PairAccuracy]) -> list[Part]:
    """The section's parts for these accuracies (nothing without one)."""
    if not accuracies:
        return []
    parts: list[Part] = ["## Cause-effect pairs", ""]
    parts.append(
        "On a cause-effect pair the truth is one edge: directed F1 is 1 for the right "
        "orientation and 0 otherwise, so its mean is the share of pairs oriented right (50% by "
        "always guessing a direction, 25% for the random DAG, which may leave the pair "
        "unconnected). Weighted: each pair counted with its Tübingen dataset weight (DESIGN "
        "§3.6). Oriented: the share of episodes that gave the edge a direction, right or "
        "reversed. Accuracy with its 95% bootstrap CI over episodes, in %."
    )
    headers = ["level", "agent", "episodes", "accuracy", "weighted", "oriented"]
    body = [
        [
            f"{a.ladder} {a.level}",
            a.agent,
            str(a.episodes),
            f"{100 * a.accuracy:.1f} [{100 * a.low:.1f}, {100 * a.high:.1f}]",
            f"{100 * a.weighted:.1f}",
            f"{100 * a.decided:.1f}",
        ]
        for a in sorted(accuracies, key=lambda a: (a.ladder, a.level, -a.accuracy, a.agent))
    ]
    parts += ["", Table.of(headers, body)]
    return parts
