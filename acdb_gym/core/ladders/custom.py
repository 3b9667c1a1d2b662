"""Custom levels: a :class:`LevelSpec` written as text, with seeds preflighted on demand.

The sweep runs the shipped ladders' levels on their manifests; a custom level is any
:class:`LevelSpec` given as ``field=value`` pairs, e.g. ``acdb sweep --custom-level
"D40:d=40,k=60,n_obs=1000,n_int=200,slack=0,standardized=true"``. Its levels belong to the
ladder :data:`CUSTOM_LADDER`. Fields take the :class:`LevelSpec` defaults when left out, and
``noise_var`` takes 1.0 (v1's noise variance); ``d``, ``k``, ``n_obs``, ``n_int`` and ``slack``
are required. A ``NAME:`` prefix names the level; without one its name is ``d{d}-`` and the
first 8 hex digits of the SHA-256 of the spec's canonical text (:func:`format_level_spec`).

Its manifest is preflighted from :data:`CUSTOM_SEED_BASE` up, exactly as the shipped manifests
are (:func:`~acdb_gym.core.ladders.shipped.preflight`): the same spec gives the same seeds and digests in
every process, so a sweep worker rebuilds the level from the spec's text alone.

>>> spec = parse_level_spec("d=8, k=10, n_obs=200, n_int=50, slack=1, standardized=true")
>>> spec.noise_var, spec.standardized
(1.0, True)
>>> format_level_spec(spec)
'd=8,k=10,n_obs=200,n_int=50,noise_var=1.0,slack=1,standardized=true'
>>> custom = parse_custom_level("small:d=8,k=10,n_obs=200,n_int=50,slack=1")
>>> level = custom.level(3)
>>> level.ladder, level.name, [entry.seed for entry in level.manifest]
('custom', 'small', [300000, 300001, 300002])
"""

from __future__ import annotations

import hashlib
import math
import re
import typing
from dataclasses import MISSING, dataclass, fields
from typing import Any, Final

from acdb_gym.core.ladders.shipped import Level, LevelSpec, ManifestEntry, get_level, preflight

__all__ = [
    "CUSTOM_DEFAULTS",
    "CUSTOM_LADDER",
    "CUSTOM_SEED_BASE",
    "MAX_CUSTOM_SEEDS",
    "CustomLevel",
    "custom_manifest",
    "default_level_name",
    "format_level_spec",
    "parse_custom_level",
    "parse_level_spec",
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
    if kind is bool:
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise ValueError(f"{name} must be true or false, got {text!r}")
    if kind is int:
        if not re.fullmatch(r"[+-]?\d+", text):
            raise ValueError(f"{name} must be an integer, got {text!r}")
        return int(text)
    if kind is float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {text!r}")
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
        return LevelSpec(**{**CUSTOM_DEFAULTS, **_pairs(text)})
    except ValueError as error:
        raise ValueError(f"custom level {text!r}: {error}") from None


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
            raise ValueError(f"custom level {text!r}: {error}") from None
    spec = parse_level_spec(text)
    return CustomLevel(default_level_name(spec), spec)


_MANIFESTS: dict[LevelSpec, list[ManifestEntry]] = {}
"""Preflighted seeds per spec in this process, extended as more are asked for."""


def custom_manifest(spec: LevelSpec, seeds: int) -> tuple[ManifestEntry, ...]:
    """The first ``seeds`` seeds from :data:`CUSTOM_SEED_BASE` up whose instance of ``spec``
    generates, with digests; computed once per process and extended on demand (preflighting
    is deterministic, so every process finds the same ones).

    Raises:
        ValueError: ``seeds`` outside ``[1, MAX_CUSTOM_SEEDS]``.
    """
    if not 1 <= seeds <= MAX_CUSTOM_SEEDS:
        raise ValueError(f"seeds must be in [1, {MAX_CUSTOM_SEEDS}], got {seeds}")
    known = _MANIFESTS.setdefault(spec, [])
    if len(known) < seeds:
        start = known[-1].seed + 1 if known else CUSTOM_SEED_BASE
        known.extend(preflight(spec, start, seeds - len(known)))
    return tuple(known[:seeds])


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
