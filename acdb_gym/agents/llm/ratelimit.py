"""A rate limiter for LLM requests shared by every process of a sweep.

Two token buckets, requests per minute and prompt tokens per minute, live in one small JSON
state file; every reservation takes an exclusive ``fcntl.flock`` on that file, reads the
buckets, refills them for the time passed and either takes what the request needs or says how
long to wait. Sweep workers are separate processes, and each may run several episodes at once
in an event loop: all of them open the same file (the sweep puts it in its run directory), so
the limits hold for the sweep as a whole. A lock is held for microseconds, so the blocking call
is harmless inside an event loop. Needs a POSIX system (``fcntl``).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import math
import os
import time
from pathlib import Path

from acdb_gym.core.untrusted import loads, open_nofollow

__all__ = ["RateLimiter", "estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """A provider-neutral estimate of a prompt's tokens: one per four characters.

    >>> estimate_tokens("x" * 400)
    100
    """
    return max(1, len(text) // 4)


class RateLimiter:
    """Requests and prompt tokens per minute, shared through a state file.

    Args:
        path: the state file (created when missing); every limiter opening it shares its
            buckets, across threads, event loops and processes.
        requests_per_minute: the request limit, or None for none.
        tokens_per_minute: the prompt-token limit, or None for none. A request estimated above
            the whole limit waits for a full bucket, then goes.

    Raises:
        ValueError: a limit that is not a positive finite number.
    """

    def __init__(
        self,
        path: Path,
        *,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
    ) -> None:
        for name, limit in (
            ("requests_per_minute", requests_per_minute),
            ("tokens_per_minute", tokens_per_minute),
        ):
            if limit is not None and not (math.isfinite(limit) and limit > 0):
                raise ValueError(f"{name} must be None or a positive number, got {limit!r}")
        self.path = Path(path)
        self.limits = {"requests": requests_per_minute, "tokens": tokens_per_minute}

    def __repr__(self) -> str:
        rpm, tpm = self.limits["requests"], self.limits["tokens"]
        return (
            f"RateLimiter({str(self.path)!r}, requests_per_minute={rpm}, tokens_per_minute={tpm})"
        )

    def reserve(self, tokens: int) -> float:
        """Take one request and ``tokens`` from the buckets, or say how long to wait.

        Returns:
            0.0 when the request may go now (its share is taken); otherwise the seconds until
            the buckets hold enough (nothing is taken: call again after waiting).
        """
        need = {"requests": 1.0, "tokens": float(tokens)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT)  # never through a planted link
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            now = time.time()
            state = _read_state(fd)
            limits = {name: limit for name, limit in self.limits.items() if limit is not None}
            levels = {
                name: _refilled(state.get(name), limit, now) for name, limit in limits.items()
            }
            wait = 0.0
            for name, limit in limits.items():
                wanted = min(need[name], limit)
                if levels[name] < wanted:
                    wait = max(wait, (wanted - levels[name]) * 60.0 / limit)
            for name, limit in limits.items():
                taken = 0.0 if wait else min(need[name], limit)
                state[name] = {"level": levels[name] - taken, "updated": now}
            _write_state(fd, state)
        finally:
            os.close(fd)  # closing releases the lock
        return wait

    def acquire(self, tokens: int) -> float:
        """Block until the request may go; returns the seconds waited."""
        waited = 0.0
        while (wait := self.reserve(tokens)) > 0:
            time.sleep(wait)
            waited += wait
        return waited

    async def acquire_async(self, tokens: int) -> float:
        """:meth:`acquire` that waits with ``asyncio.sleep`` (other episodes keep running)."""
        waited = 0.0
        while (wait := self.reserve(tokens)) > 0:
            await asyncio.sleep(wait)
            waited += wait
        return waited


def _refilled(bucket: dict[str, float] | None, limit: float, now: float) -> float:
    """A bucket's level now: a new bucket is full; it refills at ``limit`` per minute."""
    if bucket is None:
        return float(limit)
    elapsed = max(0.0, now - bucket["updated"])
    return min(float(limit), bucket["level"] + elapsed * limit / 60.0)


def _read_state(fd: int) -> dict[str, dict[str, float]]:
    """The buckets in the file (each bucket keeps its own time, so limiters that limit only
    one of the two leave the other alone)."""
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 4096)
    try:
        state = loads(raw, max_bytes=len(raw)) if raw.strip() else {}
    except ValueError:
        return {}  # a torn write from a killed process: start with full buckets
    if not isinstance(state, dict):
        return {}
    buckets = {}
    for name, bucket in state.items():
        if isinstance(bucket, dict) and all(
            isinstance(bucket.get(key), int | float) for key in ("level", "updated")
        ):
            buckets[name] = {key: float(bucket[key]) for key in ("level", "updated")}
    return buckets


def _write_state(fd: int, state: dict[str, dict[str, float]]) -> None:
    data = json.dumps(state).encode()
    os.lseek(fd, 0, os.SEEK_SET)
    os.ftruncate(fd, 0)
    os.write(fd, data)
