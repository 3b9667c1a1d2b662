"""Typed actions of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` and their ``OneOf`` encoding, in
one import: the typed actions (:mod:`acdb_gym.envs.action_types`), the constructors and
:func:`decode` (:mod:`acdb_gym.envs.action_codes`) and the action space
(:mod:`acdb_gym.envs.action_space`).

Callers never hand-build ``OneOf`` tuples: the constructors return elements of the action space,
and :func:`decode` turns any element back into a typed action.

>>> from acdb_gym.core.graphs import PDAG
>>> action = intervene(2, 3.0)
>>> action[0], decode(action, n_nodes=4)
(0, Intervene(var=2, value=3.0))
"""

from __future__ import annotations

from acdb_gym.envs.action_codes import (
    correlation,
    decode,
    encode,
    graph_from_codes,
    graph_to_codes,
    hypothesis_from_codes,
    independence_test,
    intervene,
    intervene_request,
    partial_correlation,
    split_hypothesis,
    submit,
    tool_action,
)
from acdb_gym.envs.action_space import (
    TernaryGrid,
    VariantOneOf,
    action_space,
)
from acdb_gym.envs.action_types import (
    BIDIRECTED,
    DIRECTED,
    HYPOTHESIS_KEY,
    NO_EDGE,
    UNDIRECTED,
    VALUE_BOUND,
    Action,
    ActionKind,
    Correlation,
    EncodedAction,
    IndependenceTest,
    Intervene,
    PartialCorrelation,
    Submit,
    ToolAction,
    action_class,
    kind_names,
)

__all__ = [
    "BIDIRECTED",
    "DIRECTED",
    "HYPOTHESIS_KEY",
    "NO_EDGE",
    "UNDIRECTED",
    "VALUE_BOUND",
    "Action",
    "ActionKind",
    "Correlation",
    "EncodedAction",
    "IndependenceTest",
    "Intervene",
    "PartialCorrelation",
    "Submit",
    "TernaryGrid",
    "ToolAction",
    "VariantOneOf",
    "action_class",
    "action_space",
    "correlation",
    "decode",
    "encode",
    "graph_from_codes",
    "graph_to_codes",
    "hypothesis_from_codes",
    "independence_test",
    "intervene",
    "intervene_request",
    "kind_names",
    "partial_correlation",
    "split_hypothesis",
    "submit",
    "tool_action",
]
