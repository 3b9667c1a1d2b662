"""Provider adapters: the neutral conversation in one API's wire format, sent through its SDK.

An adapter does three things: build the JSON request body (the *payload*) from the prompts, the
tools and the history; send it with the SDK (``max_retries=0``: :class:`~.agent.LLMAgent` does
the retrying, identically for every provider); and decode the raw JSON response into a
:class:`~.conversation.ModelReply`. The payload is exactly what goes on the wire, so it is what
transcripts record and what the response cache hashes. SDK failures become
:class:`TransientAPIError` (worth retrying) or :class:`RejectedRequestError` (not).

* :class:`OpenAIAdapter`: Chat Completions with function tools (``tool_choice="required"``,
  or ``"auto"`` in thinking mode; ``parallel_tool_calls=False``; ``reasoning_effort`` when set);
  works with any OpenAI-compatible server (vLLM, Ollama, llama.cpp) through ``base_url`` (e.g.
  ``http://127.0.0.1:8000/v1``). Its prompt caching is automatic.
* :class:`AnthropicAdapter`: Messages with tool use (``tool_choice={"type": "any",
  "disable_parallel_tool_use": True}``, or ``"auto"`` in thinking mode; ``thinking`` when a
  budget is set; ``cache_control`` markers from :func:`~.caching.mark_anthropic_cache`);
  ``base_url`` without ``/v1``. The anthropic SDK (>= 1) has no ``temperature`` argument, so it
  travels in ``extra_body``.

Each adapter sends synchronously (:meth:`ProviderAdapter.send`) or from an event loop
(:meth:`ProviderAdapter.asend`, the SDK's async client), with the same payload and errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from .caching import anthropic_usage, mark_anthropic_cache, openai_usage
from .conversation import ModelReply, Request, ToolCall, ToolResult
from .records import canonical_json
from .transport import (
    RejectedRequestError,
    SDKAdapter,
    TransientAPIError,
    parse_retry_after,
    shared_ssl_context,
)

if TYPE_CHECKING:  # pragma: no cover
    import anthropic
    import openai

__all__ = [
    "PROVIDERS",
    "AnthropicAdapter",
    "OpenAIAdapter",
    "Provider",
    "ProviderAdapter",
    "RejectedRequestError",
    "TransientAPIError",
    "is_json_compliant",
    "make_adapter",
    "parse_retry_after",
]

Provider = Literal["openai", "anthropic"]
PROVIDERS: tuple[str, ...] = get_args(Provider)

JSONDict = dict[str, Any]

_EMPTY_REPLY = "(empty reply)"

MAX_ECHO_CHARS = 16_000
"""Longest reply text sent back to the model in the history; a longer one is cut, so that one
huge reply cannot make every later request (and its transcript and cache entries) huge."""

MAX_ARGUMENT_CHARS = 65_536
"""Longest tool-call arguments accepted (as JSON text); longer ones are an invalid call."""


class ProviderAdapter(Protocol):
    """What :class:`~.agent.LLMAgent` needs from a provider."""

    provider: str

    def build_payload(self, request: Request) -> JSONDict:
        """The JSON request body."""
        ...

    def send(self, payload: JSONDict) -> JSONDict:
        """Send one request (no retries) and return the decoded JSON response body."""
        ...

    async def asend(self, payload: JSONDict) -> JSONDict:
        """:meth:`send` through the SDK's async client."""
        ...

    def parse_reply(self, raw: Mapping[str, Any], *, id_prefix: str) -> ModelReply:
        """Decode a response body; calls without an id get ``f"{id_prefix}_{k}"``."""
        ...

    def close(self) -> None:
        """Release the HTTP connections."""
        ...

    async def aclose(self) -> None:
        """Release the async client's connections (from its event loop)."""
        ...


def is_json_compliant(value: Any) -> bool:
    """True when ``value`` encodes as strict JSON (no NaN or infinity, only JSON types).

    >>> is_json_compliant({"value": 1.5}), is_json_compliant({"value": float("nan")})
    (True, False)
    """
    try:
        canonical_json(value)
    except (TypeError, ValueError):
        return False
    return True


def _cap_text(text: str) -> str:
    """``text`` cut to :data:`MAX_ECHO_CHARS`, saying how much was cut."""
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return f"{text[:MAX_ECHO_CHARS]}\n[... {len(text) - MAX_ECHO_CHARS} characters cut]"


def _argument_problem(arguments: Any) -> str | None:
    """Why decoded tool arguments cannot be used or echoed, or None."""
    try:
        text = canonical_json(arguments)
    except (TypeError, ValueError):
        return "arguments hold a number JSON does not allow (NaN or infinity)"
    except RecursionError:
        return "arguments are nested too deeply"
    if len(text) > MAX_ARGUMENT_CHARS:
        return f"arguments are longer than {MAX_ARGUMENT_CHARS} characters"
    return None


def _shown(value: Any) -> str:
    """A short, JSON-safe description of a value for an error message or an echo."""
    try:
        return repr(value)[:200]
    except (ValueError, RecursionError):  # an int past 4,300 digits, a nesting too deep
        return f"<{type(value).__name__} too large to show>"


# --------------------------------------------------------------------------- OpenAI


class OpenAIAdapter(SDKAdapter):
    """Chat Completions with function tools, through the ``openai`` SDK.

    Args:
        api_key: the key (None: every send raises :class:`RejectedRequestError`).
        base_url: an OpenAI-compatible server, e.g. ``http://127.0.0.1:8000/v1``; None for
            OpenAI (or ``OPENAI_BASE_URL``).
        timeout: seconds per HTTP request.
    """

    provider = "openai"
    _key_variable = "OPENAI_API_KEY"

    def build_payload(self, request: Request) -> JSONDict:
        messages: list[JSONDict] = [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.session},
        ]
        for exchange in request.history:
            messages.append(exchange.reply.assistant_message)
            messages.extend(self._result_message(result) for result in exchange.results)
        payload: JSONDict = {
            "model": request.model,
            "messages": messages,
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in request.tools
            ],
            "tool_choice": request.tool_choice,
            "parallel_tool_calls": False,
            "max_completion_tokens": request.max_tokens,
        }
        if request.temperature is not None:
            payload["temperature"] = request.temperature
        if request.reasoning_effort is not None:
            payload["reasoning_effort"] = request.reasoning_effort
        return payload

    @staticmethod
    def _result_message(result: ToolResult) -> JSONDict:
        if result.call_id is None:
            return {"role": "user", "content": result.text}
        return {"role": "tool", "tool_call_id": result.call_id, "content": result.text}

    def send(self, payload: JSONDict) -> JSONDict:
        import openai

        create = self._get_client().chat.completions.with_raw_response.create
        return self._request(openai, openai.OpenAIError, create, **payload)

    async def asend(self, payload: JSONDict) -> JSONDict:
        import openai

        create = self._get_async_client().chat.completions.with_raw_response.create
        return await self._arequest(openai, openai.OpenAIError, create, **payload)

    def _new_client(self, *, asynchronous: bool) -> openai.OpenAI | openai.AsyncOpenAI:
        import openai

        options = self._client_options()
        if asynchronous:
            http = openai.DefaultAsyncHttpxClient(verify=shared_ssl_context())
            return openai.AsyncOpenAI(**options, http_client=http)
        return openai.OpenAI(
            **options, http_client=openai.DefaultHttpxClient(verify=shared_ssl_context())
        )

    def parse_reply(self, raw: Mapping[str, Any], *, id_prefix: str) -> ModelReply:
        choices = raw.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else {}
        message = choice.get("message") if isinstance(choice, dict) else None
        message = message if isinstance(message, dict) else {}
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        calls: list[ToolCall] = []
        raw_calls = message.get("tool_calls")
        for k, item in enumerate(raw_calls if isinstance(raw_calls, list) else []):
            function = item.get("function") if isinstance(item, dict) else None
            function = function if isinstance(function, dict) else {}
            call_id = item.get("id") if isinstance(item, dict) else None
            calls.append(
                _decode_arguments(
                    call_id if isinstance(call_id, str) and call_id else f"{id_prefix}_{k}",
                    str(function.get("name", "")),
                    function.get("arguments"),
                )
            )
        usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        return ModelReply(
            text=text,
            tool_calls=tuple(calls),
            assistant_message=self._echo(text, calls),
            usage=openai_usage(usage),
            stop_reason=choice.get("finish_reason") if isinstance(choice, dict) else None,
        )

    @staticmethod
    def _echo(text: str, calls: Sequence[ToolCall]) -> JSONDict:
        if not calls:
            return {"role": "assistant", "content": _cap_text(text) or _EMPTY_REPLY}
        return {
            "role": "assistant",
            "content": _cap_text(text) or None,
            "tool_calls": [
                {
                    "type": "function",
                    "id": call.id,
                    "function": {"name": call.name, "arguments": _echo_arguments(call)},
                }
                for call in calls
            ],
        }


def _decode_arguments(call_id: str, name: str, raw: Any) -> ToolCall:
    """Decode OpenAI's JSON-string arguments (some servers send an object instead)."""
    if isinstance(raw, str):
        if len(raw) > MAX_ARGUMENT_CHARS:
            too_long = f"arguments are longer than {MAX_ARGUMENT_CHARS} characters"
            return ToolCall(call_id, name, None, raw[:200], too_long)
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError as error:
            return ToolCall(call_id, name, None, raw, str(error))
        except RecursionError:
            return ToolCall(call_id, name, None, raw[:200], "arguments are nested too deeply")
    elif isinstance(raw, dict):
        arguments = raw
    else:
        return ToolCall(call_id, name, None, raw, f"expected a JSON string, got {raw!r}"[:200])
    problem = _argument_problem(arguments)
    if problem is not None:
        return ToolCall(call_id, name, None, raw if isinstance(raw, str) else _shown(raw), problem)
    return ToolCall(call_id, name, arguments, raw)


def _echo_arguments(call: ToolCall) -> str:
    """Arguments to send back in the history. Servers that render chat templates (vLLM) parse
    them, so arguments that are not a usable JSON object go back wrapped in one instead of
    verbatim."""
    if call.argument_error is None and isinstance(call.arguments, dict):
        return (
            call.raw_arguments
            if isinstance(call.raw_arguments, str)
            else json.dumps(call.arguments)
        )
    raw = call.raw_arguments
    if isinstance(raw, str):
        raw = raw[:MAX_ECHO_CHARS]
    elif not is_json_compliant(raw):
        raw = _shown(raw)
    return json.dumps({"unparsable_arguments": raw})


# --------------------------------------------------------------------------- Anthropic


class AnthropicAdapter(SDKAdapter):
    """Messages with tool use, through the ``anthropic`` SDK.

    Args:
        api_key: the key (None: every send raises :class:`RejectedRequestError`).
        base_url: an Anthropic-compatible server, e.g. ``http://127.0.0.1:8000`` (no ``/v1``);
            None for Anthropic (or ``ANTHROPIC_BASE_URL``).
        timeout: seconds per HTTP request.
    """

    provider = "anthropic"
    _key_variable = "ANTHROPIC_API_KEY"

    def build_payload(self, request: Request) -> JSONDict:
        messages: list[JSONDict] = [
            {"role": "user", "content": [{"type": "text", "text": request.session}]}
        ]
        for exchange in request.history:
            messages.append(exchange.reply.assistant_message)
            if exchange.results:
                messages.append(
                    {"role": "user", "content": [self._result_block(r) for r in exchange.results]}
                )
        payload: JSONDict = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": messages,
            "tools": [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                }
                for tool in request.tools
            ],
            "tool_choice": {
                "type": "any" if request.tool_choice == "required" else "auto",
                "disable_parallel_tool_use": True,
            },
        }
        if request.temperature is not None:
            payload["temperature"] = request.temperature
        if request.thinking_budget is not None:
            payload["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
        return mark_anthropic_cache(payload) if request.prompt_cache else payload

    @staticmethod
    def _result_block(result: ToolResult) -> JSONDict:
        if result.call_id is None:
            return {"type": "text", "text": result.text}
        block: JSONDict = {
            "type": "tool_result",
            "tool_use_id": result.call_id,
            "content": result.text,
        }
        if result.is_error:
            block["is_error"] = True
        return block

    @staticmethod
    def _sdk_arguments(payload: JSONDict) -> JSONDict:
        body = dict(payload)
        temperature = body.pop("temperature", None)
        body["extra_body"] = None if temperature is None else {"temperature": temperature}
        return body

    def send(self, payload: JSONDict) -> JSONDict:
        import anthropic

        create = self._get_client().messages.with_raw_response.create
        return self._request(
            anthropic, anthropic.AnthropicError, create, **self._sdk_arguments(payload)
        )

    async def asend(self, payload: JSONDict) -> JSONDict:
        import anthropic

        create = self._get_async_client().messages.with_raw_response.create
        return await self._arequest(
            anthropic, anthropic.AnthropicError, create, **self._sdk_arguments(payload)
        )

    def _new_client(self, *, asynchronous: bool) -> anthropic.Anthropic | anthropic.AsyncAnthropic:
        import anthropic

        options = self._client_options()
        if asynchronous:
            http = anthropic.DefaultAsyncHttpxClient(verify=shared_ssl_context())
            return anthropic.AsyncAnthropic(**options, http_client=http)
        return anthropic.Anthropic(
            **options, http_client=anthropic.DefaultHttpxClient(verify=shared_ssl_context())
        )

    def parse_reply(self, raw: Mapping[str, Any], *, id_prefix: str) -> ModelReply:
        content = raw.get("content")
        texts: list[str] = []
        calls: list[ToolCall] = []
        echo: list[JSONDict] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                if block["text"]:
                    echo.append({"type": "text", "text": _cap_text(block["text"])})
            elif kind == "tool_use":
                block_id = block.get("id")
                call_id = (
                    block_id
                    if isinstance(block_id, str) and block_id
                    else f"{id_prefix}_{len(calls)}"
                )
                arguments = block.get("input")
                error = (
                    _argument_problem(arguments)
                    if isinstance(arguments, dict)
                    else f"input is not a JSON object: {arguments!r}"[:200]
                )
                usable = error is None
                call = ToolCall(
                    call_id,
                    str(block.get("name", "")),
                    arguments if usable else None,
                    arguments if usable else _shown(arguments),
                    error,
                )
                calls.append(call)
                echo.append(
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": call.name,
                        "input": arguments if usable else {"unparsable_input": _shown(arguments)},
                    }
                )
            elif kind in ("thinking", "redacted_thinking") and is_json_compliant(block):
                echo.append(dict(block))  # must go back verbatim (signed)
        usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        stop = raw.get("stop_reason")
        return ModelReply(
            text="\n".join(texts),
            tool_calls=tuple(calls),
            assistant_message={
                "role": "assistant",
                "content": echo or [{"type": "text", "text": _EMPTY_REPLY}],
            },
            usage=anthropic_usage(usage),
            stop_reason=stop if isinstance(stop, str) else None,
        )


def make_adapter(
    provider: Provider, *, api_key: str | None, base_url: str | None, timeout: float
) -> ProviderAdapter:
    """The adapter of ``provider``."""
    if provider == "openai":
        return OpenAIAdapter(api_key=api_key, base_url=base_url, timeout=timeout)
    if provider == "anthropic":
        return AnthropicAdapter(api_key=api_key, base_url=base_url, timeout=timeout)
    raise ValueError(f"provider must be one of {list(PROVIDERS)}, got {provider!r}")
