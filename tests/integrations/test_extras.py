"""The integrations are optional: ``import acdb_gym`` and the ``acdb`` command load neither
inspect_ai nor mcp, and a missing extra is named when a front end is imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )


@pytest.mark.slow
def test_base_package_and_cli_do_not_load_the_extras() -> None:
    code = (
        "import sys, acdb_gym, acdb_gym.cli, acdb_gym.integrations.episode\n"
        "acdb_gym.cli.build_parser().parse_args(['mcp', '--out', 'x'])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'inspect_ai', 'mcp'}))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_missing_extra_is_named() -> None:
    for module, extra in (("mcp", "mcp"), ("inspect_ai", "inspect")):
        front = "mcp_server" if module == "mcp" else "inspect_task"
        code = f"import sys; sys.modules[{module!r}] = None\nimport acdb_gym.integrations.{front}"
        result = _python(code)
        assert result.returncode != 0
        assert f"pip install 'acdb_gym[{extra}]'" in result.stderr
