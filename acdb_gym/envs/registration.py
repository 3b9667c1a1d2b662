"""Registration of every environment id with Gymnasium (string entry points, no imports).

Ids are ``ACDB-[<view>-]<ladder tag>-<level>-v<world version>`` (DESIGN §8, "Env ids"): the
view is none (the full env), ``Flat`` (one ``Box`` action, a flat observation) or ``Design``
(the intervention-design env); the ladder's tag and world version come from one line of
:data:`~acdb_gym.core.ladders.shipped.LADDER_IDS`. The ids of the earlier scheme, whose suffix
named a ladder (``ACDB-L2-v1``, ``ACDB-L2-large``, ``ACDB-Sachs-real``, ``ACDB-L1-v1-n3``),
remain for one release as deprecated aliases (:data:`DEPRECATED_IDS`) that warn and make the
same env.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, load_env_creator

from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    FEW_SAMPLE,
    FEW_SAMPLE_LADDER,
    FRONTIER,
    FRONTIER_LADDER,
    HIDDEN_SLACK_LADDER,
    LADDERS,
    LARGE_LADDER,
    PAPER_LADDERS,
    REAL_LADDER,
    SACHS_EXPERIMENT_LADDER,
    SACHS_EXPERIMENTS,
    TUEBINGEN,
    TUEBINGEN_LADDER,
    Level,
    ladder_env_id,
)

__all__ = [
    "DEPRECATED_IDS",
    "DESIGN_IDS",
    "DESIGN_LADDERS",
    "ENV_IDS",
    "FEW_SAMPLE_DESIGN_IDS",
    "FEW_SAMPLE_IDS",
    "FLAT_IDS",
    "FRONTIER_DESIGN_IDS",
    "FRONTIER_IDS",
    "HIDDEN_SLACK_IDS",
    "LARGE_IDS",
    "REAL_IDS",
    "REMOVED_IN",
    "SACHS_EXPERIMENT_DESIGN_IDS",
    "SACHS_EXPERIMENT_IDS",
    "TUEBINGEN_IDS",
    "deprecated_env",
    "deprecated_vector_env",
    "design_id",
    "flat_id",
    "make_custom",
    "register_envs",
]

ENV_IDS: tuple[str, ...] = tuple(
    level.env_id for ladder in LADDERS.values() for level in ladder.values()
)
"""``ACDB-L{0..5}-v0`` (the paper's ladder), ``ACDB-Calibrated-L{0..5}-v1``, and the
calibrated levels of the other SCM families, ``ACDB-NonGaussian-L{0..5}-v2`` and
``ACDB-Nonlinear-L{0..5}-v2``."""

LARGE_IDS: tuple[str, ...] = tuple(level.env_id for level in LARGE_LADDER.values())
"""``ACDB-Large-L{0..6}-v0``: d = 20, 50, 100, 200, 500, 1,000, 2,000 (registered; not in
:data:`ENV_IDS`)."""

HIDDEN_SLACK_IDS: tuple[str, ...] = tuple(level.env_id for level in HIDDEN_SLACK_LADDER.values())
"""``ACDB-HiddenSlack-L{0..5}-v1``: v1's levels and instances with a hidden slack (registered;
not in :data:`ENV_IDS`, whose envs differ from these only in the budget)."""

REAL_IDS: tuple[str, ...] = tuple(level.env_id for level in REAL_LADDER.values())
"""``ACDB-Real-<level>-v<REAL_VERSION>``: the real ladder (scale-free graphs, the Sachs and
DREAM4 wirings, the fitted Sachs world; registered, not in :data:`ENV_IDS`)."""

DESIGN_LADDERS: tuple[str, ...] = (*PAPER_LADDERS, FEW_SAMPLE, SACHS_EXPERIMENTS)
"""The ladders with design ids (and the vectorized design env)."""


def design_id(ladder: str, level: str) -> str:
    """The design env's id of a level: ``("v0", "L1")`` -> ``ACDB-Design-L1-v0``."""
    return ladder_env_id(ladder, level, view="Design")


SACHS_EXPERIMENT_IDS: tuple[str, ...] = tuple(
    level.env_id for level in SACHS_EXPERIMENT_LADDER.values()
)
"""``ACDB-SachsExperiments-Cells-v0`` (real experiments on the measured Sachs cells),
``ACDB-SachsExperiments-Fitted-v0`` and ``ACDB-SachsExperiments-Fitted-Spline-v0`` (the fitted
Sachs worlds with the same targets allowed); registered, not in :data:`ENV_IDS`."""

TUEBINGEN_IDS: tuple[str, ...] = tuple(level.env_id for level in TUEBINGEN_LADDER.values())
"""``ACDB-Tuebingen-Pairs-v0`` and ``ACDB-Tuebingen-Pairs-1000-v0``: the Tübingen cause-effect pairs,
observational only (registered, not in :data:`ENV_IDS`)."""

DESIGN_IDS: tuple[str, ...] = tuple(
    design_id(ladder, name) for ladder in PAPER_LADDERS for name in LADDERS[ladder]
)
"""``ACDB-Design-L{0..5}-v0`` and ``ACDB-Design-Calibrated-L{0..5}-v1``: the RL
intervention-design view of each ladder's levels. Each also registers the natively vectorized
:class:`~acdb_gym.envs.design.vector.DesignVectorEnv` as its ``vector_entry_point``, so
``gym.make_vec(id, n)`` (or ``vectorization_mode="vector_entry_point"``) steps ``n`` worlds as
arrays in one process."""

FEW_SAMPLE_IDS: tuple[str, ...] = tuple(level.env_id for level in FEW_SAMPLE_LADDER.values())
"""``ACDB-FewSample-L{1,2,4}-v0`` and ``ACDB-FewSample-Nonlinear-L{1,2,4}-v0``: the few-sample
ladder ``v1-n3`` (the calibrated and nonlinear worlds with 3 samples per experiment;
registered, not in :data:`ENV_IDS`)."""

FEW_SAMPLE_DESIGN_IDS: tuple[str, ...] = tuple(
    design_id(FEW_SAMPLE, name) for name in FEW_SAMPLE_LADDER
)
"""``ACDB-Design-FewSample-<level>-v0``: the design view of the few-sample ladder, the regime
where a targeting policy has room to beat greedy (README, "RL intervention policies");
registered with the same ``vector_entry_point`` as :data:`DESIGN_IDS`, not in it."""


SACHS_EXPERIMENT_DESIGN_IDS: tuple[str, ...] = tuple(
    design_id(SACHS_EXPERIMENTS, name) for name in SACHS_EXPERIMENT_LADDER
)
"""``ACDB-Design-SachsExperiments-<level>-v0``: the design view of the real-experiment ladder (the
targets without an experiment are masked); registered with the same ``vector_entry_point`` as
:data:`DESIGN_IDS`, not in it."""

FRONTIER_IDS: tuple[str, ...] = tuple(level.env_id for level in FRONTIER_LADDER.values())
"""``ACDB-Frontier-<level>-v1``: the frontier ladder (registered, not in :data:`ENV_IDS`)."""

FRONTIER_DESIGN_LEVELS: tuple[str, ...] = tuple(
    name for name, level in FRONTIER_LADDER.items() if not level.spec.latent
)
"""The frontier levels the design env takes: every causally sufficient one (the vectorized
design env scores sufficient worlds only)."""

FRONTIER_DESIGN_IDS: tuple[str, ...] = tuple(
    design_id(FRONTIER, name) for name in FRONTIER_DESIGN_LEVELS
)
"""``ACDB-Design-Frontier-<level>-v1``: the design view of the frontier's causally sufficient
levels; registered with the same ``vector_entry_point`` as :data:`DESIGN_IDS`, not in it."""


def flat_id(env_id: str) -> str:
    """The flat variant's id of a full env's id: ``ACDB-L2-v0`` -> ``ACDB-Flat-L2-v0``."""
    if not env_id.startswith("ACDB-"):
        raise ValueError(f"env_id must start with 'ACDB-', got {env_id!r}")
    return "ACDB-Flat-" + env_id[len("ACDB-") :]


FLAT_IDS: tuple[str, ...] = tuple(
    flat_id(level.env_id) for ladder in ALL_LADDERS.values() for level in ladder.values()
)
"""``ACDB-Flat-...``: each full id with one ``Box`` action and a flat observation
(:func:`acdb_gym.envs.wrappers.make_flat`), so TorchRL's ``GymEnv`` and stable-baselines3 take
it by id with no wrapper code."""

REMOVED_IN = "0.3.0"
"""The release that removes :data:`DEPRECATED_IDS`."""


def _former_id(ladder: str, level: str) -> str | None:
    """A level's id under the earlier scheme, where it differs from today's (else None)."""
    if ladder == "v1":
        return f"ACDB-{level}-v1"
    if ladder in ("large", "real", SACHS_EXPERIMENTS, TUEBINGEN):
        return f"ACDB-{level}-{ladder}"
    if ladder == FEW_SAMPLE:
        return f"ACDB-{level}-{FEW_SAMPLE}"
    return None


def _deprecated_ids() -> dict[str, str]:
    aliases: dict[str, str] = {}
    for ladder, levels in ALL_LADDERS.items():
        for name, level in levels.items():
            former = _former_id(ladder, name)
            if former is None:
                continue
            aliases[former] = level.env_id
            aliases[flat_id(former)] = flat_id(level.env_id)
            if ladder in DESIGN_LADDERS:
                aliases[former.replace("ACDB-", "ACDB-Design-", 1)] = design_id(ladder, name)
    return aliases


DEPRECATED_IDS: dict[str, str] = _deprecated_ids()
"""Each id of the earlier scheme and the id it is now (``ACDB-L2-v1`` ->
``ACDB-Calibrated-L2-v1``, ``ACDB-L2-large`` -> ``ACDB-Large-L2-v0``, ``ACDB-Sachs-real`` ->
``ACDB-Real-Sachs-v2``, ``ACDB-L1-v1-n3`` -> ``ACDB-FewSample-L1-v0``, and their ``Flat`` and
``Design`` views): registered until :data:`REMOVED_IN`, each warns and makes the env of its
new id."""

_PAPER_OUT_OF_DATE = r".*The environment ACDB-(Flat-|Design-)?L[0-5]-v0 is out of date"
"""Gymnasium's notice on the paper's ids while the deprecated ``ACDB-L<k>-v1`` aliases are
registered (it finds a "newer" ``v1`` of the same name). Filtered until :data:`REMOVED_IN`:
that ``v1`` is another ladder's alias, not a newer ``ACDB-L<k>`` (DESIGN §8, "Env ids")."""


def _warn_deprecated(deprecated_id: str, current_id: str) -> None:
    warnings.warn(
        f"{deprecated_id} is deprecated: it is now {current_id} (ids end in their worlds' "
        f"version; DESIGN §8). acdb_gym {REMOVED_IN} removes {deprecated_id}.",
        DeprecationWarning,
        stacklevel=4,  # the caller of gym.make / gym.make_vec
    )


def deprecated_env(
    *, deprecated_id: str, current_id: str, entry_point: str, **kwargs: Any
) -> gym.Env[Any, Any]:
    """The entry point of a deprecated id: warns, then makes what ``current_id`` makes."""
    _warn_deprecated(deprecated_id, current_id)
    kwargs.pop("vector_entry_point", None)
    env = load_env_creator(entry_point)(**kwargs)
    assert isinstance(env, gym.Env)
    return env


def deprecated_vector_env(
    *,
    deprecated_id: str,
    current_id: str,
    entry_point: str,
    vector_entry_point: str,
    **kwargs: Any,
) -> gym.vector.VectorEnv[Any, Any, Any]:
    """The vector entry point of a deprecated design id: warns, then makes the vector env."""
    del entry_point
    _warn_deprecated(deprecated_id, current_id)
    envs = load_env_creator(vector_entry_point)(**kwargs)
    assert isinstance(envs, gym.vector.VectorEnv)
    return envs


_ENTRY_POINTS = {
    "full": ("acdb_gym.envs.acdb_env:ACDBEnv", None),
    "flat": ("acdb_gym.envs.wrappers:flat_env", None),
    "design": (
        "acdb_gym.envs.design.env:InterventionDesignEnv",
        "acdb_gym.envs.design.vector:DesignVectorEnv",
    ),
}


def _register(env_id: str, view: str, kwargs: dict[str, Any]) -> None:
    if env_id in gym.registry:
        return
    entry_point, vector_entry_point = _ENTRY_POINTS[view]
    gym.register(
        id=env_id,
        entry_point=entry_point,
        vector_entry_point=vector_entry_point,
        kwargs=kwargs,
    )


def _register_deprecated(deprecated_id: str, current_id: str) -> None:
    if deprecated_id in gym.registry:
        return
    current = gym.registry[current_id]
    aliases = {
        "deprecated_id": deprecated_id,
        "current_id": current_id,
        "entry_point": current.entry_point,
    }
    vector = current.vector_entry_point
    gym.register(
        id=deprecated_id,
        entry_point="acdb_gym.envs.registration:deprecated_env",
        vector_entry_point=(
            None if vector is None else "acdb_gym.envs.registration:deprecated_vector_env"
        ),
        kwargs={**aliases, "vector_entry_point": vector, **current.kwargs}
        if vector is not None
        else {**aliases, **current.kwargs},
    )


def register_envs() -> None:
    """Register all ids (and the deprecated aliases); calling it twice is harmless."""
    for ladder_name, ladder in ALL_LADDERS.items():
        for level in ladder.values():
            kwargs = {"level": level.name, "ladder": ladder_name}
            _register(level.env_id, "full", kwargs)
            _register(flat_id(level.env_id), "flat", kwargs)
            if ladder_name in DESIGN_LADDERS or (
                ladder_name == FRONTIER and level.name in FRONTIER_DESIGN_LEVELS
            ):
                _register(design_id(ladder_name, level.name), "design", kwargs)
    for deprecated_id, current_id in DEPRECATED_IDS.items():
        _register_deprecated(deprecated_id, current_id)
    warnings.filterwarnings("ignore", message=_PAPER_OUT_OF_DATE, category=DeprecationWarning)


def make_custom(level: Level, **kwargs: Any) -> gym.Env[Any, Any]:
    """``gym.make`` of a level that has no registered id (a custom level): the full env's entry
    point given the :class:`Level` itself, wrapped as ``gym.make`` wraps the registered ids."""
    spec = EnvSpec(
        id=level.env_id,
        entry_point="acdb_gym.envs.acdb_env:ACDBEnv",
        kwargs={"level": level},
    )
    return gym.make(spec, **kwargs)
