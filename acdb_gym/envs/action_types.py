"""The typed actions of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` (DESIGN §8): ``intervene``,
``submit_graph`` and one class per statistics tool, with the kinds' indices and the limits an
action's values must keep. :mod:`acdb_gym.envs.action_codes` encodes them as elements of the
action space (:mod:`acdb_gym.envs.action_space`); :mod:`acdb_gym.envs.actions` is the face of all
three."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, make_dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from acdb_gym.core import statistic_tools
from acdb_gym.core.graphs import ADMG, DAG, PAG, PDAG
from acdb_gym.core.statistic_tools import StatisticTool
from acdb_gym.core.types import is_integer

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
    "ToolAction",
    "action_class",
    "kind_names",
    "kind_of",
    "node_index",
    "real_number",
]

VALUE_BOUND = 1e4
"""Intervention values must lie in ``[-VALUE_BOUND, VALUE_BOUND]`` (the action space's Box)."""

NO_EDGE, DIRECTED, UNDIRECTED, BIDIRECTED = 0, 1, 2, 3
"""Codes of the ``submit_graph`` matrix: ``g[i, j] = 1`` is ``i -> j``; 2 (both ways) is ``i - j``;
3 (both ways, levels with hidden confounders only) is ``i <-> j``."""

HYPOTHESIS_KEY = "hypothesis"
"""The optional annotation key of an ``intervene`` payload (:func:`intervene`)."""

EncodedAction = tuple[int, dict[str, Any]]
"""An element of the action space: ``(kind index, payload)``."""


class ActionKind(IntEnum):
    """Index of each sub-space of the ``OneOf`` action space: the benchmark's layout.

    Kinds never move: statistics tools registered beyond the built-in three
    (:func:`acdb_gym.core.statistic_tools.register_tool`) take the indices after ``SUBMIT_GRAPH``
    (5, 6, ...) in registration order, so recorded actions and trained policies keep their
    meaning. :func:`kind_names` lists every kind.
    """

    INTERVENE = 0
    CORRELATION = 1
    PARTIAL_CORRELATION = 2
    INDEPENDENCE_TEST = 3
    SUBMIT_GRAPH = 4


_FIXED_KINDS: tuple[str, ...] = tuple(kind.name.lower() for kind in ActionKind)


def kind_names() -> tuple[str, ...]:
    """The name of each action kind, by index: :class:`ActionKind`'s, then later tools'.

    >>> kind_names()
    ('intervene', 'correlation', 'partial_correlation', 'independence_test', 'submit_graph')
    """
    later = tuple(
        tool.name for tool in statistic_tools.statistics_tools() if tool.name not in _FIXED_KINDS
    )
    return _FIXED_KINDS + later


def kind_of(name: str) -> int:
    return kind_names().index(name)


def node_index(name: str, value: Any) -> int:
    """``value`` as a node index: an ``int`` or NumPy integer, never a bool, float or string.

    Ranges are the session's to check (an out-of-range index is an invalid step, not an error
    of the caller's types).

    >>> node_index("var", np.int64(2))
    2
    >>> node_index("var", 1.7)
    Traceback (most recent call last):
    ...
    ValueError: var must be an integer node index, got float 1.7
    """
    if not is_integer(value):
        raise ValueError(
            f"{name} must be an integer node index, got {type(value).__name__} {value!r}"
        )
    return int(value)


def real_number(name: str, value: Any) -> float:
    """``value`` as a float: an ``int``, ``float`` or NumPy real scalar, never a bool or string
    (finiteness and bounds are the action space's to check)."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    if isinstance(value, np.complexfloating):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Intervene:
    """``do(X_var = value)``, optionally stating the agent's current hypothesis graph.

    ``hypothesis`` is an annotation, not part of the experiment: the env records it with the
    experiment (what the agent believed before seeing its result) and the step is otherwise
    exactly the step without it (DESIGN §8). A DAG is stored as a fully directed PDAG.

    >>> Intervene(1, 2.0)
    Intervene(var=1, value=2.0)
    >>> Intervene(1, 2.0, hypothesis=PDAG.from_edges(2, directed=[(0, 1)]))
    Intervene(var=1, value=2.0, hypothesis=PDAG(n_nodes=2, directed=[(0, 1)], undirected=[]))
    """

    var: int
    value: float
    hypothesis: PDAG | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "var", node_index("var", self.var))
        object.__setattr__(self, "value", real_number("value", self.value))
        hypothesis = self.hypothesis
        if isinstance(hypothesis, DAG):
            object.__setattr__(self, "hypothesis", hypothesis.to_pdag())
        elif hypothesis is not None and not isinstance(hypothesis, PDAG):
            raise ValueError(
                f"hypothesis must be a PDAG, a DAG or None, got {type(hypothesis).__name__}"
            )

    def __repr__(self) -> str:
        # Without a hypothesis, the repr of the paper's action (trajectories and renders keep it).
        stated = "" if self.hypothesis is None else f", hypothesis={self.hypothesis!r}"
        return f"Intervene(var={self.var!r}, value={self.value!r}{stated})"


@dataclass(frozen=True)
class Submit:
    """Submit a mixed graph and end the episode: a PDAG, or on a level with hidden confounders
    an ADMG (bidirected edges) or a PAG (circle marks)."""

    graph: PDAG | ADMG | PAG


@dataclass(frozen=True)
class ToolAction:
    """A call of a statistics tool.

    Each tool's own class (:class:`Correlation`, ...) is generated from its spec by
    :func:`action_class`: a frozen dataclass whose fields are the spec's fields in order
    (``i``, ``j``, ``cond``, ``regime``), with ``cond`` defaulting to ``()`` and ``regime``
    (``None`` for the observational data, else an experiment index) to ``None``.
    """

    tool: ClassVar[StatisticTool]

    if TYPE_CHECKING:  # the generated subclasses take their own fields

        def __init__(self, *args: Any, **kwargs: Any) -> None: ...

    def __post_init__(self) -> None:
        for name in self.tool.fields:
            value = getattr(self, name)
            if name == "cond":
                if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                    raise ValueError(f"cond must be a sequence of node indices, got {value!r}")
                value = tuple(node_index("cond entry", c) for c in value)
            elif name == "regime":
                value = None if value is None else node_index("regime", value)
            else:
                value = node_index(name, value)
            object.__setattr__(self, name, value)

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments the statistic is computed from: every field but ``regime``."""
        return {name: getattr(self, name) for name in self.tool.fields if name != "regime"}

    @property
    def data_regime(self) -> int | None:
        """The data used: ``None`` for the observational sample, else an experiment index."""
        regime: int | None = getattr(self, "regime", None)
        return regime


_ACTION_CLASSES: dict[str, type[ToolAction]] = {}


def action_class(name: str) -> type[ToolAction]:
    """The typed action class of the registered tool ``name`` (generated once per spec).

    >>> action_class("partial_correlation")(0, 1, (2,))
    PartialCorrelation(i=0, j=1, cond=(2,), regime=None)
    """
    spec = statistic_tools.get_tool(name)
    cls = _ACTION_CLASSES.get(name)
    if cls is None or cls.tool is not spec:
        cls = _ACTION_CLASSES[name] = _make_action_class(spec)
    return cls


def _make_action_class(spec: StatisticTool) -> type[ToolAction]:
    defaults: dict[str, Any] = {"cond": field(default=()), "regime": field(default=None)}
    types = {"i": int, "j": int, "cond": tuple[int, ...], "regime": int | None}
    cls = make_dataclass(
        spec.action_name,
        [(name, types[name], defaults[name]) if name in defaults else (name, types[name])
         for name in spec.fields],
        bases=(ToolAction,),
        frozen=True,
        namespace={
            "tool": spec,
            "__doc__": f"The ``{spec.name}`` statistics tool: {spec.description}",
            "__module__": __name__,
        },
    )  # fmt: skip
    assert issubclass(cls, ToolAction)
    return cls


Correlation = action_class("correlation")
PartialCorrelation = action_class("partial_correlation")
IndependenceTest = action_class("independence_test")

Action = Intervene | ToolAction | Submit
