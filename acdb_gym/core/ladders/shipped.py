"""Level specifications and the difficulty ladders (DESIGN §7).

Over 500 lines because it is the one table of every shipped ladder (their specs, seeds,
pairings and Gymnasium ids) with the one manifest writer that reads it; the measured-data
ladders' specs live in :mod:`~acdb_gym.core.ladders.real_data`.

``v0`` and ``v1`` are linear-Gaussian; ``v1-nongaussian`` and ``v1-nonlinear`` are v1's levels
with the ``linear_nongaussian`` and ``nonlinear`` SCM families (DESIGN §3.1), registered as
``ACDB-NonGaussian-L{0..5}-v2`` and ``ACDB-Nonlinear-L{0..5}-v2`` (:data:`FAMILY_VERSIONS`).
``v1-hidden`` is v1 with a hidden slack (each instance draws its slack from ``slack .. slack +
2``, unpublished; DESIGN §7), registered as ``ACDB-HiddenSlack-L{0..5}-v1``.
``v1-latent`` has worlds with hidden common causes (``LevelSpec.latent``, DESIGN §3.2),
registered as ``ACDB-Latent-L{0..5}-v1``.
``v1-n3`` is v1's and v1-nonlinear's L1, L2, L4 with 3 samples per experiment (DESIGN §7),
registered as ``ACDB-<level>-v1-n3`` and ``ACDB-Design-<level>-v1-n3``.
``sachs-experiments`` (real experiments on the Sachs cells beside the fitted Sachs worlds) and
``tuebingen`` (the cause-effect pairs) are measured data (:mod:`~acdb_gym.core.ladders.real_data`).
``frontier`` is the hard, clean ladder chosen by calibration (:mod:`~acdb_gym.core.ladders.frontier`),
registered as ``ACDB-Frontier-<level>-v1``.

Over 500 lines because every shipped ladder is declared here, each a table of specs with its
id spelling (:data:`LADDER_IDS`) and its manifest rule, so that adding a ladder is one place;
the worlds themselves are built in :mod:`acdb_gym.core.worlds`.

Each level carries a manifest of 200 preflighted seeds, each stored with the digest of the
instance it generates, in package data (``core/ladders/manifests/<ladder>.tsv``); v0's first 8 are the
paper's published seeds. ``tests/core/test_instance.py`` regenerates the first 8 and a sample of
the rest, so that any change to generation is caught. Regenerate the files after an intended
change with ``python -m acdb_gym.core.ladders.shipped``.

>>> LADDERS["v0"]["L0"].spec.d, LADDERS["v1"]["L5"].spec.k
(5, 45)
>>> round(LADDERS["v0"]["L0"].spec.random_floor, 3)
0.275
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from acdb_gym.core.graphs import TOPOLOGY_SIZES
from acdb_gym.core.ladders.frontier import FRONTIER, FRONTIER_SEED_BASE, FRONTIER_SPECS
from acdb_gym.core.ladders.real_data import (
    SACHS_EXPERIMENT_PAIRS,
    SACHS_EXPERIMENT_SPECS,
    SACHS_EXPERIMENTS,
    TUEBINGEN,
    TUEBINGEN_SPECS,
    pair_seeds,
)
from acdb_gym.core.worlds.instance import Instance, InstanceGenerationError, generate_instance
from acdb_gym.core.worlds.spec import LINEAR_NONGAUSSIAN, NONLINEAR, Family, LevelSpec

__all__ = [
    "ALL_LADDERS",
    "FAMILY_LADDERS",
    "FAMILY_TAGS",
    "FAMILY_VERSIONS",
    "FEW_SAMPLE",
    "FEW_SAMPLE_LADDER",
    "FEW_SAMPLE_N_INT",
    "FEW_SAMPLE_SOURCES",
    "FRONTIER",
    "FRONTIER_LADDER",
    "HIDDEN_SLACK_LADDER",
    "HIDDEN_SLACK_SPREAD",
    "HIDDEN_SLACK_TAG",
    "LADDERS",
    "LADDER_IDS",
    "LARGE_LADDER",
    "LARGE_MANIFEST_SIZE",
    "LATENT_LADDER",
    "LEVEL_NAMES",
    "MANIFEST_SIZE",
    "REAL",
    "REAL_LADDER",
    "REAL_PAIRS",
    "REAL_VERSION",
    "SACHS_EXPERIMENTS",
    "SACHS_EXPERIMENT_LADDER",
    "TUEBINGEN",
    "TUEBINGEN_LADDER",
    "LadderIds",
    "Level",
    "LevelSpec",
    "ManifestEntry",
    "get_level",
    "ladder_env_id",
    "manifest_path",
    "preflight",
    "preflight_paired",
    "read_manifests",
    "write_manifests",
]

LadderName = Literal[
    "v0",
    "v1",
    "v1-nongaussian",
    "v1-nonlinear",
    "v1-hidden",
    "large",
    "v1-latent",
    "real",
    "v1-n3",
    "sachs-experiments",
    "tuebingen",
    "frontier",
]
LEVEL_NAMES = ("L0", "L1", "L2", "L3", "L4", "L5")


@dataclass(frozen=True)
class ManifestEntry:
    """A preflighted seed and the digest of the instance it generates."""

    seed: int
    digest: str


@dataclass(frozen=True)
class Level:
    """A named level of a ladder: its axis, spec and manifest."""

    ladder: str
    name: str
    axis: str
    spec: LevelSpec
    manifest: tuple[ManifestEntry, ...]

    @property
    def env_id(self) -> str:
        """The Gymnasium id ``ACDB-<ladder tag>-<level>-v<world version>`` of
        :data:`LADDER_IDS` (DESIGN §8, "Env ids"): ``ACDB-L2-v0`` (the paper's ladder has no
        tag), ``ACDB-Calibrated-L2-v1``, ``ACDB-Nonlinear-L2-v2``, ``ACDB-Real-Sachs-v2``.
        A level of a ladder outside the table (a custom level) is ``ACDB-<ladder>-<level>``."""
        if self.ladder not in LADDER_IDS:
            return f"ACDB-{self.ladder}-{self.name}"
        return ladder_env_id(self.ladder, self.name)

    def manifest_seed(self, index: int) -> int:
        """The ``index``-th preflighted seed."""
        if not 0 <= index < len(self.manifest):
            raise ValueError(
                f"manifest_index must be in [0, {len(self.manifest)}) for "
                f"{self.ladder} {self.name}, got {index}"
            )
        return self.manifest[index].seed

    def instance(self, index: int) -> Instance:
        """Generate the ``index``-th manifest instance."""
        return generate_instance(self.spec, self.manifest_seed(index))


# v0: the paper's ladder, reconstructed (DESIGN §7). Random floors: 27.5, 24.3, 24.3, 21.5,
# 24.3, 21.0 %.
_V0_SPECS = {
    "L0": ("easy", LevelSpec(d=5, k=8, n_obs=500, n_int=100, noise_var=1.0, slack=2)),
    "L1": ("base", LevelSpec(d=6, k=9, n_obs=200, n_int=50, noise_var=2.0, slack=1)),
    "L2": ("statistical power", LevelSpec(d=6, k=9, n_obs=50, n_int=20, noise_var=4.0, slack=1)),
    "L3": ("structure", LevelSpec(d=8, k=13, n_obs=200, n_int=50, noise_var=2.0, slack=1)),
    "L4": ("budget", LevelSpec(d=6, k=9, n_obs=200, n_int=50, noise_var=2.0, slack=0)),
    "L5": (
        "structure + low sample",
        LevelSpec(d=10, k=20, n_obs=50, n_int=20, noise_var=4.0, slack=0),
    ),
}

# v1: calibrated (beyond the paper). Standardized SCMs and sparse graphs; random floors 11.7,
# 11.9, 11.9, 10.8, 11.9, 7.8 %.
_V1_SPECS = {
    "L0": ("easy", LevelSpec(10, 8, 1000, 200, 1.0, 2, standardized=True)),
    "L1": ("base", LevelSpec(12, 12, 1000, 200, 1.0, 1, standardized=True)),
    "L2": ("statistical power", LevelSpec(12, 12, 100, 50, 1.0, 1, standardized=True)),
    "L3": ("structure", LevelSpec(20, 30, 1000, 200, 1.0, 1, standardized=True)),
    "L4": ("budget", LevelSpec(12, 12, 1000, 200, 1.0, 0, standardized=True)),
    "L5": ("structure + low sample", LevelSpec(30, 45, 200, 50, 1.0, 0, standardized=True)),
}

FAMILY_TAGS: dict[Family, str] = {LINEAR_NONGAUSSIAN: "NonGaussian", NONLINEAR: "Nonlinear"}
"""The family's part of a family ladder's env ids."""

FAMILY_LADDERS: dict[str, Family] = {
    "v1-nongaussian": LINEAR_NONGAUSSIAN,
    "v1-nonlinear": NONLINEAR,
}
"""Ladders with v1's levels and another SCM family."""

FAMILY_VERSIONS: dict[str, str] = {"v1-nongaussian": "v2", "v1-nonlinear": "v2"}
"""The version of each family ladder's env ids, raised whenever its worlds change (CHANGELOG):
v2 pairs every instance with v1's (same seed, graph and weights) and Gaussianizes the nonlinear
family's marginals."""


HIDDEN_SLACK_TAG = "HiddenSlack"
"""The env ids' part for a level with a hidden slack (``ACDB-HiddenSlack-L2-v1``)."""

REAL_VERSION = 2
"""The version of the real ladder's worlds: the suffix of its env ids (``ACDB-Real-Sachs-v2``),
raised whenever its worlds change (CHANGELOG). v2 orients the scale-free levels' skeletons by a
uniform order (``orientation="uniform"``) and scales their weights by the endpoints' degrees
(``edge_scale="degree"``); v1, whose env ids carried no version (``ACDB-SF-L3-real``), kept
preferential attachment's order (hubs as parents) and v1's weights."""


@dataclass(frozen=True)
class LadderIds:
    """How a ladder's env ids are spelled: ``ACDB-<tag>-<level>-v<version>``.

    Attributes:
        tag: the ladder's part of the id (``""`` for the paper's ladder: ``ACDB-L2-v0``).
        version: the version of the ladder's worlds, raised whenever they change.
    """

    tag: str
    version: int


LADDER_IDS: dict[str, LadderIds] = {
    "v0": LadderIds("", 0),
    "v1": LadderIds("Calibrated", 1),
    "v1-nongaussian": LadderIds("NonGaussian", 2),
    "v1-nonlinear": LadderIds("Nonlinear", 2),
    "v1-hidden": LadderIds(HIDDEN_SLACK_TAG, 1),
    "v1-latent": LadderIds("Latent", 1),
    "large": LadderIds("Large", 0),
    "real": LadderIds("Real", REAL_VERSION),
    "v1-n3": LadderIds("FewSample", 0),
    "sachs-experiments": LadderIds("SachsExperiments", 0),
    "tuebingen": LadderIds("Tuebingen", 0),
    FRONTIER: LadderIds("Frontier", 1),
}
"""Every shipped ladder's id spelling, one line each (DESIGN §8, "Env ids"): the suffix is the
version of the ladder's worlds and the ladder is in the name. The paper's ladder keeps
``ACDB-L<k>-v0``; ids that already carried their ladder before the suffix keep their number
(``ACDB-Nonlinear-L2-v2``, ``ACDB-Latent-L2-v1``), as does the calibrated ladder, long called
``v1``; the others start at 0. A new ladder is one more line."""


def ladder_env_id(ladder: str, level: str, *, view: str = "") -> str:
    """The env id of ``level`` of a shipped ``ladder`` (:data:`LADDER_IDS`), in a view:
    ``""`` the full env, ``"Flat"`` its flat-action variant, ``"Design"`` the design env.

    >>> ladder_env_id("v0", "L2"), ladder_env_id("v1", "L2", view="Design")
    ('ACDB-L2-v0', 'ACDB-Design-Calibrated-L2-v1')
    """
    ids = LADDER_IDS[ladder]
    parts = [part for part in ("ACDB", view, ids.tag, level) if part]
    return f"{'-'.join(parts)}-v{ids.version}"


HIDDEN_SLACK_SPREAD = 2
"""``v1-hidden``: each instance's slack is drawn from v1's slack of its level up to this much
more, so a budget is never tighter than v1's and says only that ``|I*|`` lies in
``[budget - slack - 2, budget - slack]``."""


def _family_specs(family: Family) -> dict[str, tuple[str, LevelSpec]]:
    return {name: (axis, replace(spec, family=family)) for name, (axis, spec) in _V1_SPECS.items()}


_SPECS: dict[str, dict[str, tuple[str, LevelSpec]]] = {
    "v0": _V0_SPECS,
    "v1": _V1_SPECS,
    **{ladder: _family_specs(family) for ladder, family in FAMILY_LADDERS.items()},
}

_HIDDEN_SPECS = {
    name: (axis, replace(spec, slack_max=spec.slack + HIDDEN_SLACK_SPREAD))
    for name, (axis, spec) in _V1_SPECS.items()
}

# large: worlds up to d = 2,000 for scaling studies (beyond the paper). v1's generator (standardized
# SCMs, 1.5 d edges) with the faithfulness rule that redraws failing edges' weights instead of
# whole worlds, whose acceptance rate falls exponentially with the edge count.
_LARGE_SPECS = {
    name: (
        f"d = {d}",
        LevelSpec(
            d, 3 * d // 2, 1000, n_int, 1.0, 1, standardized=True, faithfulness_rule="redraw_edges"
        ),
    )
    for name, d, n_int in (
        ("L0", 20, 100),
        ("L1", 50, 100),
        ("L2", 100, 100),
        ("L3", 200, 50),
        ("L4", 500, 20),
    )
}
# L5, L6: d = 1,000 and 2,000. PC's tests need more rows than variables, so n_obs = 2 d; 10
# rows per experiment keep an episode's raw block (about |I*| experiments) near the sample's size.
_LARGE_SPECS.update(
    {
        name: (f"d = {d}", replace(_LARGE_SPECS["L0"][1], d=d, k=3 * d // 2, n_obs=2 * d, n_int=10))
        for name, d in (("L5", 1000), ("L6", 2000))
    }
)

# v1-latent: worlds with hidden common causes (DESIGN §3.2), v1's sizes for L0-L4 with 1 to 3
# latents, and L5 v1's base level with 4 latents (the confounding axis). v1's L5 (d = 30,
# n_obs = 200) is not repeated: FCI's tests at that size and sample are the weakest link.
_LATENT_SPECS = {
    "L0": ("easy", LevelSpec(10, 8, 1000, 200, 1.0, 2, standardized=True, latent=1)),
    "L1": ("base", LevelSpec(12, 12, 1000, 200, 1.0, 1, standardized=True, latent=2)),
    "L2": ("statistical power", LevelSpec(12, 12, 100, 50, 1.0, 1, standardized=True, latent=2)),
    "L3": ("structure", LevelSpec(20, 30, 1000, 200, 1.0, 1, standardized=True, latent=3)),
    "L4": ("budget", LevelSpec(12, 12, 1000, 200, 1.0, 0, standardized=True, latent=2)),
    "L5": ("confounding", LevelSpec(12, 12, 1000, 200, 1.0, 1, standardized=True, latent=4)),
}

# real: worlds on real wirings and scale-free graphs (DESIGN §3.3, §3.4, §7 "Real ladder").
# SF-L3 is v1 L3 (d = 20, k = 30) on scale-free graphs oriented by a uniform order, so SF and
# ER pair by size; the Sachs and DREAM4 levels draw v1's standardized mechanisms per seed on the
# fixed wirings (DREAM4 with the large ladder's edge-redraw rule: a 100-node world whose ~200
# edges all pass is rare); the fitted levels are the Sachs world fitted to its cytometry data.
REAL = "real"
_V1_L3 = _V1_SPECS["L3"][1]
_SF = replace(_V1_L3, graph="sf", orientation="uniform", edge_scale="degree")
_SACHS = LevelSpec(11, 17, 1000, 200, 1.0, 1, standardized=True, graph="sachs")
_REAL_SPECS: dict[str, tuple[str, LevelSpec]] = {
    "SF-L3": ("scale-free, v1 L3's size", _SF),
    "SF-Nonlinear-L3": ("scale-free, nonlinear", replace(_SF, family=NONLINEAR)),
    "Sachs": ("Sachs wiring, linear-Gaussian", _SACHS),
    "Sachs-Nonlinear": ("Sachs wiring, nonlinear", replace(_SACHS, family=NONLINEAR)),
    "Sachs-Fitted": ("Sachs fitted to data, linear", replace(_SACHS, fit="linear")),
    "Sachs-Fitted-Spline": ("Sachs fitted to data, spline", replace(_SACHS, fit="spline")),
    **{
        f"DREAM4-{n}": (
            f"DREAM4 network {n}, linear-Gaussian",
            LevelSpec(
                *TOPOLOGY_SIZES[f"dream4-{n}"],
                1000,
                100,
                1.0,
                1,
                standardized=True,
                faithfulness_rule="redraw_edges",
                graph=f"dream4-{n}",
            ),
        )
        for n in range(1, 6)
    },
}

REAL_PAIRS: dict[str, str] = {"SF-Nonlinear-L3": "SF-L3", "Sachs-Nonlinear": "Sachs"}
"""The real ladder's nonlinear levels hold the seeds of their linear-Gaussian twin, index for
index (:func:`preflight_paired`), so each nonlinear world has its twin's graph and weights."""

# v1-n3: the few-sample regime where hindsight-best targeting beats greedy by 10+ points (README,
# "RL intervention policies"). Generation never reads n_int, so each instance is its source's
# world of the same seed (graph, weights, data, budget); only the spec, so the digest, differ.
FEW_SAMPLE = "v1-n3"
FEW_SAMPLE_N_INT = 3
"""Samples per experiment on the few-sample ladder ``v1-n3``."""

FEW_SAMPLE_SOURCES: dict[str, tuple[str, str]] = {
    **{name: ("v1", name) for name in ("L1", "L2", "L4")},
    **{f"Nonlinear-{name}": ("v1-nonlinear", name) for name in ("L1", "L2", "L4")},
}
"""Each ``v1-n3`` level's source ``(ladder, level)``, whose seeds it holds index for index."""

_FEW_SAMPLE_SPECS = {
    name: (f"{axis}, 3 samples per experiment", replace(spec, n_int=FEW_SAMPLE_N_INT))
    for name, (axis, spec) in (
        (name, _SPECS[ladder][source]) for name, (ladder, source) in FEW_SAMPLE_SOURCES.items()
    )
}

MANIFEST_SIZE = 200
"""Preflighted seeds per level in the shipped manifests of v0, v1 and the family ladders (v0's
first 8 are the published seeds)."""

LARGE_MANIFEST_SIZE = 50
"""Preflighted seeds per level of the large ladder (a d = 2,000 world takes about 2 s)."""

_SEED_BASE = {
    "v0": 0,
    "v1": 100_000,
    "v1-hidden": 100_000,
    "large": 200_000,
    "v1-latent": 300_000,
    "real": 400_000,
    SACHS_EXPERIMENTS: 500_000,
    TUEBINGEN: 600_000,
    FRONTIER: FRONTIER_SEED_BASE,
}
"""Manifest seeds: ladder v0 uses ``1000 * level + i``, v1 uses ``100000 + 1000 * level + i``,
large ``200000 + 1000 * level + i``, v1-latent ``300000 + 1000 * level + i``, real ``400000 + 1000 * level + i``. The family ladders hold v1's manifest seeds, index for
index (:func:`preflight_paired`): a family instance has the graph and weights of v1's instance
of the same seed (DESIGN §3.1), so every instance pairs with v1's. ``v1-hidden`` uses v1's seeds
too, and its instances are v1's (graph, weights, data) with only the budget changed: the slack
has a stream of its own. ``v1-n3`` holds its sources' seeds (:data:`FEW_SAMPLE_SOURCES`), index
for index."""


def manifest_path(ladder: str) -> Traversable:
    """The package-data file that holds ``ladder``'s manifests (``core/ladders/manifests/<ladder>.tsv``)."""
    return files("acdb_gym.core.ladders").joinpath("manifests", f"{ladder}.tsv")


def read_manifests(text: str) -> dict[str, tuple[ManifestEntry, ...]]:
    r"""Parse a manifest file: ``level<TAB>seed<TAB>digest`` lines; ``#`` starts a comment.

    >>> read_manifests("# c\nL0\t3\tab12\nL0\t4\tcd34\n")["L0"][1]
    ManifestEntry(seed=4, digest='cd34')
    """
    by_level: dict[str, list[ManifestEntry]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError(f"manifest line {number}: expected level, seed, digest; got {line!r}")
        level, seed, digest = parts
        by_level.setdefault(level, []).append(ManifestEntry(int(seed), digest))
    return {level: tuple(entries) for level, entries in by_level.items()}


def write_manifests(entries: Mapping[str, Sequence[ManifestEntry]], header: str) -> str:
    """The text of a manifest file (the inverse of :func:`read_manifests`)."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for level, level_entries in entries.items():
        lines.extend(f"{level}\t{entry.seed}\t{entry.digest}" for entry in level_entries)
    return "\n".join(lines) + "\n"


def _build(ladder: str, specs: Mapping[str, tuple[str, LevelSpec]]) -> dict[str, Level]:
    manifests = read_manifests(manifest_path(ladder).read_text(encoding="utf-8"))
    return {
        name: Level(ladder, name, axis, spec, manifests[name])
        for name, (axis, spec) in specs.items()
    }


LADDERS: dict[str, dict[str, Level]] = {name: _build(name, specs) for name, specs in _SPECS.items()}
"""The benchmark's ladders, L0 to L5 each: the paper's v0, the calibrated v1, and v1's levels in
the other SCM families."""

PAPER_LADDERS: tuple[str, ...] = ("v0", "v1")
"""The two linear-Gaussian ladders of the paper's protocol (the family ladders vary their SCM)."""

LARGE_LADDER: dict[str, Level] = _build("large", _LARGE_SPECS)
"""``large``: L0 to L6 at d = 20, 50, 100, 200, 500, 1,000 and 2,000, for scaling studies."""

HIDDEN_SLACK_LADDER: dict[str, Level] = _build("v1-hidden", _HIDDEN_SPECS)
"""``v1-hidden``: v1's levels and instances with a hidden slack (``LevelSpec.slack_max``); each
instance's budget is ``|I*|`` plus a slack drawn from v1's slack to ``+ HIDDEN_SLACK_SPREAD``."""

LATENT_LADDER: dict[str, Level] = _build("v1-latent", _LATENT_SPECS)
"""``v1-latent``: L0 to L5 with hidden common causes (``ACDB-Latent-L{0..5}-v1``)."""

REAL_LADDER: dict[str, Level] = _build(REAL, _REAL_SPECS)
"""``real``: scale-free graphs, the Sachs and DREAM4 wirings, and the fitted Sachs world."""

FEW_SAMPLE_LADDER: dict[str, Level] = _build(FEW_SAMPLE, _FEW_SAMPLE_SPECS)
"""``v1-n3``: v1's and v1-nonlinear's L1, L2, L4 with 3 samples per experiment (the worlds of
:data:`FEW_SAMPLE_SOURCES` of the same seeds)."""

SACHS_EXPERIMENT_LADDER: dict[str, Level] = _build(SACHS_EXPERIMENTS, SACHS_EXPERIMENT_SPECS)
"""``sachs-experiments``: the measured Sachs cells with real experiments, and the fitted Sachs
worlds with the same targets allowed (:mod:`~acdb_gym.core.ladders.real_data`)."""

TUEBINGEN_LADDER: dict[str, Level] = _build(TUEBINGEN, TUEBINGEN_SPECS)
"""``tuebingen``: the bivariate Tübingen cause-effect pairs, observational only."""

FRONTIER_LADDER: dict[str, Level] = _build(FRONTIER, FRONTIER_SPECS)
"""``frontier``: the levels where today's best agent is far from the oracle and every shortcut
fails (:mod:`~acdb_gym.core.ladders.frontier`)."""

ALL_LADDERS: dict[str, dict[str, Level]] = {
    **LADDERS,
    "v1-hidden": HIDDEN_SLACK_LADDER,
    "large": LARGE_LADDER,
    "v1-latent": LATENT_LADDER,
    REAL: REAL_LADDER,
    FEW_SAMPLE: FEW_SAMPLE_LADDER,
    SACHS_EXPERIMENTS: SACHS_EXPERIMENT_LADDER,
    TUEBINGEN: TUEBINGEN_LADDER,
    FRONTIER: FRONTIER_LADDER,
}
"""Every ladder by name: what :func:`get_level`, the sweep and the CLI accept."""


def get_level(ladder: str, level: str) -> Level:
    """Look up a level of any ladder, with an error that lists what exists."""
    if ladder not in ALL_LADDERS:
        raise ValueError(f"ladder must be one of {sorted(ALL_LADDERS)}, got {ladder!r}")
    if level not in ALL_LADDERS[ladder]:
        raise ValueError(f"level must be one of {list(ALL_LADDERS[ladder])}, got {level!r}")
    return ALL_LADDERS[ladder][level]


def preflight(spec: LevelSpec, base: int, count: int) -> tuple[ManifestEntry, ...]:
    """The first ``count`` seeds from ``base`` up whose instance generates, with digests."""
    entries: list[ManifestEntry] = []
    seed = base
    while len(entries) < count:
        with suppress(InstanceGenerationError):
            entries.append(ManifestEntry(seed, generate_instance(spec, seed).digest()))
        seed += 1
    return tuple(entries)


def preflight_paired(spec: LevelSpec, linear: Level) -> tuple[ManifestEntry, ...]:
    """A family level's manifest: ``linear``'s seeds, index for index, with the digests of the
    family's instances (each has the graph and weights of ``linear``'s instance of its seed).

    Raises:
        InstanceGenerationError: a seed of ``linear`` has no accepted family world, so the
            family ladder could not pair with it.
    """
    return tuple(
        ManifestEntry(entry.seed, generate_instance(spec, entry.seed).digest())
        for entry in linear.manifest
    )


_ALL_SPECS: dict[str, Mapping[str, tuple[str, LevelSpec]]] = {
    **_SPECS,
    "v1-hidden": _HIDDEN_SPECS,
    "large": _LARGE_SPECS,
    "v1-latent": _LATENT_SPECS,
    REAL: _REAL_SPECS,
    FEW_SAMPLE: _FEW_SAMPLE_SPECS,
    SACHS_EXPERIMENTS: SACHS_EXPERIMENT_SPECS,
    TUEBINGEN: TUEBINGEN_SPECS,
    FRONTIER: FRONTIER_SPECS,
}
"""The specs of every ladder of :data:`ALL_LADDERS` (what its manifest was made from)."""


def _paired_source(ladder_name: str, name: str) -> Level | None:
    """The level whose seeds ``ladder_name``'s ``name`` holds index for index, if any."""
    if ladder_name == FEW_SAMPLE:
        return get_level(*FEW_SAMPLE_SOURCES[name])
    if ladder_name in FAMILY_LADDERS:
        return LADDERS["v1"][name]
    if ladder_name == REAL and name in REAL_PAIRS:
        return REAL_LADDER[REAL_PAIRS[name]]
    if ladder_name == SACHS_EXPERIMENTS and name in SACHS_EXPERIMENT_PAIRS:
        return SACHS_EXPERIMENT_LADDER[SACHS_EXPERIMENT_PAIRS[name]]
    return None


def _level_manifest(
    ladder_name: str, index: int, name: str, spec: LevelSpec, count: int
) -> tuple[ManifestEntry, ...]:
    """One level's manifest: its paired source's seeds, one seed per pair on the pairs ladder,
    else the first ``count`` seeds from the ladder's base that generate."""
    source = _paired_source(ladder_name, name)
    if source is not None:
        return preflight_paired(spec, source)
    base = _SEED_BASE[ladder_name] + 1000 * index
    if ladder_name == TUEBINGEN:
        seeds = pair_seeds(spec, base)
        return tuple(ManifestEntry(s, generate_instance(spec, s).digest()) for s in seeds)
    return preflight(spec, base, count)


def _write_shipped_manifests(ladders: Sequence[str] = tuple(_SPECS)) -> None:  # pragma: no cover
    """Regenerate ``core/ladders/manifests/<ladder>.tsv`` (after an intended generator change)."""
    for ladder_name in ladders:
        specs = _ALL_SPECS[ladder_name]
        count = LARGE_MANIFEST_SIZE if ladder_name == "large" else MANIFEST_SIZE
        entries = {}
        for index, (name, (_, spec)) in enumerate(specs.items()):
            entries[name] = _level_manifest(ladder_name, index, name, spec, count)
        size = "one seed per pair" if ladder_name == TUEBINGEN else f"{count} preflighted seeds"
        header = (
            f"Ladder {ladder_name}: {size} per level and the digest of the\n"
            f"instance each generates. Regenerate with "
            f"`python -m acdb_gym.core.ladders.shipped {ladder_name}`."
        )
        if ladder_name == FEW_SAMPLE:
            header += (
                "\nThe seeds of v1 (L1, L2, L4) and v1-nonlinear (Nonlinear-L1, -L2, -L4), index "
                "for index;\neach instance is its source's world with 3 samples per experiment."
            )
        if ladder_name == REAL:
            header += f"\nWorld version v{REAL_VERSION} (REAL_VERSION)."
        if ladder_name == SACHS_EXPERIMENTS:
            header += (
                "\nFitted and Fitted-Spline hold the seeds of Cells, index for index (the same "
                "labelling per index)."
            )
        if ladder_name == TUEBINGEN:
            header += "\nManifest index i plays the i-th pair with at least n_obs rows."
        if ladder_name == FRONTIER:
            header += (
                "\nLevels chosen by experiments/calibrate_frontier.py (docs/frontier_calibration.md)."
                "\nWorld version v1: NL20 keeps the seeds whose sample's R²-sortability lies "
                "within 0.5 ± 0.1."
            )
        if ladder_name in FAMILY_VERSIONS:
            header += (
                f"\nEnv ids version {FAMILY_VERSIONS[ladder_name]}: v1's seeds, index for index; "
                f"each instance has the graph and weights of v1's."
            )
        path = Path(str(manifest_path(ladder_name)))
        path.write_text(write_manifests(entries, header), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    import sys

    _write_shipped_manifests(ladders=sys.argv[1:] or tuple(_ALL_SPECS))
