"""Docs that cannot drift: every shell command in README.md, docs/ and models/README.md runs, or
says why not (DESIGN §2, "Commands in the docs").

Each line of a fenced ``bash`` block is a command (a line ending in ``\\`` continues). A command
is one of:

1. **run here**, shrunk by the smoke rules (:data:`SMOKE_RULES`: one seed, one index, the first
   level, one worker...), in a scratch folder per document where the repository's ``models/``,
   ``docs/``, ``experiments/`` and ``benchmarks/`` are visible; the commands of a document run in
   its order, so a report finds the sweep above it;
2. **run by CI** verbatim (``.ci/run`` holds it: the README's test command);
3. **marked** by a trailing comment: ``# long: <time> at load <n>`` (how long it took and the
   load average it was measured at) or ``# needs: <what>`` (an API key, a model server, an MCP
   client, the network, another venv).

And no two commands write the same folder (``--out``) unless they are the same command or stand
in the same block (one block shows one run, as the LLM section's three ways do).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = (
    ROOT / "README.md",
    ROOT / "models" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
)
LONG = re.compile(r"#\s*long:\s*.*\b\d[\d.,]*\s*(s|min|minutes|h|hours)\b.*\bload\b[^#]*\d")
NEEDS = re.compile(r"#\s*needs:\s*\S")
INSTALL_PREFIX = re.compile(r"^python3? -m venv \.venv && \.venv/bin/pip install [^&]*&& ")
SMOKE_RULES: tuple[tuple[str, str], ...] = (
    (r"--seeds \d+", "--seeds 1"),
    (r"-T seeds=\d+", "-T seeds=1"),
    (r"--indices (\d+):\d+", lambda m: f"--indices {m[1]}:{int(m[1]) + 1}"),  # type: ignore[list-item]
    (r"--indices (\d+)-\d+", r"--indices \1-\1"),
    (r"--short-indices (\d+)-\d+", r"--short-indices \1-\1"),
    (r"--levels ([^\s,]+),\S+", r"--levels \1"),
    (r"-T levels=([^\s,]+),\S+", r"-T levels=\1"),
    (r"--workers \d+", "--workers 1"),
    (r"--instances \d+", "--instances 1"),
    (r"--custom-instances \d+", "--custom-instances 0"),
    (r"--timesteps \d+", "--timesteps 512"),
    (r"--total-timesteps \d+", "--total-timesteps 256"),
)
"""How a documented command is shrunk to a smoke run (pattern, replacement)."""


@dataclass(frozen=True)
class Command:
    """One documented command: where it is, its text and its block."""

    document: Path
    line: int
    block: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"

    @property
    def code(self) -> str:
        """The command without a trailing comment."""
        return re.sub(r"\s+#\s.*$", "", self.text).strip()

    @property
    def out(self) -> str | None:
        found = re.search(r"--out\s+(\S+)", self.code)
        return found[1].rstrip("/") if found else None


def commands(document: Path) -> list[Command]:
    """Every command of the document's ``bash`` blocks, continuation lines joined."""
    text = document.read_text(encoding="utf-8")
    found = []
    for block, match in enumerate(re.finditer(r"^```bash\n(.*?)^```", text, re.S | re.M)):
        first = text[: match.start()].count("\n") + 2
        lines = match[1].split("\n")
        index = 0
        while index < len(lines):
            start = index
            line = lines[index]
            while line.rstrip().endswith("\\") and index + 1 < len(lines):
                index += 1
                line = line.rstrip()[:-1].rstrip() + " " + lines[index].strip()
            index += 1
            if line.strip() and not line.strip().startswith("#"):
                found.append(Command(document, first + start, block, line.strip()))
    return found


ALL = [command for document in DOCUMENTS for command in commands(document)]
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _kind(command: Command) -> str:
    if command.code in CI:
        return "ci"
    if LONG.search(command.text):
        return "long"
    if NEEDS.search(command.text):
        return "needs"
    return "run"


def smoke(code: str) -> str:
    """The smoke run of a command: no install prefix, shrunk by :data:`SMOKE_RULES`, this
    interpreter for ``python``, ``acdb`` and ``inspect``."""
    code = INSTALL_PREFIX.sub("", code).replace(".venv/bin/", "")
    for pattern, replacement in SMOKE_RULES:
        code = re.sub(pattern, replacement, code)  # type: ignore[call-overload]
    if code.startswith("acdb sweep") and "--ladder" in code and "--levels" not in code:
        ladder = re.search(r"--ladder (\S+)", code)[1]  # type: ignore[index]
        from acdb_gym.core.ladders.shipped import ALL_LADDERS

        code += f" --levels {next(iter(ALL_LADDERS[ladder]))}"
    if code.startswith("acdb sweep") and "--seeds" not in code and "--indices" not in code:
        code += " --seeds 1"
    python = shlex.quote(sys.executable)
    bin_dir = shlex.quote(str(Path(sys.executable).parent))
    code = re.sub(r"^(PYTHONPATH=\S+ )?python3? ", rf"\1{python} ", code)
    code = re.sub(r"^acdb ", rf"{python} -m acdb_gym ", code)
    return re.sub(r"^inspect ", f"{bin_dir}/inspect ", code)


def test_the_documents_have_commands() -> None:
    assert len(ALL) >= 50
    assert {command.document.name for command in ALL} >= {"README.md", "writing_an_agent.md"}


@pytest.mark.parametrize("command", ALL, ids=[c.where for c in ALL])
def test_every_marker_is_complete(command: Command) -> None:
    """A ``long`` marker has a time and a load; a ``needs`` marker names what."""
    if "# long" in command.text:
        assert LONG.search(command.text), f"{command.where}: '# long: <time> at load <n>'"
    if "# needs" in command.text:
        assert NEEDS.search(command.text), f"{command.where}: '# needs: <what>'"


def test_no_two_commands_share_an_output_folder() -> None:
    writers: dict[str, list[Command]] = {}
    for command in ALL:
        if command.out is not None and _kind(command) != "ci":
            writers.setdefault(command.out, []).append(command)
    shared = {
        folder: [c.where for c in group]
        for folder, group in writers.items()
        if len({c.code for c in group}) > 1 and len({(c.document, c.block) for c in group}) > 1
    }
    assert not shared, shared


def _without_pythonpath(environment: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in environment.items() if key != "PYTHONPATH"}


@pytest.mark.slow
@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(ROOT)) for d in DOCUMENTS])
def test_every_command_of_a_document_runs(document: Path, tmp_path: Path) -> None:
    """The document's runnable commands, in its order, in one scratch folder."""
    for name in ("models", "docs", "experiments", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name)
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MPLBACKEND": "Agg",
        "RAY_AUTH_MODE": "disabled",
        "OPENAI_API_KEY": "local",  # read only by commands that reach a local server
    }
    for command in commands(document):
        if _kind(command) != "run":
            continue
        code = smoke(command.code)
        result = subprocess.run(
            ["bash", "-c", code],
            cwd=tmp_path,
            # inspect finds the task through the installed package's entry point; the source
            # path would put the editable install's egg-info (no entry points) first.
            env=_without_pythonpath(environment) if "inspect eval" in code else environment,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, f"{command.where}: {code}\n{result.stderr[-2000:]}"
