"""A permutation-equivariant intervention policy that reads the design env's graph observation.

:class:`NodeMessagePolicy` treats the ``d`` variables as a set: every layer sends a message
along every ordered pair ``(j -> i)`` built from both nodes' states and the pair's features
(current edge state, correlation, shift evidence; :data:`~acdb_gym.envs.design.graph_obs.
PAIR_FEATURES`), averages the messages each node receives over the real nodes, and updates the
node's state. Each node's final state gives the logit of intervening on it; the mean and
maximum over nodes with the budget give the logit of "stop" and the value. Renumbering the
nodes renumbers the logits and leaves "stop" and the value unchanged, and nothing depends on
``d``, so one set of weights acts on every level and on custom levels of any size.

A saved policy is a ``.zip`` with three members and no pickle in it:

| member | content |
|--------|---------|
| ``acdb_gym.json`` | :class:`~acdb_gym.agents.rl.agent.PolicyMetadata` with ``observation="graph"`` |
| ``network.json`` | :class:`NetworkConfig` (layer sizes) |
| ``weights.pt`` | the ``state_dict``, loaded with ``torch.load(weights_only=True)`` |

torch is imported by this module: :mod:`acdb_gym.agents.rl.agent` imports it only when a policy of
this kind is loaded.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from acdb_gym.agents.rl._format import (
    MAX_POLICY_PARAMETERS,
    MAX_WEIGHTS_BYTES,
    METADATA_MEMBER,
    UntrustedPolicyError,
)
from acdb_gym.core.untrusted import loads, read_member
from acdb_gym.envs.design.graph_obs import NODE_FEATURES, PAIR_FEATURES

__all__ = [
    "NETWORK_MEMBER",
    "WEIGHTS_MEMBER",
    "GraphBatch",
    "NetworkConfig",
    "NodeMessagePolicy",
    "collate",
    "load_network",
    "save_network",
    "trim",
]

NETWORK_MEMBER = "network.json"
WEIGHTS_MEMBER = "weights.pt"
_BUDGET_FEATURES = 3
_MAX_CONFIG_BYTES = 1 << 16


@dataclass(frozen=True)
class NetworkConfig:
    """Sizes of :class:`NodeMessagePolicy`.

    Attributes:
        hidden: width of node states and messages.
        layers: message-passing rounds.
    """

    hidden: int = 48
    layers: int = 3

    def __post_init__(self) -> None:
        # The sizes come from a file (network.json): bounded so a crafted one cannot allocate
        # without bound.
        for name, most in (("hidden", 1024), ("layers", 32)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                raise ValueError(f"{name} must be an integer in [1, {most}], got {str(value)[:40]}")

    @property
    def parameters(self) -> int:
        """The network's parameter count (weights and biases), from its sizes alone.

        >>> NetworkConfig(hidden=48, layers=3).parameters == sum(
        ...     p.numel() for p in NodeMessagePolicy(NetworkConfig(48, 3)).parameters())
        True
        """
        h, nodes, pairs, budget = self.hidden, len(NODE_FEATURES), len(PAIR_FEATURES), 3
        layer = (h * h + h) + h * h + pairs * h + (2 * h * h + h) + (h * h + h) + 2 * h
        pooled = 2 * h + budget
        heads = (h * h + h + h + 1) + 2 * (pooled * h + h + h + 1)
        return (nodes + budget) * h + h + self.layers * layer + heads


@dataclass(frozen=True)
class GraphBatch:
    """Graph observations stacked and padded to the largest ``d`` among them.

    Attributes:
        nodes: ``(B, n, len(NODE_FEATURES))``.
        pairs: ``(B, n, n, len(PAIR_FEATURES))``.
        node_mask: ``(B, n)`` float, 1 for real nodes.
        action_mask: ``(B, n + 1)`` bool; column ``n`` is "stop".
        budget: ``(B, 3)``.
    """

    nodes: torch.Tensor
    pairs: torch.Tensor
    node_mask: torch.Tensor
    action_mask: torch.Tensor
    budget: torch.Tensor


def trim(observation: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A graph observation cut to its ``d`` real nodes; the action mask's last entry ("stop")
    moves to index ``d``."""
    d = int(np.asarray(observation["node_mask"]).sum())
    action_mask = np.asarray(observation["action_mask"], dtype=bool)
    return {
        "nodes": np.asarray(observation["nodes"])[:d],
        "pairs": np.asarray(observation["pairs"])[:d, :d],
        "action_mask": np.concatenate([action_mask[:d], action_mask[-1:]]),
        "budget": np.asarray(observation["budget"]),
    }


def collate(observations: Sequence[Mapping[str, np.ndarray]]) -> GraphBatch:
    """Stack trimmed observations (:func:`trim`), padding each to the largest ``d``."""
    size = max(len(o["nodes"]) for o in observations)
    batch = len(observations)
    nodes = np.zeros((batch, size, len(NODE_FEATURES)), dtype=np.float32)
    pairs = np.zeros((batch, size, size, len(PAIR_FEATURES)), dtype=np.float32)
    node_mask = np.zeros((batch, size), dtype=np.float32)
    action_mask = np.zeros((batch, size + 1), dtype=bool)
    budget = np.zeros((batch, _BUDGET_FEATURES), dtype=np.float32)
    for row, observation in enumerate(observations):
        d = len(observation["nodes"])
        nodes[row, :d] = observation["nodes"]
        pairs[row, :d, :d] = observation["pairs"]
        node_mask[row, :d] = 1.0
        action_mask[row, :d] = observation["action_mask"][:d]
        action_mask[row, size] = observation["action_mask"][d]
        budget[row] = observation["budget"]
    return GraphBatch(
        torch.from_numpy(nodes),
        torch.from_numpy(pairs),
        torch.from_numpy(node_mask),
        torch.from_numpy(action_mask),
        torch.from_numpy(budget),
    )


class _MessageLayer(nn.Module):
    """One round: messages ``relu(A h_i + B h_j + E e_ij)``, averaged over real ``j``, then a
    residual update of ``h_i`` with layer norm."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.receiver = nn.Linear(hidden, hidden)
        self.sender = nn.Linear(hidden, hidden, bias=False)
        self.pair = nn.Linear(len(PAIR_FEATURES), hidden, bias=False)
        self.update = nn.Sequential(
            nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden)
        )
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h: torch.Tensor, pairs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        messages = torch.relu(
            self.receiver(h)[:, :, None, :] + self.sender(h)[:, None, :, :] + self.pair(pairs)
        )
        weights = mask[:, None, :, None]
        received = (messages * weights).sum(dim=2) / weights.sum(dim=2).clamp(min=1.0)
        return self.norm(h + self.update(torch.cat([h, received], dim=-1)))


class NodeMessagePolicy(nn.Module):
    """Actor-critic over a variable number of nodes (see the module docstring).

    Args:
        config: layer sizes.
    """

    def __init__(self, config: NetworkConfig | None = None) -> None:
        super().__init__()
        self.config = config or NetworkConfig()
        hidden = self.config.hidden
        self.embed = nn.Sequential(
            nn.Linear(len(NODE_FEATURES) + _BUDGET_FEATURES, hidden), nn.ReLU()
        )
        self.layers = nn.ModuleList(_MessageLayer(hidden) for _ in range(self.config.layers))
        self.node_head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        pooled = 2 * hidden + _BUDGET_FEATURES
        self.stop_head = nn.Sequential(nn.Linear(pooled, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.value_head = nn.Sequential(nn.Linear(pooled, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, batch: GraphBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits ``(B, n + 1)`` (column ``n`` is "stop"; invalid actions get a large
        negative logit) and values ``(B,)``."""
        mask = batch.node_mask
        size = mask.shape[1]
        budget = batch.budget[:, None, :].expand(-1, size, -1)
        h = self.embed(torch.cat([batch.nodes, budget], dim=-1))
        for layer in self.layers:
            h = layer(h, batch.pairs, mask)
        mean = (h * mask[..., None]).sum(dim=1) / mask.sum(dim=1, keepdim=True).clamp(min=1.0)
        peak = h.masked_fill(mask[..., None] == 0, -1e4).amax(dim=1)
        pooled = torch.cat([mean, peak, batch.budget], dim=-1)
        logits = torch.cat([self.node_head(h).squeeze(-1), self.stop_head(pooled)], dim=-1)
        logits = logits.masked_fill(~batch.action_mask, -1e8)
        return logits, self.value_head(pooled).squeeze(-1)

    def action_logits(self, observation: Mapping[str, np.ndarray]) -> np.ndarray:
        """Masked logits ``(d + 1,)`` for one trimmed observation (index ``d`` is "stop")."""
        with torch.no_grad():
            logits, _ = self(collate([observation]))
        return logits[0].numpy().astype(np.float64)


# --------------------------------------------------------------------------- files
def save_network(network: NodeMessagePolicy, path: str | Path, metadata: Mapping[str, Any]) -> Path:
    """Write ``network`` and its metadata (``acdb_gym.json``) to a ``.zip`` without pickles
    beyond ``torch.save``'s tensor-only state dict."""
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_name(path.name + ".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = io.BytesIO()
    torch.save(network.state_dict(), weights)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(METADATA_MEMBER, json.dumps(dict(metadata), indent=2) + "\n")
        archive.writestr(NETWORK_MEMBER, json.dumps(asdict(network.config), indent=2) + "\n")
        archive.writestr(WEIGHTS_MEMBER, weights.getvalue())
    return path


def load_network(path: Path, archive: zipfile.ZipFile) -> NodeMessagePolicy:
    """Rebuild the network from ``network.json`` and load ``weights.pt`` as tensors only.

    Raises:
        ValueError: a member is missing or malformed.
        UntrustedPolicyError: the weights hold anything but tensors.
    """
    names = set(archive.namelist())
    for member in (NETWORK_MEMBER, WEIGHTS_MEMBER):
        if member not in names:
            raise ValueError(f"{path} is not a graph policy: it has no {member!r} member")
    try:
        sizes = loads(
            read_member(archive, NETWORK_MEMBER, max_bytes=_MAX_CONFIG_BYTES),
            max_bytes=_MAX_CONFIG_BYTES,
        )
        weights = read_member(archive, WEIGHTS_MEMBER, max_bytes=MAX_WEIGHTS_BYTES)
    except (ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path}: {error}") from None
    try:
        config = NetworkConfig(**sizes)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{path}: {NETWORK_MEMBER} does not describe a network ({error})"
        ) from None
    if config.parameters > MAX_POLICY_PARAMETERS:
        raise ValueError(
            f"{path}: a network of {config} has {config.parameters} parameters, more than "
            f"{MAX_POLICY_PARAMETERS}: refused before it is built"
        )
    network = NodeMessagePolicy(config)
    try:
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises UnpicklingError or RuntimeError for foreign objects
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise UntrustedPolicyError(
            path, f"its {WEIGHTS_MEMBER} holds more than tensors ({reason})"
        ) from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: {WEIGHTS_MEMBER} is not a state dict")
    try:
        network.load_state_dict(state)
    except (RuntimeError, TypeError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(f"{path}: the weights do not fit the network ({reason[:200]})") from None
    network.eval()
    return network
