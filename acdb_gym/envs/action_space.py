"""The Gymnasium action space of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` (DESIGN §8): one
``OneOf`` sub-space per action kind (:class:`VariantOneOf`, which samples only the kinds a variant
accepts) and the memory-free ternary grid of a large graph's codes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from acdb_gym.core import statistic_tools
from acdb_gym.core.worlds.linear import DO_MATRIX_MAX_D
from acdb_gym.envs.action_codes import split_hypothesis
from acdb_gym.envs.action_types import DIRECTED, NO_EDGE, VALUE_BOUND, ActionKind, kind_names

__all__ = [
    "TernaryGrid",
    "VariantOneOf",
    "action_space",
]


class TernaryGrid(spaces.MultiDiscrete):
    """``MultiDiscrete(np.full((d, d), 3))`` (the ``submit_graph`` codes) whose ``nvec`` and
    ``start`` take no memory: read-only broadcast views of one value each (Gymnasium stores both
    in full, 64 MB at d = 2,000). Used above d = 40; a pickled one is rebuilt from ``d``.

    Args:
        n_nodes: ``d``.
    """

    def __init__(self, n_nodes: int) -> None:
        super().__init__(np.full((1,), 3))
        self._n_nodes = int(n_nodes)
        self._shape = (self._n_nodes, self._n_nodes)
        self.nvec = np.broadcast_to(np.int64(3), self._shape)
        self.start = np.broadcast_to(np.int64(0), self._shape)

    def __repr__(self) -> str:
        return f"MultiDiscrete(3 x {self._shape})"

    def __reduce__(self) -> tuple[type[TernaryGrid], tuple[int]]:
        return (TernaryGrid, (self._n_nodes,))


class VariantOneOf(spaces.OneOf):
    """The action space of one env variant: every kind is an element (a kind the variant
    refuses is an invalid step, not an error), but :meth:`sample` draws only the kinds the
    variant accepts, and a sampled ``submit_graph`` holds a random DAG (a valid submission,
    where uniform codes almost never are), so random-action rollouts end by submitting.
    :meth:`contains` also accepts an ``intervene`` element carrying the optional
    ``hypothesis`` annotation (:func:`intervene`); :meth:`sample` never draws one.

    Args:
        spaces: one sub-space per kind.
        sampled_kinds: the kinds :meth:`sample` draws from (uniformly), by index.
        n_nodes: the number of variables (the size of a sampled graph).
    """

    def __init__(
        self,
        spaces: Sequence[spaces.Space[Any]],
        sampled_kinds: Sequence[int],
        *,
        n_nodes: int,
        seed: Any = None,
    ) -> None:
        super().__init__(spaces, seed=seed)
        self.n_nodes = n_nodes
        if not sampled_kinds or not all(0 <= k < len(self.spaces) for k in sampled_kinds):
            raise ValueError(f"sampled_kinds must be kinds of the space, got {sampled_kinds}")
        self.sampled_kinds = tuple(int(k) for k in sampled_kinds)

    def sample(
        self,
        mask: tuple[Any | None, ...] | None = None,
        probability: tuple[Any | None, ...] | None = None,
    ) -> tuple[int, Any]:
        """A random element of an accepted kind; with ``mask`` or ``probability``, as
        ``OneOf.sample`` (any kind)."""
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        index = int(self.np_random.integers(0, len(self.sampled_kinds)))
        kind = self.sampled_kinds[index]
        if kind == ActionKind.SUBMIT_GRAPH:
            return kind, {"graph": _random_dag_codes(self.np_random, self.n_nodes)}
        return kind, self.spaces[kind].sample()

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is an element, allowing a well-formed ``hypothesis`` on ``intervene``."""
        try:
            element, _ = split_hypothesis(x, n_nodes=self.n_nodes)
        except ValueError:
            return False
        return bool(super().contains(element))


def _random_dag_codes(rng: np.random.Generator, n_nodes: int) -> np.ndarray:
    """Codes of a random DAG: a random order, each forward pair an edge with probability 1/2."""
    order = rng.permutation(n_nodes)
    upper = np.triu(rng.random((n_nodes, n_nodes)) < 0.5, k=1)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    adjacency[np.ix_(order, order)] = upper
    return np.where(adjacency, DIRECTED, NO_EDGE).astype(np.int64)


def action_space(
    n_nodes: int,
    max_interventions: int,
    *,
    sampled_kinds: Sequence[int] | None = None,
    latent: bool = False,
) -> spaces.OneOf:
    """The ``OneOf`` action space for ``n_nodes`` variables (DESIGN §8), one sub-space per
    entry of :func:`kind_names`.

    Statistics tools carry ``regime``: 0 for the observational data, ``k`` for the ``k``-th
    experiment (1-based). With ``sampled_kinds``, a :class:`VariantOneOf` whose ``sample``
    draws only those kinds. With ``latent`` (a level with hidden confounders) the graph codes
    include :data:`BIDIRECTED`.
    """
    # One sub-space object per argument kind, shared by every kind that uses it: seeding and
    # sampling the OneOf then draws exactly as the benchmark always has.
    node = spaces.Discrete(n_nodes)
    by_field: dict[str, spaces.Space[Any]] = {
        "i": node,
        "j": node,
        "cond": spaces.MultiBinary(n_nodes),
        "regime": spaces.Discrete(max_interventions + 1),
    }
    value = spaces.Box(-VALUE_BOUND, VALUE_BOUND, shape=(), dtype=np.float64)
    # A ternary grid packs the edge marks of a large graph; code 3 (bidirected) needs the
    # plain grid.
    graph = (
        TernaryGrid(n_nodes)
        if n_nodes > DO_MATRIX_MAX_D and not latent
        else spaces.MultiDiscrete(np.full((n_nodes, n_nodes), 4 if latent else 3))
    )
    kinds: list[spaces.Space[Any]] = []
    for name in kind_names():
        if name == "intervene":
            kinds.append(spaces.Dict({"var": node, "value": value}))
        elif name == "submit_graph":
            kinds.append(spaces.Dict({"graph": graph}))
        else:
            spec = statistic_tools.get_tool(name)
            kinds.append(spaces.Dict({key: by_field[key] for key in spec.fields}))
    if sampled_kinds is None:
        return spaces.OneOf(kinds)
    return VariantOneOf(kinds, sampled_kinds, n_nodes=n_nodes)
