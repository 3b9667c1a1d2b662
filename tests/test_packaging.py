"""The built wheel carries the manifests and the real-system data files as package data, and an
installed copy finds them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import acdb_gym

REPO = Path(acdb_gym.__file__).parents[1]


def _build_wheel(tmp_path: Path) -> Path:
    # A copy of the sources, so that the build's scratch files stay out of the working tree.
    source = tmp_path / "source"
    shutil.copytree(
        REPO / "acdb_gym", source / "acdb_gym", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, source / name)
    dist = tmp_path / "dist"
    code = (
        "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(dist)],
        cwd=source,
        capture_output=True,
        text=True,
        check=True,
    )
    return dist / done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_an_installed_wheel_finds_the_shipped_manifests(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        for ladder in ("v0", "v1"):
            shipped = archive.read(f"acdb_gym/core/ladders/manifests/{ladder}.tsv")
            assert shipped == (REPO / f"acdb_gym/core/ladders/manifests/{ladder}.tsv").read_bytes()
        real = sorted((REPO / "acdb_gym/core/data/real").iterdir())
        assert {"NOTICE", "sachs_cytometry.csv.gz"} <= {path.name for path in real}
        for path in real:
            shipped = archive.read(f"acdb_gym/core/data/real/{path.name}")
            assert shipped == path.read_bytes(), path.name
        audits = "acdb_gym/report/data/order_audits.json"  # the shipped order audits
        assert archive.read(audits) == (REPO / audits).read_bytes()
        archive.extractall(tmp_path / "site")
    # A fresh interpreter that sees only the unpacked wheel (not the working tree).
    code = (
        "import acdb_gym.core.ladders.shipped as ladder; "
        "print(ladder.__file__); "
        "from acdb_gym.core.graphs import topology; "
        "print(topology('dream4-2').dag.n_edges); "
        "print(min(len(level.manifest) for levels in ladder.LADDERS.values() "
        "for level in levels.values()))"
    )
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    location, dream4_edges, size = done.stdout.split()
    assert int(dream4_edges) == 242
    assert Path(location).is_relative_to(tmp_path / "site")
    assert int(size) == 200
