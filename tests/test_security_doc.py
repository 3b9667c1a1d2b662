"""Every test SECURITY.md names exists, so the list of guarantees cannot drift from the tests."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _named_tests() -> list[tuple[str, str]]:
    """``(file, test)`` for each ``tests/x.py::test_y`` and each ``::test_z`` after it."""
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    named = []
    current = ""
    for match in re.finditer(r"`(tests/[\w/]+\.py)?::(test_\w+)`", text):
        current = match.group(1) or current
        named.append((current, match.group(2)))
    return named


def test_every_test_security_md_names_exists() -> None:
    named = _named_tests()
    assert len(named) >= 15
    missing = [
        f"{file}::{test}"
        for file, test in named
        if not re.search(
            rf"^(async )?def {test}\(", (ROOT / file).read_text(encoding="utf-8"), re.M
        )
    ]
    assert not missing, missing
