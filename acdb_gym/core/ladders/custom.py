"""Custom levels: a :class:`LevelSpec` written as text, with seeds preflighted on demand.

The sweep runs the shipped ladders' levels on their manifests; a custom level is any
:class:`LevelSpec` given as ``field=value`` pairs, e.g. ``acdb sweep --custom-level
"D40:d=40,k=60,n_obs=1000,n_int=200,slack=0,standardized=true"``. Its levels belong to the
ladder :data:`CUSTOM_LADDER`. Fields take the :class:`LevelSpec` defaults when left out, and
``noise_var`` takes 1.0 (v1's noise variance); ``d``, ``k``, ``n_obs``, ``n_int`` and ``slack``
are required. ``slack_max=3`` (with ``slack=1``) hides the slack: each instance draws its own
from 1..3 and the budget no longer gives away ``|I*|`` (:class:`LevelSpec`). A ``NAME:`` prefix names the level; without one its name is ``d{d}-`` and the
first 8 hex digits of the SHA-256 of the spec's canonical text (:func:`format_level_spec`).

Its manifest is preflighted from :data:`CUSTOM_SEED_BASE` up, exactly as the shipped manifests
are (:func:`~acdb_gym.core.ladders.shipped.preflight`): the same spec gives the same seeds and digests in
every process, so a sweep worker rebuilds the level from the spec's text alone.

>>> spec = parse_level_spec("d=8, k=10, n_obs=200, n_int=50, slack=1, standardized=true")
>>> spec.noise_var, spec.standardized
(1.0, True)
>>> format_level_spec(spec)
'd=8,k=10,n_obs=200,n_int=50,noise_var=1.0,slack=1,standardized=true'
>>> format_level_spec(parse_level_spec("d=8,k=10,n_obs=200,n_int=50,slack=0,slack_max=2"))
'd=8,k=10,n_obs=200,n_int=50,noise_var=1.0,slack=0,slack_max=2'
>>> custom = parse_custom_level("small:d=8,k=10,n_obs=200,n_int=50,slack=1")
>>> level = custom.level(3)
>>> level.ladder, level.name, [entry.seed for entry in level.manifest]
('custom', 'small', [300000, 300001, 300002])
"""

from __future__ import annotations

import hashlib
import math
import re
import time
import typing
from dataclasses import MISSING, dataclass, fields
from typing import Any, Final

from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    Level,
    LevelSpec,
    ManifestEntry,
    get_level,
)
from acdb_gym.core.worlds.instance import (
    GenerationDeadlineError,
    Instance,
    InstanceGenerationError,
    OutOfBandError,
    generate_instance,
)
from acdb_gym.core.worlds.spec import LINEAR_GAUSSIAN

__all__ = [
    "CUSTOM_BOUNDS",
    "CUSTOM_DEFAULTS",
    "CUSTOM_LADDER",
    "CUSTOM_PREFLIGHT_SECONDS",
    "CUSTOM_SEED_BASE",
    "MAX_CUSTOM_SEEDS",
    "MAX_EPISODE_VALUES",
    "MAX_SKIPPED_SEEDS",
    "MIN_BAND_SHARE",
    "REGENERATION_SECONDS",
    "CustomLevel",
    "RegenerationError",
    "custom_manifest",
    "default_level_name",
    "episode_values",
    "format_level_spec",
    "parse_custom_level",
    "parse_level_spec",
    "regenerate_instance",
    "resolve_level",
]

CUSTOM_LADDER: Final = "custom"
"""The ladder name of every custom level (in jobs, result rows and reports)."""

CUSTOM_SEED_BASE: Final = 300_000
"""The first seed tried for a custom level's manifest (v0 uses 0 and up, v1 100 000, large
200 000): the manifest is the first seeds from here up whose instance generates. Every custom
level starts here, so two specs with the same ``d`` and ``k`` draw their first graphs alike."""

MAX_CUSTOM_SEEDS: Final = 1000
"""The most manifest seeds a custom level preflights."""

MAX_SKIPPED_SEEDS: Final = 50
"""The most seeds a custom level's preflight skips (no instance in ``MAX_ATTEMPTS`` draws)
before it gives up on the spec."""

MIN_BAND_SHARE: Final = 0.1
"""A level with an R²-sortability band skips the seeds whose sample lies outside it; its
preflight gives up once fewer than this share of the seeds it drew (after the first
:data:`MAX_SKIPPED_SEEDS`) had an instance."""

CUSTOM_PREFLIGHT_SECONDS: Final = 45.0
"""The wall-clock time a custom level's preflight may take before it gives up on the spec
(checked between draws; a manifest that is found never depends on it)."""

CUSTOM_BOUNDS: Final[dict[str, tuple[float, float]]] = {
    "d": (2, 2000),
    "n_obs": (4, 100_000),
    "n_int": (3, 100_000),
    "slack": (0, 1000),
    "noise_var": (1e-6, 1e6),
    "faithfulness_eps": (0, 0.5),
    "weight_low": (1e-3, 1e3),
    "weight_high": (1e-3, 1e3),
}
"""The closed range of each numeric field of a custom level (every shipped level lies inside):
sizes past these allocate gigabytes and values past these overflow or make every draw fail."""

MAX_OBS_VALUES: Final = 10_000_000
"""The most observational values (``n_obs x d``) of a custom level, 80 MB of float64."""

MAX_INT_VALUES: Final = 1_000_000
"""The most values of one intervention's sample (``n_int x d``) of a custom level."""

MAX_EPISODE_VALUES: Final = 50_000_000
"""The most float64 values one episode of a custom level may hold (400 MB): the observational
sample plus one interventional sample per experiment its budget allows,
:func:`episode_values`. The large ladder's d = 2000 level holds 48 million."""

REGENERATION_SECONDS: float = 30.0
"""The time the instances of custom levels a process regenerates from result rows (the
report's truth) may spend failing, in all. A spec a sweep ran generated each of its seeds
within the preflight's 45 s, so it never fails; a spec planted in a results file that draws no
instance fails once, is not tried again, and once this much time has gone to failures every
spec not yet regenerated fails at once, so such rows cost a bounded time."""

_MAX_DIGITS: Final = 30
"""The longest number a custom level's field takes (Python refuses int() past 4,300 digits)."""

CUSTOM_DEFAULTS: Final[dict[str, Any]] = {"noise_var": 1.0}
"""Values of the :class:`LevelSpec` fields without a default of their own that a custom level
may leave out."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")
"""A level name: a letter or digit, then up to 39 letters, digits or ``_.+-`` (it becomes part
of file names and env ids, so no separators)."""

_FIELD_TYPES: Final[dict[str, Any]] = {
    spec_field.name: typing.get_type_hints(LevelSpec)[spec_field.name]
    for spec_field in fields(LevelSpec)
}
_TRUE: Final = ("true", "yes", "1")
_FALSE: Final = ("false", "no", "0")


def _parse_value(name: str, text: str) -> Any:
    """``text`` as the type of the :class:`LevelSpec` field ``name``."""
    kind = _FIELD_TYPES[name]
    if kind == int | None:  # slack_max: an integer, or none for the default
        return None if text.lower() == "none" else _parse_value_of(name, int, text)
    return _parse_value_of(name, kind, text)


def _parse_value_of(name: str, kind: Any, text: str) -> Any:
    if kind is bool:
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise ValueError(f"{name} must be true or false, got {text!r}")
    if kind is int:
        if len(text) > _MAX_DIGITS or not re.fullmatch(r"[+-]?\d+", text):
            raise ValueError(f"{name} must be an integer, got {_short(text)}")
        return int(text)
    if kind is float:
        try:
            value = float(text) if len(text) <= _MAX_DIGITS else math.nan
        except ValueError:
            raise ValueError(f"{name} must be a number, got {_short(text)}") from None
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {_short(text)}")
        return value
    return text  # a string field (family, faithfulness_rule): LevelSpec checks its value


def parse_level_spec(text: str) -> LevelSpec:
    """A :class:`LevelSpec` from comma-separated ``field=value`` pairs.

    Field names are :class:`LevelSpec`'s. Fields left out take their defaults
    (:data:`CUSTOM_DEFAULTS` for ``noise_var``); booleans are ``true``/``false`` (or
    ``yes``/``no``, ``1``/``0``).

    Raises:
        ValueError: an item without ``=``, an unknown or repeated field, a value of the wrong
            type, a missing required field, or values :class:`LevelSpec` rejects; the message
            quotes the spec.
    """
    try:
        values = {**CUSTOM_DEFAULTS, **_pairs(text)}
        _check_bounds(values)
        return LevelSpec(**values)
    except ValueError as error:
        raise ValueError(f"custom level {_short(text)}: {error}") from None


def _short(text: str, limit: int = 80) -> str:
    """``repr(text)``, cut to about ``limit`` characters (error messages stay one short line)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} chars)"


def _check_bounds(values: dict[str, Any]) -> None:
    """Refuse sizes and values outside :data:`CUSTOM_BOUNDS`, :data:`MAX_OBS_VALUES` and
    :data:`MAX_INT_VALUES` before anything is allocated."""
    for name, (low, high) in CUSTOM_BOUNDS.items():
        if name in values and not low <= values[name] <= high:
            raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {values[name]}")
    d = values["d"]
    if values["n_obs"] * d > MAX_OBS_VALUES:
        raise ValueError(f"n_obs x d must be at most {MAX_OBS_VALUES}, got {values['n_obs'] * d}")
    if values["n_int"] * d > MAX_INT_VALUES:
        raise ValueError(f"n_int x d must be at most {MAX_INT_VALUES}, got {values['n_int'] * d}")
    slack = max(values.get("slack", 0), values.get("slack_max") or 0)
    total = (values["n_obs"] + (d - 1 + slack) * values["n_int"]) * d
    if total > MAX_EPISODE_VALUES:
        raise ValueError(
            f"an episode holds up to {total} values ((n_obs + (d - 1 + slack) x n_int) x d, "
            f"the observational sample and one sample per experiment the budget allows), "
            f"more than {MAX_EPISODE_VALUES}: lower n_int, n_obs, slack or d"
        )


def episode_values(spec: LevelSpec) -> int:
    """The most float64 values an episode of ``spec`` holds: the observational sample and one
    interventional sample of ``n_int`` for each experiment the largest budget allows
    (``|I*| <= d - 1``, plus the slack), ``(n_obs + max_interventions x n_int) x d``.

    >>> episode_values(parse_level_spec("d=8,k=10,n_obs=200,n_int=50,slack=1"))
    4800
    """
    return (spec.n_obs + spec.max_interventions * spec.n_int) * spec.d


def _pairs(text: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise ValueError("no fields given; write field=value pairs, e.g. d=40,k=60,...")
    for item in items:
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name or not value:
            raise ValueError(f"expected field=value, got {item!r}")
        if name not in _FIELD_TYPES:
            raise ValueError(f"unknown field {name!r}; fields: {', '.join(_FIELD_TYPES)}")
        if name in values:
            raise ValueError(f"field {name!r} is given twice")
        values[name] = _parse_value(name, value)
    missing = [
        spec_field.name
        for spec_field in fields(LevelSpec)
        if spec_field.default is MISSING
        and spec_field.name not in values
        and spec_field.name not in CUSTOM_DEFAULTS
    ]
    if missing:
        raise ValueError(f"missing required fields {', '.join(missing)}")
    return values


def format_level_spec(spec: LevelSpec) -> str:
    """The canonical text of ``spec``: the fields without a default and every field off its
    default, in declaration order, as :func:`parse_level_spec` reads them back."""
    items = []
    for spec_field in fields(LevelSpec):
        value = getattr(spec, spec_field.name)
        if spec_field.default is not MISSING and value == spec_field.default:
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        items.append(f"{spec_field.name}={text}")
    return ",".join(items)


@dataclass(frozen=True)
class CustomLevel:
    """A named custom level: its name in the ladder :data:`CUSTOM_LADDER` and its spec."""

    name: str
    spec: LevelSpec

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(
                f"a custom level name must be 1-40 letters, digits or _.+- (starting with a "
                f"letter or digit), got {self.name!r}"
            )

    @property
    def text(self) -> str:
        """The spec's canonical text (what jobs and result rows carry)."""
        return format_level_spec(self.spec)

    def level(self, seeds: int) -> Level:
        """The level with its first ``seeds`` manifest seeds (preflighted, cached)."""
        manifest = custom_manifest(self.spec, seeds)
        return Level(CUSTOM_LADDER, self.name, "custom", self.spec, manifest)


def default_level_name(spec: LevelSpec) -> str:
    """``d{d}-`` and the first 8 hex digits of the SHA-256 of the spec's canonical text."""
    return f"d{spec.d}-{hashlib.sha256(format_level_spec(spec).encode()).hexdigest()[:8]}"


def parse_custom_level(text: str) -> CustomLevel:
    """A custom level from ``[NAME:]field=value,...`` (see :func:`parse_level_spec`)."""
    name, sep, rest = text.partition(":")
    if sep and "=" not in name:
        spec = parse_level_spec(rest)
        try:
            return CustomLevel(name.strip(), spec)
        except ValueError as error:
            raise ValueError(f"custom level {_short(text)}: {error}") from None
    spec = parse_level_spec(text)
    return CustomLevel(default_level_name(spec), spec)


_MANIFESTS: dict[LevelSpec, list[ManifestEntry]] = {}
"""Preflighted seeds per spec in this process, extended as more are asked for."""


def custom_manifest(
    spec: LevelSpec, seeds: int, *, seconds: float | None = None
) -> tuple[ManifestEntry, ...]:
    """The first ``seeds`` seeds from :data:`CUSTOM_SEED_BASE` up whose instance of ``spec``
    generates, with digests; computed once per process and extended on demand (preflighting
    is deterministic, so every process finds the same ones).

    The preflight is bounded: it gives up after :data:`MAX_SKIPPED_SEEDS` seeds without an
    instance (seeds outside a level's R²-sortability band do not count: the band gives up
    below :data:`MIN_BAND_SHARE` of its seeds) or after ``seconds`` (default
    :data:`CUSTOM_PREFLIGHT_SECONDS`) of wall-clock time, naming the fields to change; a later
    request for more seeds than it found fails at once with the same message.

    Raises:
        ValueError: ``seeds`` outside ``[1, MAX_CUSTOM_SEEDS]``, or a spec whose instances
            cannot be generated within those bounds.
    """
    if not 1 <= seeds <= MAX_CUSTOM_SEEDS:
        raise ValueError(f"seeds must be in [1, {MAX_CUSTOM_SEEDS}], got {seeds}")
    known = _MANIFESTS.setdefault(spec, [])
    if len(known) < seeds and spec in _GAVE_UP:
        raise ValueError(_GAVE_UP[spec])
    limit = CUSTOM_PREFLIGHT_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + limit
    skipped = _SKIPPED.setdefault(spec, [0, 0])
    seed = known[-1].seed + 1 if known else CUSTOM_SEED_BASE
    while len(known) < seeds:
        why = ""
        try:
            instance = generate_instance(spec, seed, deadline=deadline)
            known.append(ManifestEntry(seed, instance.digest()))
        except OutOfBandError:
            skipped[1] += 1
            if skipped[1] > MAX_SKIPPED_SEEDS and len(known) < MIN_BAND_SHARE * skipped[1]:
                why = (
                    f"{skipped[1]} seeds' samples lay outside its R²-sortability band: widen "
                    f"r2_sortability_band (now {spec.r2_sortability_band:g})"
                )
        except InstanceGenerationError:
            skipped[0] += 1
            if skipped[0] > MAX_SKIPPED_SEEDS:
                why = f"{MAX_SKIPPED_SEEDS} seeds had no instance"
        except GenerationDeadlineError:
            why = f"the preflight ran out of its {limit:g} s"
        if why:
            _GAVE_UP[spec] = _cannot_generate(spec, len(known), seeds, why)
            raise ValueError(_GAVE_UP[spec])
        seed += 1
    return tuple(known[:seeds])


_GAVE_UP: dict[LevelSpec, str] = {}
"""The error of each spec whose preflight gave up in this process."""

_SKIPPED: dict[LevelSpec, list[int]] = {}
"""Seeds skipped so far per spec in this process, without an instance and outside the band
(the bounds count across extensions)."""


def _cannot_generate(spec: LevelSpec, found: int, seeds: int, why: str) -> str:
    """The error for a spec whose preflight gave up: what it found and which fields to change."""
    fields_to_change = (
        f"lower faithfulness_eps (now {spec.faithfulness_eps:g}) or k (now {spec.k} of "
        f"{spec.n_pairs} pairs), or narrow weight_low..weight_high (now {spec.weight_low:g}.."
        f"{spec.weight_high:g})"
    )
    if spec.family == LINEAR_GAUSSIAN and spec.faithfulness_rule != "redraw_edges":
        # Redrawing only the failing edges' weights is how the large ladder reaches d = 500.
        fields_to_change += (
            f", or set faithfulness_rule=redraw_edges (now {spec.faithfulness_rule})"
        )
    if spec.family != LINEAR_GAUSSIAN:
        fields_to_change += f", noise_var (now {spec.noise_var:g}) or family (now {spec.family})"
    return (
        f"custom level {format_level_spec(spec)!r} cannot be generated: found {found} of "
        f"{seeds} seeds ({why}); {fields_to_change}"
    )


class RegenerationError(LookupError):
    """The instance a result row names cannot be regenerated within the bounds (its spec
    draws no instance at its seed, or the time for failures ran out)."""


_SHIPPED_SPECS: Final = frozenset(
    level.spec for ladder in ALL_LADDERS.values() for level in ladder.values()
)
_FAILED_SPECS: dict[LevelSpec, str] = {}
_FAILED_SECONDS: list[float] = [0.0]


def regenerate_instance(spec: LevelSpec, seed: int) -> Instance:
    """The instance of ``(spec, seed)`` a result row names, for the report: a shipped level's
    as :func:`generate_instance` gives it; a custom spec's (which a row file may carry from
    anywhere) within :data:`REGENERATION_SECONDS` of failures in this process, a spec that
    failed once failing at once.

    Raises:
        RegenerationError: no instance within those bounds.
    """
    if spec not in _SHIPPED_SPECS:
        return _regenerate_custom(spec, seed)
    try:
        return generate_instance(spec, seed)
    except InstanceGenerationError as error:
        raise RegenerationError(str(error)) from None


def _regenerate_custom(spec: LevelSpec, seed: int) -> Instance:
    if spec in _FAILED_SPECS:
        raise RegenerationError(_FAILED_SPECS[spec])
    left = REGENERATION_SECONDS - _FAILED_SECONDS[0]
    if left <= 0:
        raise RegenerationError(f"the {REGENERATION_SECONDS:g} s for custom worlds ran out")
    start = time.monotonic()
    try:
        return generate_instance(spec, seed, deadline=start + left)
    except (InstanceGenerationError, GenerationDeadlineError) as error:
        _FAILED_SECONDS[0] += time.monotonic() - start
        _FAILED_SPECS[spec] = f"custom level {format_level_spec(spec)!r}: {error}"
        raise RegenerationError(_FAILED_SPECS[spec]) from None


def resolve_level(ladder: str, level: str, level_spec: str | None, seeds: int) -> Level:
    """The level a job or result row names: a shipped one by ladder and name, or, with
    ``level_spec`` (the canonical text a custom job carries), the custom level rebuilt with
    its first ``seeds`` manifest seeds.

    Raises:
        ValueError: an unknown shipped level, or a bad spec.
    """
    if not level_spec:
        return get_level(ladder, level)
    if ladder != CUSTOM_LADDER:
        raise ValueError(f"a level spec belongs to ladder {CUSTOM_LADDER!r}, got {ladder!r}")
    return CustomLevel(level, parse_level_spec(level_spec)).level(seeds)
