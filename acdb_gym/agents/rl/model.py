"""Shipped policies loaded the way stable-baselines3 users load theirs (DESIGN §9).

``MaskablePPO.load(path)`` unpickles SB3's members (it runs any code a file names), and a
size-free graph policy (``models/acdb_design_graph``) is no SB3 network at all, so SB3 finds no
``data`` in it. :func:`load_model` reads every policy this package writes without unpickling and
returns a :class:`PolicyModel` with SB3's ``predict``, so the loop an SB3 user writes runs
unchanged::

    from acdb_gym.agents.rl import load_model

    model = load_model("models/acdb_design_graph/model.zip")  # MaskablePPO.load's place
    env = gym.make("ACDB-Design-L1-v0", observation="graph")
    observation, info = env.reset(seed=0)
    action, _ = model.predict(observation, action_masks=env.unwrapped.action_masks(),
                              deterministic=True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.agents.rl.agent import PolicyMetadata, _masked_choice, load_policy

__all__ = ["PolicyModel", "load_model"]


@dataclass
class PolicyModel:
    """A loaded policy with stable-baselines3's ``predict`` (for the design env's
    observations: the flat ``Box`` of the policy's level, or the size-free graph ``Dict``).

    Attributes:
        network: the rebuilt network (:class:`~acdb_gym.agents.rl.agent.SafePolicy`, or a
            :class:`~acdb_gym.agents.rl.graph_policy.NodeMessagePolicy`).
        metadata: the file's :class:`~acdb_gym.agents.rl.agent.PolicyMetadata`.
        seed: seeds the draws of ``predict(..., deterministic=False)``.
    """

    network: Any
    metadata: PolicyMetadata
    seed: int = 0
    _rng: np.random.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = False,
        action_masks: Any = None,
    ) -> tuple[np.ndarray, None]:
        """SB3's ``predict``: the action of one observation (a 0-d array) or of a batch (one
        per row, as from a vector env). ``action_masks`` (``(A,)`` or ``(B, A)`` booleans)
        restricts the choice; without it, the observation's own mask is used (the graph
        observation's ``action_mask``) or every action is allowed. ``state`` and
        ``episode_start`` are accepted for SB3's signature; the policies keep no state."""
        del state, episode_start
        rng = None if deterministic else self._rng
        if self.metadata.size_free:
            return self._predict_graph(observation, action_masks, rng)
        features = np.asarray(observation, dtype=np.float32)
        batched = features.ndim == 2
        rows = features if batched else features[None]
        size = int(self.network.action_space.n)
        masks = _mask_rows(action_masks, len(rows), size)
        actions = [
            _masked_choice(self.network, row, mask, rng)
            for row, mask in zip(rows, masks, strict=True)
        ]
        return (np.array(actions) if batched else np.array(actions[0])), None

    def _predict_graph(
        self, observation: Mapping[str, Any], action_masks: Any, rng: np.random.Generator | None
    ) -> tuple[np.ndarray, None]:
        from acdb_gym.agents.rl.graph_policy import trim

        batched = np.ndim(observation["node_mask"]) == 2
        count = len(observation["node_mask"]) if batched else 1
        size = int(np.shape(observation["action_mask"])[-1])
        masks = _mask_rows(action_masks, count, size)
        actions = []
        for k in range(count):
            single = {
                key: np.asarray(value)[k] if batched else value
                for key, value in observation.items()
            }
            allowed = masks[k] & np.asarray(single["action_mask"], dtype=bool)
            trimmed = trim({**single, "action_mask": allowed})
            d = len(trimmed["nodes"])
            logits = np.where(trimmed["action_mask"], self.network.action_logits(trimmed), -np.inf)
            if rng is None:
                choice = int(np.argmax(logits))
            else:
                probs = np.exp(logits - logits.max())
                choice = int(rng.choice(logits.size, p=probs / probs.sum()))
            actions.append(choice if choice < d else size - 1)
        return (np.array(actions) if batched else np.array(actions[0])), None


def _mask_rows(action_masks: Any, count: int, size: int) -> np.ndarray:
    """``(count, size)`` booleans: the given masks, or every action allowed."""
    if action_masks is None:
        return np.ones((count, size), dtype=bool)
    masks = np.asarray(action_masks, dtype=bool).reshape(-1, size)
    if len(masks) != count:
        raise ValueError(f"expected {count} action masks of size {size}, got {masks.shape}")
    return masks


def load_model(path: str | Path, *, trust: bool = False, seed: int = 0) -> PolicyModel:
    """Load a policy this package wrote (``models/*/model.zip``, ``acdb train``) as a
    :class:`PolicyModel`: ``MaskablePPO.load``'s place, without unpickling anything.

    Args:
        path: the ``.zip``.
        trust: also load a plain SB3 ``.zip`` (unpickling it; only for trusted files).
        seed: seeds the draws of ``predict(..., deterministic=False)``.

    Raises:
        FileNotFoundError, UntrustedPolicyError, ValueError: as
            :func:`~acdb_gym.agents.rl.agent.load_policy`.
    """
    network, metadata = load_policy(path, trust=trust)
    return PolicyModel(network, metadata, seed)
