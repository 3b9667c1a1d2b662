"""The results file of a sweep: its name, its typed row, its one appender and its one reader.

Over 500 lines because the row's schema, the appender and the reader are one contract (what
the appender writes is exactly what the reader accepts, checked against the same field types)
and each part is short; most of the length is the row's documented fields.

A run directory holds :data:`RESULTS_FILE`, one JSON object per line, one line per finished job
(DESIGN §10). Every line is written by :class:`ResultsAppender` as
``json.dumps(row, sort_keys=True) + "\\n"`` in a single ``os.write`` on an ``O_APPEND``
descriptor followed by ``fsync``, so a crash can only leave a torn *last* line behind.

:func:`read_results` reads the file in one of two modes:

- ``"strict"`` (the sweep's resume): any unreadable line raises :class:`ResultsFileError`, except
  a torn last line, which is dropped with a warning (and, with ``repair=True``, cut from the file
  so that the next row starts on a fresh line).
- ``"lenient"`` (reports, experiments): unreadable lines are skipped and returned as problems.

Every problem names the file and the 1-based line number (``PATH:LINE: what``): a torn last line,
invalid UTF-8, NUL bytes, invalid JSON, JSON that is not an object, or an object that is not a
row (a missing key, a value of the wrong type), and everything the file may hold because
someone else wrote it: a line past :data:`MAX_LINE_BYTES` (skipped without being read whole),
JSON nested too deeply or with an integer too long (:func:`acdb_gym.core.untrusted.loads`),
and values outside their ranges (:func:`acdb_gym.row_values.check_row_values`: the writer
refuses the same). The file is read a line at a time.
"""

from __future__ import annotations

import json
import math
import os
import types
import typing
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Final, Literal

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.core.untrusted import Line, UntrustedInputError, iter_lines, loads, open_nofollow
from acdb_gym.envs.hypotheses import RevisionRecord, graph_from_text
from acdb_gym.row_values import check_row_values, row_problem

__all__ = [
    "MAX_LINE_BYTES",
    "NUMERIC_COLUMNS",
    "RESULTS_FILE",
    "Location",
    "NumericField",
    "ReadMode",
    "ResultRow",
    "ResultsAppender",
    "ResultsFileError",
    "ResultsRead",
    "check_row_values",
    "example_row",
    "format_row",
    "load_run",
    "read_results",
    "row_scores",
]

RESULTS_FILE: Final = "results.jsonl"
"""The results file's name inside a run directory."""

ReadMode = Literal["strict", "lenient"]
Status = Literal["ok", "failed"]


# --------------------------------------------------------------------------- errors
@dataclass(frozen=True)
class Location:
    """Where a row is: a results file and, when it is already in the file, its 1-based line."""

    path: Path
    line: int | None = None

    def __str__(self) -> str:
        return str(self.path) if self.line is None else f"{self.path}:{self.line}"


class ResultsFileError(ValueError):
    """A results file, or a row meant for one, that is not a valid result row.

    The message reads ``PATH:LINE: problem``.

    Attributes:
        where: the file and line.
        problem: what is wrong, without the location.
    """

    def __init__(self, where: Location, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem

    @property
    def path(self) -> Path:
        """The results file."""
        return self.where.path

    @property
    def line(self) -> int | None:
        """The 1-based line number (None for a row not yet written)."""
        return self.where.line

    def __reduce__(self) -> tuple[Any, ...]:
        # The default pickling passes the message as the only argument: rebuild from the parts.
        return (type(self), (self.where, self.problem))


# --------------------------------------------------------------------------- the row
_LATENT_FIELDS: Final = (
    "bidirected_precision",
    "bidirected_recall",
    "bidirected_f1",
    "pag_arrowhead_precision",
    "pag_arrowhead_recall",
    "pag_arrowhead_f1",
    "pag_tail_precision",
    "pag_tail_recall",
    "pag_tail_f1",
    "shd_mistyped",
)
"""The further score columns of a latent level's rows (the names of
:data:`acdb_gym.core.scoring.LATENT_SCORE_FIELDS`, checked equal by the tests)."""

_OPTIONAL: Final = frozenset(
    {
        "agent_stats",
        "anytime_f1",
        "level_spec",
        "privileged",
        "revision",
        "submission",
        "tokens_cached_in",
        "tokens_cache_write",
        *_LATENT_FIELDS,
    }
)
"""Keys a row may lack: failed rows carry no agent statistics, rows written before rows
recorded privileged access do not say, only agents that state hypotheses have a revision
record, rows written before it and episodes whose anytime F1 is undefined have no
``anytime_f1``, only agents that report prompt caching (LLM agents) have its token counts, and only
custom levels' rows carry their spec, only single-draw jobs whose env reports the scored
graph have a submission, and only rows of a level with hidden confounders have the latent
score columns."""

NumericField = Literal[
    "skeleton_precision",
    "skeleton_recall",
    "skeleton_f1",
    "compelled_precision",
    "compelled_recall",
    "compelled_f1",
    "directed_precision",
    "directed_recall",
    "directed_f1",
    "shd",
    "shd_extra",
    "shd_missing",
    "shd_reversed",
    "shd_unresolved",
    "interventions_used",
    "i_star_size",
    "efficiency",
    "essential_f1",
    "anytime_f1",
    "bidirected_precision",
    "bidirected_recall",
    "bidirected_f1",
    "pag_arrowhead_precision",
    "pag_arrowhead_recall",
    "pag_arrowhead_f1",
    "pag_tail_precision",
    "pag_tail_recall",
    "pag_tail_f1",
    "shd_mistyped",
    "steps",
    "invalid_actions",
    "wall_time",
    "tokens_in",
    "tokens_out",
]
"""The numeric columns of a row (:meth:`ResultRow.value`): every score field, the latent
ones, steps, invalid actions, the wall time and the token counts."""

NUMERIC_COLUMNS: Final[tuple[NumericField, ...]] = typing.get_args(NumericField)
"""Every :data:`NumericField`, in order: the score fields (those of
:data:`~acdb_gym.core.scoring.SCORE_FIELDS`, then the latent ones), then the rest."""


@dataclass(frozen=True, kw_only=True)
class ResultRow:
    """One line of the results file: one job of the sweep, successful or failed.

    The score fields are those of :class:`acdb_gym.core.scoring.ScoreReport`. A job of several
    draws (``random``: 100) writes their means, so counts such as ``shd`` may be fractional; a
    ``failed`` row has ``None`` for every score field, for ``steps``, ``invalid_actions``,
    ``truncated`` and the token counts, ``draws == 0``, and no ``agent_stats``. Numbers typed
    ``float`` also accept integers, as JSON does.

    Attributes:
        anytime_f1: the anytime F1 (DESIGN §6); absent (None) when it is undefined (the agent
            spent experiments without stating a graph with the first) and in rows written
            before it existed.
        bidirected_precision ... shd_mistyped: the further score fields of a level with
            hidden confounders (DESIGN §6.3); absent (None) on every other level.
        tokens_in: prompt tokens, including those read from or written to a prompt cache.
        tokens_cached_in: of ``tokens_in``, those read from the provider's prompt cache (billed
            at the cached-input price); None for agents that do not report it.
        tokens_cache_write: of ``tokens_in``, those written to the prompt cache (Anthropic's
            cache-write price); None for agents that do not report it.
        agent_stats: the agent's own episode statistics; None when the row has none (failed).
        privileged: the agent was handed the hidden instance (the oracle); None in rows
            written before rows recorded it.
        level_spec: a custom level's spec as canonical text
            (:func:`acdb_gym.core.ladders.custom.format_level_spec`), from which the level and
            its seeds are rebuilt; absent (None) on the shipped ladders' rows.
        revision: the hypotheses an agent stated before each experiment and its submission,
            in the compact form of :meth:`acdb_gym.envs.hypotheses.RevisionRecord.to_dict`
            (``{"n_nodes", "targets", "before", "final"}``, graphs as ``"0>1,2-3"`` strings);
            present only for agents that state hypotheses (``states_hypotheses``).
        submission: the scored graph of a single-draw job, ``{"n_nodes": d, "graph": "0>1,2-3"}``
            (:func:`acdb_gym.envs.hypotheses.graph_to_text`); absent from rows of several draws
            (``random``), failed rows and rows written before rows recorded it.
        extras: keys this version does not know (from an older or newer package), kept so that
            :meth:`to_dict` gives back the row as read.
    """

    job_id: str
    ladder: str
    level: str
    manifest_index: int
    seed: int
    agent: str
    agent_config: Mapping[str, Any] = field(hash=False)
    panel: str
    tools: str
    repeat: int
    version: str
    status: Status
    error: str | None
    skeleton_precision: float | None
    skeleton_recall: float | None
    skeleton_f1: float | None
    compelled_precision: float | None
    compelled_recall: float | None
    compelled_f1: float | None
    directed_precision: float | None
    directed_recall: float | None
    directed_f1: float | None
    shd: float | None
    shd_extra: float | None
    shd_missing: float | None
    shd_reversed: float | None
    shd_unresolved: float | None
    interventions_used: float | None
    i_star_size: float | None
    efficiency: float | None
    essential_f1: float | None
    anytime_f1: float | None = None
    bidirected_precision: float | None = None
    bidirected_recall: float | None = None
    bidirected_f1: float | None = None
    pag_arrowhead_precision: float | None = None
    pag_arrowhead_recall: float | None = None
    pag_arrowhead_f1: float | None = None
    pag_tail_precision: float | None = None
    pag_tail_recall: float | None = None
    pag_tail_f1: float | None = None
    shd_mistyped: float | None = None
    steps: float | None
    invalid_actions: int | None
    truncated: bool | None
    draws: int
    tokens_in: int | None
    tokens_out: int | None
    tokens_cached_in: int | None = None
    tokens_cache_write: int | None = None
    wall_time: float
    agent_stats: Mapping[str, Any] | None = field(default=None, hash=False)
    privileged: bool | None = None
    level_spec: str | None = None
    revision: Mapping[str, Any] | None = field(default=None, hash=False)
    submission: Mapping[str, Any] | None = field(default=None, hash=False)
    extras: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        shadowed = sorted(set(self.extras) & set(_ROW_FIELDS))
        if shadowed:
            raise ValueError(f"extras must not repeat row fields, got {shadowed}")

    @classmethod
    def from_dict(cls, data: object, *, where: Location) -> ResultRow:
        """Check a parsed JSON value and build the row.

        Args:
            data: the value of one line (any JSON value).
            where: the file and line, for the error message.

        Raises:
            ResultsFileError: ``data`` is not an object, lacks a key, or has a value of the
                wrong type (e.g. a ``job_id`` that is a list, a status other than ``"ok"`` or
                ``"failed"``).
        """
        if not isinstance(data, Mapping):
            raise ResultsFileError(where, f"not a JSON object but {_json_kind(data)}")
        values: dict[str, Any] = {}
        for name, hint in _ROW_FIELDS.items():
            if name not in data:
                continue
            value = data[name]
            if not _matches(value, hint):
                raise ResultsFileError(
                    where, f"{name} must be {_describe(hint)}, got {_short_repr(value)}"
                )
            values[name] = dict(value) if isinstance(value, Mapping) else value
        missing = [name for name in _ROW_FIELDS if name not in data and name not in _OPTIONAL]
        if missing:
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ResultsFileError(where, f"missing keys {', '.join(missing[:5])}{more}")
        extras = {key: value for key, value in data.items() if key not in _ROW_FIELDS}
        return cls(**values, extras=extras)

    @classmethod
    def parse(cls, data: object, *, where: Location) -> ResultRow:
        """:meth:`from_dict` and the values' ranges (:func:`check_row_values`): the row the
        reader accepts, or :class:`ResultsFileError` naming what it refuses.

        Raises:
            ResultsFileError: as :meth:`from_dict`, or a value out of its range.
        """
        row = cls.from_dict(data, where=where)
        problem = row_problem(row)
        if problem is not None:
            raise ResultsFileError(where, problem)
        return row

    @property
    def ok(self) -> bool:
        """Whether the job succeeded (``status == "ok"``)."""
        return self.status == "ok"

    @property
    def instance_key(self) -> tuple[str, str, int]:
        """``(ladder, level, manifest_index)``: the instance the job ran on."""
        return (self.ladder, self.level, self.manifest_index)

    @property
    def model(self) -> str | None:
        """The model an LLM agent's config names, or None."""
        model = self.agent_config.get("model")
        return model if isinstance(model, str) else None

    def value(self, name: NumericField) -> float:
        """A numeric column as a float; NaN where the row holds none (a failed row's scores,
        an undefined anytime F1, a latent column on a causally sufficient level).

        >>> row = ResultRow.parse(example_row(directed_f1=0.5), where=Location(Path("-")))
        >>> row.value("directed_f1"), row.value("bidirected_f1")
        (0.5, nan)
        """
        value = getattr(self, name)
        return math.nan if value is None else float(value)

    def revision_record(self) -> RevisionRecord | None:
        """The ``revision`` record as its type, or None for a row without one.

        Raises:
            ValueError: a record that does not parse (never for a row the reader accepted:
                :func:`check_row_values` parses it).
        """
        return None if self.revision is None else RevisionRecord.from_dict(self.revision)

    def submitted_graph(self) -> PDAG | None:
        """The graph of ``submission``, else the revision record's final graph, or None.

        Raises:
            ValueError: a recorded graph that does not parse (as :meth:`revision_record`).
        """
        if self.submission is not None:
            n_nodes = self.submission.get("n_nodes")
            if isinstance(n_nodes, bool) or not isinstance(n_nodes, int):
                raise ValueError(f"submission n_nodes must be an integer, got {n_nodes!r}")
            return graph_from_text(self.submission.get("graph"), n_nodes=n_nodes)  # type: ignore[arg-type]
        record = self.revision_record()
        return None if record is None else record.final

    def score_columns(self) -> tuple[tuple[str, float | None], ...]:
        """The score columns (:data:`~acdb_gym.core.scoring.SCORE_FIELDS`) the row holds, in
        the contract's order, with their values (a failed row's are None; an absent
        ``anytime_f1`` is left out)."""
        return tuple(
            (name, getattr(self, name))
            for name in SCORE_FIELDS
            if name not in _OPTIONAL or getattr(self, name) is not None
        )

    def to_dict(self) -> dict[str, Any]:
        """The row as written to the file: equal to the dict :meth:`from_dict` was given."""
        row = {name: getattr(self, name) for name in _ROW_FIELDS}
        for name in _OPTIONAL:
            if row[name] is None:
                del row[name]
        for name in ("agent_config", "agent_stats", "revision", "submission"):
            if name in row:
                row[name] = dict(row[name])
        row.update(self.extras)
        return row


def _row_fields() -> dict[str, Any]:
    hints = typing.get_type_hints(ResultRow)
    row_fields = {f.name: hints[f.name] for f in fields(ResultRow) if f.name != "extras"}
    # An optional key must hold a value when present: only its absence means None.
    for name in _OPTIONAL:
        row_fields[name] = _without_none(row_fields[name])
    return row_fields


def _without_none(hint: Any) -> Any:
    args = tuple(arg for arg in typing.get_args(hint) if arg is not type(None))
    return args[0] if len(args) == 1 else hint


def _matches(value: object, hint: Any) -> bool:
    """Whether a JSON value fits a field type (str, int, float, bool, None, Literal, Mapping)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in typing.get_args(hint))
    if origin is Literal:
        return isinstance(value, str) and value in typing.get_args(hint)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is Mapping:
        return isinstance(value, Mapping)
    raise TypeError(f"no JSON check for field type {hint!r}")  # pragma: no cover - a new field


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in typing.get_args(hint))
    if origin is Literal:
        return " or ".join(repr(arg) for arg in typing.get_args(hint))
    names = {type(None): "null", bool: "a boolean", int: "an integer", float: "a number"}
    return names.get(hint, "a string" if hint is str else "an object")


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"


def _short_repr(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_ROW_FIELDS: Final = _row_fields()
"""Every key of a row and its type, in declaration order."""


def example_row(**fields: Any) -> dict[str, Any]:
    """A complete ``ok`` row as the file holds it (agent ``pc`` on v0 L0, manifest index 0,
    every score 0 but η 1), with ``fields`` replacing or adding keys: for examples, tests and
    hand-made rows. ``status="failed"`` makes a failed row (no scores, no steps, no draws).

    >>> example_row(directed_f1=0.5)["directed_f1"], example_row()["status"]
    (0.5, 'ok')
    """
    row: dict[str, Any] = {
        "job_id": "example",
        "ladder": "v0",
        "level": "L0",
        "manifest_index": 0,
        "seed": 0,
        "agent": "pc",
        "agent_config": {},
        "panel": "observational",
        "tools": "raw",
        "repeat": 0,
        "version": "0",
        "status": "ok",
        "error": None,
        **{name: 0 for name in SCORE_FIELDS if name != "anytime_f1"},
        "efficiency": 1.0,
        "steps": 1,
        "invalid_actions": 0,
        "truncated": False,
        "draws": 1,
        "tokens_in": None,
        "tokens_out": None,
        "wall_time": 0.0,
    }
    if fields.get("status") == "failed":
        row.update(row_scores(dict.fromkeys(SCORE_FIELDS), failed=True))
        row.update(steps=None, invalid_actions=None, truncated=None, draws=0)
        row["error"] = "failed"
    row.update(fields)
    return row


# --------------------------------------------------------------------------- writing
MAX_LINE_BYTES: Final = 16 << 20
"""The longest line of a results file (16 MiB): the writer refuses a longer row and the reader
skips a longer line without reading it whole."""


def row_scores(score: Mapping[str, Any], *, failed: bool = False) -> dict[str, Any]:
    """A score dict (``ScoreReport.to_dict``'s names) as row columns: an undefined (NaN)
    ``anytime_f1`` is left out, as an optional key is absent rather than null; a ``failed``
    row gets None for every required score column and no optional one.

    >>> row_scores({"directed_f1": 0.5, "anytime_f1": float("nan")})
    {'directed_f1': 0.5}
    >>> row_scores({"directed_f1": 0.5, "anytime_f1": 0.4}, failed=True)
    {'directed_f1': None}
    """
    if failed:
        return {name: None for name in score if name not in _OPTIONAL}
    return {
        name: value
        for name, value in score.items()
        if not (
            name in _OPTIONAL
            and (value is None or (isinstance(value, float) and math.isnan(value)))
        )
    }


def format_row(row: ResultRow) -> bytes:
    """The exact bytes of one line of the results file.

    Raises:
        ValueError: a value out of its range (:func:`check_row_values`: a non-finite or
            out-of-range score, a name that is no safe file name, a text too long, a graph
            too large), or a line longer than :data:`MAX_LINE_BYTES`.
    """
    check_row_values(row)
    line = (json.dumps(row.to_dict(), sort_keys=True) + "\n").encode()
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"row {row.job_id}: a line of {len(line)} bytes, past {MAX_LINE_BYTES}")
    return line


class ResultsAppender:
    """Appends rows atomically: one ``os.write`` per line on an ``O_APPEND`` descriptor + fsync.

    Only one process may append to a file (the sweep's parent); a crash mid-write can leave a
    torn last line, which :func:`read_results` drops on resume.

    Args:
        path: the results file; it and its directory are created when missing.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # Never through a link planted where the results file goes.
        self._fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    def append(self, row: ResultRow) -> None:
        """Write one row and flush it to disk."""
        data = format_row(row)
        written = os.write(self._fd, data)
        if written != len(data):  # pragma: no cover - regular files write whole
            raise OSError(f"short write to {self.path} ({written} of {len(data)} bytes)")
        os.fsync(self._fd)

    def close(self) -> None:
        """Close the file descriptor."""
        os.close(self._fd)

    def __enter__(self) -> ResultsAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class ResultsRead:
    """What :func:`read_results` found.

    Attributes:
        rows: the valid rows, in file order (duplicates of a job id included).
        problems: one ``PATH:LINE: problem`` message per dropped line.
    """

    rows: tuple[ResultRow, ...]
    problems: tuple[str, ...]

    def as_dicts(self) -> list[dict[str, Any]]:
        """The rows as the dicts stored in the file."""
        return [row.to_dict() for row in self.rows]


def _decode(line: Line, where: Location) -> object:
    """The JSON value of a line; ResultsFileError for a line too long, NUL bytes, bad UTF-8,
    bad JSON or JSON past the bounds of :func:`acdb_gym.core.untrusted.loads`."""
    torn = "" if line.complete else " (torn last line without a newline)"
    if line.text is None:
        raise ResultsFileError(
            where, f"a line of {line.length} bytes, longer than {MAX_LINE_BYTES}{torn}"
        )
    nul = line.text.find(b"\x00")
    if nul >= 0:
        raise ResultsFileError(where, f"NUL byte at column {nul + 1}{torn}")
    try:
        line.text.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ResultsFileError(where, f"invalid UTF-8 at byte {error.start + 1}{torn}") from None
    try:
        return loads(line.text, max_bytes=MAX_LINE_BYTES)
    except json.JSONDecodeError as error:
        problem = f"invalid JSON{torn}: {error.msg} (column {error.colno})"
        raise ResultsFileError(where, problem) from None
    except UntrustedInputError as error:
        raise ResultsFileError(where, f"{error}{torn}") from None


def read_results(path: Path, *, mode: ReadMode, repair: bool = False) -> ResultsRead:
    """Read a results file; a missing file has no rows.

    Args:
        path: the results file.
        mode: ``"strict"`` raises on any bad line but a torn last line, which is dropped with a
            warning; ``"lenient"`` skips every bad line and lists it in ``problems``.
        repair: strict mode only: also cut a torn last line from the file, so that appending
            starts on a fresh line.

    Returns:
        The rows and the problems (strict mode: at most the torn last line).

    Raises:
        ResultsFileError: strict mode, a bad line other than a torn last line.
        ValueError: an unknown ``mode``, or ``repair`` in lenient mode.
    """
    if mode not in ("strict", "lenient"):
        raise ValueError(f"mode must be 'strict' or 'lenient', got {mode!r}")
    if repair and mode != "strict":
        raise ValueError("repair=True needs mode='strict'")
    if not path.exists():
        return ResultsRead((), ())
    if mode == "lenient":
        return _read_lenient(path)
    return _read_strict(path, repair=repair)


def _read_lenient(path: Path) -> ResultsRead:
    rows: list[ResultRow] = []
    problems: list[str] = []
    with path.open("rb") as handle:
        for line in iter_lines(handle, max_line_bytes=MAX_LINE_BYTES):
            where = Location(path, line.number)
            try:
                rows.append(ResultRow.parse(_decode(line, where), where=where))
            except ResultsFileError as error:
                problems.append(f"{error}; skipped")
    return ResultsRead(tuple(rows), tuple(problems))


_TORN: Final = object()
"""Stands for the value of a line cut short (``None`` is the JSON ``null``)."""


def _with_last(lines: Iterator[Line]) -> Iterator[tuple[Line, bool]]:
    """Each line and whether it is the last (a one-line look-ahead)."""
    current = next(lines, None)
    for following in lines:
        assert current is not None
        yield current, False
        current = following
    if current is not None:
        yield current, True


def _read_strict(path: Path, *, repair: bool) -> ResultsRead:
    # The sweep appends to this file and may cut it: never through a planted link.
    with os.fdopen(open_nofollow(path, os.O_RDONLY), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        rows: list[ResultRow] = []
        for line, last in _with_last(iter_lines(handle, max_line_bytes=MAX_LINE_BYTES)):
            where = Location(path, line.number)
            try:
                value = _decode(line, where) if line.complete else _TORN
            except ResultsFileError:
                if not last:
                    raise
                value = _TORN
            if value is _TORN:
                # Only the appender's last write can be cut short: the line is torn, not corrupt.
                torn = _drop_torn(path, line, size - line.offset, repair=repair)
                return ResultsRead(tuple(rows), (torn,))
            rows.append(ResultRow.parse(value, where=where))
    return ResultsRead(tuple(rows), ())


def _drop_torn(path: Path, line: Line, size: int, *, repair: bool) -> str:
    message = f"{Location(path, line.number)}: dropping a torn last line ({size} bytes)"
    if repair:
        fd = open_nofollow(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, line.offset)
        finally:
            os.close(fd)
        message += ", cut from the file"
    warnings.warn(message, stacklevel=4)
    return message


def load_run(run_dir: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Read a run directory's results leniently, for reports.

    Args:
        run_dir: a sweep's ``--out`` directory.

    Returns:
        The valid rows as dicts in file order (a job retried by a resumed sweep appears more
        than once), and one ``PATH:LINE: problem; skipped`` message per unreadable line.

    Raises:
        FileNotFoundError: the directory has no :data:`RESULTS_FILE`.
    """
    path = Path(run_dir) / RESULTS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {RESULTS_FILE} in {path.parent}")
    read = read_results(path, mode="lenient")
    return read.as_dicts(), list(read.problems)
