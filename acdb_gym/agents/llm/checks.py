"""Checks of :class:`~.agent.LLMAgent`'s arguments, with errors that name the bad value."""

from __future__ import annotations

import math

from .providers import PROVIDERS

__all__ = ["check_arguments", "check_thinking"]


def check_thinking(
    provider: str,
    text_turns: int,
    thinking_budget: int | None,
    reasoning_effort: str | None,
    max_tokens: int,
) -> None:
    if isinstance(text_turns, bool) or not isinstance(text_turns, int) or text_turns < 0:
        raise ValueError(f"text_turns must be an integer >= 0, got {text_turns!r}")
    if thinking_budget is not None:
        if provider != "anthropic":
            raise ValueError(
                f"thinking_budget is Anthropic's extended thinking; for {provider!r} use "
                "reasoning_effort"
            )
        if not isinstance(thinking_budget, int) or not 1024 <= thinking_budget < max_tokens:
            raise ValueError(
                f"thinking_budget must be an integer in [1024, max_tokens = {max_tokens}), "
                f"got {thinking_budget!r}"
            )
    if reasoning_effort is not None:
        if provider != "openai":
            raise ValueError(f"reasoning_effort is OpenAI's; for {provider!r} use thinking_budget")
        if not isinstance(reasoning_effort, str) or not reasoning_effort:
            raise ValueError(
                f"reasoning_effort must be a non-empty string, got {reasoning_effort!r}"
            )


def check_arguments(
    provider: str,
    model: str,
    temperature: float | None,
    timeout: float,
    max_retries: int,
    backoff: float,
    max_tokens: int,
) -> None:
    if provider not in PROVIDERS:
        raise ValueError(f"provider must be one of {list(PROVIDERS)}, got {provider!r}")
    if not isinstance(model, str) or not model:
        raise ValueError(f"model must be a non-empty string, got {model!r}")
    if temperature is not None and not (math.isfinite(temperature) and temperature >= 0):
        raise ValueError(f"temperature must be None or a finite number >= 0, got {temperature!r}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
    if not (math.isfinite(backoff) and backoff >= 0):
        raise ValueError(f"backoff must be a number of seconds >= 0, got {backoff!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
