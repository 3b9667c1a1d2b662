"""What a saved RL policy is and how it is loaded without running code (the ``rl`` extra's
entry points too: :func:`require_rl`, :func:`algorithm_class`).

A policy is trained on :class:`~acdb_gym.envs.design.env.InterventionDesignEnv` (see
:mod:`acdb_gym.agents.rl.train`) and saved as a stable-baselines3 ``.zip`` with one extra
member, ``acdb_gym.json`` (:class:`PolicyMetadata`: algorithm, level, estimator settings), so
that :class:`~acdb_gym.agents.rl.agent.RLAgent` can rebuild exactly the observation the policy
was trained on. A size-free :class:`~acdb_gym.agents.rl.graph_policy.NodeMessagePolicy` is saved
as JSON plus a tensor-only state dict (metadata ``observation="graph"``); :func:`load_policy`
handles both kinds.

torch and stable-baselines3 are imported only when a policy is loaded or saved; without them
a :class:`MissingExtraError` says to ``pip install 'acdb_gym[rl]'``.

Loading never unpickles by default. An SB3 ``.zip`` stores much of its state as pickles
(``:serialized:`` entries of its ``data`` member, and ``torch.save`` files), and unpickling a
file runs whatever code it names. :func:`load_policy` therefore rebuilds the policy network
from plain JSON (the ``acdb_gym.json`` metadata and the ``policy_kwargs`` of ``data``) and
loads its weights with ``torch.load(..., weights_only=True)``, which accepts tensors only. A
file that cannot be loaded that way (no metadata, a ``policy_kwargs`` entry that is a pickle, a
weights file holding anything but tensors) is refused with :class:`UntrustedPolicyError` unless
the caller passes ``trust=True`` (``acdb sweep --trust-model``), which loads it with SB3's own
pickle-based loader.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, Literal, get_args

import numpy as np

from acdb_gym.agents.rl._format import (
    MAX_POLICY_PARAMETERS,
    MAX_WEIGHTS_BYTES,
    METADATA_MEMBER,
    UntrustedPolicyError,
)
from acdb_gym.agents.rl.policy_bounds import (
    check_policy_kwargs,
    check_policy_size,
    flat_policy_parameters,
    load_state,
)
from acdb_gym.core.untrusted import UntrustedInputError, loads, read_member
from acdb_gym.discovery.orientation import ORIENTATION_RULES
from acdb_gym.envs.design.env import Estimator
from acdb_gym.envs.design.observation import observation_size

__all__ = [
    "MAX_DATA_BYTES",
    "MAX_POLICY_BYTES",
    "MAX_POLICY_NODES",
    "MAX_POLICY_PARAMETERS",
    "MAX_WEIGHTS_BYTES",
    "METADATA_MEMBER",
    "Algorithm",
    "MissingExtraError",
    "PolicyChangedError",
    "PolicyMetadata",
    "SafePolicy",
    "UntrustedPolicyError",
    "algorithm_class",
    "flat_policy_parameters",
    "load_policy",
    "load_state",
    "policy_digest",
    "read_metadata",
    "require_rl",
    "save_policy",
]

Algorithm = Literal["maskable_ppo", "ppo"]
"""``"maskable_ppo"`` (sb3-contrib, uses ``action_masks()``) or ``"ppo"`` (stable-baselines3)."""


INSTALL_HINT = "pip install 'acdb_gym[rl]'"


class MissingExtraError(ImportError):
    """torch / stable-baselines3 / sb3-contrib are not installed."""

    def __init__(self, module: str) -> None:
        self.module = module
        super().__init__(
            f"RL policies need {module}, which is not installed: {INSTALL_HINT} "
            "(torch, stable-baselines3, sb3-contrib)"
        )


def require_rl(algo: Algorithm = "maskable_ppo") -> None:
    """Import what ``algo`` needs, or raise :class:`MissingExtraError` naming the install."""
    modules = ["torch", "stable_baselines3"]
    if algo == "maskable_ppo":
        modules.append("sb3_contrib")
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            raise MissingExtraError(module) from None


def algorithm_class(algo: Algorithm) -> Any:
    """The stable-baselines3 class of ``algo`` (imported lazily)."""
    if algo not in get_args(Algorithm):
        raise ValueError(f"algo must be one of {list(get_args(Algorithm))}, got {algo!r}")
    require_rl(algo)
    if algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    from stable_baselines3 import PPO

    return PPO


# --------------------------------------------------------------------------- saved policies
@dataclass(frozen=True)
class PolicyMetadata:
    """What a saved policy was trained on; stored in its ``.zip`` as ``acdb_gym.json``.

    Attributes:
        algo: the algorithm (decides the class that loads the ``.zip``).
        ladder: the ladder of the training level.
        level: the training level; the policy only fits levels with ``n_nodes`` variables.
        n_nodes: ``d`` of the training level.
        estimator: the design env's estimator during training (``RLAgent`` on ``ACDBEnv``
            always uses PC, the only estimator that needs no hidden information).
        shift: intervention value in observational standard deviations above the mean.
        alpha: significance level of the orientation tests.
        reward: the training reward.
        timesteps: environment steps of training.
        seed: the training seed.
        version: the ``acdb_gym`` version that trained it.
        observation: the design env's observation mode the policy reads: ``"flat"`` (an SB3
            policy for one ``d``) or ``"graph"`` (a :mod:`~acdb_gym.agents.rl.graph_policy` policy for
            any ``d``; then ``level`` names the training mix and ``n_nodes`` is 0).
        rule: the design env's orientation rule during training
            (:data:`~acdb_gym.discovery.orientation.OrientationRule`); a file that names none
            was trained before the rule existed, under ``"always"``. Provenance only: the
            estimator an agent runs with is its env's.
    """

    algo: Algorithm
    ladder: str
    level: str
    n_nodes: int
    estimator: Estimator
    shift: float = 3.0
    alpha: float = 0.01
    reward: str = "directed_f1"
    timesteps: int = 0
    seed: int = 0
    version: str = ""
    observation: str = "flat"
    rule: str = "power"

    @property
    def size_free(self) -> bool:
        """Whether the policy acts on any number of variables (a graph policy)."""
        return self.observation == "graph"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PolicyMetadata:
        """Build from a parsed ``acdb_gym.json`` (unknown keys are ignored).

        Raises:
            ValueError: a value of the wrong type or out of range, such as ``n_nodes`` outside
                ``[0, MAX_POLICY_NODES]`` (checked before any network is built from it).
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"{METADATA_MEMBER} must be a JSON object")
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        missing = [
            name
            for name in ("algo", "ladder", "level", "n_nodes", "estimator")
            if name not in known
        ]
        if missing:
            raise ValueError(f"{METADATA_MEMBER} lacks {missing}")
        _check_metadata(known)
        known.setdefault("rule", "always")  # written before the orientation rule existed
        return cls(**known)


MAX_POLICY_BYTES = 256 << 20
"""The largest policy file read (the shipped ones are under a megabyte)."""

MAX_DATA_BYTES = 16 << 20
"""The largest ``data`` member (SB3's JSON) read; the shipped one is 19 KB."""
MAX_POLICY_NODES = 1000
"""The largest ``n_nodes`` a saved flat policy may declare (custom levels go to ``d = 500``)."""

_METADATA_KINDS: dict[str, tuple[type, ...]] = {
    "ladder": (str,),
    "level": (str,),
    "estimator": (str,),
    "reward": (str,),
    "version": (str,),
    "rule": (str,),
    "timesteps": (int,),
    "seed": (int,),
    "shift": (int, float),
    "alpha": (int, float),
}


def _check_metadata(values: Mapping[str, Any]) -> None:
    """Refuse metadata a crafted file could use to allocate without bound or to mislead."""
    if values["algo"] not in get_args(Algorithm):
        raise ValueError(
            f"{METADATA_MEMBER}: algo must be one of {list(get_args(Algorithm))}, "
            f"got {str(values['algo'])[:40]!r}"
        )
    if values.get("observation", "flat") not in ("flat", "graph"):
        raise ValueError(f"{METADATA_MEMBER}: observation must be 'flat' or 'graph'")
    n_nodes = values["n_nodes"]
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, int):
        raise ValueError(f"{METADATA_MEMBER}: n_nodes must be an integer, got {str(n_nodes)[:40]}")
    if not 0 <= n_nodes <= MAX_POLICY_NODES:
        raise ValueError(
            f"{METADATA_MEMBER}: n_nodes must be in [0, {MAX_POLICY_NODES}], got {n_nodes}"
        )
    for name, kinds in _METADATA_KINDS.items():
        value = values.get(name)
        if name in values and (isinstance(value, bool) or not isinstance(value, kinds)):
            raise ValueError(
                f"{METADATA_MEMBER}: {name} has the wrong type ({type(value).__name__})"
            )
    for name in ("shift", "alpha"):
        if name in values and not math.isfinite(values[name]):
            raise ValueError(f"{METADATA_MEMBER}: {name} must be finite, got {values[name]}")
    if values.get("rule", "power") not in ORIENTATION_RULES:
        raise ValueError(
            f"{METADATA_MEMBER}: rule must be one of {list(ORIENTATION_RULES)}, "
            f"got {str(values['rule'])[:40]!r}"
        )


def save_policy(model: Any, path: str | Path, metadata: PolicyMetadata) -> Path:
    """Save an SB3 model to ``path`` (``.zip`` added if missing) with its metadata member."""
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_name(path.name + ".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(METADATA_MEMBER, json.dumps(asdict(metadata), indent=2) + "\n")
    return path


def read_metadata(path: str | Path | IO[bytes]) -> PolicyMetadata | None:
    """The metadata of a saved policy (a path or its bytes), or None for a plain SB3 ``.zip``.

    Raises:
        ValueError: the metadata is not JSON or holds a bad value (:meth:`PolicyMetadata.from_dict`).
    """
    with zipfile.ZipFile(path) as archive:
        if METADATA_MEMBER not in archive.namelist():
            return None
        if archive.getinfo(METADATA_MEMBER).file_size > _MAX_METADATA_BYTES:
            raise ValueError(f"{METADATA_MEMBER} is larger than {_MAX_METADATA_BYTES} bytes")
        try:
            raw = read_member(archive, METADATA_MEMBER, max_bytes=_MAX_METADATA_BYTES)
            data = loads(raw, max_bytes=_MAX_METADATA_BYTES)
        except (ValueError, zipfile.BadZipFile) as error:
            raise ValueError(f"{METADATA_MEMBER} is not JSON ({error})") from None
        return PolicyMetadata.from_dict(data)


_MAX_METADATA_BYTES = 1 << 16
"""The largest metadata member read (a real one is a few hundred bytes)."""


class PolicyChangedError(ValueError):
    """The policy file's content is not the one the sweep planned its jobs with."""

    def __init__(self, path: Path, expected: str, found: str) -> None:
        self.path = path
        self.expected = expected
        self.found = found
        super().__init__(
            f"the policy file {path} changed since the sweep was planned (sha256 "
            f"{expected[:12]}..., now {found[:12]}...); rerun the sweep to plan it with the new file"
        )


def policy_digest(path: str | Path) -> str:
    """The SHA-256 of a saved policy file: part of an RL job's identity, so that replacing
    the file makes the sweep run its jobs again."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class SafePolicy:
    """A policy network rebuilt without unpickling: what :class:`RLAgent` needs of a model.

    Attributes:
        policy: the SB3 policy module (``MaskableActorCriticPolicy`` or ``ActorCriticPolicy``)
            in evaluation mode, on the CPU.
        action_space: its action space, ``Discrete(d + 1)``.
    """

    policy: Any
    action_space: Any


_POLICY_WEIGHTS = "policy.pth"
_SB3_DATA = "data"


def load_policy(
    path: str | Path,
    *,
    algo: Algorithm | None = None,
    trust: bool = False,
    sha256: str | None = None,
) -> tuple[Any, PolicyMetadata]:
    """Load a saved policy on the CPU.

    Args:
        path: the ``.zip`` written by :func:`save_policy`. With ``trust``, also a plain SB3
            ``.zip``; then ``algo`` says which class to load it with and the metadata is
            inferred from its action space, with the default shift and alpha.
        algo: overrides the algorithm recorded in the metadata.
        trust: load with SB3's pickle-based loader, which runs any code the file names. Only
            for files from a trusted source.
        sha256: the digest the file must have (:func:`policy_digest`). The file is read once;
            those bytes are hashed and loaded, so the policy is exactly the one with this digest.

    Returns:
        The model (a :class:`SafePolicy`, or with ``trust`` the SB3 model) and its metadata.

    Raises:
        FileNotFoundError: no file at ``path``.
        UntrustedPolicyError: without ``trust``, a file that only unpickling could load.
        PolicyChangedError: the file's digest is not ``sha256``.
        ValueError: not a saved policy, or metadata with a bad value (such as ``n_nodes``
            outside ``[0, MAX_POLICY_NODES]``).
        MissingExtraError: the ``[rl]`` extra is not installed.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no saved policy at {path}")
    if path.stat().st_size > MAX_POLICY_BYTES:
        raise ValueError(f"{path} is larger than {MAX_POLICY_BYTES} bytes: not a saved policy")
    data = path.read_bytes()
    found = hashlib.sha256(data).hexdigest()
    if sha256 is not None and found != sha256:
        raise PolicyChangedError(path, sha256, found)
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ValueError(f"{path} is not a saved policy (not a .zip file)")
    try:
        metadata = read_metadata(io.BytesIO(data))
    except (ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path}: {error}") from None
    if metadata is not None and metadata.size_free:
        # Graph policies never need unpickling, so ``trust`` changes nothing for them.
        return _load_graph_policy(path, data), metadata
    if not trust:
        return _load_without_pickle(path, data, metadata, algo)
    chosen: Algorithm = algo or (metadata.algo if metadata else "maskable_ppo")
    model = algorithm_class(chosen).load(io.BytesIO(data), device="cpu")
    if metadata is None:
        n_nodes = int(model.action_space.n) - 1
        metadata = PolicyMetadata(chosen, "v0", "unknown", n_nodes, "pc")
    return model, metadata


def _load_without_pickle(
    path: Path, data: bytes, metadata: PolicyMetadata | None, algo: Algorithm | None
) -> tuple[SafePolicy, PolicyMetadata]:
    """Rebuild the policy from JSON and load tensors only; see the module docstring."""
    if metadata is None:
        raise UntrustedPolicyError(path, f"it has no {METADATA_MEMBER} describing the policy")
    chosen: Algorithm = algo or metadata.algo
    require_rl(chosen)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        for member in (_SB3_DATA, _POLICY_WEIGHTS):
            if member not in names:
                raise ValueError(f"{path} is not a saved policy: it has no {member!r} member")
        try:
            sb3_data = read_member(archive, _SB3_DATA, max_bytes=MAX_DATA_BYTES)
            weights = read_member(archive, _POLICY_WEIGHTS, max_bytes=MAX_WEIGHTS_BYTES)
        except (UntrustedInputError, zipfile.BadZipFile) as error:
            raise ValueError(f"{path}: {error}") from None
    policy_kwargs = _plain_policy_kwargs(path, sb3_data)
    check_policy_size(path, metadata.n_nodes, policy_kwargs)
    policy = _build_policy(chosen, metadata.n_nodes, policy_kwargs)
    load_state(path, policy, _tensor_state(path, weights))
    policy.set_training_mode(False)
    return SafePolicy(policy, policy.action_space), metadata


def _load_graph_policy(path: Path, data: bytes) -> Any:
    """A :class:`~acdb_gym.agents.rl.graph_policy.NodeMessagePolicy` from JSON and tensors."""
    require_rl("ppo")
    from acdb_gym.agents.rl.graph_policy import load_network

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return load_network(path, archive)


def _plain_policy_kwargs(path: Path, data: bytes) -> dict[str, Any]:
    """``policy_kwargs`` from SB3's ``data`` member, refusing any pickled entry, any key a
    saved policy may not set and a value of the wrong type (:func:`check_policy_kwargs`)."""
    try:
        parsed = loads(data, max_bytes=MAX_DATA_BYTES)
    except ValueError as error:
        raise ValueError(f"{path}: its 'data' member is not JSON ({error})") from None
    kwargs = parsed.get("policy_kwargs", {}) if isinstance(parsed, dict) else None
    if not isinstance(kwargs, dict):
        raise ValueError(f"{path}: 'policy_kwargs' is not a JSON object")
    pickled = sorted(key for key, value in kwargs.items() if not _is_plain_json(value))
    if pickled:
        raise UntrustedPolicyError(path, f"its policy_kwargs {pickled} are pickled objects")
    check_policy_kwargs(path, kwargs)
    return kwargs


def _is_plain_json(value: Any) -> bool:
    """JSON without SB3's ``{":serialized:": ...}`` pickle wrappers."""
    if isinstance(value, dict):
        return ":serialized:" not in value and all(_is_plain_json(v) for v in value.values())
    if isinstance(value, list):
        return all(_is_plain_json(v) for v in value)
    return True


def _build_policy(algo: Algorithm, n_nodes: int, policy_kwargs: dict[str, Any]) -> Any:
    """A fresh policy network for the design env of ``n_nodes`` variables."""
    from gymnasium import spaces

    policy_class: type[Any]
    if algo == "maskable_ppo":
        # sb3-contrib's MaskableActorCriticPolicy with the same numbers, faster.
        from acdb_gym.agents.rl.masked_policy import FastMaskableActorCriticPolicy

        policy_class = FastMaskableActorCriticPolicy
    else:
        from stable_baselines3.common.policies import ActorCriticPolicy

        policy_class = ActorCriticPolicy
    observation_space = spaces.Box(-1.0, 1.0, (observation_size(n_nodes),), np.float32)
    action_space = spaces.Discrete(n_nodes + 1)
    try:
        return policy_class(
            observation_space, action_space, lr_schedule=lambda _: 0.0, **policy_kwargs
        )
    except (TypeError, ValueError, RuntimeError) as error:
        shown = str(policy_kwargs)[:200]
        raise ValueError(f"policy_kwargs {shown} do not build a policy: {error}") from None


def _tensor_state(path: Path, weights: bytes) -> dict[str, Any]:
    """The policy's state dict, loaded with ``weights_only=True`` (tensors, no code)."""
    import torch

    try:
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises UnpicklingError or RuntimeError for foreign objects
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise UntrustedPolicyError(
            path, f"its {_POLICY_WEIGHTS} holds more than tensors ({reason})"
        ) from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: {_POLICY_WEIGHTS} is not a state dict")
    return state
