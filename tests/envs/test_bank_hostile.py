"""An instance bank is hostile input until it matches a digest held outside it (SECURITY.md):
every malformed bank is a ``BankError`` naming what is wrong, sizes are checked before any
array is allocated, and a bank edited with its internal digests recomputed is refused."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from acdb_gym.envs.design.bank import BankError, InstanceBank, bank_digest, build_bank, load_bank

SEEDS = range(700_000, 700_003)


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> InstanceBank:
    return build_bank(tmp_path_factory.mktemp("banks") / "b", ladder="v0", level="L1", seeds=SEEDS)


def _copy(bank: InstanceBank, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(bank.path, copy)
    return copy


def _reindex(path: Path, **changes: object) -> None:
    """Record the current worlds.npz's hash (and ``changes``) in bank.json, as an attacker can."""
    index = json.loads((path / "bank.json").read_text())
    index["sha256"] = hashlib.sha256((path / "worlds.npz").read_bytes()).hexdigest()
    index.update(changes)
    (path / "bank.json").write_text(json.dumps(index))


def test_a_bank_loads_only_against_a_digest_held_outside_it(
    bank: InstanceBank, tmp_path: Path
) -> None:
    assert (
        bank.sha256
        == bank_digest(bank.path)
        == hashlib.sha256((bank.path / "bank.json").read_bytes()).hexdigest()
    )
    assert load_bank(bank.path, sha256=bank.sha256).seeds == tuple(SEEDS)
    with pytest.raises(BankError, match=r"sha256=.*trust=True"):
        load_bank(bank.path)
    assert load_bank(bank.path, trust=True).seeds == tuple(SEEDS)
    with pytest.raises(BankError, match="does not match the digest given"):
        load_bank(bank.path, sha256="0" * 64)


def test_an_edited_bank_with_its_digests_recomputed_is_refused(
    bank: InstanceBank, tmp_path: Path
) -> None:
    """NaN observations and a budget of 10**6, with every digest inside the bank made to match:
    only the digest the user holds catches it (and the values are range-checked besides)."""
    copy = _copy(bank, tmp_path)
    with np.load(copy / "worlds.npz") as data:
        arrays = {name: data[name] for name in data.files}
    arrays["budget"] = np.full_like(arrays["budget"], 10**6)
    arrays["d_obs"] = np.full_like(arrays["d_obs"], np.nan)
    with open(copy / "worlds.npz", "wb") as handle:
        np.savez(handle, **arrays)
    _reindex(copy)
    with pytest.raises(BankError, match="does not match the digest given"):
        load_bank(copy, sha256=bank.sha256)
    with pytest.raises(BankError, match="budget"):
        load_bank(copy, trust=True)


@pytest.mark.slow
def test_an_extra_member_is_refused_before_it_is_inflated(
    bank: InstanceBank, tmp_path: Path
) -> None:
    copy = _copy(bank, tmp_path)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "|u1", "fortran_order": False, "shape": (200 << 20,)}
    )
    with (
        zipfile.ZipFile(copy / "worlds.npz", "a", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("bomb.npy", "w", force_zip64=True) as member,
    ):
        member.write(header.getvalue())
        block = bytes(1 << 20)
        for _ in range(200):
            member.write(block)
    assert (copy / "worlds.npz").stat().st_size < 5 << 20
    _reindex(copy)
    with pytest.raises(BankError, match="unexpected member 'bomb'"):
        load_bank(copy, sha256=bank_digest(copy))


def test_a_declared_shape_past_the_level_is_refused_before_allocation(
    bank: InstanceBank, tmp_path: Path
) -> None:
    copy = _copy(bank, tmp_path)
    with np.load(copy / "worlds.npz") as data:
        arrays = {name: data[name] for name in data.files}
    with zipfile.ZipFile(copy / "worlds.npz", "w") as archive:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            if name == "d_obs":
                header = {"descr": "<f8", "fortran_order": False, "shape": (10**12,)}
                np.lib.format.write_array_header_1_0(buffer, header)
                buffer.write(bytes(64))
            else:
                np.lib.format.write_array(buffer, array)
            archive.writestr(f"{name}.npy", buffer.getvalue())
    _reindex(copy)
    with pytest.raises(BankError, match=r"d_obs declares shape \(1000000000000,\)"):
        load_bank(copy, sha256=bank_digest(copy))


@pytest.mark.parametrize(
    ("index", "problem"),
    [
        ("[]", "bank.json is not a JSON object"),
        ("{}", "bank.json lacks"),
        ("[" * 5000 + "]" * 5000, "nested 5000 levels deep"),
        ('{"format": 2, "seeds": "x"}', "bank.json lacks"),
        ("not json", "bank.json is not JSON"),
    ],
)
def test_a_malformed_index_is_a_bank_error(
    bank: InstanceBank, tmp_path: Path, index: str, problem: str
) -> None:
    copy = _copy(bank, tmp_path)
    (copy / "bank.json").write_text(index)
    with pytest.raises(BankError, match=problem):
        load_bank(copy, trust=True)


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("seeds", "x", "seeds must be a list of"),
        ("seeds", [1, 2], "digests must be a list of 2 strings"),
        ("seeds", [1, 2, 3], "seeds of worlds.npz differ"),
        ("digests", None, "digests must be a list of"),
        ("ladder", ["v0"], "ladder must be a string"),
        ("level", "L99", "level must be one of"),
        ("variable_names", 5, "variable_names must be"),
        ("dependence_measures", [{}], "dependence_measures must be"),
        ("sha256", 7, "sha256 must be"),
    ],
)
def test_a_wrong_value_in_the_index_is_a_bank_error(
    bank: InstanceBank, tmp_path: Path, field: str, value: object, problem: str
) -> None:
    copy = _copy(bank, tmp_path)
    _reindex(copy, **{field: value})
    with pytest.raises(BankError, match=problem):
        load_bank(copy, trust=True)


def test_a_bank_over_the_size_limit_is_refused_before_it_is_read(
    bank: InstanceBank, tmp_path: Path
) -> None:
    with pytest.raises(BankError, match="more than the limit"):
        load_bank(bank.path, sha256=bank.sha256, max_bytes=1000)
