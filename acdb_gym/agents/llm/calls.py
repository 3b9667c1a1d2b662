"""One model call as a generator of effects, driven with blocking or with async I/O.

:class:`~.agent.LLMAgent` writes a turn (cache lookup, retries with backoff, the temperature
fallback, bookkeeping) once, as a generator that *yields* what it needs done: :class:`Send` a
payload (resumed with the response body, or with the provider error thrown in) or
:class:`Sleep` before a retry. :func:`drive` performs the effects with the SDK's blocking
client and ``time.sleep``; :func:`drive_async` with its async client and ``asyncio.sleep``, so
many episodes can share one event loop. Both consult the rate limiter before every send, so a
serial and a concurrent run take exactly the same steps.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from .conversation import ModelReply
from .errors import LLMProviderError
from .providers import ProviderAdapter, RejectedRequestError, TransientAPIError
from .ratelimit import RateLimiter, estimate_tokens
from .records import Redactor, canonical_json

__all__ = [
    "MAX_BACKOFF",
    "MAX_RETRY_AFTER",
    "Effect",
    "Send",
    "Sleep",
    "Steps",
    "drive",
    "drive_async",
    "provider_error",
    "refuses_temperature",
    "retry_delay",
]

MAX_RETRY_AFTER = 120.0
"""Longest server-requested wait (``retry-after``) honoured, in seconds."""

MAX_BACKOFF = 60.0
"""Longest exponential-backoff wait, in seconds."""


@dataclass(frozen=True)
class Send:
    """Effect: send this payload once; the driver resumes with the body or throws the error."""

    payload: dict[str, Any]


@dataclass(frozen=True)
class Sleep:
    """Effect: wait before retrying."""

    seconds: float


Effect = Send | Sleep
Steps = Generator[Effect, Any, ModelReply]
OnWait = Callable[[float], None]


def _tokens(payload: dict[str, Any]) -> int:
    return estimate_tokens(canonical_json(payload))


@dataclass(frozen=True)
class _Finished:
    reply: ModelReply


def _resume(steps: Steps, value: Any, error: Exception | None) -> Effect | _Finished:
    """Hand the last effect's outcome (a value, or the error it raised) back to ``steps``."""
    try:
        return steps.send(value) if error is None else steps.throw(error)
    except StopIteration as stop:
        return _Finished(stop.value)


def drive(
    steps: Steps, adapter: ProviderAdapter, limiter: RateLimiter | None, on_wait: OnWait
) -> ModelReply:
    """Run ``steps`` with blocking sends and sleeps; ``on_wait`` hears rate-limit waits."""
    value: Any = None
    error: Exception | None = None
    while not isinstance(effect := _resume(steps, value, error), _Finished):
        value, error = None, None
        if isinstance(effect, Sleep):
            time.sleep(effect.seconds)
            continue
        if limiter is not None:
            on_wait(limiter.acquire(_tokens(effect.payload)))
        try:
            value = adapter.send(effect.payload)
        except (TransientAPIError, RejectedRequestError) as failure:
            error = failure
    return effect.reply


async def drive_async(
    steps: Steps, adapter: ProviderAdapter, limiter: RateLimiter | None, on_wait: OnWait
) -> ModelReply:
    """:func:`drive` with the adapter's async send and ``asyncio.sleep``: the same request logic
    (``steps``), only the waits differ."""
    value: Any = None
    error: Exception | None = None
    while not isinstance(effect := _resume(steps, value, error), _Finished):
        value, error = None, None
        if isinstance(effect, Sleep):
            await asyncio.sleep(effect.seconds)
            continue
        if limiter is not None:
            on_wait(await limiter.acquire_async(_tokens(effect.payload)))
        try:
            value = await adapter.asend(effect.payload)
        except (TransientAPIError, RejectedRequestError) as failure:
            error = failure
    return effect.reply


def retry_delay(
    attempt: int, failure: TransientAPIError, *, max_retries: int, backoff: float
) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or None when retries are used up."""
    if attempt > max_retries:
        return None
    if failure.retry_after is not None:
        return min(failure.retry_after, MAX_RETRY_AFTER)
    return min(backoff * 2.0 ** (attempt - 1), MAX_BACKOFF)


def provider_error(
    error: TransientAPIError | RejectedRequestError,
    attempts: int,
    *,
    provider: str,
    model: str,
    redact: Redactor,
) -> LLMProviderError:
    """The error a turn raises when the provider gave no reply."""
    transient = isinstance(error, TransientAPIError)
    what = "retries exhausted" if transient else "request refused"
    message = redact(
        f"{provider} model {model!r}: {what} after {attempts} attempt(s); last error: {error}"
    )
    return LLMProviderError(
        message,
        provider=provider,
        model=model,
        status_code=error.status_code,
        attempts=attempts,
        transient=transient,
    )


def refuses_temperature(
    error: TransientAPIError | RejectedRequestError, payload: dict[str, Any]
) -> bool:
    """A 400 whose message names ``temperature``, for a payload that sent one."""
    return (
        isinstance(error, RejectedRequestError)
        and error.status_code == 400
        and "temperature" in payload
        and "temperature" in str(error).lower()
    )
