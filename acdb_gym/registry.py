"""The agents the sweep can run, as one table (:data:`AGENTS`).

Over 500 lines because most of it is the table itself (one entry per agent, each with its
summary line for ``acdb sweep --help``), and the entry type, its builders and its readiness
checks read that table's fields, so they stay beside it.

Each :class:`AgentEntry` names its class by a dotted path (``"module:Class"``, imported only when
an agent is built, so reading the table needs neither torch nor an LLM SDK) and says how it is
built, where it runs (panels, tools, draws), what it needs (optional extras, privileged access
to the hidden instance, a saved model) and what it is, in one line. The ``acdb sweep`` help, the
unknown-agent error and the sweep's agent construction are all generated from this table.

A parametrized entry (``msort``) is spelled ``NAME:VALUE:VALUE`` (``msort:kurtosis:desc``): each
value is checked against its parameter's choices and passed to the constructor as a keyword;
the bound agent keeps the full name in jobs and result rows.

An alias (``gies_active``) is an entry of its own that builds the same agent as its target:
jobs keep the name they were asked for, so old result files and commands mean what they meant.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from acdb_gym.core.statistic_tools import TOOLS_RAW, TOOLS_STATS, ToolSet
from acdb_gym.core.types import PANEL_ACTIVE, PANEL_OBSERVATIONAL, PANELS, Panel

__all__ = [
    "AGENTS",
    "OFFLINE_AGENTS",
    "AgentEntry",
    "AgentNotReadyError",
    "Construction",
    "Extra",
    "agent_help",
    "get_agent",
    "known_agents",
]

Construction = Literal["plain", "seeded", "llm", "policy", "capped"]
"""How an agent is built: ``Class()``; ``Class(seed=job seed)``; an LLM agent from the sweep's
provider options; ``Class.load(path)`` of a saved policy named ``NAME:PATH``; ``Class(inner)``
around the registered agent named by the ``inner`` parameter (``cap:AGENT``)."""

Extra = Literal["llm", "rl"]
"""An optional dependency group of the package (``pip install 'acdb_gym[llm]'``)."""

LLM_OPTIONS: Final = (
    "provider",
    "model",
    "base_url",
    "temperature",
    "state_hypothesis",
    "text_turns",
    "thinking_budget",
    "reasoning_effort",
    "named",
)
"""The sweep options that define an LLM agent (part of its job id when given;
``state_hypothesis`` and ``named`` are given only when on, so the paper protocol's job ids
stay)."""

_REQUIRED: Final = ("provider", "model")
"""The LLM options without which the agent cannot be built."""

_TRANSPORT: Final = ("timeout", "max_retries", "prompt_cache")
"""LLM options of the HTTP transport (and prompt caching): they change how long a job takes
and what it costs, not its result, so they are not part of the job id."""


@dataclass(frozen=True)
class AgentEntry:
    """One named agent of the sweep.

    Attributes:
        name: the name in ``--agents`` and in result rows; for a ``policy`` entry, the prefix
            of ``NAME:PATH``.
        constructor: the agent class as ``"module:Class"``.
        summary: one line for ``acdb sweep --help``.
        construction: how the class is called (see :data:`Construction`).
        panels: the panels in which the agent behaves differently; an agent that never
            intervenes runs once, in the first requested panel (observational preferred).
        tools: the env's tool variant for this agent.
        draws: episodes per job, averaged into one row (the random baseline's 100 draws).
        max_steps: overrides the env's step limit (None: the variant's default).
        extras: optional dependency groups the agent needs.
        privileged: the agent reads the hidden instance (an upper bound, never a policy).
        options: sweep options that define the agent; they go into its job id.
        default: part of the default (offline) sweep.
        alias_of: the entry this one repeats under an older name.
        arguments: fixed keyword arguments of the constructor (an ablation's switch).
        parameters: for an entry spelled ``NAME:VALUE:...``, each parameter's keyword and its
            choices as ``"module:NAME"`` (a tuple of strings, imported only when parsing).
    """

    name: str
    constructor: str
    summary: str
    construction: Construction = "plain"
    panels: tuple[Panel, ...] = (PANEL_OBSERVATIONAL,)
    tools: ToolSet = TOOLS_RAW
    draws: int = 1
    max_steps: int | None = None
    extras: tuple[Extra, ...] = ()
    privileged: bool = False
    options: tuple[str, ...] = ()
    default: bool = False
    alias_of: str | None = None
    arguments: tuple[tuple[str, Any], ...] = ()
    parameters: tuple[tuple[str, str], ...] = ()

    @property
    def takes_path(self) -> bool:
        """Whether the agent is named ``NAME:PATH`` (a saved model)."""
        return self.construction == "policy"

    @property
    def usage(self) -> str:
        """How ``--agents`` spells the agent."""
        if self.takes_path:
            return f"{self.name}:PATH"
        return ":".join([self.name, *(name.upper() for name, _ in self.parameters)])

    def parameter_choices(self) -> dict[str, tuple[str, ...]]:
        """Each parameter's allowed values (imports the modules that define them)."""
        choices = {}
        for name, path in self.parameters:
            module_name, _, attribute = path.partition(":")
            choices[name] = tuple(getattr(importlib.import_module(module_name), attribute))
        return choices

    def bind(self, values: Sequence[str]) -> AgentEntry:
        """This parametrized entry with its parameters set, named ``NAME:VALUE:...``.

        Raises:
            ValueError: the wrong number of values, or a value outside its choices.
        """
        if len(values) != len(self.parameters):
            raise ValueError(
                f"agent {self.name} is spelled {self.usage}, got {':'.join([self.name, *values])!r}"
            )
        arguments = dict(self.arguments)
        for (name, allowed), value in zip(self.parameter_choices().items(), values, strict=True):
            if value not in allowed:
                raise ValueError(
                    f"{name.upper()} of agent {self.name} must be one of {list(allowed)}, "
                    f"got {value!r}"
                )
            arguments[name] = value
        return dataclasses.replace(
            self,
            name=":".join([self.name, *values]),
            arguments=tuple(arguments.items()),
            parameters=(),
        )

    def load_class(self) -> Any:
        """Import the agent class named by :attr:`constructor`."""
        module_name, _, class_name = self.constructor.partition(":")
        return getattr(importlib.import_module(module_name), class_name)

    @property
    def model_path(self) -> Path:
        """The saved model of a bound ``NAME:PATH`` entry."""
        if not self.takes_path or ":" not in self.name:
            raise ValueError(f"agent {self.name!r} names no saved model")
        return Path(self.name.partition(":")[2])

    def check_ready(self, options: Mapping[str, Any]) -> None:
        """Check, before any job runs, that the agent can be built and can work here.

        LLM agents: ``--provider`` and ``--model`` are given, the provider's SDK is installed,
        a key is set and the endpoint accepts a connection (no model request is sent). Saved
        policies: the ``[rl]`` extra is installed and the file loads (without unpickling unless
        ``trust_model``). Other agents need nothing.

        Raises:
            AgentNotReadyError: what is missing, and what to do about it.
        """
        if self.construction == "llm":
            _check_llm(self, options)
        elif self.construction == "policy":
            _check_policy(self, options)

    def build(self, seed: int, options: Mapping[str, Any]) -> Any:
        """A fresh agent for one job.

        Args:
            seed: the job's agent seed (used by ``seeded`` entries).
            options: the sweep's agent options (LLM provider, model, ...).

        Raises:
            ValueError: an LLM entry without ``provider`` and ``model`` in ``options``.
        """
        return _BUILDERS[self.construction](self, seed, options)


def _plain(entry: AgentEntry, seed: int, options: Mapping[str, Any]) -> Any:
    return entry.load_class()(**dict(entry.arguments))


def _seeded(entry: AgentEntry, seed: int, options: Mapping[str, Any]) -> Any:
    return entry.load_class()(seed=seed, **dict(entry.arguments))


def _llm(entry: AgentEntry, seed: int, options: Mapping[str, Any]) -> Any:
    if not all(options.get(name) for name in _REQUIRED):
        raise ValueError(f"{entry.name} needs --provider and --model")
    temperature = options.get("temperature")
    transport = {name: options[name] for name in _TRANSPORT if options.get(name) is not None}
    return entry.load_class()(
        entry.name,
        provider=options["provider"],
        model=options["model"],
        base_url=options.get("base_url"),
        # The paper's protocol is temperature 0; the agent drops it where a model refuses.
        temperature=0.0 if temperature is None else float(temperature),
        cache_dir=Path(options["cache_dir"]) if options.get("cache_dir") else None,
        state_hypothesis=bool(options.get("state_hypothesis")),
        named=bool(options.get("named")),
        text_turns=int(options.get("text_turns") or 0),
        thinking_budget=options.get("thinking_budget"),
        reasoning_effort=options.get("reasoning_effort"),
        rate_limiter=_rate_limiter(options),
        **transport,
    )


def _capped(entry: AgentEntry, seed: int, options: Mapping[str, Any]) -> Any:
    arguments = dict(entry.arguments)
    inner = get_agent(arguments.pop("inner")).build(seed, options)
    return entry.load_class()(inner, name=entry.name, **arguments)


def _rate_limiter(options: Mapping[str, Any]) -> Any:
    """The limiter shared by the sweep's LLM agents, or None without limits."""
    rpm, tpm = options.get("requests_per_minute"), options.get("tokens_per_minute")
    if rpm is None and tpm is None:
        return None
    if not options.get("rate_limit_file"):
        raise ValueError("requests_per_minute/tokens_per_minute need rate_limit_file")
    from acdb_gym.agents.llm.ratelimit import RateLimiter

    return RateLimiter(
        Path(options["rate_limit_file"]), requests_per_minute=rpm, tokens_per_minute=tpm
    )


def _policy(entry: AgentEntry, seed: int, options: Mapping[str, Any]) -> Any:
    # A bound entry is named NAME:PATH (see get_agent); the policy keeps that name.
    # A sweep's job carries the digest taken when it was planned: a file replaced since then
    # is refused, never run under the old digest.
    return entry.load_class().load(
        entry.model_path,
        name=entry.name,
        trust=bool(options.get("trust_model")),
        sha256=options.get("model_sha256"),
    )


class AgentNotReadyError(ValueError):
    """An agent of the sweep cannot work here (a missing extra, key, server or model file)."""


def _check_llm(entry: AgentEntry, options: Mapping[str, Any]) -> None:
    missing = [f"--{name}" for name in _REQUIRED if not options.get(name)]
    if missing:
        raise AgentNotReadyError(f"{entry.name} needs {' and '.join(missing)}")
    # The preflight module needs no extra; it reports a missing SDK itself.
    from acdb_gym.agents.llm.preflight import LLMNotReadyError, check_llm_ready

    try:
        check_llm_ready(
            options["provider"],
            base_url=options.get("base_url"),
            cache_dir=options.get("cache_dir"),
            timeout=min(float(options.get("timeout") or 10.0), 10.0),
        )
    except LLMNotReadyError as error:
        raise AgentNotReadyError(f"{entry.name}: {error}") from None


def _check_policy(entry: AgentEntry, options: Mapping[str, Any]) -> None:
    from acdb_gym.agents.rl.agent import load_policy

    try:
        load_policy(entry.model_path, trust=bool(options.get("trust_model")))
    except (ImportError, ValueError, OSError) as error:
        raise AgentNotReadyError(f"{entry.name}: {error}") from None


_BUILDERS: Final[dict[str, Callable[[AgentEntry, int, Mapping[str, Any]], Any]]] = {
    "plain": _plain,
    "seeded": _seeded,
    "llm": _llm,
    "policy": _policy,
    "capped": _capped,
}


def _alias(name: str, target: AgentEntry) -> AgentEntry:
    return dataclasses.replace(
        target, name=name, summary=f"alias of {target.name}", default=False, alias_of=target.name
    )


_CLASSICAL: Final = "acdb_gym.baselines.classical"
_ACTIVE: Final = "acdb_gym.baselines.active"
_LLM: Final = "acdb_gym.agents.llm:LLMAgent"

_BIC_ACTIVE: Final = AgentEntry(
    "bic_active",
    f"{_ACTIVE}:BICActiveAgent",
    "greedy search on the interventional Gaussian BIC, adaptive experiments",
    panels=(PANEL_ACTIVE,),
)

_ENTRIES: Final = (
    AgentEntry(
        "random",
        f"{_CLASSICAL}:RandomDAGAgent",
        "a random DAG from d alone: the structure-blind floor (100 draws)",
        construction="seeded",
        draws=100,
        default=True,
    ),
    AgentEntry("pc", f"{_CLASSICAL}:PCAgent", "PC on the observational sample", default=True),
    AgentEntry(
        "pc_greedy",
        f"{_CLASSICAL}:PCGreedyAgent",
        "PC, then intervene on the node with the most undirected edges",
        panels=(PANEL_ACTIVE,),
        default=True,
    ),
    AgentEntry(
        "oracle",
        f"{_CLASSICAL}:OracleAgent",
        "submits the true DAG: an upper bound, never a policy",
        privileged=True,
        default=True,
    ),
    AgentEntry(
        "sortnregress",
        f"{_CLASSICAL}:SortnregressAgent",
        "regressions in increasing-variance order: the variance-sortability check",
        default=True,
    ),
    AgentEntry(
        "r2sortnregress",
        f"{_CLASSICAL}:R2SortnregressAgent",
        "regressions in increasing-R² order: the scale-free (R²) sortability check",
    ),
    AgentEntry(
        "msort",
        f"{_CLASSICAL}:MarginalSortRegressAgent",
        "regressions in the order of a marginal feature (the order audit's shortcut)",
        parameters=(
            ("feature", "acdb_gym.discovery.sortability:MARGINAL_FEATURES"),
            ("direction", "acdb_gym.discovery.sortnregress:SORT_DIRECTIONS"),
        ),
    ),
    AgentEntry(
        "hub",
        f"{_CLASSICAL}:HubOrderAgent",
        "regressions in descending PC-skeleton degree (hubs as parents): the hub shortcut check",
    ),
    AgentEntry(
        "cap",
        "acdb_gym.baselines.capped:CappedAgent",
        "an active agent stopped at the |I*| it predicts from its own graph: the η exploit",
        construction="capped",
        panels=(PANEL_ACTIVE,),
        parameters=(("inner", "acdb_gym.baselines.capped:CAPPABLE_AGENTS"),),
    ),
    AgentEntry(
        "lingam",
        "acdb_gym.baselines.families:DirectLiNGAMAgent",
        "DirectLiNGAM order + significant OLS coefficients: fits non-Gaussian worlds",
    ),
    AgentEntry(
        "lingam_active",
        "acdb_gym.baselines.families:LiNGAMActiveAgent",
        "DirectLiNGAM's DAG, then pc_active's experiments and shift tests correct it",
        panels=(PANEL_ACTIVE,),
    ),
    AgentEntry(
        "anm",
        "acdb_gym.baselines.families:ANMAgent",
        "additive-noise-model orientation (kernel regression + HSIC) of each adjacency",
    ),
    AgentEntry(
        "pc_rank",
        "acdb_gym.baselines.families:RankPCAgent",
        "PC with Fisher-z on normal scores (ranks): sees monotone nonlinear dependence",
    ),
    AgentEntry(
        "randregress",
        f"{_CLASSICAL}:RandomOrderRegressAgent",
        "the sort baselines' control: the same regressions in random order (20 draws)",
        construction="seeded",
        draws=20,
    ),
    AgentEntry(
        "pc_active",
        f"{_ACTIVE}:PCActiveAgent",
        "PC, then adaptive experiments whose shift tests correct PC's graph",
        panels=(PANEL_ACTIVE,),
    ),
    _BIC_ACTIVE,
    _alias("gies_active", _BIC_ACTIVE),
    AgentEntry(
        "fci",
        "acdb_gym.baselines.latent:FCIAgent",
        "FCI's PAG of the observational sample: hidden confounders as <-> edges",
    ),
    AgentEntry(
        "fci_active",
        "acdb_gym.baselines.latent:FCIActiveAgent",
        "FCI's PAG, then experiments on its circle marks and <-> candidates",
        panels=(PANEL_ACTIVE,),
    ),
    AgentEntry(
        "class_reference",
        "acdb_gym.baselines.reference:ClassReferenceAgent",
        "BIC on the family's mechanism class, the budget's best experiments: the reachability "
        "reference",
        panels=(PANEL_ACTIVE,),
        privileged=True,
    ),
    AgentEntry(
        "class_bic_active",
        "acdb_gym.baselines.reference:ClassReferenceAgent",
        "class_reference's mechanism-class BIC with bic_active's own adaptive experiments",
        panels=(PANEL_ACTIVE,),
        privileged=True,
        arguments=(("design", "adaptive"),),
    ),
    AgentEntry(
        "llm_raw",
        _LLM,
        "a language model with intervene and submit_graph tools",
        construction="llm",
        panels=PANELS,
        extras=("llm",),
        options=LLM_OPTIONS,
    ),
    AgentEntry(
        "llm_stats",
        _LLM,
        "llm_raw plus correlation, partial correlation and independence tests",
        construction="llm",
        panels=PANELS,
        tools=TOOLS_STATS,
        extras=("llm",),
        options=LLM_OPTIONS,
    ),
    AgentEntry(
        "llm_corr_obs",
        _LLM,
        "a language model shown only correlations and SDs (ablation probe)",
        construction="llm",
        extras=("llm",),
        options=LLM_OPTIONS,
    ),
    AgentEntry(
        "rl",
        "acdb_gym.agents.rl.agent:RLAgent",
        "an intervention policy saved by acdb train",
        construction="policy",
        panels=(PANEL_ACTIVE,),
        extras=("rl",),
    ),
)

AGENTS: dict[str, AgentEntry] = {entry.name: entry for entry in _ENTRIES}
"""Every named agent, in help order. Code that adds an agent adds an entry here."""

OFFLINE_AGENTS: Final = tuple(entry.name for entry in _ENTRIES if entry.default)
"""The agents of the README's offline sweep (the default of ``acdb sweep --agents``)."""


def known_agents() -> list[str]:
    """How ``--agents`` spells every agent, sorted (``rl:PATH`` for a saved policy)."""
    return sorted(entry.usage for entry in AGENTS.values())


def get_agent(name: str) -> AgentEntry:
    """The entry of an agent name; ``NAME:PATH`` binds a ``policy`` entry to a saved model.

    The policy file is checked here but loaded only when the agent is built, in the worker
    that runs the job: planning needs no torch. ``NAME:VALUE:...`` binds a parametrized entry
    (:meth:`AgentEntry.bind`).

    Raises:
        ValueError: an unknown name (the message lists the known ones), a policy entry without
            a path, a path that is not a file, or parameters that do not fit.
    """
    prefix, sep, path = name.partition(":")
    entry = AGENTS.get(prefix if sep else name)
    if entry is not None and entry.parameters:
        return entry.bind(path.split(":") if sep else [])
    if entry is None or entry.takes_path != bool(sep):
        if entry is not None and entry.takes_path:
            raise ValueError(f"agent {name!r} needs a saved model: {entry.usage}")
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(known_agents())}")
    if not sep:
        return entry
    if not Path(path).is_file():
        raise ValueError(f"no saved policy at {path} (agent {name})")
    return dataclasses.replace(entry, name=name)


def agent_help() -> str:
    """The agent list of ``acdb sweep --help``: one line per entry, with what it needs."""
    width = max(len(entry.usage) for entry in AGENTS.values())
    lines = []
    for entry in AGENTS.values():
        lines.append(f"  {entry.usage:<{width}}  {entry.summary}")
        needs = [f"pip install 'acdb_gym[{extra}]'" for extra in entry.extras]
        needs += [f"--{name}" for name in entry.options if name in _REQUIRED]
        if entry.privileged:
            needs.append("privileged access to the hidden instance")
        panels = "each panel asked for" if len(entry.panels) > 1 else f"{entry.panels[0]} panel"
        details = f"runs in: {panels}" + (f"; needs: {', '.join(needs)}" if needs else "")
        for name, allowed in entry.parameter_choices().items():
            details += f"; {name.upper()}: {'|'.join(allowed)}"
        lines.append(f"  {'':<{width}}  {details}")
    return "\n".join(lines)
