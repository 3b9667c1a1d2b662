"""The agent-writing page and its example script cannot drift apart, and the script runs.

Every fenced ``python`` block of ``docs/writing_an_agent.md`` carries a marker comment on the
line before it: ``<!-- check: examples/FILE.py#SECTION -->`` (the block is that section of the
file, between its ``# --8<-- [start:SECTION]`` and ``[end:SECTION]`` lines) or
``<!-- check: run -->`` (the block runs as it stands).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGE = DOCS / "writing_an_agent.md"
EXAMPLE = DOCS / "examples" / "my_agent.py"

_BLOCK = re.compile(r"(?:<!-- check: (?P<check>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)


def _blocks() -> list[tuple[str | None, str]]:
    """Every python block of the page as ``(marker or None, code)``."""
    return [(m["check"], m["code"]) for m in _BLOCK.finditer(PAGE.read_text())]


def _section(path: Path, name: str) -> str:
    text = path.read_text()
    match = re.search(rf"# --8<-- \[start:{name}\]\n(.*?)# --8<-- \[end:{name}\]\n", text, re.S)
    assert match is not None, f"no section {name!r} in {path}"
    return match[1].strip("\n") + "\n"


def _environment() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "MPLBACKEND": "Agg"}


def test_every_python_block_is_checked() -> None:
    blocks = _blocks()
    unmarked = [code.splitlines()[0] for check, code in blocks if check is None]
    assert not unmarked, f"python blocks without a check marker start with: {unmarked}"
    sections = [check for check, _ in blocks if check and check != "run"]
    assert sections == [
        "examples/my_agent.py#agent",
        "examples/my_agent.py#observation",
        "examples/my_agent.py#score",
        "examples/my_agent.py#sweep",
    ]


@pytest.mark.parametrize(
    ("check", "code"), [block for block in _blocks() if block[0] not in (None, "run")]
)
def test_block_is_the_file_section(check: str, code: str) -> None:
    file_name, _, section = check.partition("#")
    assert code == _section(DOCS / file_name, section), f"{check} differs from the page"


@pytest.mark.slow
@pytest.mark.parametrize("code", [code for check, code in _blocks() if check == "run"])
def test_runnable_block_runs(code: str, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=_environment(),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def _text_blocks() -> list[str]:
    return re.findall(r"```text\n(.*?)```", PAGE.read_text(), re.S)


@pytest.mark.slow
def test_example_script_runs_end_to_end(tmp_path: Path) -> None:
    # The page's command, so the output it shows is checked too (about 25 fast jobs).
    out = tmp_path / "run"
    levels = ["--levels", "L0", "L1", "L2", "--seeds", "4"]
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), *levels, "--out", str(out)],
        capture_output=True,
        text=True,
        env=_environment(),
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    from acdb_gym.envs.acdb_env import OBSERVATION_KEYS

    observation_text, tables_text = _text_blocks()
    assert done.stdout.splitlines()[1 : 2 + len(OBSERVATION_KEYS)] == (
        observation_text.splitlines()
    )
    assert [line.split()[0] for line in observation_text.splitlines()[:-1]] == list(
        OBSERVATION_KEYS
    )
    assert tables_text in done.stdout
    assert re.search(r"^  L2: directed F1 \d+\.\d%, interventions \d\.\d$", done.stdout, re.M)
    assert "  24 jobs run, 0 already done, 0 failed" in done.stdout.splitlines()
    rows = (out / "results.jsonl").read_text().splitlines()
    assert len(rows) == 24 and all('"status": "ok"' in row for row in rows)
    assert sum('"pc_undirected_edges"' in row for row in rows) == 12  # the shift_pc rows
    assert "shift_pc (active)" in (out / "report.md").read_text()
