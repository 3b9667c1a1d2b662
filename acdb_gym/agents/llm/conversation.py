"""Provider-neutral values of one LLM conversation: tool specs, calls, replies and results.

The agent reasons only about these values; a provider adapter
(:mod:`acdb_gym.agents.llm.providers`) turns them into one API's wire format and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Exchange",
    "ModelReply",
    "Request",
    "ToolCall",
    "ToolChoice",
    "ToolResult",
    "ToolSpec",
    "Usage",
]

JSONDict = dict[str, Any]

ToolChoice = Literal["required", "auto"]


@dataclass(frozen=True)
class ToolSpec:
    """A function tool offered to the model.

    Attributes:
        name: the tool name the model calls (``"intervene"``).
        description: what the tool does, for the model.
        parameters: the JSON schema (an ``"object"`` schema) of its arguments.
    """

    name: str
    description: str
    parameters: JSONDict

    def to_dict(self) -> JSONDict:
        """A JSON-ready dict (for transcripts)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a model reply.

    Attributes:
        id: the provider's call id (tool results refer to it).
        name: the tool the model called.
        arguments: the decoded arguments, or None when they were not valid JSON.
        raw_arguments: the arguments exactly as the model sent them (a JSON string for OpenAI,
            the ``input`` value for Anthropic).
        argument_error: why the arguments could not be decoded, or None.
    """

    id: str
    name: str
    arguments: Any
    raw_arguments: Any
    argument_error: str | None = None


@dataclass(frozen=True)
class Usage:
    """Tokens of one model call.

    Attributes:
        tokens_in: every prompt token, including those read from or written to the provider's
            prompt cache (OpenAI's ``prompt_tokens``; Anthropic's ``input_tokens`` plus both
            cache counts).
        tokens_out: completion tokens (including any reasoning or thinking tokens).
        tokens_cached_in: prompt tokens read from the cache (billed at the cached-input price).
        tokens_cache_write: prompt tokens written to the cache (Anthropic bills them at the
            cache-write price; OpenAI's automatic caching has none).
    """

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached_in: int = 0
    tokens_cache_write: int = 0


@dataclass(frozen=True)
class ModelReply:
    """A decoded model response.

    Attributes:
        text: the reply's free text (may be empty).
        tool_calls: the tool calls, in order.
        assistant_message: the provider-native assistant message to echo back in the history.
        usage: tokens of this call.
        stop_reason: the provider's finish/stop reason, if any.
    """

    text: str
    tool_calls: tuple[ToolCall, ...]
    assistant_message: JSONDict
    usage: Usage
    stop_reason: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What the model is shown after a reply.

    Attributes:
        text: the result (data, statistics, or an error message).
        is_error: the call was not executed as asked.
        call_id: the tool call answered; None for a note after a reply without any tool call.
    """

    text: str
    is_error: bool
    call_id: str | None


@dataclass
class Exchange:
    """One turn of the history: a model reply and the results shown for it (filled next turn)."""

    reply: ModelReply
    results: list[ToolResult] = field(default_factory=list)


@dataclass(frozen=True)
class Request:
    """Everything one model call says, before a provider puts it in its wire format.

    Attributes:
        model: the model name.
        system: the system prompt.
        session: the opening user message (the episode's data and rules).
        history: the turns so far.
        tools: the tools offered.
        temperature: the sampling temperature, or None to send none.
        max_tokens: the cap on the reply's tokens.
        prompt_cache: mark the stable prefix for the provider's prompt cache (Anthropic's
            ``cache_control``; OpenAI caches automatically).
        tool_choice: ``"required"`` (every reply must call a tool) or ``"auto"`` (the model may
            answer in text first).
        thinking_budget: Anthropic extended-thinking budget in tokens, or None.
        reasoning_effort: OpenAI ``reasoning_effort`` (e.g. ``"low"``), or None.
    """

    model: str
    system: str
    session: str
    history: Sequence[Exchange]
    tools: Sequence[ToolSpec]
    temperature: float | None
    max_tokens: int
    prompt_cache: bool = True
    tool_choice: ToolChoice = "required"
    thinking_budget: int | None = None
    reasoning_effort: str | None = None
