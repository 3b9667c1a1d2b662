"""The ranges of a result row's values: what the one writer refuses and the one reader skips.

:func:`check_row_values` is called by :func:`acdb_gym.results.format_row` before a row is
written and by :func:`acdb_gym.results.read_results` after a line is parsed, so a results file
holds only rows the reader accepts and a row planted in one by hand is skipped (by the report)
or refused (by a resume) with its file and line, never passed on. Each bound is there because
a value past it made ``acdb report`` misbehave (SECURITY.md, "Every file read back is hostile
input"):

- **Names** that become parts of file names (``job_id``: the transcript; ``ladder``: the
  report's CSVs and plots; ``level``) are :data:`~acdb_gym.core.untrusted.NAME_PATTERN` names:
  no separator, no leading dot, at most 64 characters.
- **Texts** are bounded: ``error`` at :data:`MAX_ERROR_CHARS` (the writers clip it to
  :data:`ERROR_CHARS`), the agent at 4,096, the model an LLM row names at 256 (it becomes the
  agent row's label), ``panel``, ``tools`` and ``version`` at 64, a custom ``level_spec`` at
  4,096, and the spec must parse (within the custom level bounds) on ladder ``custom``.
- **Numbers** (the score fields of a latent level too): fractions (precision, recall, F1,
  efficiency) in ``[0, 1]``; counts, steps and
  times finite in ``[0, 10**12]``; token counts integers in ``[0, 10**15]``; ``manifest_index``
  in ``[0, 999]``; ``seed`` in ``[0, 2**63)``; ``repeat`` and ``draws`` in ``[0, 10**6]``.
- **Graphs**: a ``submission`` or ``revision`` has ``n_nodes`` in ``[1, 2000]`` (the largest
  ``d`` of any level) and equal to its level's ``d`` when the package knows the level, its
  edges name nodes inside it and form a valid mixed graph, a
  revision's targets are nodes, and a revision holds at most :data:`MAX_REVISION_CELLS`
  adjacency cells in all (``n_nodes ** 2`` per stated graph): its analysis builds every one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Protocol

from acdb_gym.core.ladders.custom import CUSTOM_BOUNDS, CUSTOM_LADDER, parse_level_spec
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS, SCORE_FIELDS
from acdb_gym.core.untrusted import check_name, is_safe_name
from acdb_gym.envs.hypotheses import RevisionRecord, graph_from_text

__all__ = [
    "ERROR_CHARS",
    "MAX_AGENT_CHARS",
    "MAX_COUNT",
    "MAX_ERROR_CHARS",
    "MAX_GRAPH_NODES",
    "MAX_MODEL_CHARS",
    "MAX_REVISION_CELLS",
    "MAX_TOKENS",
    "RowFields",
    "check_row_values",
    "clip_error",
    "row_problem",
]


class RowFields(Protocol):
    """The fields of :class:`acdb_gym.results.ResultRow` these checks read by name (the score
    fields are read by :func:`getattr`); declared here so that this module needs nothing of
    the results file's."""

    @property
    def job_id(self) -> str: ...

    @property
    def ladder(self) -> str: ...

    @property
    def level(self) -> str: ...

    @property
    def agent(self) -> str: ...

    @property
    def panel(self) -> str: ...

    @property
    def tools(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def error(self) -> str | None: ...

    @property
    def level_spec(self) -> str | None: ...

    @property
    def agent_config(self) -> Mapping[str, Any]: ...

    @property
    def submission(self) -> Mapping[str, Any] | None: ...

    @property
    def revision(self) -> Mapping[str, Any] | None: ...


MAX_ERROR_CHARS: Final = 16_384
"""The longest ``error`` a row holds."""

ERROR_CHARS: Final = 4_000
"""Where the writers (the sweep, inspect imports, MCP) cut an error's text."""

MAX_COUNT: Final = 1e12
"""The largest count, step number or time in seconds a row holds."""

MAX_TOKENS: Final = 10**15
"""The largest token count a row holds."""

MAX_GRAPH_NODES: Final = int(CUSTOM_BOUNDS["d"][1])
"""The most variables of a recorded graph: the largest ``d`` of any level (2000)."""

MAX_REVISION_CELLS: Final = 1 << 27
"""The most adjacency cells (``n_nodes ** 2`` per graph, over all graphs) of a revision
record: about 134 million, 270 MB as the report's boolean matrices."""

MAX_AGENT_CHARS: Final = 4096
"""The longest agent name (``rl:PATH`` holds a path)."""

MAX_MODEL_CHARS: Final = 256
"""The longest model name an agent's config holds (it becomes the agent row's label)."""

_MAX_MANIFEST_INDEX: Final = 999
_MAX_SEED: Final = 2**63 - 1
_MAX_REPEAT: Final = 10**6
_TEXT_LIMITS: Final = {
    "agent": MAX_AGENT_CHARS,
    "panel": 64,
    "tools": 64,
    "version": 64,
    "level_spec": 4096,
}
_UNIT_SUFFIXES: Final = ("_precision", "_recall", "_f1", "efficiency")
_NUMBER_FIELDS: Final = (
    *SCORE_FIELDS,
    *LATENT_SCORE_FIELDS,
    "steps",
    "invalid_actions",
    "wall_time",
)
"""Scores (a latent level's further ones too), steps and times: fractions (by their suffix) in
[0, 1], the rest counts."""
_INDEX_FIELDS: Final = {
    "manifest_index": _MAX_MANIFEST_INDEX,
    "seed": _MAX_SEED,
    "repeat": _MAX_REPEAT,
    "draws": _MAX_REPEAT,
}
_TOKEN_FIELDS: Final = ("tokens_in", "tokens_out", "tokens_cached_in", "tokens_cache_write")


def clip_error(text: str) -> str:
    """An error's text cut to :data:`ERROR_CHARS` characters, saying how much was cut.

    >>> clip_error("short")
    'short'
    >>> len(clip_error("x" * 10_000)) < 4_100
    True
    """
    if len(text) <= ERROR_CHARS:
        return text
    return f"{text[:ERROR_CHARS]}... ({len(text) - ERROR_CHARS} more characters)"


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_row_values(row: RowFields) -> None:
    """Refuse a row with a value outside its range (see the module docstring).

    Raises:
        ValueError: naming the job, the field and the value (cut to 60 characters).
    """
    problem = row_problem(row)
    if problem is not None:
        job = row.job_id if is_safe_name(row.job_id) else _short(row.job_id, 30)
        raise ValueError(f"row {job}: {problem}")


def row_problem(row: RowFields) -> str | None:
    """What :func:`check_row_values` refuses in ``row`` (naming the field and the value), or
    None for a row inside every range."""
    try:
        _check_names(row)
        _check_texts(row)
        _check_numbers(row)
        _check_graphs(row)
    except ValueError as error:
        return str(error)
    return None


def _check_names(row: RowFields) -> None:
    for name in ("job_id", "ladder", "level"):
        check_name(getattr(row, name), what=name)


def _check_texts(row: RowFields) -> None:
    if row.error is not None and len(row.error) > MAX_ERROR_CHARS:
        raise ValueError(
            f"error must be at most {MAX_ERROR_CHARS} characters, got {len(row.error)}"
        )
    for name, limit in _TEXT_LIMITS.items():
        value = getattr(row, name)
        if value is not None and len(value) > limit:
            raise ValueError(f"{name} must be at most {limit} characters, got {len(value)}")
    model = row.agent_config.get("model")
    if model is not None and (not isinstance(model, str) or len(model) > MAX_MODEL_CHARS):
        shown = len(model) if isinstance(model, str) else _short(model)
        raise ValueError(f"model must be at most {MAX_MODEL_CHARS} characters, got {shown}")
    if row.level_spec is not None:
        if row.ladder != CUSTOM_LADDER:
            raise ValueError(f"a level_spec belongs to ladder {CUSTOM_LADDER!r}, got {row.ladder}")
        try:
            parse_level_spec(row.level_spec)
        except ValueError as error:
            raise ValueError(f"level_spec: {error}") from None


def _check_numbers(row: RowFields) -> None:
    for name in _NUMBER_FIELDS:
        value = getattr(row, name)
        if value is None:
            continue
        if name.endswith(_UNIT_SUFFIXES):
            if not (math.isfinite(value) and 0 <= value <= 1):
                raise ValueError(f"{name} must be in [0, 1], got {_short(value)}")
        elif not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be finite and >= 0, got {_short(value)}")
        elif value > MAX_COUNT:
            raise ValueError(f"{name} must be at most {MAX_COUNT:g}, got {_short(value)}")
    for name, high in _INDEX_FIELDS.items():
        value = getattr(row, name)
        if value < 0:
            raise ValueError(f"{name} must be finite and >= 0, got {_short(value)}")
        if value > high:
            raise ValueError(f"{name} must be in [0, {high}], got {_short(value)}")
    for name in _TOKEN_FIELDS:
        value = getattr(row, name)
        if value is not None and not 0 <= value <= MAX_TOKENS:
            raise ValueError(f"{name} must be in [0, {MAX_TOKENS}], got {_short(value)}")


def _level_d(row: RowFields) -> int | None:
    """``d`` of the row's level, or None for a level this package does not know."""
    if row.level_spec is not None:
        return parse_level_spec(row.level_spec).d
    known = ALL_LADDERS.get(row.ladder, {}).get(row.level)
    return None if known is None else known.spec.d


def _nodes(record: Mapping[str, Any], what: str) -> int:
    n_nodes = record.get("n_nodes")
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, int):
        raise ValueError(f"{what} n_nodes must be an integer, got {_short(n_nodes)}")
    if not 1 <= n_nodes <= MAX_GRAPH_NODES:
        raise ValueError(f"{what} n_nodes must be in [1, {MAX_GRAPH_NODES}], got {n_nodes}")
    return n_nodes


def _check_d(n_nodes: int, d: int | None, what: str) -> None:
    if d is not None and n_nodes != d:
        raise ValueError(f"{what} n_nodes must be the level's d = {d}, got {n_nodes}")


def _check_graphs(row: RowFields) -> None:
    d = _level_d(row) if row.submission is not None or row.revision is not None else None
    if row.submission is not None:
        n_nodes = _nodes(row.submission, "submission")
        _check_d(n_nodes, d, "submission")
        graph = row.submission.get("graph")
        try:
            graph_from_text(graph, n_nodes=n_nodes)  # type: ignore[arg-type]
        except ValueError as error:
            raise ValueError(f"submission: {error}") from None
    if row.revision is not None:
        _check_revision(row.revision, d)


def _check_revision(revision: Mapping[str, Any], d: int | None) -> None:
    n_nodes = _nodes(revision, "revision")
    targets, before = revision.get("targets"), revision.get("before")
    if not isinstance(targets, list) or not isinstance(before, list):
        raise ValueError("revision targets and before must be lists")
    cells = n_nodes * n_nodes * (len(before) + 1)
    if cells > MAX_REVISION_CELLS:
        raise ValueError(
            f"revision of {len(before) + 1} graphs of {n_nodes} nodes holds {cells} cells "
            f"(at most {MAX_REVISION_CELLS})"
        )
    _check_d(n_nodes, d, "revision")
    bad = [t for t in targets if isinstance(t, bool) or not isinstance(t, int) or t >= n_nodes]
    bad += [t for t in targets if isinstance(t, int) and t < 0]
    if bad:
        raise ValueError(f"revision targets must be nodes in [0, {n_nodes}), got {_short(bad)}")
    try:
        RevisionRecord.from_dict(revision)
    except ValueError as error:
        raise ValueError(f"revision: {error}") from None
