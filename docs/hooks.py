"""MkDocs hook of the documentation site: pages that cannot drift.

``<!-- acdb:levels -->`` in a page becomes the table ``acdb levels`` prints, made from the
ladders themselves (``acdb_gym.cli``), so the site's ladder tables are the code's.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

MARKER = "<!-- acdb:levels -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the levels marker with the table of every ladder's levels."""
    if MARKER not in markdown:
        return markdown
    from acdb_gym.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main(["levels"])
    return markdown.replace(MARKER, printed.getvalue())
