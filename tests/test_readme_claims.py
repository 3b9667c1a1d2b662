"""The READMEs' claims are the blocks `experiments/readme_claims.py` wrote, byte for byte.

Every ``<!-- claims:NAME -->`` ... ``<!-- /claims:NAME -->`` block in README.md,
docs/results.md and models/README.md must equal ``docs/claims/NAME.md`` (so a hand edit or a stale paste fails),
and every file in docs/claims/ must be pasted somewhere (so no computed claim is left out).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "docs" / "claims"
DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "results.md", ROOT / "models" / "README.md")
OPEN = re.compile(r"<!-- claims:([a-z0-9-]+) -->\n")


def marked_blocks(text: str) -> dict[str, str]:
    """NAME -> the text between its opening and closing markers."""
    blocks: dict[str, str] = {}
    for match in OPEN.finditer(text):
        name = match.group(1)
        close = f"<!-- /claims:{name} -->"
        end = text.find(close, match.end())
        assert end >= 0, f"claims block {name!r} is not closed by {close}"
        assert name not in blocks, f"claims block {name!r} appears twice"
        blocks[name] = text[match.end() : end]
    return blocks


def all_blocks() -> dict[tuple[str, str], str]:
    return {
        (str(document.relative_to(ROOT)), name): block
        for document in DOCUMENTS
        for name, block in marked_blocks(document.read_text()).items()
    }


@pytest.mark.parametrize("key", sorted(all_blocks()), ids=lambda key: f"{key[0]}:{key[1]}")
def test_every_marked_block_equals_its_claims_file(key: tuple[str, str]) -> None:
    document, name = key
    path = CLAIMS / f"{name}.md"
    assert path.exists(), f"{document} marks claims block {name!r} but {path} does not exist"
    assert all_blocks()[key] == path.read_text(), (
        f"{document}'s block {name!r} differs from docs/claims/{name}.md: "
        "run python experiments/readme_claims.py --paste"
    )


def test_every_claims_file_is_pasted() -> None:
    pasted = {name for _, name in all_blocks()}
    files = {path.stem for path in CLAIMS.glob("*.md")}
    assert files, "docs/claims/ holds no claims"
    assert files <= pasted, f"claims never pasted into a README: {sorted(files - pasted)}"


def test_a_hand_edit_is_caught() -> None:
    text = "a\n<!-- claims:x -->\nnumbers\n<!-- /claims:x -->\nb\n"
    assert marked_blocks(text) == {"x": "numbers\n"}
    with pytest.raises(AssertionError, match="not closed"):
        marked_blocks("<!-- claims:y -->\nopen\n")


def test_paste_replaces_only_the_marked_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location(
        "readme_claims", ROOT / "experiments" / "readme_claims.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "readme_claims", script)  # its dataclasses look it up
    spec.loader.exec_module(script)
    claims, document = tmp_path / "claims", tmp_path / "README.md"
    claims.mkdir()
    (claims / "x.md").write_text("new | table\n")
    document.write_text("keep\n<!-- claims:x -->\nstale\n<!-- /claims:x -->\nkeep -1\n")
    monkeypatch.setattr(script, "CLAIMS", claims)
    monkeypatch.setattr(script, "DOCUMENTS", (document,))
    script.paste(["x"])
    assert (
        document.read_text()
        == "keep\n<!-- claims:x -->\nnew | table\n<!-- /claims:x -->\nkeep -1\n"
    )
    assert marked_blocks(document.read_text()) == {"x": "new | table\n"}
    assert script.wrap_prose("a -1 and 1e-4\n| -1 |") == "a −1 and 1e-4\n| -1 |"
