"""One sweep per run directory: an exclusive lock on ``OUT/.sweep.lock``.

Two sweeps writing to one run directory would both run every job (with LLM agents, paying twice)
and interleave two episodes in one transcript. :class:`RunDirectoryLock` takes an exclusive
``flock`` on a lock file in the directory for as long as a sweep runs and writes the holder's PID
and command into it; a second sweep fails at once with :class:`RunDirectoryBusyError` naming
them. The operating system releases the lock when the holder exits, however it exits (even on
SIGKILL), so a crashed sweep never leaves the directory locked.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sys
from pathlib import Path
from types import TracebackType

from acdb_gym.core.untrusted import loads, open_nofollow

__all__ = ["LOCK_FILE", "RunDirectoryBusyError", "RunDirectoryLock"]

LOCK_FILE = ".sweep.lock"
"""The lock file's name inside a run directory."""


class RunDirectoryBusyError(RuntimeError):
    """Another process holds the run directory's lock.

    Attributes:
        directory: the run directory.
        pid: the holder's process id, when it could be read.
        command: the holder's command line, when it could be read.
    """

    def __init__(self, directory: Path, pid: int | None, command: str | None) -> None:
        self.directory = directory
        self.pid = pid
        self.command = command
        holder = "another process" if pid is None else f"process {pid}"
        if command:
            holder += f" ({command})"
        super().__init__(
            f"{directory} is in use: {holder} is running a sweep or an MCP server there; wait "
            "for it to finish or choose another --out"
        )


class RunDirectoryLock:
    """An exclusive, non-blocking lock on a run directory (a context manager).

    Args:
        directory: the run directory (created if missing).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock and record this process in the lock file.

        Raises:
            RunDirectoryBusyError: another process holds it.
            UntrustedInputError: the lock file is a symbolic link (nothing is written).
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a link planted as the lock file is refused, never truncated through.
        fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise RunDirectoryBusyError(self.directory, *holder) from None
        os.ftruncate(fd, 0)
        record = {"pid": os.getpid(), "command": shlex.join(sys.orig_argv)}
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (the file stays; it is empty of meaning once unlocked)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunDirectoryLock:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


_MAX_HOLDER_BYTES = 65_536
"""The most of the lock file read for the holder's PID and command."""


def _read_holder(fd: int) -> tuple[int | None, str | None]:
    """The PID and command the holder wrote, or None for what cannot be read."""
    try:
        data = loads(os.pread(fd, _MAX_HOLDER_BYTES, 0) or b"{}", max_bytes=_MAX_HOLDER_BYTES)
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    pid, command = data.get("pid"), data.get("command")
    return (
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        command if isinstance(command, str) else None,
    )
