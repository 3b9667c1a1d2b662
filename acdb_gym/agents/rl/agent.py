"""RL intervention policies: saving and loading them, and the agent that runs them.

A policy is trained on :class:`~acdb_gym.envs.design.env.InterventionDesignEnv` (see
:mod:`acdb_gym.agents.rl.train`) and saved as a stable-baselines3 ``.zip`` with one extra
member, ``acdb_gym.json`` (:class:`PolicyMetadata`: algorithm, level, estimator settings), so
that :class:`RLAgent` can rebuild exactly the observation the policy was trained on.

:class:`RLAgent` acts through :class:`~acdb_gym.envs.acdb_env.ACDBEnv` like every other agent:
it runs PC on the observational data, keeps a :class:`~acdb_gym.envs.design.env.DesignState`
up to date with the experiments it sees in the observations, asks the policy for a target
(masked to the valid ones) and sends ``actions.intervene(target, mean + shift * sd)``, or, on
"stop", ``actions.submit(estimate)``. On the design env itself it maps observations to actions
directly. The sweep runs it as ``rl:PATH``.

A second kind of policy reads the design env's size-free graph observation
(:mod:`acdb_gym.envs.design.graph_obs`): :class:`~acdb_gym.agents.rl.graph_policy.NodeMessagePolicy`,
permutation-equivariant, saved as JSON plus a tensor-only state dict (metadata
``observation="graph"``). It acts on every level of both ladders and on custom levels of any
``d``; :func:`load_policy` and :class:`RLAgent` handle both kinds.

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
import zipfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from acdb_gym.agents.rl._format import METADATA_MEMBER, UntrustedPolicyError
from acdb_gym.core.graphs import PDAG
from acdb_gym.discovery import pc_cpdag
from acdb_gym.envs import actions
from acdb_gym.envs.actions import VALUE_BOUND
from acdb_gym.envs.design.env import DesignState, Estimator
from acdb_gym.envs.design.observation import DesignObservation, observation_size

__all__ = [
    "METADATA_MEMBER",
    "Algorithm",
    "MissingExtraError",
    "PolicyMetadata",
    "RLAgent",
    "SafePolicy",
    "UntrustedPolicyError",
    "algorithm_class",
    "load_policy",
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

    @property
    def size_free(self) -> bool:
        """Whether the policy acts on any number of variables (a graph policy)."""
        return self.observation == "graph"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PolicyMetadata:
        """Build from a parsed ``acdb_gym.json`` (unknown keys are ignored)."""
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


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


def read_metadata(path: str | Path) -> PolicyMetadata | None:
    """The metadata of a saved policy, or None for a plain SB3 ``.zip``."""
    with zipfile.ZipFile(path) as archive:
        if METADATA_MEMBER not in archive.namelist():
            return None
        return PolicyMetadata.from_dict(json.loads(archive.read(METADATA_MEMBER)))


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
    path: str | Path, *, algo: Algorithm | None = None, trust: bool = False
) -> tuple[Any, PolicyMetadata]:
    """Load a saved policy on the CPU.

    Args:
        path: the ``.zip`` written by :func:`save_policy`. With ``trust``, also a plain SB3
            ``.zip``; then ``algo`` says which class to load it with and the metadata is
            inferred from its action space, with the default shift and alpha.
        algo: overrides the algorithm recorded in the metadata.
        trust: load with SB3's pickle-based loader, which runs any code the file names. Only
            for files from a trusted source.

    Returns:
        The model (a :class:`SafePolicy`, or with ``trust`` the SB3 model) and its metadata.

    Raises:
        FileNotFoundError: no file at ``path``.
        UntrustedPolicyError: without ``trust``, a file that only unpickling could load.
        MissingExtraError: the ``[rl]`` extra is not installed.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no saved policy at {path}")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not a saved policy (not a .zip file)")
    graph_metadata = read_metadata(path)
    if graph_metadata is not None and graph_metadata.size_free:
        # Graph policies never need unpickling, so ``trust`` changes nothing for them.
        return _load_graph_policy(path), graph_metadata
    if not trust:
        return _load_without_pickle(path, algo)
    metadata = read_metadata(path)
    chosen: Algorithm = algo or (metadata.algo if metadata else "maskable_ppo")
    model = algorithm_class(chosen).load(path, device="cpu")
    if metadata is None:
        n_nodes = int(model.action_space.n) - 1
        metadata = PolicyMetadata(chosen, "v0", "unknown", n_nodes, "pc")
    return model, metadata


def _load_without_pickle(path: Path, algo: Algorithm | None) -> tuple[SafePolicy, PolicyMetadata]:
    """Rebuild the policy from JSON and load tensors only; see the module docstring."""
    metadata = read_metadata(path)
    if metadata is None:
        raise UntrustedPolicyError(path, f"it has no {METADATA_MEMBER} describing the policy")
    chosen: Algorithm = algo or metadata.algo
    require_rl(chosen)
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        for member in (_SB3_DATA, _POLICY_WEIGHTS):
            if member not in names:
                raise ValueError(f"{path} is not a saved policy: it has no {member!r} member")
        policy_kwargs = _plain_policy_kwargs(path, archive.read(_SB3_DATA))
        weights = archive.read(_POLICY_WEIGHTS)
    policy = _build_policy(chosen, metadata.n_nodes, policy_kwargs)
    policy.load_state_dict(_tensor_state(path, weights))
    policy.set_training_mode(False)
    return SafePolicy(policy, policy.action_space), metadata


def _load_graph_policy(path: Path) -> Any:
    """A :class:`~acdb_gym.agents.rl.graph_policy.NodeMessagePolicy` from JSON and tensors."""
    require_rl("ppo")
    from acdb_gym.agents.rl.graph_policy import load_network

    with zipfile.ZipFile(path) as archive:
        return load_network(path, archive)


def _plain_policy_kwargs(path: Path, data: bytes) -> dict[str, Any]:
    """``policy_kwargs`` from SB3's ``data`` member, refusing any pickled entry."""
    try:
        parsed = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: its 'data' member is not JSON ({error})") from None
    kwargs = parsed.get("policy_kwargs", {}) if isinstance(parsed, dict) else None
    if not isinstance(kwargs, dict):
        raise ValueError(f"{path}: 'policy_kwargs' is not a JSON object")
    pickled = sorted(key for key, value in kwargs.items() if not _is_plain_json(value))
    if pickled:
        raise UntrustedPolicyError(path, f"its policy_kwargs {pickled} are pickled objects")
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
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        policy_class = MaskableActorCriticPolicy
    else:
        from stable_baselines3.common.policies import ActorCriticPolicy

        policy_class = ActorCriticPolicy
    observation_space = spaces.Box(-1.0, 1.0, (observation_size(n_nodes),), np.float32)
    action_space = spaces.Discrete(n_nodes + 1)
    try:
        return policy_class(
            observation_space, action_space, lr_schedule=lambda _: 0.0, **policy_kwargs
        )
    except TypeError as error:
        raise ValueError(f"policy_kwargs {policy_kwargs} do not build a policy: {error}") from None


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


def _masked_choice(
    model: Any, features: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None
) -> int:
    """The policy's action among the valid ones: the most probable (``rng`` None) or a draw."""
    import torch

    with torch.no_grad():
        tensor, _ = model.policy.obs_to_tensor(features)
        logits = model.policy.get_distribution(tensor).distribution.logits[0].cpu().numpy()
    logits = np.where(mask, logits.astype(np.float64), -np.inf)
    if rng is None:
        return int(np.argmax(logits))
    probs = np.exp(logits - logits.max())
    return int(rng.choice(logits.size, p=probs / probs.sum()))


# --------------------------------------------------------------------------- the agent
class RLAgent:
    """Runs a saved intervention-design policy through ``ACDBEnv`` or the design env.

    On :class:`~acdb_gym.envs.acdb_env.ACDBEnv` (dict observations) the agent rebuilds the design
    env's observation from the data it is shown: PC's CPDAG of the observational sample as the
    starting graph, then every experiment in the observation's ``interventional`` slots through
    :meth:`DesignState.add_experiment`. The policy's target ``i`` becomes
    ``actions.intervene(i, mean_i + shift * sd_i)``; "stop" becomes ``actions.submit`` of the
    current estimate. Interventions are masked out once the budget is spent, in the
    observational panel, and on the last step before truncation, so the agent never exceeds the
    budget and always submits. With the same instance and ``estimator="pc"`` its episodes are
    the design env's episodes step for step.

    On :class:`~acdb_gym.envs.design.env.InterventionDesignEnv` (flat observations) it returns
    the masked action index directly; the mask is read from the observation's budget fraction
    (:class:`DesignObservation`), which equals the env's ``action_masks()``.

    Args:
        model: a loaded policy (see :func:`load_policy`): anything with ``policy`` (an SB3
            policy module) and ``action_space``.
        metadata: what the model was trained on.
        deterministic: take the most probable valid action; otherwise sample from the
            policy's distribution restricted to the valid actions.
        seed: seed of the sampling generator (used only when not deterministic).
        name: name in result files (default ``"rl"``).
    """

    def __init__(
        self,
        model: Any,
        metadata: PolicyMetadata,
        *,
        deterministic: bool = True,
        seed: int = 0,
        name: str = "rl",
    ) -> None:
        self.model = model
        self.metadata = metadata
        self.name = name
        self.deterministic = deterministic
        self._rng = None if deterministic else np.random.default_rng(seed)
        self._state: DesignState | None = None
        self._budget = 0
        self._mode: Literal["acdb", "design"] = "design"
        self._d = metadata.n_nodes

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        algo: Algorithm | None = None,
        deterministic: bool = True,
        seed: int = 0,
        name: str = "rl",
        trust: bool = False,
    ) -> RLAgent:
        """Load a saved policy (see :func:`load_policy`; ``trust`` as there) into an agent."""
        model, metadata = load_policy(path, algo=algo, trust=trust)
        return cls(model, metadata, deterministic=deterministic, seed=seed, name=name)

    # ------------------------------------------------------------------ Agent protocol
    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Start an episode: on ``ACDBEnv`` run PC and start a fresh estimator state."""
        if isinstance(observation, Mapping) and "node_mask" in observation:
            if not self.metadata.size_free:
                raise ValueError("this policy reads flat design observations, not graph ones")
            self._mode = "design"
            return
        if not isinstance(observation, Mapping):
            if self.metadata.size_free:
                raise ValueError(
                    "this policy reads graph design observations: make the design env with "
                    'observation="graph"'
                )
            self._mode = "design"
            size = np.asarray(observation).size
            if size != observation_size(self._n_nodes):
                raise ValueError(
                    f"this policy expects design-env observations of size "
                    f"{observation_size(self._n_nodes)} (d={self._n_nodes}), got size {size}"
                )
            return
        self._mode = "acdb"
        data = np.asarray(observation["observational"], dtype=np.float64)
        self._check_nodes(data.shape[1])
        self._state = DesignState(
            data, pc_cpdag(data), shift=self.metadata.shift, alpha=self.metadata.alpha
        )
        self._budget = int(info.get("budget", observation["budget_remaining"][0]))

    def act(self, observation: Any, info: Mapping[str, Any]) -> Any:
        """The next action: an index on the design env, a typed-action tuple on ``ACDBEnv``."""
        if self._mode == "design" and self.metadata.size_free:
            return np.int64(self._choose_graph(observation))
        if self._mode == "design":
            mask = DesignObservation.decode(observation, self._n_nodes).action_mask
            return np.int64(self.choose(np.asarray(observation, dtype=np.float32), mask))
        state = self._absorb(observation)
        remaining = int(observation["budget_remaining"][0])
        features = state.observation(budget_remaining=remaining, budget=self._budget)
        can_intervene = remaining > 0 and int(observation["steps_remaining"][0]) > 1
        if self.metadata.size_free:
            from acdb_gym.envs.design.graph_obs import graph_observation

            target = self._choose_graph(
                graph_observation(
                    features, self._d, budget_remaining=remaining, can_intervene=can_intervene
                )
            )
        else:
            mask = np.zeros(self._n_nodes + 1, dtype=bool)
            mask[: self._n_nodes] = can_intervene
            mask[self._n_nodes] = True
            target = self.choose(features, mask)
        if target == self._d:
            return actions.submit(state.estimate)
        value = float(np.clip(state.intervention_value(target), -VALUE_BOUND, VALUE_BOUND))
        return actions.intervene(target, value)

    def choose(self, features: np.ndarray, mask: np.ndarray) -> int:
        """The policy's choice for a design-env observation among the actions ``mask`` allows
        (``d`` means stop)."""
        return _masked_choice(self.model, features, mask, self._rng)

    @property
    def estimate(self) -> PDAG | None:
        """The current estimate on ``ACDBEnv`` (None on the design env, whose env holds it)."""
        return self._state.estimate if self._mode == "acdb" and self._state else None

    def episode_stats(self) -> dict[str, Any]:
        """Extra fields for the sweep's result rows."""
        return {
            "policy_algo": self.metadata.algo,
            "policy_level": self.metadata.level,
            "trained_estimator": self.metadata.estimator,
            "estimator": "pc" if self._mode == "acdb" else "env",
        }

    # ------------------------------------------------------------------ internals
    @property
    def _n_nodes(self) -> int:
        return self._d

    def _choose_graph(self, observation: Mapping[str, Any]) -> int:
        """A graph policy's choice on a graph observation (padded or not): a node index, or
        the observation's "stop" index (its action mask's last)."""
        from acdb_gym.agents.rl.graph_policy import trim

        trimmed = trim(observation)
        d = len(trimmed["nodes"])
        logits = np.where(trimmed["action_mask"], self.model.action_logits(trimmed), -np.inf)
        if self._rng is None:
            choice = int(np.argmax(logits))
        else:
            probs = np.exp(logits - logits.max())
            choice = int(self._rng.choice(logits.size, p=probs / probs.sum()))
        return choice if choice < d else len(observation["action_mask"]) - 1

    def _check_nodes(self, n_nodes: int) -> None:
        if self.metadata.size_free:
            self._d = n_nodes
            return
        if n_nodes != self._n_nodes:
            raise ValueError(
                f"this policy was trained on {self.metadata.ladder} {self.metadata.level} with "
                f"d={self._n_nodes} variables and cannot act on d={n_nodes}; run it on levels "
                f"with d={self._n_nodes}"
            )

    def _absorb(self, observation: Mapping[str, Any]) -> DesignState:
        """Feed the experiments that appeared since the last step into the estimator state."""
        state = self._state
        if state is None:
            raise RuntimeError("call reset() before act()")
        targets = np.asarray(observation["targets"])
        filled = int(np.count_nonzero(targets < self._n_nodes))
        for slot in range(len(state.targets), filled):
            state.add_experiment(int(targets[slot]), observation["interventional"][slot])
        return state
