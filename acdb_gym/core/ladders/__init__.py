"""Ladders: named levels of worlds with manifests of preflighted seeds.

- :mod:`~acdb_gym.core.ladders.shipped`: v0, v1, the family ladders and ``large``, their
  manifests (``manifests/<ladder>.tsv``) and preflight (``python -m acdb_gym.core.ladders.shipped``);
- :mod:`~acdb_gym.core.ladders.custom`: custom levels, a :class:`LevelSpec` given as text.

A ladder only names worlds; how a world is drawn lives in :mod:`acdb_gym.core.worlds`.
"""

from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    LADDERS,
    LEVEL_NAMES,
    Level,
    LevelSpec,
    ManifestEntry,
    get_level,
)

__all__ = [
    "ALL_LADDERS",
    "LADDERS",
    "LEVEL_NAMES",
    "Level",
    "LevelSpec",
    "ManifestEntry",
    "get_level",
]
