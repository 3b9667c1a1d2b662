"""``LLMAgent``: a tool-calling language model as a policy of :class:`ACDBEnv` (paper §4).

Each turn the model receives the task prompt (system), the session prompt and the full
tool-call history, and must make exactly one tool call, which becomes one ``env.step``. A call
that cannot be executed (unknown tool, arguments that are not JSON or have wrong types or
out-of-range values, no call, several calls) still costs a step: ``act`` returns
:data:`INVALID_ACTION`, which the env rejects, and the model sees the agent's own error message
as the result on the next turn.

In *thinking mode* (``text_turns > 0``) the model may instead answer in text before it calls a
tool (``tool_choice`` auto): up to ``text_turns`` text-only replies per episode are accepted,
each using a step, and are not counted as invalid calls; once they are used up, every reply
must call a tool again. Anthropic extended thinking (``thinking_budget``) and OpenAI
``reasoning_effort`` are passed through.

:meth:`LLMAgent.act` sends with the SDK's blocking client; :meth:`LLMAgent.act_async` does
the same from an event loop with its async client, so one process can run many episodes at
once (the retry, temperature and cache logic is one generator that both drive,
:meth:`.requests.Requests.complete`). This module is the turn: prompts and tools at ``reset``,
the conversation, and the reply read as one action.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.core.types import PANEL_OBSERVATIONAL, PANELS, Panel
from acdb_gym.envs import actions
from acdb_gym.envs.actions import Action

from . import prompts
from .calls import MAX_BACKOFF, MAX_RETRY_AFTER, Steps, drive, drive_async
from .checks import check_arguments, check_thinking
from .conversation import Exchange, ModelReply, Request, ToolChoice, ToolResult, ToolSpec
from .feedback import describe_result, n_experiments, text_turn_note
from .function_tools import Variant, build_tools, check_variant, env_kwargs_for
from .parsing import ToolCallError, parse_tool_arguments
from .providers import (
    Provider,
    ProviderAdapter,
    make_adapter,
)
from .ratelimit import RateLimiter
from .records import Redactor, ResponseCache, TranscriptWriter, capped_record
from .requests import TEMPERATURE_REFUSED, CallStats, Requests

__all__ = ["API_KEY_ENV", "INVALID_ACTION", "MAX_BACKOFF", "MAX_RETRY_AFTER", "LLMAgent"]

API_KEY_ENV: dict[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""Where the key is read from when ``api_key`` is not given."""

INVALID_ACTION = actions.correlation(0, 0)
"""What ``act`` returns for a tool call it cannot execute: a statistics call with ``i == j`` on
the observational data is an element of every action space and is invalid in every variant
(``tools="raw"`` rejects statistics tools; ``tools="stats"`` rejects ``i == j``), so the env
charges a step and changes nothing else. The env's own message is replaced by the agent's."""

_LOCAL_PLACEHOLDER_KEY = "EMPTY"
"""Key sent to a custom ``base_url`` when none is configured (local servers ignore it)."""


@dataclass
class _Pending:
    """What the next turn reports for the previous reply: precomputed errors, or the result of
    the action the env executed."""

    errors: list[ToolResult] = field(default_factory=list)
    call_id: str | None = None
    action: Action | None = None


class LLMAgent:
    """A language model that plays ACDB through function tools.

    Pair it with the env built from :func:`env_kwargs_for` (``llm_raw`` → ``tools="raw"``,
    ``llm_stats`` → ``tools="stats"``, ``llm_corr_obs`` → ``panel="observational",
    tools="raw"``); ``reset`` raises ValueError when the env's tools do not match.

    Args:
        variant: ``"llm_raw"`` (intervene + submit_graph), ``"llm_stats"`` (+ correlation,
            partial_correlation, independence_test) or ``"llm_corr_obs"`` (the correlation-only
            probe: submit_graph from the correlation matrix and standard deviations).
        provider: ``"openai"`` (Chat Completions; any OpenAI-compatible server through
            ``base_url``) or ``"anthropic"`` (Messages).
        model: the model name sent to the API.
        base_url: the server; None for the provider's own API. OpenAI-compatible servers take
            the ``/v1`` root (``http://127.0.0.1:8000/v1``), Anthropic-compatible ones the bare
            root.
        api_key: the key; None reads ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``. It is never
            written to transcripts, cache files or exception messages.
        temperature: sampling temperature, sent only when not None. A server that answers 400
            naming ``temperature`` gets the request again without it, and the agent stops
            sending it (``episode_stats()["temperature_applied"]`` is then False); with a
            cache, the refusal is stored as a fact about the model, so agents that share the
            cache do not send it either and replays stay exact.
        timeout: seconds per HTTP request.
        max_retries: retries of a transient failure (429, 408, 409, 5xx, timeout, dropped
            connection) before :class:`LLMProviderError`.
        backoff: base of the exponential backoff in seconds (``backoff * 2**(attempt - 1)``,
            at most :data:`MAX_BACKOFF`); a ``retry-after`` header takes precedence.
        transcript_path: JSONL file for the next episode's transcript (settable attribute, read
            at ``reset``); None records nothing.
        cache_dir: response cache directory; a rerun of the same requests costs no API call
            and reproduces the episode exactly. None disables the cache.
        max_tokens: output token limit per reply.
        state_hypothesis: the opt-in revision variant: ``intervene`` also asks for the model's
            current graph (a prompt line and two required tool arguments), which the agent
            states with the experiment (``states_hypotheses``; the sweep records it). Off, the
            prompts, tools and requests are exactly the paper's.
        prompt_cache: mark the stable prefix (tools, system prompt, data block) and the newest
            message for Anthropic's prompt cache; OpenAI caches automatically either way.
        text_turns: text-only replies accepted per episode (thinking mode, ``tool_choice``
            auto); 0 requires a tool call in every reply.
        thinking_budget: Anthropic extended-thinking budget in tokens (>= 1024 and below
            ``max_tokens``); implies ``tool_choice`` auto, which extended thinking requires.
        reasoning_effort: OpenAI ``reasoning_effort`` (``"low"``, ``"medium"``, ``"high"``,
            ...), sent as given.
        rate_limiter: a limiter shared with other agents (and processes), consulted before
            every HTTP request; None sends at once.
        named: the session prompt also names the variables (``ACDBEnv(named=True)`` only).

    Raises:
        ValueError: a bad argument, or no API key for the provider's own API (a custom
            ``base_url`` gets a placeholder key, and with ``cache_dir`` a missing key fails
            only on a cache miss).
    """

    def __init__(
        self,
        variant: Variant,
        *,
        provider: Provider,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        transcript_path: Path | None = None,
        cache_dir: Path | None = None,
        max_tokens: int = 4096,
        state_hypothesis: bool = False,
        prompt_cache: bool = True,
        text_turns: int = 0,
        thinking_budget: int | None = None,
        reasoning_effort: str | None = None,
        rate_limiter: RateLimiter | None = None,
        named: bool = False,
    ) -> None:
        check_variant(variant)
        check_arguments(provider, model, temperature, timeout, max_retries, backoff, max_tokens)
        check_thinking(provider, text_turns, thinking_budget, reasoning_effort, max_tokens)
        self.prompt_cache = bool(prompt_cache)
        self.text_turns = text_turns
        self.thinking_budget = thinking_budget
        self.reasoning_effort = reasoning_effort
        self.rate_limiter = rate_limiter
        self.name: str = variant
        self.variant: Variant = variant
        self.provider: Provider = provider
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_tokens = max_tokens
        self.state_hypothesis = bool(state_hypothesis)
        self.named = bool(named)
        self.transcript_path: Path | None = transcript_path
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV[provider])
        key = key or None
        if key is None and base_url is not None:
            key = _LOCAL_PLACEHOLDER_KEY
        if key is None and cache_dir is None:
            raise ValueError(
                f"no API key for provider {provider!r}: pass api_key= or set "
                f"{API_KEY_ENV[provider]}"
            )
        self._redact = Redactor([key])  # placeholder keys are too short to count as secrets
        self._adapter: ProviderAdapter = make_adapter(
            provider, api_key=key, base_url=base_url, timeout=self.timeout
        )
        self._cache = None if cache_dir is None else ResponseCache(Path(cache_dir), self._redact)
        self._requests = Requests(
            provider, model, max_retries, self.backoff, self._cache, self._redact
        )
        self._send_temperature = temperature is not None
        self._transcript = TranscriptWriter(None, self._redact)
        self._ready = False
        self._stats = CallStats()

    def __repr__(self) -> str:
        return f"LLMAgent({self.variant!r}, provider={self.provider!r}, model={self.model!r})"

    @property
    def config(self) -> dict[str, Any]:
        """The configuration as plain values, for result files (never the key)."""
        return {
            "variant": self.variant,
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "backoff": self.backoff,
            # Only when on, so the paper protocol's transcripts stay as they were.
            **({"state_hypothesis": True} if self.state_hypothesis else {}),
            "prompt_cache": self.prompt_cache,
            "text_turns": self.text_turns,
            "thinking_budget": self.thinking_budget,
            "reasoning_effort": self.reasoning_effort,
        }

    @property
    def states_hypotheses(self) -> bool:
        """Whether interventions carry the model's hypothesis (:class:`~acdb_gym.agents.Agent`)."""
        return self.state_hypothesis

    # ------------------------------------------------------------------ Agent protocol
    def reset(self, observation: Any, info: Any) -> None:
        """Start an episode: check the env variant, build the tools and prompts, open the
        transcript at :attr:`transcript_path`."""
        panel, n_nodes = self._check_env(info)
        self._panel: Panel = panel
        self._n_nodes = n_nodes
        world = prompts.world_options(info)  # hidden confounders, measured data, targets
        self._latent, self._real = world["latent"], world["real_data"]
        self._tools: tuple[ToolSpec, ...] = build_tools(
            self.variant,
            panel=panel,
            n_nodes=n_nodes,
            state_hypothesis=self.state_hypothesis,
            latent=self._latent > 0,
        )
        self._tool_names = tuple(tool.name for tool in self._tools)
        data = np.asarray(observation["observational"], dtype=np.float64)
        self._system = prompts.task_prompt(
            self.variant,
            panel=panel,
            n_nodes=n_nodes,
            state_hypothesis=self.state_hypothesis,
            **world,
        )
        self._session = prompts.session_prompt(
            self.variant,
            observational=data,
            panel=panel,
            budget=int(info["budget"]),
            max_steps=int(observation["steps_remaining"][0]),
            n_int=int(np.shape(observation["interventional"])[1]),
            real_names=prompts.real_names(info) if self.named else None,
        )
        self._history: list[Exchange] = []
        self._pending: _Pending | None = None
        self._stats = CallStats()
        self._transcript = TranscriptWriter(self.transcript_path, self._redact)
        self._transcript.write(
            "episode_start",
            agent=self.config,
            env={key: info.get(key) for key in ("panel", "tools", "n_nodes", "budget")},
            max_steps=int(observation["steps_remaining"][0]),
            tools=[tool.to_dict() for tool in self._tools],
            system=self._system,
            session=self._session,
        )
        if self._send_temperature and self._requests.knows(TEMPERATURE_REFUSED):
            self._send_temperature = False
            self._transcript.write("temperature_dropped", turn=0, reason="cached refusal")
        self._ready = True

    def act(self, observation: Any, info: Any) -> tuple[int, dict[str, Any]]:
        """Show the model the previous call's result, get its next tool call and return it as
        an action (:data:`INVALID_ACTION` when it cannot be executed).

        Raises:
            LLMProviderError: the provider gave no reply (retries exhausted or request refused).
            RuntimeError: before ``reset``.
        """
        return self._act(self._drive(self._query(observation, info)), observation)

    async def act_async(self, observation: Any, info: Any) -> tuple[int, dict[str, Any]]:
        """:meth:`act` through the SDK's async client: waits (rate limit, backoff, the reply)
        let other episodes of the event loop run.

        Raises:
            LLMProviderError: the provider gave no reply (retries exhausted or request refused).
            RuntimeError: before ``reset``.
        """
        return self._act(await self._drive_async(self._query(observation, info)), observation)

    def _act(self, reply: ModelReply, observation: Any) -> tuple[int, dict[str, Any]]:
        self._history.append(Exchange(reply))
        action, self._pending = self._interpret(reply, observation)
        return action

    def episode_stats(self) -> dict[str, Any]:
        """Token totals and call counts of the current episode.

        ``llm_calls`` and the token totals count every reply, cached or not; ``cache_hits``
        says how many came from the cache; ``retries`` counts extra HTTP attempts (transient
        failures and a dropped temperature); ``temperature_applied`` is True when a
        temperature is configured and every call of the episode sent it.
        """
        stats = {
            "tokens_in": self._stats.tokens_in,
            "tokens_out": self._stats.tokens_out,
            "tokens_cached_in": self._stats.tokens_cached_in,
            "tokens_cache_write": self._stats.tokens_cache_write,
            "llm_calls": self._stats.llm_calls,
            "temperature_applied": self.temperature is not None and self._send_temperature,
            "retries": self._stats.retries,
            "cache_hits": self._stats.cache_hits,
            "invalid_tool_calls": self._stats.invalid_tool_calls,
        }
        if self.text_turns:
            stats["text_turns"] = self._stats.text_turns
        return stats

    def close(self) -> None:
        """Release the SDK client's connections."""
        self._adapter.close()

    async def aclose(self) -> None:
        """Release the async client's connections (call from the loop that used them)."""
        await self._adapter.aclose()

    # ------------------------------------------------------------------ env pairing
    def _check_env(self, info: Any) -> tuple[Panel, int]:
        """The panel the agent plays and ``d``; ValueError when the env's tools do not match.

        ``llm_corr_obs`` never intervenes, so it plays the observational protocol in either
        panel (the sweep runs such agents once, observational preferred).
        """
        expected = env_kwargs_for(self.variant)
        tools, panel = info.get("tools"), info.get("panel")
        if tools != expected["tools"] or panel not in PANELS:
            raise ValueError(
                f"{self.variant} needs an env with tools={expected['tools']!r}, got "
                f"tools={tools!r}, panel={panel!r}; build it with env_kwargs_for({self.variant!r})"
            )
        played: Panel = PANEL_OBSERVATIONAL if self.variant == "llm_corr_obs" else panel
        return played, int(info["n_nodes"])

    # ------------------------------------------------------------------ model calls
    def _payload(self) -> dict[str, Any]:
        return self._adapter.build_payload(
            Request(
                model=self.model,
                system=self._system,
                session=self._session,
                history=self._history,
                tools=self._tools,
                temperature=self.temperature if self._send_temperature else None,
                max_tokens=self.max_tokens,
                prompt_cache=self.prompt_cache,
                tool_choice=self._tool_choice(),
                thinking_budget=self.thinking_budget,
                reasoning_effort=self.reasoning_effort,
            )
        )

    def _tool_choice(self) -> ToolChoice:
        """``auto`` while text-only turns remain (always with extended thinking, which refuses
        a forced tool call), else ``required``."""
        if self.thinking_budget is not None or self._stats.text_turns < self.text_turns:
            return "auto"
        return "required"

    def _drive(self, steps: Steps) -> ModelReply:
        return drive(steps, self._adapter, self.rate_limiter, self._note_wait)

    async def _drive_async(self, steps: Steps) -> ModelReply:
        return await drive_async(steps, self._adapter, self.rate_limiter, self._note_wait)

    def _note_wait(self, seconds: float) -> None:
        if seconds > 0:  # timing only: kept out of the episode statistics, which must replay
            self._transcript.write("rate_limited", waited_s=round(seconds, 4))

    def _query(self, observation: Any, info: Any) -> Steps:
        """The steps of one turn: show the previous call's result, then ask for a reply."""
        if not self._ready:
            raise RuntimeError("call reset() before act()")
        if self._history and self._pending is not None:
            self._history[-1].results = self._results(self._pending, observation, info)
            self._pending = None
        turn = len(self._history)
        payload = self._payload()
        raw = yield from self._requests.complete(payload, turn, self._transcript, self._stats)
        if raw is None:  # the server refused the temperature: stop sending it, ask again
            self._send_temperature = False
            self._stats.retries += 1
            self._transcript.write("temperature_dropped", turn=turn, temperature=self.temperature)
            payload = self._payload()
            raw = yield from self._requests.complete(payload, turn, self._transcript, self._stats)
            assert raw is not None, "a payload without temperature cannot be refused for it"
        reply = self._adapter.parse_reply(raw.body, id_prefix=f"call_{turn}")
        if self._cache is not None and not raw.cached:
            # Only a reply that parsed and is strict JSON is cached: a poisoned reply (NaN in a
            # tool input, a huge body) must not be replayed on every rerun.
            entry = {"provider": self.provider, "request": payload, "response": raw.body}
            if not self._cache.put(raw.key, entry):
                self._transcript.write("not_cached", turn=turn, cache_key=raw.key)
        self._stats.llm_calls += 1
        self._stats.tokens_in += reply.usage.tokens_in
        self._stats.tokens_out += reply.usage.tokens_out
        self._stats.tokens_cached_in += reply.usage.tokens_cached_in
        self._stats.tokens_cache_write += reply.usage.tokens_cache_write
        self._transcript.write(
            "reply",
            turn=turn,
            text=capped_record(reply.text),
            tool_calls=[
                {"id": c.id, "name": c.name, "arguments": capped_record(c.raw_arguments)}
                for c in reply.tool_calls
            ],
            usage=asdict(reply.usage),
            totals=self.episode_stats(),
        )
        return reply

    # ------------------------------------------------------------------ tool calls
    def _interpret(
        self, reply: ModelReply, observation: Any
    ) -> tuple[tuple[int, dict[str, Any]], _Pending]:
        calls = reply.tool_calls
        if not calls and self._stats.text_turns < self.text_turns:
            self._stats.text_turns += 1
            note = text_turn_note(self.text_turns - self._stats.text_turns)
            self._transcript.write("action", action=None, text_turn=self._stats.text_turns)
            return INVALID_ACTION, _Pending(errors=[ToolResult(note, False, None)])
        if len(calls) != 1:
            self._stats.invalid_tool_calls += 1
            if not calls:
                errors = [ToolResult(prompts.no_tool_call_error(self._tool_names), True, None)]
            else:
                text = prompts.multiple_calls_error(len(calls))
                errors = [ToolResult(text, True, call.id) for call in calls]
            self._transcript.write("action", action=None, error=errors[0].text)
            return INVALID_ACTION, _Pending(errors=errors)
        call = calls[0]
        try:
            if call.argument_error is not None:
                raise ToolCallError(
                    f"the arguments of {call.name} are not valid JSON ({call.argument_error}); "
                    "send a JSON object"
                )
            action = parse_tool_arguments(
                call.name,
                call.arguments,
                offered=self._tool_names,
                n_nodes=self._n_nodes,
                n_experiments=n_experiments(observation, self._n_nodes),
                state_hypothesis=self.state_hypothesis,
                latent=self._latent > 0,
            )
        except ToolCallError as error:
            self._stats.invalid_tool_calls += 1
            text = f"Error: {error}. The call was not executed and used a step."
            self._transcript.write("action", call_id=call.id, action=None, error=text)
            return INVALID_ACTION, _Pending(errors=[ToolResult(text, True, call.id)])
        self._transcript.write("action", call_id=call.id, action=repr(action), error=None)
        return actions.encode(action, n_nodes=self._n_nodes), _Pending(
            call_id=call.id, action=action
        )

    def _results(self, pending: _Pending, observation: Any, info: Any) -> list[ToolResult]:
        status = prompts.status_line(
            budget_remaining=int(observation["budget_remaining"][0]),
            steps_remaining=int(observation["steps_remaining"][0]),
            panel=self._panel,
        )
        if pending.errors:
            results = [
                ToolResult(f"{r.text}\n{status}", r.is_error, r.call_id) for r in pending.errors
            ]
        elif info.get("error") is not None:
            results = [ToolResult(f"Error: {info['error']}\n{status}", True, pending.call_id)]
        else:
            assert pending.action is not None
            text = describe_result(
                pending.action, observation, n_nodes=self._n_nodes, real=self._real
            )
            results = [ToolResult(f"{text}\n{status}", False, pending.call_id)]
        for result in results:
            self._transcript.write(
                "tool_result", call_id=result.call_id, is_error=result.is_error, text=result.text
            )
        return results
