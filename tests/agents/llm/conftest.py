"""A local model server for the LLM agent tests: the real ``openai`` and ``anthropic`` SDKs talk
HTTP to it on 127.0.0.1.

The server speaks both wire formats (``POST /v1/chat/completions`` and ``POST /v1/messages``)
and answers each request with whatever a scripted *behaviour* returns for it: a :class:`Reply`
(text and tool calls, encoded in the provider's format with usage) or a :class:`Fault` (an HTTP
error, a hung response or a dropped connection). Behaviours see a provider-neutral view of the
request (:class:`SeenRequest`) so one script drives both providers.

Usage reports prompt caching the way each provider does (:class:`PromptCache`): OpenAI's
``prompt_tokens_details.cached_tokens`` (automatic), Anthropic's ``cache_read_input_tokens`` and
``cache_creation_input_tokens`` (up to the ``cache_control`` markers). ``latency_s`` delays
every answer, to measure concurrency.

Tests run with ``--import-mode=importlib``, so the helpers reach them through the ``fake``
fixture rather than by import.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

import pytest

from acdb_gym.agents.llm import LLMAgent
from acdb_gym.core.graphs import DAG

FAKE_KEY = "sk-test-SECRET-123"
"""A distinctive fake API key: tests assert it never appears in transcripts, caches or errors."""


@dataclass(frozen=True)
class Call:
    """A tool call the scripted model makes; ``arguments`` that are a str are sent verbatim."""

    name: str
    arguments: Any


@dataclass(frozen=True)
class Reply:
    """A scripted model reply; ``thinking`` becomes a signed Anthropic thinking block first."""

    calls: tuple[Call, ...] = ()
    text: str = ""
    thinking: str = ""


@dataclass(frozen=True)
class Fault:
    """A scripted failure: ``kind`` is ``"status"``, ``"hang"`` or ``"drop"``."""

    kind: str
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    hang_s: float = 5.0


@dataclass(frozen=True)
class SeenRequest:
    """A request as the server saw it, with a provider-neutral view for behaviours."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def provider(self) -> str:
        return "anthropic" if self.path.endswith("/messages") else "openai"

    @property
    def raw_text(self) -> str:
        return json.dumps(self.body)

    @property
    def system(self) -> str:
        if self.provider == "anthropic":
            system = self.body.get("system", "")
            if isinstance(system, list):  # text blocks (with a cache marker)
                return "".join(block["text"] for block in system)
            return str(system)
        return str(self.body["messages"][0]["content"])

    @property
    def session(self) -> str:
        if self.provider == "anthropic":
            return str(self.body["messages"][0]["content"][0]["text"])
        return str(self.body["messages"][1]["content"])

    @property
    def tool_names(self) -> list[str]:
        if self.provider == "anthropic":
            return [tool["name"] for tool in self.body["tools"]]
        return [tool["function"]["name"] for tool in self.body["tools"]]

    @property
    def turn(self) -> int:
        """Assistant messages in the history so far."""
        return sum(1 for m in self.body["messages"] if m["role"] == "assistant")

    @property
    def last_results(self) -> list[tuple[str, bool, str | None]]:
        """``(text, is_error, call_id)`` of what the model was shown after its last reply."""
        messages = self.body["messages"]
        if self.turn == 0:
            return []
        if self.provider == "anthropic":
            blocks = messages[-1]["content"]
            return [
                (b["content"], bool(b.get("is_error")), b["tool_use_id"])
                if b["type"] == "tool_result"
                else (b["text"], True, None)
                for b in blocks
            ]
        last_assistant = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        return [
            (m["content"], m["content"].startswith("Error"), m.get("tool_call_id"))
            for m in messages[last_assistant + 1 :]
        ]


Behaviour = Callable[[SeenRequest], "Reply | Fault"]


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


def _prompt_blocks(body: dict[str, Any], provider: str) -> list[tuple[str, bool]]:
    """The prompt as the provider caches it: tools, system, then every message block, in order,
    each as ``(canonical text without the cache marker, carries a cache marker)``."""
    raw: list[Any] = list(body.get("tools") or [])
    if provider == "anthropic":
        system = body.get("system") or []
        raw.extend(system if isinstance(system, list) else [{"type": "text", "text": system}])
        for message in body.get("messages", []):
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            raw.extend({"role": message.get("role"), **block} for block in blocks)
    else:
        raw.extend(body.get("messages", []))
    out = []
    for block in raw:
        marked = isinstance(block, dict) and "cache_control" in block
        plain = {k: v for k, v in block.items() if k != "cache_control"} if marked else block
        out.append((json.dumps(plain, sort_keys=True), marked))
    return out


class PromptCache:
    """Deterministic prompt-cache accounting, per episode.

    Each request's prompt is a sequence of blocks (:func:`_prompt_blocks`); a block of ``c``
    characters counts ``c // 4 + 1`` tokens. OpenAI: the cached tokens are those of the longest
    prefix (in whole blocks) that an earlier request sent; every prefix is remembered.
    Anthropic: only prefixes ending at a ``cache_control`` marker are remembered (written); a
    request reads the longest remembered prefix that ends at or before its last marker, writes
    the rest up to that marker, and ``input_tokens`` counts only what follows. The memory is
    kept per episode (keyed by the first user message, the data block), so counts do not depend
    on how concurrent episodes interleave.
    """

    def __init__(self) -> None:
        self._seen: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any], provider: str) -> dict[str, int]:
        blocks = _prompt_blocks(body, provider)
        tokens = [_tokens(text) for text, _ in blocks]
        prefixes, digest = [], hashlib.sha256()
        for text, _ in blocks:
            digest.update(text.encode())
            prefixes.append(digest.hexdigest())
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        scope = next((text for text, _ in _prompt_blocks({"messages": users[:1]}, provider)), "")
        with self._lock:
            seen = self._seen.setdefault(hashlib.sha256(scope.encode()).hexdigest(), set())
            if provider == "openai":
                hit = max((k + 1 for k, h in enumerate(prefixes) if h in seen), default=0)
                seen.update(prefixes)
                return {"total": sum(tokens), "read": sum(tokens[:hit]), "write": 0}
            marks = [k for k, (_, marked) in enumerate(blocks) if marked]
            last = marks[-1] + 1 if marks else 0
            hit = max((k + 1 for k in range(last) if prefixes[k] in seen), default=0)
            seen.update(prefixes[k] for k in marks)
        read, write = sum(tokens[:hit]), sum(tokens[hit:last])
        return {"total": sum(tokens), "read": read, "write": write}


def encode_openai(
    reply: Reply, body: dict[str, Any], serial: int, cache: dict[str, int]
) -> dict[str, Any]:
    """A Chat Completions response body."""
    tool_calls = [
        {
            "id": f"call_{cache['turn'] + 1}_{k}",
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": call.arguments
                if isinstance(call.arguments, str)
                else json.dumps(call.arguments),
            },
        }
        for k, call in enumerate(reply.calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    prompt = cache["total"]
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": 17,
            "total_tokens": prompt + 17,
            "prompt_tokens_details": {"cached_tokens": cache["read"]},
        },
    }


def encode_anthropic(
    reply: Reply, body: dict[str, Any], serial: int, cache: dict[str, int]
) -> dict[str, Any]:
    """A Messages response body."""
    content: list[dict[str, Any]] = []
    if reply.thinking:
        signature = hashlib.sha256(reply.thinking.encode()).hexdigest()[:16]
        content.append({"type": "thinking", "thinking": reply.thinking, "signature": signature})
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    content.extend(
        {
            "type": "tool_use",
            "id": f"toolu_{cache['turn'] + 1}_{k}",
            "name": call.name,
            "input": call.arguments,
        }
        for k, call in enumerate(reply.calls)
    )
    return {
        "id": f"msg_{serial}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": cache["total"] - cache["read"] - cache["write"],
            "cache_read_input_tokens": cache["read"],
            "cache_creation_input_tokens": cache["write"],
            "output_tokens": 17,
        },
    }


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # many concurrent clients: the default backlog of 5 drops some


class FakeModelServer:
    """A threaded HTTP server on 127.0.0.1 (port 0) answering with a behaviour.

    Attributes:
        requests: every request received, in order.
        responses: every JSON body sent back (replies and error bodies), in order.
        failures: exceptions raised by the behaviour (answered with HTTP 418).
        cache: the prompt-cache accounting behind every reply's usage.
        latency_s: seconds every request waits before it is answered.
        max_in_flight: the most requests that were being answered at once.
    """

    def __init__(self, behaviour: Behaviour, *, latency_s: float = 0.0) -> None:
        self.behaviour = behaviour
        self.cache = PromptCache()
        self.latency_s = latency_s
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests: list[SeenRequest] = []
        self.responses: list[dict[str, Any]] = []
        self.failures: list[BaseException] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def base_url(self, provider: str) -> str:
        root = f"http://127.0.0.1:{self.port}"
        return f"{root}/v1" if provider == "openai" else root

    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                seen = SeenRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.requests.append(seen)
                    serial = len(server.requests)
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                if server.latency_s:
                    time.sleep(server.latency_s)
                with server._lock:
                    server.in_flight -= 1
                try:
                    outcome = server.behaviour(seen)
                except Exception as error:  # a broken script must fail the test loudly
                    server.failures.append(error)
                    self._send(418, {"error": {"message": f"behaviour failed: {error!r}"}}, {})
                    return
                if isinstance(outcome, Fault):
                    self._fault(outcome)
                    return
                encode = encode_anthropic if seen.provider == "anthropic" else encode_openai
                # Call ids count the conversation's turns (not the server's requests), so an
                # episode gets the same ids however concurrent episodes interleave.
                usage = {**server.cache.usage(body, seen.provider), "turn": seen.turn}
                self._send(200, encode(outcome, body, serial, usage), {})

            def _fault(self, fault: Fault) -> None:
                if fault.kind == "drop":
                    self.close_connection = True  # no status line: the client sees EOF
                    return
                if fault.kind == "hang":
                    server._stop.wait(fault.hang_s)
                    with contextlib.suppress(OSError):  # the client has given up
                        self._send(200, {"late": True}, {})
                    return
                body = fault.body or {
                    "error": {"message": f"scripted {fault.status}", "type": "api_error"}
                }
                self._send(fault.status, body, fault.headers)

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(body).encode()
                with server._lock:
                    server.responses.append(body)
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


class Script:
    """A behaviour that plays ``steps`` in order (one per request), then calls ``then``."""

    def __init__(self, steps: list[Reply | Fault], then: Behaviour | None = None) -> None:
        self.steps = list(steps)
        self.then = then
        self._lock = threading.Lock()

    def __call__(self, request: SeenRequest) -> Reply | Fault:
        with self._lock:
            if self.steps:
                return self.steps.pop(0)
        if self.then is None:
            raise AssertionError(f"script exhausted at turn {request.turn}")
        return self.then(request)


def submit_reply(
    directed: Sequence[tuple[int, int]], undirected: Sequence[tuple[int, int]] = ()
) -> Reply:
    """A reply that submits a graph given by node indices."""
    return Reply(
        (
            Call(
                "submit_graph",
                {
                    "directed_edges": [[f"X{i}", f"X{j}"] for i, j in directed],
                    "undirected_edges": [[f"X{i}", f"X{j}"] for i, j in undirected],
                },
            ),
        )
    )


def competent(truth: DAG) -> Behaviour:
    """Reads the prompt, intervenes once on X0 when it can, then submits the true graph."""

    def behave(request: SeenRequest) -> Reply:
        if "Variables (d = " not in request.session:
            raise AssertionError("the session prompt does not list the variables")
        if request.turn == 0 and "intervene" in request.tool_names:
            return Reply(
                (Call("intervene", {"variable": "X0", "value": 3.0}),), text="Let me test X0."
            )
        return submit_reply(truth.edges())

    return behave


def leaked_edges(text: str, truth: DAG) -> list[tuple[int, int]]:
    """True edges written in ``text`` in any form an agent could have copied from the truth:
    a submit_graph pair, an arrow, or the DAG's own repr / edge list."""
    found = []
    compact = text.replace(" ", "").replace('\\"', '"')
    for i, j in truth.edges():
        forms = (f'["X{i}","X{j}"]', f"X{i}->X{j}", f"X{i}→X{j}", f"({i},{j})")
        if any(form in compact for form in forms):
            found.append((i, j))
    return found


AGENT_DEFAULTS: dict[str, Any] = {
    "model": "test-model",
    "api_key": FAKE_KEY,
    "timeout": 5.0,
    "backoff": 0.01,
    "max_retries": 2,
}
"""How every LLM test builds its agent unless a test says otherwise."""


def build_agent(
    server: FakeModelServer, provider: str, variant: str = "llm_raw", **options: Any
) -> LLMAgent:
    """An :class:`LLMAgent` talking to ``server`` with :data:`AGENT_DEFAULTS`, overridden by
    ``options``."""
    return LLMAgent(
        variant,  # type: ignore[arg-type]
        provider=provider,  # type: ignore[arg-type]
        base_url=server.base_url(provider),
        **{**AGENT_DEFAULTS, **options},
    )


@pytest.fixture
def fake() -> Iterator[SimpleNamespace]:
    """Server factory and helpers; every server started is closed after the test."""
    servers: list[FakeModelServer] = []

    def serve(behaviour: Behaviour, *, latency_s: float = 0.0) -> FakeModelServer:
        server = FakeModelServer(behaviour, latency_s=latency_s)
        servers.append(server)
        return server

    yield SimpleNamespace(
        KEY=FAKE_KEY,
        Call=Call,
        Reply=Reply,
        Fault=Fault,
        Script=Script,
        serve=serve,
        agent=build_agent,
        submit_reply=submit_reply,
        competent=competent,
        leaked_edges=leaked_edges,
    )
    for server in servers:
        server.close()
        assert not server.failures, f"scripted behaviour failed: {server.failures}"
