"""The agent that runs a saved RL intervention policy (:class:`RLAgent`); what a policy file is
and how it is loaded safely is :mod:`acdb_gym.agents.rl.policy_file` (its names are re-exported
here).

:class:`RLAgent` acts through :class:`~acdb_gym.envs.acdb_env.ACDBEnv` like every other agent:
it runs PC on the observational data, keeps a :class:`~acdb_gym.envs.design.env.DesignState`
up to date with the experiments it sees in the observations (the design env's estimator with its
default ``"power"`` orientation rule), asks the policy for a target (masked to the valid ones)
and sends ``actions.intervene(target, mean + shift * sd, hypothesis=estimate)``, or, on "stop",
``actions.submit(estimate)``. On the design env itself it maps observations to actions
directly. The sweep runs it as ``rl:PATH``. A size-free
:class:`~acdb_gym.agents.rl.graph_policy.NodeMessagePolicy` (metadata ``observation="graph"``)
acts on every level of both ladders and on custom levels of any ``d``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from acdb_gym.agents.rl._format import METADATA_MEMBER, UntrustedPolicyError
from acdb_gym.agents.rl.policy_file import (
    MAX_POLICY_NODES,
    Algorithm,
    MissingExtraError,
    PolicyChangedError,
    PolicyMetadata,
    SafePolicy,
    algorithm_class,
    load_policy,
    policy_digest,
    read_metadata,
    require_rl,
    save_policy,
)
from acdb_gym.core.graphs import PDAG
from acdb_gym.discovery import pc_cpdag
from acdb_gym.envs import actions
from acdb_gym.envs.actions import VALUE_BOUND
from acdb_gym.envs.design.observation import DesignObservation, observation_size
from acdb_gym.envs.design.state import DesignState

__all__ = [
    "MAX_POLICY_NODES",
    "METADATA_MEMBER",
    "Algorithm",
    "MissingExtraError",
    "PolicyChangedError",
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
        # Set on ACDBEnv, where the agent's estimate is its own (the sweep records it).
        self.states_hypotheses = False

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
        sha256: str | None = None,
    ) -> RLAgent:
        """Load a saved policy (see :func:`load_policy`; ``trust`` and ``sha256`` as there)
        into an agent."""
        model, metadata = load_policy(path, algo=algo, trust=trust, sha256=sha256)
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
        self.states_hypotheses = True
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
        return actions.intervene(target, value, hypothesis=state.estimate)

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
