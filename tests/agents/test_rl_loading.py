"""Loading saved RL policies without running code from the file (SECURITY.md)."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.rl.agent import (
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
