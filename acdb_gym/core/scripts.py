"""How every command of the project fails: on one line (DESIGN §2, "Errors").

:class:`OneLineParser` is ``argparse.ArgumentParser`` whose error is one line naming the bad
argument and pointing to ``--help`` (argparse prints the whole usage first, which buries it);
:func:`run_script` runs a script's ``main`` and turns any exception into one line, unless
``ACDB_TRACEBACK=1`` asks for the traceback. ``acdb`` and the scripts under ``experiments/``
use both.

>>> parser = OneLineParser(prog="demo")
>>> _ = parser.add_argument("--n", type=int)
>>> try:
...     parser.parse_args(["--n", "x"])
... except SystemExit as stop:
...     stop.code
2
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn

__all__ = ["TRACEBACK_VARIABLE", "OneLineParser", "one_line", "run_script"]

TRACEBACK_VARIABLE = "ACDB_TRACEBACK"
"""Set to ``1`` to see a failing script's traceback instead of its one-line error."""


def one_line(error: BaseException) -> str:
    """An error's message on one line (a multi-line message joined with '; ')."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return "; ".join(lines) if lines else type(error).__name__


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``prog: error: message (see prog
    --help)``, exit status 2. Subcommand parsers made from it are of the same class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def run_script(main: Callable[[], int | None], *, prog: str | None = None) -> NoReturn:
    """Run a script's ``main`` and exit with its status; an exception becomes one line on
    stderr (``prog: error: ...``, exit status 1), or its traceback with ``ACDB_TRACEBACK=1``.
    Ctrl-C exits with status 130 and no traceback."""
    name = prog or os.path.basename(sys.argv[0])
    try:
        status = main()
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as error:
        if os.environ.get(TRACEBACK_VARIABLE) == "1":
            raise
        print(
            f"{name}: error: {one_line(error)} ({type(error).__name__}; "
            f"{TRACEBACK_VARIABLE}=1 shows the traceback)",
            file=sys.stderr,
        )
        sys.exit(1)
    sys.exit(status or 0)
