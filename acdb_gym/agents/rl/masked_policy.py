"""A faster masked policy for sb3-contrib's ``MaskablePPO``: the same numbers, no
``torch.distributions`` objects.

sb3-contrib's ``MaskableActorCriticPolicy`` builds a ``MaskableCategorical`` (a
``torch.distributions.Categorical``) twice per forward pass: once on the raw logits and again on
the masked ones, each with argument validation and lazily cached properties, and validates the
actions again in ``log_prob``. On a small network that bookkeeping costs more than the network.
:class:`FastMaskableActorCriticPolicy` is a drop-in subclass whose action distribution
(:class:`FastMaskableCategoricalDistribution`) runs the same tensor operations in the same order
on plain tensors, so actions, log-probabilities, entropies and gradients are bit-identical to
sb3-contrib's for the same logits, mask and torch generator (``tests/agents/test_masked_policy.py``
checks the probabilities, and that a seeded training run ends with bit-identical weights)::

    from sb3_contrib import MaskablePPO
    from acdb_gym.agents.rl.masked_policy import FastMaskableActorCriticPolicy
    model = MaskablePPO(FastMaskableActorCriticPolicy, venv, seed=0)

The distribution, as sb3-contrib computes it, with ``N(x) = x - logsumexp(x)`` over the last
axis: log-probabilities ``N(where(mask, N(logits), -1e8))`` (``N(N(logits))`` without a mask),
probabilities their softmax, entropy ``-sum(where(mask, p log p, 0))``, samples
``torch.multinomial(p, 1, True)`` and the mode ``argmax p``. Only ``Discrete`` action spaces take
the fast distribution; any other space keeps sb3-contrib's. For ``Dict`` observations use
:class:`FastMaskableMultiInputActorCriticPolicy` (sb3-contrib's ``MultiInputPolicy``).

Importing this module needs torch and sb3-contrib (the ``rl`` extra).
"""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import (
    MaskableCategorical,
    MaskableCategoricalDistribution,
)
from sb3_contrib.common.maskable.policies import (
    MaskableActorCriticPolicy,
    MaskableMultiInputActorCriticPolicy,
)

__all__ = [
    "FastMaskableActorCriticPolicy",
    "FastMaskableCategoricalDistribution",
    "FastMaskableMultiInputActorCriticPolicy",
]

HUGE_NEGATIVE = -1e8
"""The logit a masked-out action gets (sb3-contrib's value)."""


def _normalized(logits: torch.Tensor) -> torch.Tensor:
    """``logits - logsumexp(logits)`` over the last axis (``Categorical``'s normalisation)."""
    return logits - logits.logsumexp(dim=-1, keepdim=True)


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's masked categorical distribution on plain tensors (module docstring).

    Attributes:
        logits: the normalised log-probabilities ``(batch, action_dim)`` after masking.
        masks: the boolean mask applied last, or None.
    """

    def __init__(self, action_dim: int) -> None:
        super().__init__(action_dim)
        self.logits = torch.empty(0)
        self.masks: torch.Tensor | None = None
        self._raw = torch.empty(0)
        self._original = torch.empty(0)
        self._probs: torch.Tensor | None = None
        self._categorical: MaskableCategorical | None = None

    def proba_distribution(
        self, action_logits: torch.Tensor
    ) -> FastMaskableCategoricalDistribution:
        """Take the action net's raw logits (no mask yet)."""
        self._raw = action_logits.view(-1, self.action_dim)
        self._original = _normalized(self._raw)
        self.apply_masking(None)
        return self

    def apply_masking(self, masks: Any) -> None:
        """Mask out the actions where ``masks`` is False (None: remove any mask)."""
        if masks is None:
            self.masks = None
            logits = self._original
        else:
            original = self._original
            self.masks = torch.as_tensor(masks, dtype=torch.bool, device=original.device).reshape(
                original.shape
            )
            huge_negative = torch.tensor(
                HUGE_NEGATIVE, dtype=original.dtype, device=original.device
            )
            logits = torch.where(self.masks, original, huge_negative)
        self.logits = _normalized(logits)
        self._probs = None
        self._categorical = None

    @property
    def distribution(self) -> MaskableCategorical:  # type: ignore[override]
        """sb3-contrib's ``MaskableCategorical`` of the same logits and mask, built on first
        use (for code that reads ``.distribution``; the policy itself never does)."""
        if self._categorical is None:
            self._categorical = MaskableCategorical(logits=self._raw, masks=self.masks)
        return self._categorical

    @property
    def probs(self) -> torch.Tensor:
        """The action probabilities (softmax of :attr:`logits`, computed once)."""
        if self._probs is None:
            self._probs = torch.softmax(self.logits, dim=-1)
        return self._probs

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of ``actions`` (one integer per row)."""
        return self.logits.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        """Entropy per row; masked-out actions contribute nothing."""
        if self.masks is None:
            logits = torch.clamp(self.logits, min=torch.finfo(self.logits.dtype).min)
            return -(logits * self.probs).sum(-1)
        p_log_p = self.logits * self.probs
        zero = torch.tensor(0.0, device=self.logits.device)
        return -torch.where(self.masks, p_log_p, zero).sum(-1)

    def sample(self) -> torch.Tensor:
        """One action per row, drawn as ``Categorical.sample`` draws it."""
        return torch.multinomial(self.probs, 1, True).T.reshape(-1)

    def mode(self) -> torch.Tensor:
        """The most probable action per row."""
        return torch.argmax(self.probs, dim=1)


class FastMaskableActorCriticPolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` with :class:`FastMaskableCategoricalDistribution` on a
    ``Discrete`` action space (same parameters, state-dict keys and outputs; module docstring)."""

    def _build(self, lr_schedule: Any) -> None:
        if isinstance(self.action_space, spaces.Discrete):
            self.action_dist = FastMaskableCategoricalDistribution(int(self.action_space.n))
        super()._build(lr_schedule)


class FastMaskableMultiInputActorCriticPolicy(
    FastMaskableActorCriticPolicy, MaskableMultiInputActorCriticPolicy
):
    """sb3-contrib's ``MaskableMultiInputActorCriticPolicy`` (``Dict`` observations, e.g. the
    design env's ``observation="graph"``) with :class:`FastMaskableCategoricalDistribution`."""
