"""The statistics tools, one declarative spec each: the single place a tool is defined.

A :class:`StatisticTool` names a tool, lists its arguments by kind, says how to compute it on a
data matrix and holds the text an LLM sees about it. Everything else is generated from the
registry of specs: the env's action space, ``encode``/``decode`` and the typed actions
(:mod:`acdb_gym.envs.actions`), the env's dispatch and the session's checks, the LLM tool
schemas and prompts (:mod:`acdb_gym.agents.llm`), the ``ansi`` render and the fuzz plans of
:mod:`acdb_gym.testing`.

Adding a tool to the package is one function in :mod:`acdb_gym.core.stats` and one entry of
:data:`BUILTIN_TOOLS`; a user can add one at run time with :func:`register_tool` (or, scoped,
:func:`registered_tool`) before making an env.

Argument kinds, and the fields they give the tool's typed action, its action-space payload and
its LLM schema:

| kind | action fields | action space | LLM arguments |
|------|---------------|--------------|---------------|
| ``node`` | ``i`` | ``Discrete(d)`` | ``i`` (a name ``X0..X{d-1}``) |
| ``pair`` | ``i, j`` (distinct) | ``Discrete(d)`` each | ``i``, ``j`` |
| ``cond`` | ``cond`` (a tuple) | ``MultiBinary(d)`` | ``conditioning_set`` (a list of names) |
| ``regime`` | ``regime`` (``None`` or an experiment index) | ``Discrete(m + 1)``, 0 = observational | ``regime`` (optional, 0 = observational) |

>>> [tool.name for tool in statistics_tools()]
['correlation', 'partial_correlation', 'independence_test']
>>> get_tool("partial_correlation").fields
('i', 'j', 'cond', 'regime')
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, get_args

from acdb_gym.core import stats
from acdb_gym.core.types import FloatArray

__all__ = [
    "ARGUMENT_KINDS",
    "BUILTIN_TOOLS",
    "INDEPENDENCE_ALPHA",
    "TOOLS_RAW",
    "TOOLS_STATS",
    "TOOL_VARIANTS",
    "ArgumentKind",
    "StatisticTool",
    "ToolResult",
    "ToolSet",
    "Tools",
    "get_tool",
    "register_tool",
    "registered_tool",
    "statistics_tools",
    "unregister_tool",
]

ToolSet = Literal["raw", "stats"]
"""The env's tool set (its ``tools=`` argument, a row's ``tools`` column): ``raw`` (intervene
and submit) or ``stats`` (plus the statistics tools)."""

Tools = ToolSet
"""The former name of :data:`ToolSet`, kept so code importing it keeps working."""

TOOL_VARIANTS: tuple[ToolSet, ...] = get_args(ToolSet)
"""The values of :data:`ToolSet`, in order."""

TOOLS_RAW: Final[ToolSet] = "raw"
TOOLS_STATS: Final[ToolSet] = "stats"

ArgumentKind = Literal["node", "pair", "cond", "regime"]
"""What an argument of a statistics tool is (see the module table)."""

ARGUMENT_KINDS: tuple[ArgumentKind, ...] = get_args(ArgumentKind)
"""The values of :data:`ArgumentKind`, in the order a spec must list them."""

_FIELDS: dict[ArgumentKind, tuple[str, ...]] = {
    "node": ("i",),
    "pair": ("i", "j"),
    "cond": ("cond",),
    "regime": ("regime",),
}

RESERVED_NAMES: Final = ("intervene", "submit_graph")
"""Action names that are not statistics tools."""

INDEPENDENCE_ALPHA = 0.05
"""Significance level of the ``independence_test`` tool (the session's default)."""

_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


class ToolResult(NamedTuple):
    """What a tool call returns: the first two entries of the env's ``tool_result``.

    ``p_value`` must lie in ``[0, 1]`` (the observation space's bounds).
    """

    statistic: float
    p_value: float


@dataclass(frozen=True)
class StatisticTool:
    """The declarative spec of one statistics tool.

    Attributes:
        name: snake_case name: the action kind's and the LLM tool's name (``"correlation"``).
            The typed action class is its CapWords form (``Correlation``).
        arguments: the argument kinds, in the order of :data:`ARGUMENT_KINDS`: ``node`` or
            ``pair`` first, then optionally ``cond``, then optionally ``regime`` (without it
            the tool always uses the observational data).
        compute: ``compute(data, **arguments) -> ToolResult`` with ``data`` the
            ``(n_samples, d)`` matrix of the chosen regime and one keyword per field but
            ``regime`` (``i``, ``j``: ints; ``cond``: a tuple of ints). Node indices are
            checked to be in range before the call; everything else (``i == j``, ``cond``
            holding ``i``, degenerate data) is for ``compute`` to reject with ``ValueError``.
        description: what the tool does, for the LLM tool schema.
        result_text: ``result_text(statistic, p_value)``: the numbers of a result as the LLM
            reads them (``"r = 0.1234, p = 0.05"``), after ``"name(X0, X1 | X2) on ...: "``.
    """

    name: str
    arguments: tuple[ArgumentKind, ...]
    compute: Callable[..., ToolResult]
    description: str
    result_text: Callable[[float, float], str]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _SNAKE_CASE.fullmatch(self.name):
            raise ValueError(f"a tool name must be snake_case, got {self.name!r}")
        if self.name in RESERVED_NAMES:
            raise ValueError(f"{self.name!r} is an action of its own, not a statistics tool")
        _check_arguments(self.name, self.arguments)
        if not self.description:
            raise ValueError(f"tool {self.name!r} needs an LLM-facing description")
        _check_compute(self)

    @functools.cached_property
    def fields(self) -> tuple[str, ...]:
        """The typed action's fields, in order (``("i", "j", "cond", "regime")``)."""
        return tuple(field for kind in self.arguments for field in _FIELDS[kind])

    @functools.cached_property
    def node_fields(self) -> tuple[str, ...]:
        """The fields holding one node each: ``("i",)`` or ``("i", "j")``."""
        return tuple(field for field in self.fields if field in ("i", "j"))

    @property
    def action_name(self) -> str:
        """The typed action's class name: ``independence_test`` -> ``IndependenceTest``."""
        return "".join(part.capitalize() for part in self.name.split("_"))


def _check_arguments(name: str, arguments: tuple[ArgumentKind, ...]) -> None:
    if not isinstance(arguments, tuple) or not arguments:
        raise ValueError(f"tool {name!r} needs a non-empty tuple of arguments, got {arguments!r}")
    unknown = [kind for kind in arguments if kind not in ARGUMENT_KINDS]
    if unknown:
        raise ValueError(f"tool {name!r}: unknown argument kinds {unknown}; use {ARGUMENT_KINDS}")
    first, rest = arguments[0], list(arguments[1:])
    if first not in ("node", "pair") or rest not in ([], ["cond"], ["regime"], ["cond", "regime"]):
        raise ValueError(
            f"tool {name!r}: arguments must be 'node' or 'pair', then optionally 'cond', then "
            f"optionally 'regime'; got {list(arguments)}"
        )


def _check_compute(tool: StatisticTool) -> None:
    if not callable(tool.compute) or not callable(tool.result_text):
        raise ValueError(f"tool {tool.name!r}: compute and result_text must be callable")
    keywords = {field: None for field in tool.fields if field != "regime"}
    try:
        inspect.signature(tool.compute).bind(None, **keywords)
    except TypeError as error:
        raise ValueError(
            f"tool {tool.name!r}: compute must accept (data, {', '.join(f'{k}=' for k in keywords)}"
            f"): {error}"
        ) from None
    except ValueError:  # no signature available (some builtins): trust it
        pass


# --------------------------------------------------------------------------- the built-in tools


def _correlation(data: FloatArray, *, i: int, j: int) -> ToolResult:
    r = stats.correlation(data, i, j)
    return ToolResult(r, stats.fisher_z_test(data, i, j).p_value)


def _partial_correlation(data: FloatArray, *, i: int, j: int, cond: tuple[int, ...]) -> ToolResult:
    r = stats.partial_correlation(data, i, j, cond)
    return ToolResult(r, stats.fisher_z_test(data, i, j, cond).p_value)


def _independence_test(data: FloatArray, *, i: int, j: int, cond: tuple[int, ...]) -> ToolResult:
    test = stats.fisher_z_test(data, i, j, cond, alpha=INDEPENDENCE_ALPHA)
    return ToolResult(test.statistic, test.p_value)


def _r_and_p(statistic: float, p_value: float) -> str:
    return f"r = {statistic:.4f}, p = {p_value:.3g}"


def _z_and_decision(statistic: float, p_value: float) -> str:
    decision = (
        "independent (independence not rejected)"
        if p_value > INDEPENDENCE_ALPHA
        else "dependent (independence rejected)"
    )
    return f"z = {statistic:.3f}, p = {p_value:.3g}; at alpha = {INDEPENDENCE_ALPHA}: {decision}"


BUILTIN_TOOLS: tuple[StatisticTool, ...] = (
    StatisticTool(
        name="correlation",
        arguments=("pair", "regime"),
        compute=_correlation,
        description=(
            "Pearson correlation r of two variables, with the Fisher-z p-value of the test r = 0."
        ),
        result_text=_r_and_p,
    ),
    StatisticTool(
        name="partial_correlation",
        arguments=("pair", "cond", "regime"),
        compute=_partial_correlation,
        description=(
            "Partial correlation of i and j given the conditioning set, with the Fisher-z "
            "p-value of the test that it is 0."
        ),
        result_text=_r_and_p,
    ),
    StatisticTool(
        name="independence_test",
        arguments=("pair", "cond", "regime"),
        compute=_independence_test,
        description=(
            "Fisher-z test of the conditional independence of i and j given the "
            "conditioning set at alpha = 0.05: the z statistic, the p-value and the decision."
        ),
        result_text=_z_and_decision,
    ),
)
"""The tools of the benchmark, in action-kind order (their kinds are 1, 2, 3)."""


# --------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, StatisticTool] = {tool.name: tool for tool in BUILTIN_TOOLS}


def statistics_tools() -> tuple[StatisticTool, ...]:
    """The registered tools: the built-in ones, then the registered ones in registration order."""
    return tuple(_REGISTRY.values())


def get_tool(name: str) -> StatisticTool:
    """The registered tool called ``name``; ValueError naming the known tools otherwise."""
    tool = _REGISTRY.get(name)
    if tool is None:
        raise ValueError(f"unknown statistics tool {name!r}; the tools are {list(_REGISTRY)}")
    return tool


def register_tool(tool: StatisticTool) -> None:
    """Add ``tool`` to the registry, after the tools already there.

    Envs, LLM agents and conformance checks made afterwards offer it: it gets the next action
    kind (after ``submit_graph`` and any tools registered before it), an LLM tool schema, a
    line in the prompts and a place in the fuzz plans. Envs made before keep their action
    space.

    Raises:
        ValueError: ``tool`` is not a :class:`StatisticTool` or its name is taken.
    """
    if not isinstance(tool, StatisticTool):
        raise ValueError(f"register_tool needs a StatisticTool, got {tool!r}")
    if tool.name in _REGISTRY:
        raise ValueError(f"a statistics tool called {tool.name!r} is already registered")
    _REGISTRY[tool.name] = tool


def unregister_tool(name: str) -> None:
    """Remove a tool added by :func:`register_tool` (the built-in tools stay).

    Raises:
        ValueError: no such registered tool, or ``name`` is a built-in tool.
    """
    if any(tool.name == name for tool in BUILTIN_TOOLS):
        raise ValueError(f"{name!r} is a built-in statistics tool and cannot be unregistered")
    get_tool(name)
    del _REGISTRY[name]


@contextmanager
def registered_tool(tool: StatisticTool) -> Iterator[StatisticTool]:
    """Register ``tool`` for the duration of a ``with`` block (tests, experiments).

    >>> from acdb_gym.core.statistic_tools import ToolResult
    >>> spec = StatisticTool(name="zero", arguments=("pair",),
    ...                      compute=lambda data, *, i, j: ToolResult(0.0, 1.0),
    ...                      description="Always zero.", result_text=lambda s, p: f"{s}")
    >>> with registered_tool(spec):
    ...     [tool.name for tool in statistics_tools()][-1]
    'zero'
    >>> "zero" in [tool.name for tool in statistics_tools()]
    False
    """
    register_tool(tool)
    try:
        yield tool
    finally:
        unregister_tool(tool.name)
