"""The MCP server's stdin read as hostile input: a request too deep to parse gets a reply.

The MCP SDK's stdio transport parses each line itself; a line nested past its parser's limit
(about 200 levels) is dropped without a reply, so a client waits for an answer that never
comes. :class:`GuardedLines` stands between stdin and the SDK: it reads one line of at most
:data:`MAX_LINE_BYTES` at a time and answers a line nested deeper than
:data:`~acdb_gym.core.untrusted.MAX_DEPTH` levels (measured without parsing it,
:func:`acdb_gym.core.untrusted.json_depth`), or longer than the limit, itself with a JSON-RPC
error on the server's own output stream: ``-32600`` (invalid request) carrying the request's id when the
id can be read, else ``-32700`` (parse error) with a null id, as JSON-RPC 2.0 asks. Every
other line goes to the SDK as before.

Needs ``pip install 'acdb_gym[mcp]'``.
"""

from __future__ import annotations

import json
from typing import IO, Any, Final

import anyio
import anyio.to_thread
import mcp.types as mcp_types
from mcp.shared.message import SessionMessage

from acdb_gym.core.untrusted import MAX_DEPTH, json_depth

__all__ = ["INVALID_REQUEST", "MAX_LINE_BYTES", "PARSE_ERROR", "GuardedLines"]

MAX_LINE_BYTES: Final = 16 << 20
"""The longest request line read (a longer one is answered with a parse error, unread)."""

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600


class GuardedLines:
    """Lines of a binary stream for the SDK's stdio reader (an async iterator of ``str``).

    Args:
        stream: the binary input (``sys.stdin.buffer``).

    Call :meth:`replies_to` with the transport's write stream before the SDK reads: a line
    that cannot be passed on is answered there.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._replies: Any = None
        self._ready = anyio.Event()

    def replies_to(self, write_stream: Any) -> None:
        """Answer refused lines on ``write_stream`` (the transport's, shared with the server)."""
        self._replies = write_stream
        self._ready.set()

    def __aiter__(self) -> GuardedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            raw = await anyio.to_thread.run_sync(self._stream.readline, MAX_LINE_BYTES + 1)
            if not raw:
                raise StopAsyncIteration
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                await self._skip_rest()
                await self._reply(None, PARSE_ERROR, f"a line longer than {MAX_LINE_BYTES} bytes")
                continue
            if not raw.strip():
                continue
            problem = _problem(raw)
            if problem is None:
                return raw.decode("utf-8", errors="replace")
            await self._reply(*problem)

    async def _skip_rest(self) -> None:
        while True:
            piece = await anyio.to_thread.run_sync(self._stream.readline, 1 << 20)
            if not piece or piece.endswith(b"\n"):
                return

    async def _reply(self, request_id: int | str | None, code: int, message: str) -> None:
        await self._ready.wait()
        error = mcp_types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=mcp_types.ErrorData(code=code, message=message),
        )
        await self._replies.send(SessionMessage(error))


def _problem(raw: bytes) -> tuple[int | str | None, int, str] | None:
    """Why a line is not passed on (its id, the error code and the message), or None.

    Only the nesting is checked here: the SDK parses everything else itself (an integer too
    large for a float included, which the tools then refuse as an invalid step)."""
    depth = json_depth(raw)
    if depth <= MAX_DEPTH:
        return None
    problem = f"JSON nested {depth} levels deep (at most {MAX_DEPTH})"
    request_id = _request_id(raw)
    if request_id is None:
        return None, PARSE_ERROR, f"Parse error: {problem}"
    return request_id, INVALID_REQUEST, f"Invalid request: {problem}"


def _request_id(raw: bytes) -> int | str | None:
    """The id of a request that is too deep for the bounded reader but still JSON Python's
    parser can read (up to its own recursion limit), or None."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    found = value.get("id") if isinstance(value, dict) else None
    if isinstance(found, bool) or not isinstance(found, int | str):
        return None
    return found
