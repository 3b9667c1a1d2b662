"""What both environments share about a level's episodes: which instance a reset asks for,
the argument checks, the reward of a scored episode and the end-of-episode info."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from acdb_gym.core.ladders.shipped import Level
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS, SCORE_FIELDS, ScoreReport
from acdb_gym.core.types import is_integer
from acdb_gym.core.worlds.instance import (
    Instance,
    draw_instance,
    draw_seed,
    generate_instances,
    seeds_known_ahead,
)
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.envs.observations import observation_slots

__all__ = [
    "UNSCORED",
    "RewardName",
    "check_choice",
    "check_level_arguments",
    "check_seed",
    "choose_instance",
    "final_info_copy",
    "reward_of",
    "score_fields",
    "score_info",
]

RewardName = Literal["directed_f1", "neg_shd", "skeleton_f1"]
"""The final reward an env gives: directed F1, skeleton F1, or minus the SHD."""


def score_fields(level: Level) -> tuple[str, ...]:
    """The entries of ``info["score"]`` on ``level``: :data:`SCORE_FIELDS`, and on a level with
    hidden confounders :data:`LATENT_SCORE_FIELDS` after them (the fields its reports hold)."""
    return SCORE_FIELDS + (LATENT_SCORE_FIELDS if level.spec.latent else ())


UNSCORED = -1.0
"""Every entry of ``info["score"]`` before the end: no score field can be negative, and a NaN
would make Gymnasium's checker find two equal infos unequal (``nan != nan``)."""


def score_info(fields: tuple[str, ...], report: ScoreReport | None = None) -> np.ndarray:
    """``info["score"]`` (DESIGN §8, "info"): the score fields ``fields`` in their order as one
    float64 array, each :data:`UNSCORED` before the end (``report`` None), so the info has the
    same keys, shapes and types at every step (``info["scored"]`` says which); at the end a
    field the report leaves undefined (NaN: an unstated ``anytime_f1``) is UNSCORED as well.
    ``dict(zip(fields, info["score"]))`` names them; ``env.unwrapped.details()["score"]`` is
    the report itself once scored.

    >>> score_info(("shd", "directed_f1")).tolist()
    [-1.0, -1.0]
    """
    if report is None:
        return np.full(len(fields), UNSCORED)
    values = np.array([float(getattr(report, name)) for name in fields])
    # A field the episode leaves undefined (the anytime F1 of an agent that stated no graph,
    # DESIGN §6) reads UNSCORED too: NaN would make two equal infos unequal.
    return np.where(np.isnan(values), UNSCORED, values)


def final_info_copy(final_info: dict[str, Any]) -> dict[str, Any]:
    """The end-of-episode info for one step: its score is a new dict every time, so editing
    what one step returned never changes what a later step returns."""
    return {**final_info, "score": dict(final_info["score"])}


def reward_of(report: ScoreReport, reward: RewardName) -> float:
    """The final reward of an episode scored ``report``: its ``directed_f1`` or
    ``skeleton_f1``, or minus its SHD for ``"neg_shd"``."""
    if reward == "neg_shd":
        return -float(report.shd)
    return float(getattr(report, reward))


def check_seed(seed: object) -> int | None:
    """A ``reset`` seed: None, or a non-negative integer (a NumPy integer becomes an ``int``).

    Raises:
        ValueError: any other value (a float, a bool, a string, a negative number), named.

    >>> check_seed(np.int64(3)), check_seed(None)
    (3, None)
    """
    if seed is None:
        return None
    if not is_integer(seed) or seed < 0:
        raise ValueError(f"seed must be None or a non-negative integer, got {seed!r:.60}")
    return int(seed)


def check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    """ValueError naming ``name`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")


def choose_instance(level: Level, options: object, rng: np.random.Generator) -> Instance:
    """The instance a ``reset(options=...)`` asks for: ``{"instance": inst}`` (checked to fit
    the level), ``{"manifest_index": i}``, or else (``None`` or ``{}``) a fresh draw from ``rng``.

    Raises:
        ValueError: options that are not a dict, an unknown key, a ``manifest_index`` that is not
            an integer in range, an ``instance`` that is not an :class:`Instance` of the level's
            shape. Each message names the option.
    """
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ValueError(f"reset options must be a dict, got {type(options).__name__} {options!r}")
    unknown = set(options) - {"manifest_index", "instance"}
    if unknown:
        raise ValueError(f"unknown reset options {sorted(map(str, unknown))}")
    if "instance" in options and "manifest_index" in options:
        raise ValueError("reset options 'instance' and 'manifest_index' exclude each other")
    if "instance" in options:
        instance = options["instance"]
        if not isinstance(instance, Instance):
            raise ValueError(f"options['instance'] must be an Instance, got {instance!r}")
        spec = level.spec
        shape = (instance.spec.d, instance.spec.n_obs, instance.spec.n_int)
        slots = observation_slots(spec)
        if shape != (spec.d, spec.n_obs, spec.n_int) or instance.budget > slots:
            raise ValueError(
                f"injected instance (d, n_obs, n_int) = {shape} with budget {instance.budget} "
                f"does not fit level {level.name} {(spec.d, spec.n_obs, spec.n_int)} with at "
                f"most {slots} interventions"
            )
        return instance
    if "manifest_index" in options:
        index = options["manifest_index"]
        if not is_integer(index):
            raise ValueError(
                "options['manifest_index'] must be an integer in "
                f"[0, {len(level.manifest)}), got {type(index).__name__} {index!r}"
            )
        return level.instance(int(index))
    return _fresh_instance(level, rng)


_DrawKey = tuple[LevelSpec, int, str]
"""What a recent draw is remembered by: the level's spec, the seeds' floor and the generator's
state before the draw."""

_RECENT_DRAWS: OrderedDict[_DrawKey, tuple[Instance, Mapping[str, Any]]] = OrderedDict()
_RECENT_DRAWS_KEPT = 2


def _draw_key(level: Level, rng: np.random.Generator, low: int) -> _DrawKey:
    return (level.spec, low, repr(rng.bit_generator.state))


def _recall(key: _DrawKey, rng: np.random.Generator) -> Instance | None:
    """The instance drawn last from this key's state, its generator put where that draw left
    it; None if not remembered."""
    if key not in _RECENT_DRAWS:
        return None
    instance, state_after = _RECENT_DRAWS[key]
    _RECENT_DRAWS.move_to_end(key)
    rng.bit_generator.state = state_after
    return instance


def _remember(key: _DrawKey, instance: Instance, state_after: Mapping[str, Any]) -> None:
    _RECENT_DRAWS[key] = (instance, state_after)
    while len(_RECENT_DRAWS) > _RECENT_DRAWS_KEPT:
        _RECENT_DRAWS.popitem(last=False)


def _fresh_instance(level: Level, rng: np.random.Generator, low: int = 0) -> Instance:
    """``draw_instance(level.spec, rng, low=low)`` (with ``low = 0``, ``generate_instance(
    level.spec, rng)``), remembering the last two draws by the generator's state: a reset with
    the same seed again (Gymnasium's checker does it a dozen times; so do evaluation loops)
    gets the same immutable instance without regenerating it (2 s at d = 1,000), and the
    generator is left exactly where generating leaves it."""
    key = _draw_key(level, rng, low)
    instance = _recall(key, rng)
    if instance is None:
        instance = draw_instance(level.spec, rng, low=low)
        _remember(key, instance, rng.bit_generator.state)
    return instance


def fresh_instances(
    level: Level, rngs: Sequence[np.random.Generator], *, low: int = 0
) -> list[Instance]:
    """``[choose_instance(level, None, rng) for rng in rngs]``: each generator draws its
    world's seed (or finds its recent draw, and is left where that draw left it), and the
    worlds not kept already are generated together
    (:func:`~acdb_gym.core.worlds.instance.generate_instances`); one at a time where the seeds
    cannot be read ahead (:func:`~acdb_gym.core.worlds.instance.seeds_known_ahead`). With
    ``low``, each seed is drawn from ``[low, WORLD_SEED_BOUND)`` instead
    (:func:`~acdb_gym.core.worlds.instance.draw_seed`)."""
    if not seeds_known_ahead(level.spec):
        return [_fresh_instance(level, rng, low) for rng in rngs]
    keys = [_draw_key(level, rng, low) for rng in rngs]
    recent: dict[int, Instance] = {}
    seeds: dict[int, int] = {}
    states: dict[int, Mapping[str, Any]] = {}
    for k, (key, rng) in enumerate(zip(keys, rngs, strict=True)):
        found = _recall(key, rng)
        if found is not None:
            recent[k] = found
        else:
            seeds[k] = draw_seed(rng, low)
            states[k] = rng.bit_generator.state
    drawn = dict(zip(seeds, generate_instances(level.spec, list(seeds.values())), strict=True))
    for k, instance in drawn.items():
        _remember(keys[k], instance, states[k])
    return [recent[k] if k in recent else drawn[k] for k in range(len(keys))]


def check_level_arguments(level: object, ladder: object) -> None:
    """ValueError unless ``level`` is a level name or a :class:`Level` and ``ladder`` a name."""
    if not isinstance(level, str | Level):
        raise ValueError(f"level must be a level name or a Level, got {level!r}")
    if not isinstance(ladder, str):
        raise ValueError(f"ladder must be a ladder name, got {ladder!r}")
