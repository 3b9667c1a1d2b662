"""CITATION.cff names the version the package reports, and the README points to it."""

from __future__ import annotations

import re
from pathlib import Path

import acdb_gym

ROOT = Path(__file__).resolve().parents[1]


def test_citation_names_the_package_version() -> None:
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^cff-version: 1\.2\.0$", text, re.M)
    [version] = re.findall(r'^version: "([^"]+)"$', text, re.M)
    assert version == acdb_gym.__version__
    assert "Active Causal Discovery Benchmark" in text
    assert "[`CITATION.cff`](CITATION.cff)" in (ROOT / "README.md").read_text(encoding="utf-8")
