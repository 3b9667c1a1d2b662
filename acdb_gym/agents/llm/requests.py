"""One model request of a turn: the response cache, retries with backoff and the temperature
fallback, written once as a generator of effects (:mod:`.calls` drives it blocking or async).

:class:`Requests` holds what outlives an episode (the provider, model, retry policy and the
response cache); each call gets the episode's transcript and counters (:class:`CallStats`), so
a replay from the cache reproduces the same records and totals.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from .calls import Effect, Send, Sleep, provider_error, refuses_temperature, retry_delay
from .providers import Provider, RejectedRequestError, TransientAPIError
from .records import Redactor, ResponseCache, TranscriptWriter, capped_record

__all__ = ["TEMPERATURE_REFUSED", "CallStats", "Requests", "Response"]

TEMPERATURE_REFUSED = "temperature_refused"
"""Cache fact: the model answered 400 to a request with ``temperature``."""


@dataclass
class CallStats:
    """The counters of one episode's model calls (``LLMAgent.episode_stats``)."""

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached_in: int = 0
    tokens_cache_write: int = 0
    llm_calls: int = 0
    retries: int = 0
    cache_hits: int = 0
    invalid_tool_calls: int = 0
    text_turns: int = 0


@dataclass(frozen=True)
class Response:
    """A raw response body, its cache key, and whether it came from the cache."""

    body: dict[str, Any]
    key: str
    cached: bool


@dataclass(frozen=True)
class Requests:
    """How one agent's requests are answered: from ``cache`` when it holds the payload, else
    over HTTP with up to ``max_retries`` retries of transient failures."""

    provider: Provider
    model: str
    max_retries: int
    backoff: float
    cache: ResponseCache | None
    redact: Redactor

    def complete(
        self,
        payload: dict[str, Any],
        turn: int,
        transcript: TranscriptWriter,
        stats: CallStats,
    ) -> Generator[Effect, Any, Response | None]:
        """The raw response to ``payload`` from the cache or over HTTP with retries; None when
        the server refused the payload's ``temperature`` (a fact then stored in the cache).

        Raises:
            LLMProviderError: retries ran out, or the request was refused for another reason.
        """
        key = ResponseCache.key(self.provider, payload)
        transcript.write("request", turn=turn, cache_key=key, payload=payload)
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None and isinstance(cached.get("response"), dict):
            stats.cache_hits += 1
            transcript.write(
                "response", turn=turn, cached=True, raw=capped_record(cached["response"])
            )
            return Response(cached["response"], key, cached=True)
        attempt = 0
        while True:
            attempt += 1
            start = time.perf_counter()
            failure: TransientAPIError | RejectedRequestError | None = None
            try:
                raw = yield Send(payload)
            except (TransientAPIError, RejectedRequestError) as error:
                failure = error
            if failure is None:
                latency = round(time.perf_counter() - start, 4)
                transcript.write(
                    "response",
                    turn=turn,
                    attempt=attempt,
                    cached=False,
                    latency_s=latency,
                    raw=capped_record(raw),
                )
                return Response(raw, key, cached=False)
            delay = (
                retry_delay(attempt, failure, max_retries=self.max_retries, backoff=self.backoff)
                if isinstance(failure, TransientAPIError)
                else None
            )
            transcript.write(
                "api_error",
                turn=turn,
                attempt=attempt,
                status=failure.status_code,
                message=str(failure),
                retry_in_s=delay,
            )
            if delay is not None:
                stats.retries += 1
                yield Sleep(delay)
                continue
            if refuses_temperature(failure, payload):
                fact = ResponseCache.fact_key(self.provider, self.model, TEMPERATURE_REFUSED)
                if self.cache is not None:
                    self.cache.put(
                        fact,
                        {"fact": TEMPERATURE_REFUSED, "model": self.model, "error": str(failure)},
                    )
                return None
            # raised outside any handler, so no exception (and no request) is chained to it
            raise provider_error(
                failure, attempt, provider=self.provider, model=self.model, redact=self.redact
            )

    def knows(self, fact: str) -> bool:
        """Whether the cache holds ``fact`` about this provider's model."""
        if self.cache is None:
            return False
        return self.cache.get(ResponseCache.fact_key(self.provider, self.model, fact)) is not None
