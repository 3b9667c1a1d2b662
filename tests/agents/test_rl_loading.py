"""Loading saved RL policies without running code from the file (SECURITY.md)."""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.rl.agent import (
    PolicyChangedError,
    RLAgent,
    SafePolicy,
    UntrustedPolicyError,
    _masked_choice,
    load_policy,
    policy_digest,
)
from acdb_gym.envs.design.env import observation_size

COMMITTED = Path(__file__).resolve().parents[2] / "models" / "acdb_design_l1_v0" / "model.zip"


class _Marker:
    """Unpickling this creates a file: a stand-in for any code a crafted file could run."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.path, "w"))


def _rewrite(source: Path, target: Path, replace: dict[str, bytes]) -> Path:
    """A copy of the zip ``source`` with some members replaced (or removed when b"")."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            if name in replace:
                if replace[name]:
                    new.writestr(name, replace[name])
            else:
                new.writestr(name, old.read(name))
    return target


def _data_with(kwargs_entry: object) -> bytes:
    with zipfile.ZipFile(COMMITTED) as archive:
        data = json.loads(archive.read("data"))
    data["policy_kwargs"] = {"net_arch": [64, 64], "activation_fn": kwargs_entry}
    return json.dumps(data).encode()


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "code_ran"


def test_the_committed_policy_loads_without_pickle_and_acts_like_sb3s_loader() -> None:
    pytest.importorskip("sb3_contrib")
    safe, metadata = load_policy(COMMITTED)
    trusted, same_metadata = load_policy(COMMITTED, trust=True)
    assert isinstance(safe, SafePolicy) and metadata == same_metadata
    assert safe.action_space.n == trusted.action_space.n == 7
    rng = np.random.default_rng(0)
    mask = np.ones(7, dtype=bool)
    for _ in range(50):
        features = rng.uniform(-1, 1, observation_size(6)).astype(np.float32)
        mask[:6] = rng.random(6) < 0.7
        assert _masked_choice(safe, features, mask, None) == _masked_choice(
            trusted, features, mask, None
        )
    episode = run_episode(gym.make("ACDB-L1-v0"), RLAgent.load(COMMITTED), manifest_index=3)
    trusted_episode = run_episode(
        gym.make("ACDB-L1-v0"), RLAgent.load(COMMITTED, trust=True), manifest_index=3
    )
    assert episode.score == trusted_episode.score


def test_a_pickled_policy_kwarg_is_refused_and_never_unpickled(
    tmp_path: Path, marker: Path
) -> None:
    pytest.importorskip("sb3_contrib")
    payload = base64.b64encode(pickle.dumps(_Marker(str(marker)))).decode()
    crafted = _rewrite(
        COMMITTED,
        tmp_path / "model.zip",
        {"data": _data_with({":type:": "<class 'type'>", ":serialized:": payload})},
    )
    with pytest.raises(UntrustedPolicyError, match=r"activation_fn.*trust"):
        load_policy(crafted)
    with pytest.raises(UntrustedPolicyError):
        RLAgent.load(crafted)
    assert not marker.exists()


def test_weights_holding_more_than_tensors_are_refused(tmp_path: Path, marker: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    buffer = io.BytesIO()
    torch.save({"mlp_extractor.policy_net.0.weight": _Marker(str(marker))}, buffer)
    crafted = _rewrite(COMMITTED, tmp_path / "model.zip", {"policy.pth": buffer.getvalue()})
    with pytest.raises(UntrustedPolicyError, match="more than tensors"):
        load_policy(crafted)
    assert not marker.exists()


def test_a_plain_sb3_zip_needs_trust(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    plain = _rewrite(COMMITTED, tmp_path / "plain.zip", {"acdb_gym.json": b""})
    with pytest.raises(UntrustedPolicyError, match=r"acdb_gym\.json"):
        load_policy(plain)
    _, metadata = load_policy(plain, trust=True)
    assert metadata.n_nodes == 6 and metadata.level == "unknown"


def test_not_a_zip_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "model.zip"
    bogus.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"not a \.zip"):
        load_policy(bogus)


def test_the_digest_follows_the_content(tmp_path: Path) -> None:
    copy = tmp_path / "m.zip"
    copy.write_bytes(COMMITTED.read_bytes())
    assert policy_digest(copy) == policy_digest(COMMITTED)
    copy.write_bytes(COMMITTED.read_bytes() + b"\0")
    assert policy_digest(copy) != policy_digest(COMMITTED)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"n_nodes": 10**7}, "n_nodes must be in [0, 1000], got 10000000"),
        ({"n_nodes": 1e7}, "n_nodes must be an integer"),
        ({"n_nodes": -1}, "n_nodes must be in [0, 1000], got -1"),
        ({"algo": "a2c"}, "algo must be one of"),
        ({"shift": "3"}, "shift has the wrong type"),
    ],
)
def test_crafted_metadata_is_refused_before_anything_is_built(
    change: dict[str, object], message: str, tmp_path: Path
) -> None:
    with zipfile.ZipFile(COMMITTED) as archive:
        metadata = {**json.loads(archive.read("acdb_gym.json")), **change}
    crafted = _rewrite(
        COMMITTED, tmp_path / "m.zip", {"acdb_gym.json": json.dumps(metadata).encode()}
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        load_policy(crafted)


def test_the_bytes_loaded_are_the_bytes_hashed(tmp_path: Path) -> None:
    copy = tmp_path / "m.zip"
    copy.write_bytes(COMMITTED.read_bytes())
    digest = policy_digest(copy)
    _, metadata = load_policy(copy, sha256=digest)
    assert metadata.n_nodes == 6
    copy.write_bytes(COMMITTED.read_bytes() + b"\0")
    with pytest.raises(PolicyChangedError, match="changed since the sweep was planned"):
        load_policy(copy, sha256=digest)


def _policy_kwargs(policy_kwargs: object) -> bytes:
    with zipfile.ZipFile(COMMITTED) as archive:
        data = json.loads(archive.read("data"))
    data["policy_kwargs"] = policy_kwargs
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("replace", "message"),
    [
        ({"data": _policy_kwargs({"net_arch": [4000, 4000]})}, "parameters, more than"),
        ({"data": _policy_kwargs({"net_arch": [-5]})}, "net_arch"),
        ({"data": _policy_kwargs({"net_arch": {"pi": [64], "vf": "x"}})}, "net_arch"),
        ({"data": _policy_kwargs({"net_arch": [64], "ortho_init": [1] * 10})}, "policy_kwargs"),
        ({"data": b"[" * 100_000 + b"]" * 100_000}, "nested 100000 levels deep"),
        ({"data": b'{"policy_kwargs": ' + b"9" * 5000 + b"}"}, "an integer of 5000 digits"),
        ({"acdb_gym.json": b"[" * 100_000 + b"]" * 100_000}, "acdb_gym.json"),
    ],
    ids=["huge net_arch", "negative width", "bad vf", "bad kwarg", "nested", "long int", "meta"],
)
def test_crafted_policy_kwargs_are_refused_before_anything_is_built(
    tmp_path: Path, replace: dict[str, bytes], message: str
) -> None:
    pytest.importorskip("sb3_contrib")
    crafted = _rewrite(COMMITTED, tmp_path / "m.zip", replace)
    with pytest.raises(ValueError, match=re.escape(message)):
        load_policy(crafted)


def test_weights_of_the_wrong_shape_are_a_value_error(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    buffer = io.BytesIO()
    torch.save({"mlp_extractor.policy_net.0.weight": torch.zeros(3, 3)}, buffer)
    crafted = _rewrite(COMMITTED, tmp_path / "m.zip", {"policy.pth": buffer.getvalue()})
    with pytest.raises(ValueError, match="do not fit the network"):
        load_policy(crafted)


def test_a_member_that_inflates_past_its_limit_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    """A 'data' member of 64 MiB of zeros is 64 KiB in the file; its declared size is refused."""
    crafted = tmp_path / "m.zip"
    with zipfile.ZipFile(COMMITTED) as old, zipfile.ZipFile(crafted, "w") as new:
        for name in old.namelist():
            if name != "data":
                new.writestr(name, old.read(name))
        new.writestr("data", b" " * (64 << 20), compress_type=zipfile.ZIP_DEFLATED)
    assert crafted.stat().st_size < 1 << 20
    with pytest.raises(ValueError, match=r"member 'data' declares 67108864 bytes"):
        load_policy(crafted)


def test_a_flat_policy_too_large_for_memory_is_refused_by_its_parameter_count(
    tmp_path: Path,
) -> None:
    """n_nodes = 400 (inside [0, 1000]) makes a flat observation of 160,000 features: with two
    64-wide networks, 20 million parameters, past the bound, refused before any is built."""
    from acdb_gym.agents.rl.policy_file import MAX_POLICY_PARAMETERS, flat_policy_parameters

    assert flat_policy_parameters(6, [64, 64]) < 100_000
    assert flat_policy_parameters(900, [64, 64]) > MAX_POLICY_PARAMETERS
    with zipfile.ZipFile(COMMITTED) as archive:
        metadata = {**json.loads(archive.read("acdb_gym.json")), "n_nodes": 400}
    crafted = _rewrite(
        COMMITTED, tmp_path / "m.zip", {"acdb_gym.json": json.dumps(metadata).encode()}
    )
    with pytest.raises(ValueError, match="parameters, more than"):
        load_policy(crafted)
