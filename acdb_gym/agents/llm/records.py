"""Episode transcripts (JSONL) and the on-disk response cache.

Both write only what was sent and received on the wire plus bookkeeping; the API key is never
part of either (it travels in HTTP headers, which are not recorded), and every line written
passes through a :class:`Redactor` as a second guard.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from acdb_gym.core.untrusted import loads, open_nofollow, read_file, write_nofollow

__all__ = [
    "MAX_CACHED_RESPONSE_CHARS",
    "MAX_RECORDED_CHARS",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "Redactor",
    "ResponseCache",
    "TranscriptWriter",
    "canonical_json",
]

REDACTED = "[REDACTED]"

MIN_SECRET_LENGTH = 8
"""Shortest string a :class:`Redactor` treats as a secret."""

MAX_RECORDED_CHARS = 65_536
"""Longest value a transcript records whole; a longer one keeps its first characters only."""

MAX_CACHED_RESPONSE_CHARS = 262_144
"""Longest response (as JSON text) the cache stores; a longer one is asked for again on a rerun."""

MAX_CACHE_ENTRY_BYTES = 64 << 20
"""Largest cache entry read (its request holds the conversation so far); a larger file is a
miss."""


def capped_record(value: Any) -> Any:
    """``value`` for a transcript: as it is when its JSON is short, else a note with its head.

    >>> capped_record({"a": 1})
    {'a': 1}
    >>> capped_record("x" * 70_000)["chars"]
    70002
    >>> capped_record({"value": 10**5000})
    {'unrecordable': 'dict'}
    """
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # an int past 4,300 digits, a nesting too deep
        return {"unrecordable": type(value).__name__}
    if len(text) <= MAX_RECORDED_CHARS:
        return value
    return {"truncated": True, "chars": len(text), "head": text[:MAX_RECORDED_CHARS]}


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept, NaN refused: the same value always gives the same text.

    >>> canonical_json({"b": [1, 2.5], "a": "é"})
    '{"a":"é","b":[1,2.5]}'
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


class Redactor:
    """Replaces every secret (and its JSON-escaped form) in a text with ``[REDACTED]``.

    Strings shorter than :data:`MIN_SECRET_LENGTH` are not secrets (placeholder keys such as
    ``"EMPTY"`` for local servers) and are left alone, so they cannot garble a transcript.

    >>> Redactor(["sk-123456789", "EMPTY"])("key=sk-123456789, EMPTY")
    'key=[REDACTED], EMPTY'
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret and len(secret) >= MIN_SECRET_LENGTH:
                forms.add(secret)
                forms.add(json.dumps(secret)[1:-1])
        self._forms = sorted(forms, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for form in self._forms:
            text = text.replace(form, REDACTED)
        return text


class TranscriptWriter:
    """Appends one JSON object per event to a JSONL file (nothing when ``path`` is None).

    Creating a writer truncates the file: a transcript holds one episode. A symbolic link
    planted where the transcript goes is refused, never written through.

    Raises:
        UntrustedInputError: ``path`` is a symbolic link.
    """

    def __init__(self, path: Path | None, redact: Redactor) -> None:
        self.path = None if path is None else Path(path)
        self._redact = redact
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_nofollow(self.path, b"")

    def write(self, event: str, **fields: Any) -> None:
        """Append ``{"event": event, "time": <unix seconds>, **fields}``."""
        if self.path is None:
            return
        record = {"event": event, "time": round(time.time(), 6), **fields}
        line = self._redact(json.dumps(record, ensure_ascii=False, default=str))
        fd = open_nofollow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


class ResponseCache:
    """Responses on disk, one JSON file per request, keyed by the SHA-256 of the request.

    The key hashes the canonical JSON of ``{"provider": ..., "request": payload}``, where the
    payload is the full request body (model, parameters, messages, tools); the API key is not
    part of it. Files are written atomically, so concurrent workers can share a directory.

    Args:
        directory: where entries live (created on first write).
        redact: applied to every file written.
    """

    def __init__(self, directory: Path, redact: Redactor) -> None:
        self.directory = Path(directory)
        self._redact = redact

    @staticmethod
    def key(provider: str, payload: dict[str, Any]) -> str:
        """The entry key of a request."""
        text = canonical_json({"provider": provider, "request": payload})
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @staticmethod
    def fact_key(provider: str, model: str, fact: str) -> str:
        """The entry key of a fact about a model (e.g. that it refuses ``temperature``)."""
        text = canonical_json({"provider": provider, "model": model, "fact": fact})
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None (also for an unreadable file or one that is not strict
        JSON, e.g. holds NaN, or is past the bounds of hostile input: larger than
        :data:`MAX_CACHE_ENTRY_BYTES`, nested too deeply, an integer too long; the next put
        replaces it)."""
        try:
            raw = read_file(self._path(key), max_bytes=MAX_CACHE_ENTRY_BYTES)
            # A model's numbers are kept as it sent them (an integer too long for a float is
            # an invalid step when replayed, as when it was first received).
            entry = loads(
                raw, max_bytes=MAX_CACHE_ENTRY_BYTES, max_int_digits=4300, allow_nan=False
            )
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> bool:
        """Store ``entry`` under ``key`` (atomically) when it is strict JSON (no NaN or
        infinity) and its response is at most :data:`MAX_CACHED_RESPONSE_CHARS` long.

        Returns:
            Whether the entry was stored.
        """
        try:
            text = self._redact(canonical_json({"key": key, **entry}))
            response = canonical_json(entry.get("response"))
        except (TypeError, ValueError):
            return False
        if len(response) > MAX_CACHED_RESPONSE_CHARS:
            return False
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return True
