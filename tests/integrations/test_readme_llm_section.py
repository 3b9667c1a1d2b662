"""The README's "LLM agents" commands stay valid: every ``acdb`` command parses, and every
``inspect eval acdb_gym/acdb`` line passes only options the task takes."""

from __future__ import annotations

import inspect
import re
import shlex
from pathlib import Path

import pytest

from acdb_gym.cli import build_parser

README = Path(__file__).parents[2] / "README.md"


def _commands() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## LLM agents", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] in (["acdb"], ["inspect"]):
                commands.append(words)
    return commands


def test_the_section_shows_the_three_ways_in() -> None:
    starts = {" ".join(words[:2]) for words in _commands()}
    assert {"acdb sweep", "inspect eval", "acdb mcp", "acdb inspect-import"} <= starts


@pytest.mark.parametrize("words", [w for w in _commands() if w[0] == "acdb"], ids=" ".join)
def test_acdb_commands_parse(words: list[str]) -> None:
    args = build_parser().parse_args(words[1:])
    assert args.command == words[1]


def test_inspect_commands_use_the_tasks_options() -> None:
    pytest.importorskip("inspect_ai")
    from acdb_gym.integrations.inspect_task import acdb

    accepted = set(inspect.signature(acdb).parameters)
    for words in (w for w in _commands() if w[0] == "inspect"):
        assert words[1:3] == ["eval", "acdb_gym/acdb"]
        options = [words[i + 1].split("=")[0] for i, w in enumerate(words) if w == "-T"]
        assert options and set(options) <= accepted
