"""The specification of a benchmark level: how its instances are drawn (DESIGN §3).

Its own module so that the generator (:mod:`acdb_gym.core.worlds.instance`) and the ladders
(:mod:`acdb_gym.core.ladders.shipped`, which re-exports it) both build on it without importing each
other.

>>> spec = LevelSpec(d=6, k=9, n_obs=200, n_int=50, noise_var=2.0, slack=1)
>>> spec.n_pairs, spec.density, spec.max_interventions
(15, 0.6, 6)
>>> hidden = LevelSpec(d=6, k=9, n_obs=200, n_int=50, noise_var=2.0, slack=1, slack_max=3)
>>> hidden.slack_text, hidden.max_interventions
('1-3 hidden', 8)
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Literal, get_args

import numpy as np

from acdb_gym.core.graphs.real import FIXED_GRAPHS, TOPOLOGY_SIZES
from acdb_gym.core.worlds.cause_effect_pairs import MAX_PAIR_ROWS
from acdb_gym.core.worlds.real_experiments import BASELINE

__all__ = [
    "EDGE_SCALES",
    "FAITHFULNESS_RULES",
    "FAMILIES",
    "FITS",
    "GRAPHS",
    "LINEAR_GAUSSIAN",
    "LINEAR_NONGAUSSIAN",
    "NONLINEAR",
    "ORIENTATIONS",
    "TARGET_SETS",
    "WORLDS",
    "Family",
    "LevelSpec",
]

Family = Literal["linear_gaussian", "linear_nongaussian", "nonlinear"]
"""The SCM family a level's worlds are drawn from (DESIGN §3.1)."""
LINEAR_GAUSSIAN: Family = "linear_gaussian"
LINEAR_NONGAUSSIAN: Family = "linear_nongaussian"
NONLINEAR: Family = "nonlinear"
FAMILIES: tuple[Family, ...] = get_args(Family)

GRAPHS: tuple[str, ...] = ("er", "sf", *FIXED_GRAPHS)
"""The values of :attr:`LevelSpec.graph`: the random graph models ``"er"`` (the default) and
``"sf"``, and the fixed real topologies (:mod:`acdb_gym.core.graphs.real`)."""

FITS: tuple[str, ...] = ("none", "linear", "spline")
"""The values of :attr:`LevelSpec.fit`: ``"none"`` (mechanisms drawn per seed, the default), or
the Sachs world fitted to its cytometry data (:mod:`acdb_gym.core.worlds.fitted`)."""

EDGE_SCALES: tuple[str, ...] = ("none", "degree")
"""The values of :attr:`LevelSpec.edge_scale`; the first is the default."""

ORIENTATIONS: tuple[str, ...] = ("model", "uniform")
"""The values of :attr:`LevelSpec.orientation`; the first is the default."""
WORLDS: tuple[str, ...] = ("scm", "sachs-cells", "cause-effect-pairs")
"""The values of :attr:`LevelSpec.world`: ``"scm"`` (a structural causal model drawn or fitted
per seed, the default), the measured Sachs cells with real experiments
(:mod:`acdb_gym.core.worlds.real_experiments`), or the Tübingen cause-effect pairs
(:mod:`acdb_gym.core.worlds.cause_effect_pairs`)."""

TARGET_SETS: tuple[str, ...] = ("all", "sachs-experiments", "none")
"""The values of :attr:`LevelSpec.targets`: every node can be intervened on (the default), only
the proteins with a real Sachs experiment, or none (an observational level)."""

FAITHFULNESS_RULES = ("reject_world", "redraw_edges")
"""The values of :attr:`LevelSpec.faithfulness_rule`; the first is the default."""

_ALWAYS_SHOWN = 10
"""The paper's fields (``d`` to ``standardized``), always part of the repr."""


@dataclass(frozen=True, repr=False)
class LevelSpec:
    """Everything that defines how a level's instances are drawn.

    Attributes:
        d: number of variables.
        k: exact number of true edges.
        n_obs: observational sample size.
        n_int: samples per intervention (at least 3; ``n_obs`` at least 4).
        noise_var: noise variance (before standardization when ``standardized``).
        slack: interventions allowed beyond ``|I*|``; with ``slack_max``, the smallest slack
            an instance draws.
        faithfulness_eps: minimum relevant population ``|rho|`` of an accepted instance.
        weight_low: smallest edge-weight magnitude.
        weight_high: largest edge-weight magnitude.
        standardized: generate an internally standardized SCM (v1).
        family: the SCM family (:data:`FAMILIES`); ``"linear_gaussian"`` is the paper's.
        faithfulness_rule: how a draw that fails the faithfulness check is handled.
            ``"reject_world"`` (v0, v1): redraw the whole world (graph and weights) until
            every edge passes, which fails at a rate exponential in the edge count.
            ``"redraw_edges"`` (the large ladder): keep the graph, redraw only the failing
            edges' weights, at most :data:`~acdb_gym.core.worlds.instance.EDGE_REDRAW_ROUNDS` times,
            then accept the world (linear-Gaussian family only) and record how many edges still fail
            (:attr:`~acdb_gym.core.worlds.instance.Instance.weak_edges`).
        slack_max: None (the default): every instance's budget is ``|I*| + slack``, so the
            budget and the published slack give away ``|I*|``. An integer ``>= slack``: the
            slack is hidden; each instance draws its own uniformly from ``slack .. slack_max``
            on a stream of its seed (:func:`~acdb_gym.core.worlds.instance.instance_slack`),
            and nothing an agent sees (the level's spec, the observation) holds the draw, so the
            budget says only ``|I*|`` in ``[budget - slack_max, budget - slack]``.
        latent: number of hidden common causes (DESIGN §3.2,
            :mod:`~acdb_gym.core.worlds.latent`): each a root with two observed children, a pair
            not adjacent in the observed graph; ``d`` and ``k`` count the observed nodes and the
            edges among them. ``0`` (the default) is a causally sufficient level.
        graph: the graph model (:data:`GRAPHS`, DESIGN §3 step 1 and §3.3): ``"er"`` (uniform
            random order, uniform edge set), ``"sf"`` (scale-free, preferential attachment),
            or a fixed real topology (``"sachs"``, ``"dream4-1"`` ... ``"dream4-5"``) with its
            nodes relabelled by a uniform permutation per draw; a fixed topology's ``d`` and
            ``k`` must be its own.
        fit: ``"none"``, or ``"linear"``/``"spline"`` for the Sachs world fitted to the real
            cytometry data (DESIGN §3.4; needs ``graph="sachs"`` and the default family; the
            weight, noise and faithfulness fields are then unused).
        world: what the data are (:data:`WORLDS`): ``"scm"``, an SCM drawn or fitted per
            seed; ``"sachs-cells"``, the measured Sachs cells, whose experiments are the real
            perturbations (DESIGN §3.5; needs ``graph="sachs"``, ``targets=
            "sachs-experiments"`` and at most 853 observational rows); ``"cause-effect-pairs"``,
            a Tübingen pair (DESIGN §3.6; needs ``d=2``, ``k=1``, ``targets="none"``). The
            real-data worlds ignore the weight, noise, family and faithfulness fields.
        targets: which nodes an intervention may target (:data:`TARGET_SETS`): ``"all"``;
            ``"sachs-experiments"``, the six proteins with a real experiment (needs
            ``graph="sachs"``); ``"none"`` (needs ``slack=0``: the budget is 0). ``I*`` is
            computed over the allowed nodes (DESIGN §3, step 6).
        orientation: how the drawn graph's edges are oriented (DESIGN §3 step 1).
            ``"model"`` (the default): as the graph model draws them (ER: its uniform order;
            ``"sf"``: preferential attachment's arrival order, so the hubs, the oldest nodes,
            are parents; a fixed topology: the real system's). ``"uniform"`` (``graph="sf"``
            only): the scale-free draw's skeleton oriented by a uniform permutation drawn after
            it on the graph stream (:func:`~acdb_gym.core.graphs.orient_by_order`), so a hub is
            a parent or a child of each neighbour with probability 1/2 and the marginal orders
            that read hubs from the sample (R² from all the others) say nothing about the
            causal order (the real ladder's SF levels from its world version v2).
        edge_scale: ``"none"`` (the default): step 2's weights as drawn. ``"degree"``: each
            drawn weight of an edge ``i -> j`` times ``sqrt(mean_degree / (deg_i deg_j))``
            (:func:`~acdb_gym.core.worlds.kinds.linear.degree_scales`; DESIGN §3 step 2), so a
            node's R² from all the others does not grow with its degree and an order that puts
            high-degree nodes first gains nothing (the real ladder's SF levels from v2).
        shortfall: ``0`` (the default): the budget is ``|I*| + slack``. A positive integer:
            the budget is ``max(0, |I*| - shortfall)``, below what identifying the whole graph
            needs (DESIGN §3 step 7; needs ``slack=0`` and no ``slack_max``). Agents are still
            scored against the true graph; what the best experiments of such a budget can
            identify is :func:`~acdb_gym.core.graphs.best_intervention_set`'s (DESIGN §6).
        r2_sortability_band: ``0`` (the default): no condition on the sample. A positive ``b``
            below 0.5: a seed's instance exists only if the R²-sortability of its
            observational sample on its graph
            (:func:`~acdb_gym.core.worlds.sortability.r2_sortability_of`, the order audit's
            ``r2`` feature) lies in ``[0.5 - b, 0.5 + b]``; otherwise generating it raises
            :class:`~acdb_gym.core.worlds.kinds.base.OutOfBandError` and a manifest skips the
            seed (DESIGN §3, "R²-sortability band"). Sorting by R² then says little about any
            instance's causal order, in either direction (the frontier's ``NL20`` from its
            version v1).
    """

    d: int
    k: int
    n_obs: int
    n_int: int
    noise_var: float
    slack: int
    faithfulness_eps: float = 0.1
    weight_low: float = 0.5
    weight_high: float = 2.0
    standardized: bool = False
    family: Family = LINEAR_GAUSSIAN
    faithfulness_rule: str = "reject_world"
    slack_max: int | None = None
    latent: int = 0
    graph: str = "er"
    fit: str = "none"
    world: str = "scm"
    targets: str = "all"
    orientation: str = "model"
    edge_scale: str = "none"
    shortfall: int = 0
    r2_sortability_band: float = 0.0

    def __post_init__(self) -> None:
        if self.d < 2:
            raise ValueError(f"d must be at least 2, got {self.d}")
        if not 0 <= self.k <= self.n_pairs:
            raise ValueError(f"k must be in [0, {self.n_pairs}] for d={self.d}, got {self.k}")
        # Three samples per experiment are the few-sample ladder's (v1-n3); the shift tests
        # need two per group, the observational statistics four.
        for name, least in (("n_obs", 4), ("n_int", 3)):
            if getattr(self, name) < least:
                raise ValueError(f"{name} must be at least {least}, got {getattr(self, name)}")
        if self.slack < 0:
            raise ValueError(f"slack must be non-negative, got {self.slack}")
        if not self.noise_var > 0:
            raise ValueError(f"noise_var must be positive, got {self.noise_var}")
        if not 0 < self.weight_low <= self.weight_high:
            raise ValueError(
                f"need 0 < weight_low <= weight_high, got {self.weight_low}, {self.weight_high}"
            )
        if self.faithfulness_rule not in FAITHFULNESS_RULES:
            raise ValueError(
                f"faithfulness_rule must be one of {list(FAITHFULNESS_RULES)}, "
                f"got {self.faithfulness_rule!r}"
            )
        if not 0 <= self.faithfulness_eps < 1:
            raise ValueError(f"faithfulness_eps must be in [0, 1), got {self.faithfulness_eps}")
        if self.slack_max is not None and self.slack_max < self.slack:
            raise ValueError(
                f"slack_max must be at least slack ({self.slack}) or None, got {self.slack_max}"
            )
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {list(FAMILIES)}, got {self.family!r}")
        if self.faithfulness_rule != "reject_world" and self.family != LINEAR_GAUSSIAN:
            raise ValueError(
                f"faithfulness_rule {self.faithfulness_rule!r} is defined for the linear-Gaussian "
                f"family only, got family {self.family!r}"
            )
        if not isinstance(self.latent, int) or isinstance(self.latent, bool) or self.latent < 0:
            raise ValueError(f"latent must be a non-negative integer, got {self.latent!r}")
        if self.latent > self.n_pairs - self.k:
            raise ValueError(
                f"latent = {self.latent} needs as many observed pairs without an edge, but "
                f"d={self.d}, k={self.k} leave {self.n_pairs - self.k}"
            )
        if self.latent and self.faithfulness_rule != "reject_world":
            raise ValueError(
                f"latent worlds use faithfulness_rule 'reject_world', got {self.faithfulness_rule!r}"
            )

        if self.graph not in GRAPHS:
            raise ValueError(f"graph must be one of {list(GRAPHS)}, got {self.graph!r}")
        if self.graph in TOPOLOGY_SIZES and (self.d, self.k) != TOPOLOGY_SIZES[self.graph]:
            raise ValueError(
                f"graph {self.graph!r} has (d, k) = {TOPOLOGY_SIZES[self.graph]}, "
                f"got ({self.d}, {self.k})"
            )
        if self.latent and self.graph != "er":
            raise ValueError(f"latent worlds draw ER graphs (graph='er'), got graph {self.graph!r}")
        if self.fit not in FITS:
            raise ValueError(f"fit must be one of {list(FITS)}, got {self.fit!r}")
        if self.fit != "none" and (self.graph != "sachs" or self.family != LINEAR_GAUSSIAN):
            raise ValueError(
                f"fit {self.fit!r} is the Sachs world fitted to its data: it needs graph='sachs' "
                f"and the default family, got graph {self.graph!r}, family {self.family!r}"
            )
        self._check_world()
        self._check_targets()
        self._check_shortfall()
        self._check_band()
        self._check_drawn_graph()

    def _check_drawn_graph(self) -> None:
        if self.orientation not in ORIENTATIONS:
            raise ValueError(
                f"orientation must be one of {list(ORIENTATIONS)}, got {self.orientation!r}"
            )
        if self.edge_scale not in EDGE_SCALES:
            raise ValueError(
                f"edge_scale must be one of {list(EDGE_SCALES)}, got {self.edge_scale!r}"
            )
        if self.orientation == "uniform" and self.graph != "sf":
            raise ValueError(
                f"orientation 'uniform' re-orients a scale-free draw (graph='sf'); ER graphs are "
                f"already oriented by a uniform order and a fixed topology keeps the real "
                f"system's directions, got graph {self.graph!r}"
            )

    def _check_world(self) -> None:
        if self.world not in WORLDS:
            raise ValueError(f"world must be one of {list(WORLDS)}, got {self.world!r}")
        if self.world == "scm":
            return
        if self.fit != "none" or self.family != LINEAR_GAUSSIAN or self.latent:
            raise ValueError(
                f"world {self.world!r} is real data: it takes no fit, family or latent variables, "
                f"got fit {self.fit!r}, family {self.family!r}, latent {self.latent}"
            )
        if self.world == "sachs-cells":
            if self.graph != "sachs" or self.targets != "sachs-experiments":
                raise ValueError(
                    "world 'sachs-cells' needs graph='sachs' and targets='sachs-experiments', got "
                    f"graph {self.graph!r}, targets {self.targets!r}"
                )
            if self.n_obs > BASELINE.cells:
                raise ValueError(
                    f"world 'sachs-cells' has {BASELINE.cells} baseline cells, got n_obs "
                    f"{self.n_obs}"
                )
        elif (self.d, self.k, self.graph, self.targets) != (2, 1, "er", "none"):
            raise ValueError(
                "world 'cause-effect-pairs' needs d=2, k=1, graph='er' and targets='none', got "
                f"d={self.d}, k={self.k}, graph {self.graph!r}, targets {self.targets!r}"
            )
        elif self.n_obs > MAX_PAIR_ROWS:
            raise ValueError(f"the largest pair has {MAX_PAIR_ROWS} rows, got n_obs {self.n_obs}")

    def _check_targets(self) -> None:
        if self.targets not in TARGET_SETS:
            raise ValueError(f"targets must be one of {list(TARGET_SETS)}, got {self.targets!r}")
        if self.targets == "sachs-experiments" and self.graph != "sachs":
            raise ValueError(
                f"targets 'sachs-experiments' are proteins of the Sachs wiring: it needs "
                f"graph='sachs', got {self.graph!r}"
            )
        if self.targets == "none" and (self.slack, self.slack_max) != (0, None):
            raise ValueError(
                "targets 'none' allows no experiment: it needs slack=0 and no slack_max, got "
                f"slack={self.slack}, slack_max={self.slack_max}"
            )

    def _check_shortfall(self) -> None:
        shortfall = self.shortfall
        if not isinstance(shortfall, int) or isinstance(shortfall, bool) or shortfall < 0:
            raise ValueError(f"shortfall must be a non-negative integer, got {shortfall!r}")
        if shortfall and (self.slack, self.slack_max) != (0, None):
            raise ValueError(
                "a budget below |I*| (shortfall > 0) needs slack=0 and no slack_max, got "
                f"slack={self.slack}, slack_max={self.slack_max}"
            )

    def _check_band(self) -> None:
        band = self.r2_sortability_band
        if not 0 <= band < 0.5:
            raise ValueError(f"r2_sortability_band must be in [0, 0.5), got {band!r}")
        if band and (self.world != "scm" or self.k < 1):
            raise ValueError(
                "r2_sortability_band bounds the R²-sortability of a drawn SCM's sample on its "
                f"edges: it needs world='scm' and k >= 1, got world {self.world!r}, k={self.k}"
            )

    def __repr__(self) -> str:
        """The dataclass repr of the first ten fields, then only fields not at their default.

        Instance digests hash this repr, so a field added after the paper's ten (a family, an
        acceptance rule, ...) leaves every existing level's digest unchanged while its default
        holds, and is part of the digest as soon as a level sets it.
        """
        shown = []
        for index, spec_field in enumerate(fields(self)):
            value = getattr(self, spec_field.name)
            at_default = spec_field.default is not MISSING and value == spec_field.default
            if index >= _ALWAYS_SHOWN and at_default:
                continue
            shown.append(f"{spec_field.name}={value!r}")
        return f"LevelSpec({', '.join(shown)})"

    @property
    def n_pairs(self) -> int:
        """``M = d (d - 1) / 2``, the number of unordered pairs."""
        return self.d * (self.d - 1) // 2

    @property
    def density(self) -> float:
        """``k / M``."""
        return self.k / self.n_pairs

    @property
    def hidden_slack(self) -> bool:
        """Whether each instance draws its slack from ``slack .. slack_max`` (unpublished)."""
        return self.slack_max is not None

    @property
    def slack_high(self) -> int:
        """The largest slack an instance of the level can have."""
        return self.slack if self.slack_max is None else self.slack_max

    @property
    def slack_text(self) -> str:
        """The slack as a level table shows it: ``"1"``, ``"1-3 hidden"``, or ``"-2"`` for a
        budget of ``|I*| - 2``."""
        if self.shortfall:
            return f"-{self.shortfall}"
        if self.slack_max is None:
            return str(self.slack)
        return f"{self.slack}-{self.slack_max} hidden"

    @property
    def max_interventions(self) -> int:
        """``d - 1 + slack`` (``slack_max`` when set): an upper bound on every budget of the
        level (``|I*| <= d - 1``)."""
        return self.d - 1 + self.slack_high

    @property
    def random_floor(self) -> float:
        """Expected directed F1 of the structure-blind random baseline (DESIGN §9):
        ``E[F1] = 1/(M+1) * sum_m m k / (M (m + k))``."""
        m = np.arange(self.n_pairs + 1, dtype=np.float64)
        if self.k == 0:
            # Both sets empty only when m = 0 (F1 = 1); otherwise precision 0.
            return 1.0 / (self.n_pairs + 1)
        terms = m * self.k / (self.n_pairs * (m + self.k))
        return float(terms.mean())
