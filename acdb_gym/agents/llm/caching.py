"""Prompt caching on the wire: where the cache breakpoints go, and what the usage fields say.

Every request of an episode starts with the same tools, system prompt and opening user message
(the data block), and each request repeats the previous one and adds a turn. Providers bill a
prefix they have seen recently at a reduced price:

* Anthropic caches up to the blocks marked ``cache_control`` (at most four per request).
  :func:`mark_anthropic_cache` marks the last tool, the system prompt, the data block and the
  newest message (the rolling mark lets each turn read the whole previous conversation), and
  reports ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` beside
  ``input_tokens``, which counts only the rest.
* OpenAI caches automatically and reports ``usage.prompt_tokens_details.cached_tokens`` within
  ``prompt_tokens``; it has no write charge.

:func:`openai_usage` and :func:`anthropic_usage` turn both into one :class:`~.conversation.Usage`
whose ``tokens_in`` counts every prompt token, as before caching was reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .conversation import Usage

__all__ = ["EPHEMERAL", "anthropic_usage", "mark_anthropic_cache", "openai_usage"]

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
"""Anthropic's cache marker (the default five-minute cache)."""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _mark_last_block(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of a Messages message whose last content block carries the cache marker."""
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content or not isinstance(content[-1], dict):
        return message
    if content[-1].get("type") in ("thinking", "redacted_thinking"):
        return message  # thinking blocks cannot carry a marker
    return {**message, "content": [*content[:-1], {**content[-1], "cache_control": EPHEMERAL}]}


def mark_anthropic_cache(payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of a Messages request body with cache markers on its stable prefix.

    Marks the last tool (caching every tool definition), the system prompt (made a text
    block), the first message (the data block) and, from the second request on, the newest
    message: four markers, Anthropic's maximum.

    >>> body = {"system": "S", "tools": [{"name": "t"}],
    ...         "messages": [{"role": "user", "content": [{"type": "text", "text": "D"}]}]}
    >>> marked = mark_anthropic_cache(body)
    >>> marked["system"][0]["cache_control"], marked["tools"][-1]["cache_control"]
    ({'type': 'ephemeral'}, {'type': 'ephemeral'})
    >>> "cache_control" in body["tools"][-1]
    False
    """
    marked = dict(payload)
    tools = list(payload.get("tools") or [])
    if tools:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
        marked["tools"] = tools
    system = payload.get("system")
    if isinstance(system, str) and system:
        marked["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
    messages = list(payload.get("messages") or [])
    if messages:
        messages[0] = _mark_last_block(messages[0])
    if len(messages) > 1:
        messages[-1] = _mark_last_block(messages[-1])
    marked["messages"] = messages
    return marked


def openai_usage(usage: Mapping[str, Any]) -> Usage:
    """The :class:`Usage` of a Chat Completions ``usage`` object.

    >>> openai_usage({"prompt_tokens": 900, "completion_tokens": 20,
    ...               "prompt_tokens_details": {"cached_tokens": 768}})
    Usage(tokens_in=900, tokens_out=20, tokens_cached_in=768, tokens_cache_write=0)
    """
    details = usage.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    prompt = _int(usage.get("prompt_tokens"))
    return Usage(prompt, _int(usage.get("completion_tokens")), min(cached, prompt), 0)


def anthropic_usage(usage: Mapping[str, Any]) -> Usage:
    """The :class:`Usage` of a Messages ``usage`` object (``tokens_in`` adds the cache counts
    to ``input_tokens``, which excludes them).

    >>> anthropic_usage({"input_tokens": 10, "cache_read_input_tokens": 800,
    ...                  "cache_creation_input_tokens": 90, "output_tokens": 20})
    Usage(tokens_in=900, tokens_out=20, tokens_cached_in=800, tokens_cache_write=90)
    """
    read = _int(usage.get("cache_read_input_tokens"))
    write = _int(usage.get("cache_creation_input_tokens"))
    return Usage(
        _int(usage.get("input_tokens")) + read + write,
        _int(usage.get("output_tokens")),
        read,
        write,
    )
