"""The one loop that keeps a bounded number of tasks in flight, for every scheduler of the
sweep: the process pool, Ray and the event loop of concurrent LLM jobs
(:mod:`acdb_gym.sweep.schedulers`, :mod:`acdb_gym.sweep.concurrent`).

A scheduler gives it how to start one item (a future, a Ray reference, an asyncio task; or
None for an item it skips when its turn comes) and how to wait for the first of the pending
ones to finish; :func:`in_flight` starts items while fewer than ``limit`` are pending and
yields each finished handle as it finishes, so results stream back in completion order.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from typing import TypeVar

__all__ = ["in_flight"]

Item = TypeVar("Item")
Handle = TypeVar("Handle")


def in_flight(
    items: Iterable[Item],
    start: Callable[[Item], Handle | None],
    wait_any: Callable[[list[Handle]], tuple[Sequence[Handle], Sequence[Handle]]],
    *,
    limit: int,
    cancel: Callable[[list[Handle]], None] | None = None,
) -> Generator[Handle, None, None]:
    """Run ``items`` with at most ``limit`` in flight; yield each handle as it finishes.

    Args:
        items: the work, taken in order and only when its turn comes.
        start: starts one item and returns its handle, or None to skip it (not counted).
        wait_any: blocks until at least one pending handle finishes and returns
            ``(finished, still pending)``.
        limit: the most handles in flight at once (at least 1).
        cancel: called with the handles still pending when the consumer stops early.

    >>> list(in_flight(range(5), lambda i: None if i == 2 else i, lambda p: (p[:1], p[1:]), limit=2))
    [0, 1, 3, 4]

    Raises:
        ValueError: ``limit`` below 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    queue = iter(items)
    pending: list[Handle] = []
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < limit:
                for item in queue:
                    handle = start(item)
                    if handle is not None:
                        pending.append(handle)
                        break
                else:
                    exhausted = True
            if not pending:
                return
            finished, rest = wait_any(pending)
            pending = list(rest)
            yield from finished
    finally:
        if pending and cancel is not None:
            cancel(pending)
