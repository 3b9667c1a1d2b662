"""The frontier ladder's criteria (DESIGN §7, "Frontier ladder"): is a level hard, clean,
powered and reachable?

One function, :func:`frontier_levels`, reads a run of the frontier's agents (:data:`SWEEP_AGENTS`)
and the shortcut gate of the same rows, and checks per level:

- **oracle**: the oracle scores 100% on every field (and SHD 0) of every instance;
- **hard**: the best agent of the suite (:data:`SUITE`, the best marginal order and the hub order
  included) is at least :data:`GAP_DIRECTED` below the oracle in directed F1, and at least
  :data:`GAP_FIELD` below it on the field the level is about (:func:`level_field`: bidirected F1
  with hidden confounders, the essential F1 otherwise);
- **floor**: the structure-blind random floor (closed form, and measured where ``random`` ran)
  is at most :data:`FLOOR_MAX`;
- **clean**: the shortcut gate passes (:mod:`acdb_gym.report.gate`: no shortcut gains more than 3
  points over its control, none comes within 3 points of the reference agents, so none within
  3 of the best agent either);
- **powered**: the minimum detectable difference of the best agent's paired comparison with
  every other suite agent, at :data:`POWER_SEEDS` seeds (the test split's size; on a run of
  that many seeds, at its own count), is at most :data:`MDD_MAX`;
- **reachable**: the reference (:data:`REFERENCE`, ``class_reference``: the budget and samples
  of the level, the mechanism class and the best experiments given) reaches :data:`REACH_MIN`
  directed F1, or identifiable F1 where the budget is below ``|I*|``
  (:mod:`acdb_gym.core.identifiable`; :func:`reach_metric`).

The calibration script (``experiments/calibrate_frontier.py``) runs it on candidate levels'
generated seeds; the README's claims run it on the shipped ladder's test split.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from acdb_gym.core.identifiable import identifiable_f1, identifiable_graph
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS, SCORE_FIELDS
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.report.document import Part, Table
from acdb_gym.report.edges import submission_of
from acdb_gym.report.gate import GateLevel
from acdb_gym.report.order_audit import row_instance
from acdb_gym.report.power import minimum_detectable_difference
from acdb_gym.report.statistics import bootstrap_ci
from acdb_gym.report.types import Estimate, Row

__all__ = [
    "ABLATION",
    "FLOOR_MAX",
    "GAP_DIRECTED",
    "GAP_FIELD",
    "MDD_MAX",
    "POWER_SEEDS",
    "REACH_MIN",
    "REFERENCE",
    "SUITE",
    "SWEEP_AGENTS",
    "FrontierLevel",
    "ShortcutScore",
    "frontier_levels",
    "frontier_markdown",
    "level_field",
    "reach_metric",
]

GAP_DIRECTED: Final = 0.25
"""The best agent is at least this far below the oracle in directed F1."""
GAP_FIELD: Final = 0.15
"""... and at least this far on the field the level is about (:func:`level_field`)."""
FLOOR_MAX: Final = 0.15
"""The random floor is at most this."""
MDD_MAX: Final = 0.05
"""The largest minimum detectable difference allowed at :data:`POWER_SEEDS` seeds."""
POWER_SEEDS: Final = 100
"""The seeds the test split gives each level."""
REACH_MIN: Final = 0.90
"""The reference's score that shows the headroom is reachable."""

REFERENCE: Final = "class_reference"
ABLATION: Final = "class_bic_active"
GRAPH_POLICY: Final = "rl:models/acdb_design_graph/model.zip"
N3_POLICY: Final = "rl:models/acdb_design_n3/model.zip"
POWER_POLICY: Final = "rl:models/acdb_design_n3_power/model.zip"
SUITE: Final = (
    "pc",
    "pc_greedy",
    "pc_active",
    "bic_active",
    "fci_active",
    "lingam_active",
    "cap:pc_active",
    "cap:bic_active",
    "cap:fci_active",
    "cap:lingam_active",
    GRAPH_POLICY,
    N3_POLICY,
    POWER_POLICY,
)
"""The agents a frontier level must hold far from the oracle (run from the repository root, so
the policies' paths resolve), besides the best marginal order and the hub order, which the gate
measures on every instance."""
SWEEP_AGENTS: Final = ("random", "oracle", *SUITE, REFERENCE, ABLATION)
"""What a frontier run sweeps: the floor, the oracle, the suite, the reference and its ablation
(the mechanism class without the best experiments)."""

_RATES: Final = tuple(
    name
    for name in (*SCORE_FIELDS, *LATENT_SCORE_FIELDS)
    if name.endswith(("precision", "recall", "f1")) or name == "efficiency"
)


def level_field(spec: LevelSpec) -> str:
    """The field a level is about: ``bidirected_f1`` with hidden confounders, else
    ``essential_f1``."""
    return "bidirected_f1" if spec.latent else "essential_f1"


def reach_metric(spec: LevelSpec) -> str:
    """What the reference is scored on: ``identifiable_f1`` where the budget is below
    ``|I*|``, else ``directed_f1``."""
    return "identifiable_f1" if spec.shortfall else "directed_f1"


@dataclass(frozen=True)
class ShortcutScore:
    """A suite agent's (or shortcut's) mean scores on a level."""

    agent: str
    directed: Estimate
    field: Estimate


@dataclass(frozen=True)
class FrontierLevel:
    """One level's check.

    Attributes:
        ladder, level, spec: where.
        n: instances (the oracle's rows).
        oracle_perfect: instances on which the oracle scored 100% on every rate and SHD 0.
        scores: every suite agent's and shortcut's means, best directed F1 first.
        field: the field the level is about (:func:`level_field`).
        floor_closed, floor_measured: the random floor, closed form and measured (NaN
            without ``random`` rows).
        gate: the shortcut gate of the level (None when not run).
        mdd: the largest MDD of the best agent's paired comparisons, and the agent it is with.
        reference: the reference's score on :attr:`reach`.
        reach: :func:`reach_metric`.
        ablation: the ablation's directed F1 (the class without the best experiments).
        checks: each criterion by name, True where it holds.
    """

    ladder: str
    level: str
    spec: LevelSpec
    n: int
    oracle_perfect: int
    scores: tuple[ShortcutScore, ...]
    field: str
    floor_closed: float
    floor_measured: float
    gate: GateLevel | None
    mdd: tuple[float, str]
    reference: Estimate
    reach: str
    ablation: Estimate
    checks: Mapping[str, bool]

    @property
    def best(self) -> ShortcutScore:
        """The suite's best agent by directed F1."""
        return self.scores[0]

    @property
    def best_field(self) -> ShortcutScore:
        """The suite's best agent on the level's field."""
        return max(self.scores, key=lambda s: _mean(s.field))

    @property
    def kept(self) -> bool:
        """Whether every criterion holds."""
        return all(self.checks.values())


def _mean(estimate: Estimate) -> float:
    return estimate.mean if estimate.n and math.isfinite(estimate.mean) else -math.inf


def _by_agent(rows: Iterable[Row]) -> dict[str, dict[int, Row]]:
    found: dict[str, dict[int, Row]] = {}
    for row in rows:
        found.setdefault(row.agent, {})[row.manifest_index] = row
    return found


def _values(rows: Mapping[int, Row], metric: str) -> dict[int, float]:
    out = {}
    for index, row in rows.items():
        value = getattr(row, metric, None)
        if value is not None and math.isfinite(float(value)):
            out[index] = float(value)
    return out


def _estimate(values: Mapping[int, float]) -> Estimate:
    return bootstrap_ci([np.array(list(values.values()))]) if values else Estimate.empty()


def _perfect(row: Row) -> bool:
    rates = [getattr(row, name, None) for name in _RATES if name != "efficiency"]
    known = [float(v) for v in rates if v is not None]
    return all(v == 1.0 for v in known) and row.shd is not None and float(row.shd) == 0.0


def _identifiable(rows: Mapping[int, Row]) -> dict[int, float]:
    """The identifiable F1 of each row's submission (budgets below ``|I*|``)."""
    out = {}
    for index, row in rows.items():
        found, graph = row_instance(row), submission_of(row)
        if found is None or graph is None:
            continue
        instance = generate_instance(*found)
        truth = identifiable_graph(instance.dag, instance.budget, instance.intervention_targets)
        out[index] = identifiable_f1(truth, graph)
    return out


def _worst_mdd(
    agents: Mapping[str, dict[int, Row]], best: str, power_seeds: int | None
) -> tuple[float, str]:
    worst = (0.0, "")
    mine = _values(agents.get(best, {}), "directed_f1")
    for agent in SUITE:
        if agent == best or agent not in agents:
            continue
        other = _values(agents[agent], "directed_f1")
        shared = sorted(set(mine) & set(other))
        if len(shared) < 3:
            continue
        differences = np.array([mine[i] - other[i] for i in shared])
        n = power_seeds if power_seeds is not None else len(shared)
        mdd = minimum_detectable_difference(float(differences.std(ddof=1)), n)
        if mdd > worst[0]:
            worst = (mdd, agent)
    return worst


def frontier_levels(
    rows: Iterable[Row],
    gates: Sequence[GateLevel] = (),
    *,
    power_seeds: int | None = POWER_SEEDS,
) -> tuple[FrontierLevel, ...]:
    """Check every level of a run against the frontier's criteria.

    Args:
        rows: ok result rows of :data:`SWEEP_AGENTS` (levels of one or more ladders).
        gates: the shortcut gate of the same rows (:func:`~acdb_gym.report.gate.gate_levels`);
            its order checks give the best marginal order and the hub order.
        power_seeds: the seeds the MDD is computed for (None: the run's own count).

    Returns:
        One :class:`FrontierLevel` per level, in the rows' order.
    """
    by_level: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.status == "ok":
            by_level.setdefault((row.ladder, row.level), []).append(row)
    gate_of = {(g.ladder, g.level): g for g in gates}
    return tuple(
        _level(ladder, level, level_rows, gate_of.get((ladder, level)), power_seeds)
        for (ladder, level), level_rows in by_level.items()
    )


def _level(
    ladder: str, level: str, rows: list[Row], gate: GateLevel | None, power_seeds: int | None
) -> FrontierLevel:
    agents = _by_agent(rows)
    found = row_instance(rows[0])
    if found is None:
        raise ValueError(f"{ladder} {level}: its rows name no known level")
    spec = found[0]
    field = level_field(spec)
    scores = [
        ShortcutScore(
            agent,
            _estimate(_values(agents[agent], "directed_f1")),
            _estimate(_values(agents[agent], field)),
        )
        for agent in SUITE
        if agent in agents
    ]
    if gate is not None:
        orders = [c for c in gate.checks if c.kind == "order"]
        for check in sorted(orders, key=lambda c: -c.value)[:1] + [
            c for c in orders if c.name == "hub"
        ]:
            point = Estimate(check.value, check.value, check.value, check.gain.n)
            scores.append(ShortcutScore(check.name, point, Estimate.empty()))
    scores.sort(key=lambda s: -_mean(s.directed))
    oracle = agents.get("oracle", {})
    oracle_f1 = _values(oracle, "directed_f1")
    oracle_field = _values(oracle, field)
    random = _values(agents.get("random", {}), "directed_f1")
    reach = reach_metric(spec)
    reference_rows = agents.get(REFERENCE, {})
    reference = _estimate(
        _identifiable(reference_rows) if spec.shortfall else _values(reference_rows, reach)
    )
    ablation = _estimate(_values(agents.get(ABLATION, {}), "directed_f1"))
    best = scores[0] if scores else ShortcutScore("", Estimate.empty(), Estimate.empty())
    best_field = max((_mean(s.field) for s in scores), default=-math.inf)
    mdd = _worst_mdd(agents, best.agent, power_seeds)
    oracle_mean = float(np.mean(list(oracle_f1.values()))) if oracle_f1 else math.nan
    field_mean = float(np.mean(list(oracle_field.values()))) if oracle_field else math.nan
    floor_measured = float(np.mean(list(random.values()))) if random else math.nan
    checks = {
        "oracle": bool(oracle) and all(_perfect(row) for row in oracle.values()),
        "hard": oracle_mean - _mean(best.directed) >= GAP_DIRECTED
        and field_mean - best_field >= GAP_FIELD,
        "floor": spec.random_floor <= FLOOR_MAX
        and (math.isnan(floor_measured) or floor_measured <= FLOOR_MAX),
        "clean": gate is not None and gate.passed,
        "powered": bool(mdd[1]) and mdd[0] <= MDD_MAX,
        "reachable": _mean(reference) >= REACH_MIN,
    }
    return FrontierLevel(
        ladder=ladder,
        level=level,
        spec=spec,
        n=len(oracle),
        oracle_perfect=sum(_perfect(row) for row in oracle.values()),
        scores=tuple(scores),
        field=field,
        floor_closed=spec.random_floor,
        floor_measured=floor_measured,
        gate=gate,
        mdd=mdd,
        reference=reference,
        reach=reach,
        ablation=ablation,
        checks=checks,
    )


# --------------------------------------------------------------------------- output


def _pct(value: float) -> str:
    return f"{100 * value:.1f}" if math.isfinite(value) else "—"


def _ci(estimate: Estimate) -> str:
    if not estimate.n or not math.isfinite(estimate.mean):
        return "—"
    if estimate.low == estimate.high:
        return _pct(estimate.mean)
    return f"{_pct(estimate.mean)} [{_pct(estimate.low)}, {_pct(estimate.high)}]"


def _mark(ok: bool) -> str:
    return "yes" if ok else "**no**"


CRITERIA_HEADERS: Final = (
    "level",
    "oracle 100% on every field",
    "best agent (Dir F1)",
    "gap to oracle",
    "best on its field",
    "random floor (closed / measured)",
    "gate",
    "MDD",
    "reference",
    "class_bic_active",
    "kept",
)


def frontier_markdown(levels: Sequence[FrontierLevel]) -> list[Part]:
    """The criteria table (one line per level), then every suite agent's directed F1."""
    body = []
    for lv in levels:
        best, field_best = lv.best, lv.best_field
        gate = "—" if lv.gate is None else ("pass" if lv.gate.passed else "**fail**")
        body.append(
            [
                lv.level,
                f"{lv.oracle_perfect}/{lv.n} {_mark(lv.checks['oracle'])}",
                f"{best.agent} {_ci(best.directed)}",
                f"{_pct(1.0 - _mean(best.directed))} {_mark(lv.checks['hard'])}",
                f"{lv.field}: {field_best.agent} {_ci(field_best.field)}",
                f"{_pct(lv.floor_closed)} / {_pct(lv.floor_measured)} {_mark(lv.checks['floor'])}",
                f"{gate}",
                f"{_pct(lv.mdd[0])} ({lv.mdd[1]}) {_mark(lv.checks['powered'])}",
                f"{lv.reach} {_ci(lv.reference)} {_mark(lv.checks['reachable'])}",
                _ci(lv.ablation),
                _mark(lv.kept),
            ]
        )
    lines: list[Part] = [Table.of(CRITERIA_HEADERS, body)]
    failures = [
        f"- {lv.level}: {failure}" for lv in levels if lv.gate for failure in lv.gate.failures
    ]
    if failures:
        lines += ["Gate failures:", "", *failures, ""]
    agents = list(dict.fromkeys(s.agent for lv in levels for s in lv.scores))
    table = []
    for agent in agents:
        cells = [agent]
        for lv in levels:
            score = next((s for s in lv.scores if s.agent == agent), None)
            cells.append("—" if score is None else _ci(score.directed))
        table.append(cells)
    lines += [
        "Directed F1 of every suite agent and shortcut (the best marginal order is named per "
        "level by the gate; `hub` is the hub order):",
        "",
        Table.of(["agent", *(lv.level for lv in levels)], table),
    ]
    return lines
