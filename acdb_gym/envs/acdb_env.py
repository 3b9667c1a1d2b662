"""The ACDB Gymnasium environment (DESIGN §8).

Over 500 lines because :class:`ACDBEnv`'s docstring is the env's reference (about 150 lines:
its variants, spaces, rewards and ``info`` keys, read with ``help()`` as Gymnasium envs are);
the code itself is one concept, an episode's step loop. Its parts live beside it: the typed
actions and their space (:mod:`~acdb_gym.envs.actions`), the observation type and space
(:mod:`~acdb_gym.envs.observation_space`), the observation blocks
(:mod:`~acdb_gym.envs.observations`), level arguments and rewards (:mod:`~acdb_gym.envs.episode_rules`).
"""

from __future__ import annotations

import warnings
from typing import Any, SupportsFloat, cast, get_args

import gymnasium as gym
import numpy as np

from acdb_gym.core.graphs import PDAG, TOPOLOGY_SIZES
from acdb_gym.core.ladders.shipped import Level, get_level
from acdb_gym.core.latent_scoring import pdag_view
from acdb_gym.core.session import Session, SessionError
from acdb_gym.core.statistic_tools import TOOL_VARIANTS, TOOLS_RAW, TOOLS_STATS, Tools, ToolSet
from acdb_gym.core.types import (
    PANEL_ACTIVE,
    PANEL_OBSERVATIONAL,
    PANELS,
    Panel,
    is_integer,
    readonly,
)
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.core.worlds.soft import (
    INTERVENTION_KINDS,
    INTERVENTION_MODES,
    KIND_UNUSED,
    InterventionKind,
    InterventionMode,
    episode_kinds,
)
from acdb_gym.core.worlds.spec import NONLINEAR
from acdb_gym.envs import actions, observations
from acdb_gym.envs.actions import Action
from acdb_gym.envs.episode_rules import (
    RewardName,
    check_choice,
    check_level_arguments,
    check_seed,
    choose_instance,
    final_info_copy,
    reward_of,
    score_fields,
    score_info,
)
from acdb_gym.envs.hypotheses import RevisionRecord
from acdb_gym.envs.observation_space import (
    KINDS_KEY,
    LEGACY_VALUES_KEY,
    OBSERVATION_KEYS,
    STATS_OBSERVATION_KEYS,
    VALUES_KEY,
    Observation,
    observation_space,
)
from acdb_gym.envs.observations import OBSERVATION_MODES, ObservationMode, StatsObservation
from acdb_gym.envs.privileged import HiddenInstanceAccess

__all__ = [
    "KINDS_KEY",
    "LEGACY_VALUES_KEY",
    "OBSERVATION_KEYS",
    "STATS_OBSERVATION_KEYS",
    "STEP_LIMITS",
    "VALUES_KEY",
    "ACDBEnv",
    "Observation",
    "ObservationMode",
    "Panel",
    "RewardName",
    "StatsObservation",
    "ToolSet",
    "Tools",
    "check_level_arguments",
    "choose_instance",
    "final_info_copy",
    "observation_space",
    "reward_of",
]

STEP_LIMITS: dict[ToolSet, int] = {TOOLS_RAW: 16, TOOLS_STATS: 32}
"""Default internal step limit per tool variant (the paper's protocol)."""


_TOOL_OK = readonly(np.array([0.0, 0.0, 1.0]))
_TOOL_INVALID = readonly(np.array([0.0, 0.0, 0.0]))
_INT_SCALARS = tuple(readonly(np.array([k], dtype=np.int64)) for k in range(257))
"""Templates of the observation's counters ``0 .. 256`` (shape ``(1,)``: 0-d Boxes trip
stable-baselines3's ``check_env`` on numpy >= 2.1)."""


class ACDBEnv(HiddenInstanceAccess, gym.Env[Observation, tuple[int, dict[str, Any]]]):
    """Active causal discovery on a hidden linear-Gaussian SCM.

    ## Description

    Each episode hides a random DAG over ``d`` variables and a linear-Gaussian SCM on it (one
    instance of a ladder level, DESIGN §3). The agent sees an observational sample, may spend a
    budget of single-node hard interventions ``do(X_i = v)`` (active panel) and, in the
    ``stats`` variant, statistics-tool calls, and ends the episode by submitting a mixed graph
    of directed and undirected edges, which is scored by the ACDB scoring contract (DESIGN §6).

    ## Action Space

    A ``gymnasium.spaces.OneOf`` over five kinds (and one more per statistics tool registered
    with :func:`acdb_gym.core.statistic_tools.register_tool`, after ``submit_graph``); build them with
    :mod:`acdb_gym.envs.actions` (``actions.intervene(2, 3.0)``, ``actions.submit(pdag)``)
    rather than by hand:

    | index | kind | payload |
    |-------|------|---------|
    | 0 | ``intervene`` | ``var: Discrete(d)``, ``value: Box(-1e4, 1e4, ())``; optional ``hypothesis`` (below) |
    | 1 | ``correlation`` | ``i, j: Discrete(d)``, ``regime: Discrete(max_interventions + 1)`` |
    | 2 | ``partial_correlation`` | ``i, j``, ``regime``, ``cond: MultiBinary(d)`` |
    | 3 | ``independence_test`` | ``i, j``, ``regime``, ``cond: MultiBinary(d)`` (Fisher-z, alpha 0.05) |
    | 4 | ``submit_graph`` | ``graph: MultiDiscrete((d, d), 3)``: 0 none, 1 ``i -> j``, 2 ``i - j`` (symmetric); on a level with hidden confounders ``MultiDiscrete((d, d), 4)`` with 3 ``i <-> j`` (symmetric), and ``step`` also takes a typed ``actions.Submit`` of a PAG (circle marks) |

    ``regime`` 0 means the observational data, ``k`` the ``k``-th experiment. In the
    observational panel ``intervene`` is invalid; with ``tools="raw"`` the statistics tools
    are invalid. Their specs (:mod:`acdb_gym.core.statistic_tools`) define their payloads and results.
    Every kind is an element of the space, but ``action_space.sample()`` draws only the kinds
    the variant carries out (a :class:`~acdb_gym.envs.action_space.VariantOneOf`), so a
    random-action rollout submits; ``sample(mask=...)`` draws from every kind.

    **Stated hypotheses.** An ``intervene`` payload may carry one more key, ``hypothesis``: the
    agent's current graph as a ``submit_graph`` code matrix
    (``actions.intervene(2, 3.0, hypothesis=pdag)``). It is an optional annotation: the action
    space's ``contains`` accepts it and ``sample`` never draws it, the env removes it before
    carrying out the action, and the step (budget, step count,
    samples, random draws, observation, reward) is exactly the step without it. A valid
    experiment records it; a refused experiment records nothing; codes that are not a
    ``(d, d)`` integer matrix of 0/1/2 raise ``ValueError``; a matrix that is no valid mixed
    graph (a cycle, say) is recorded as no hypothesis and ``info["hypothesis_error"]`` says why.
    The record is returned at the end (``info["revision"]``, see Episode End).

    ## Observation Space

    A ``Dict`` of fixed-shape arrays (``m = max_interventions = d - 1 + slack``; above
    ``d = 40``, ``min(d - 1, k, d // 2) + slack``, which bounds every budget too, DESIGN §8):

    | key | shape | content |
    |-----|-------|---------|
    | ``observational`` | ``(n_obs, d)`` | the observational sample |
    | ``interventional`` | ``(m, n_int, d)`` | samples of each experiment, zero-padded |
    | ``targets`` | ``(m,)`` | target of each experiment; ``d`` marks an unused slot |
    | ``intervention_values`` | ``(m,)`` | intervention value of each experiment (0 when unused) |
    | ``budget_remaining`` | ``(1,)`` | interventions left (0 in the observational panel) |
    | ``steps_remaining`` | ``(1,)`` | steps left before truncation |
    | ``tool_result`` | ``(3,)`` | ``[statistic, p_value, valid]`` of the last action |
    | ``kinds`` | ``(m,)`` | only unless ``interventions="hard"``: 0 hard, 1 shift, 2 scale; 3 unused |

    ``tool_result``: a statistics tool fills ``[statistic, p_value]`` as its spec says:
    correlation and partial correlation give ``[r, p]`` with the Fisher-z p-value of ``r``;
    the independence test gives ``[z, p]``; ``valid`` is 1 when the last
    action was valid, else 0 and ``info["error"]`` says why.

    With ``observation="stats"``, ``observational`` and ``interventional`` are replaced by the
    sufficient statistics of each regime (regime 0 is the observational sample, regime ``k``
    the ``k``-th experiment; ``m + 1`` regimes), computed once when the regime's data arrives:

    | key | shape | content |
    |-----|-------|---------|
    | ``sample_size`` | ``(m + 1,)`` | rows of each regime (0 when unused) |
    | ``mean`` | ``(m + 1, d)`` | mean vector of each regime (0 when unused) |
    | ``covariance`` | ``(m + 1, d, d)`` | sample covariance (divisor ``n - 1``; 0 when unused) |

    It is the smaller mode when the samples per regime exceed ``d``: at v1 L3 (d = 20, 200
    rows per experiment) 0.07 MiB against 0.76 MiB per observation; at the large ladder's
    d = 500 (20 rows per experiment) it is 23 times larger than the raw mode's 42 MiB.

    Every ``reset`` and ``step`` returns new arrays that share no memory with any other
    observation, so an observation can be kept (in a replay buffer, say). The large blocks
    (``interventional``; ``covariance``) are read-only (``np.array(block)`` gives a writable
    copy): the env reuses the memory of blocks the caller no longer holds, so a step writes
    only the slots filled since, and its cost does not grow with the number of empty slots.
    The other arrays are writable copies.

    ## Rewards

    0 on every step but the last. The last step pays the chosen score of the submission:
    ``directed_f1`` (default), ``neg_shd`` (minus SHD) or ``skeleton_f1``. ``info["score"]``
    holds the full :class:`~acdb_gym.core.scoring.ScoreReport` (as a dict) at the end only.

    ## Starting State

    ``reset`` draws a new instance of the level from ``np_random``;
    ``options={"manifest_index": i}`` uses the level's ``i``-th preflighted seed and
    ``options={"instance": inst}`` injects an instance of the same shape.

    ## Episode End

    Termination: a valid ``submit_graph``. Truncation: the step limit (16 for ``raw``, 32 for
    ``stats``, raised to the budget + 1 on an instance whose budget would not fit, or
    ``max_steps``), enforced by the environment itself, which then scores the
    empty graph so that every episode has a score. The final ``info`` holds ``score``,
    ``submission`` and ``revision``: a :class:`~acdb_gym.envs.hypotheses.RevisionRecord` of the
    experiments' targets, the hypothesis stated with each (None where none was) and the
    scored submission. Invalid actions (wrong kind for the variant,
    budget spent, bad indices, invalid graph) cost a step and change nothing else. Actions that
    are not elements of the action space (for example a NaN value) raise ``ValueError``. A step
    after the end returns ``info["error"]`` and changes nothing.

    ## Arguments

    ```python
    gym.make("ACDB-L2-v0", panel="active", tools="raw", max_steps=None,
             reward="directed_f1", observation="raw", render_mode=None)
    ACDBEnv(level="L2", ladder="v0", ...)
    ```

    * ``level``: ``"L0"`` … ``"L5"``; ``ladder``: ``"v0"`` (the paper) or ``"v1"`` (calibrated).
      A :class:`~acdb_gym.core.ladders.shipped.Level` may be passed instead, for a custom world
      (``Level("custom", "T", "test", LevelSpec(d=2, ...), manifest=())``).
    * ``panel``: ``"active"`` or ``"observational"`` (no interventions).
    * ``tools``: ``"raw"`` (intervene + submit) or ``"stats"`` (+ statistics tools).
    * ``max_steps``: overrides the step limit (a fixed limit, never raised to the budget).
    * ``reward``: ``"directed_f1"``, ``"neg_shd"`` or ``"skeleton_f1"``.
    * ``observation``: ``"raw"`` (samples, the default) or ``"stats"`` (per-regime sample size,
      mean and covariance).
    * ``interventions``: what ``intervene {var, value}`` does: ``"hard"`` (``do(X_var = value)``,
      the default), ``"shift"`` (adds ``value`` to ``X_var``'s equation), ``"scale"`` (multiplies
      its noise by ``clip(|value|, 0.1, 10)``) or ``"mixed"`` (each experiment's kind drawn
      from the instance's seed; DESIGN §8, :mod:`acdb_gym.core.worlds.soft`).
    * ``render_mode``: ``"ansi"`` (text) or ``"rgb_array"`` (picture).
    * ``legacy_values_key``: deprecated; ``True`` names the key ``intervention_values`` by its
      former name ``values`` (acdb_gym 0.1.x only; 0.2.0 removes the option).
    * ``named``: on a level over a fixed real topology (``graph="sachs"`` or ``"dream4-N"``),
      ``reset``'s ``info["variable_names"]`` gives each variable's real name in this world's
      labelling (DESIGN §2, "Anonymous names"), for studying what a model knows of the system
      from its names; off by default, and refused on a level without real names.

    On a level that restricts the targets (``LevelSpec.targets``) ``info["experiment_targets"]``
    lists the nodes an intervention may target (others are invalid actions); on measured data
    (the Sachs cells, the cause-effect pairs) ``info["real_data"]`` is 1, and an intervention
    on a node runs the real experiment for it, its value only choosing between two reagents of
    one target by its sign (DESIGN §3.5); ``interventions`` must then be ``"hard"``. On a level
    of the nonlinear family (DESIGN §3.1) ``info["nonlinear"]`` is 1 (the LLM agents' prompt then
    describes nonlinear mechanisms).

    ## Version History

    The id's suffix names the ladder (``-v0`` the paper's, ``-v1`` the calibrated one; DESIGN
    §7), so changes to the env are listed by package release:

    * v0: the paper's ladder, reconstructed (DESIGN §7).
    * v1: calibrated ladder with standardized SCMs and sparse graphs.
    * acdb_gym 0.1.x: the observation key ``values`` is renamed ``intervention_values`` (a key
      ``values`` clashes with ``ModuleDict.values``, so stable-baselines3's
      ``MultiInputPolicy`` could not be built on the ``Dict`` observation);
      ``legacy_values_key=True`` keeps the old name until 0.2.0. Envs pickle mid-episode.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        level: str | Level = "L2",
        *,
        ladder: str = "v0",
        panel: Panel = PANEL_ACTIVE,
        tools: ToolSet = TOOLS_RAW,
        max_steps: int | None = None,
        reward: RewardName = "directed_f1",
        observation: ObservationMode = "raw",
        interventions: InterventionMode = "hard",
        render_mode: str | None = None,
        legacy_values_key: bool = False,
        named: bool = False,
    ) -> None:
        check_level_arguments(level, ladder)
        self.level: Level = level if isinstance(level, Level) else get_level(ladder, level)
        if not isinstance(named, bool):
            raise ValueError(f"named must be True or False, got {named!r}")
        if named and self.level.spec.graph not in TOPOLOGY_SIZES:
            raise ValueError(
                "named=True shows the real names of a fixed real topology (graph 'sachs' or "
                f"'dream4-1' .. 'dream4-5'); level {self.level.name} has graph "
                f"{self.level.spec.graph!r}, whose variables have no names"
            )
        self.named = named
        check_choice("panel", panel, PANELS)
        check_choice("tools", tools, TOOL_VARIANTS)
        check_choice("reward", reward, get_args(RewardName))
        check_choice("observation", observation, OBSERVATION_MODES)
        check_choice("interventions", interventions, INTERVENTION_MODES)
        if interventions != "hard" and self.level.spec.world != "scm":
            raise ValueError(
                f"level {self.level.name} is measured data ({self.level.spec.world}): its "
                f"experiments are what they are, so interventions must be 'hard', got "
                f"{interventions!r}"
            )
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(self.metadata["render_modes"]))
        if max_steps is not None and (not is_integer(max_steps) or max_steps < 1):
            raise ValueError(f"max_steps must be an integer >= 1 or None, got {max_steps!r}")
        self.panel: Panel = panel
        self.tools: ToolSet = tools
        self.reward_name: RewardName = reward
        self.observation_mode: ObservationMode = observation
        self.interventions: InterventionMode = interventions
        # The default limit grows per episode to budget + 1 where the budget would not fit
        # (large and DREAM4 worlds); never on v0, v1 and the family ladders, whose budgets do.
        self._default_limit = STEP_LIMITS[tools] if max_steps is None else None
        self.max_steps = STEP_LIMITS[tools] if max_steps is None else int(max_steps)
        self.render_mode = render_mode
        if legacy_values_key:
            warnings.warn(
                f"legacy_values_key=True names the observation key {VALUES_KEY!r} by its former "
                f"name {LEGACY_VALUES_KEY!r}; read {VALUES_KEY!r} instead (acdb_gym 0.2.0 "
                "removes the option)",
                DeprecationWarning,
                stacklevel=2,
            )
        self._values_key = LEGACY_VALUES_KEY if legacy_values_key else VALUES_KEY

        spec = self.level.spec
        self.n_nodes = spec.d
        # Experiment slots: spec.max_interventions up to d = 40, a tighter bound above.
        self.max_interventions = observations.observation_slots(spec)
        self.latent = spec.latent > 0
        self._score_fields = score_fields(self.level)
        self.action_space = actions.action_space(
            spec.d,
            self.max_interventions,
            sampled_kinds=self._accepted_kinds(),
            latent=self.latent,
        )
        self.observation_space = observation_space(
            self.level,
            self.max_steps if max_steps is not None else self._limit_for(self.max_interventions),
            observation,
            interventions,
            legacy_values_key=legacy_values_key,
        )
        self._blocks = observations.slot_pool(spec, observation)
        # Large worlds hand out the observational sample from a pool of read-only blocks; the
        # stats mode hands out its means from a pool too (a step writes the new row).
        self._sample_blocks = observations.sample_pool(spec, observation)
        self._mean_blocks = observations.mean_pool(spec, observation)
        self._instance: Instance | None = None
        self._session: Session | None = None

    def _accepted_kinds(self) -> list[int]:
        """The action kinds this variant carries out (the sampler draws only these)."""
        accepted = []
        for index, name in enumerate(actions.kind_names()):
            if name == "intervene":
                if self.panel == PANEL_ACTIVE:
                    accepted.append(index)
            elif name == "submit_graph" or self.tools == TOOLS_STATS:
                accepted.append(index)
        return accepted

    def _limit_for(self, budget: int) -> int:
        """The default step limit of an episode with ``budget``: 16 (raw) or 32 (stats), or
        ``budget + 1`` if larger, so an agent can always spend its budget and submit."""
        assert self._default_limit is not None
        return max(self._default_limit, budget + 1)

    # ------------------------------------------------------------------ gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=check_seed(seed))
        self._instance = self._choose_instance(options)
        session = self._session = Session(self._instance)
        spec = self.level.spec
        m = self.max_interventions
        # The episode's state lives in private arrays; every observation hands out arrays no
        # other observation shares (users keep what they are given; Gymnasium's checker insists).
        # Large worlds read the instance's read-only sample, copied into pooled blocks.
        sample = self._instance.d_obs if observations.is_large(spec) else session.observe()
        # The last episode's observer lets go of the block it handed out last first, so its
        # pool may reuse it (a mapped block's file is reused only when nothing maps it).
        vars(self).pop("_data", None)
        self._data = observations.make_observer(
            self.observation_mode,
            self._blocks,
            sample,
            spec,
            self._sample_blocks,
            mean_blocks=self._mean_blocks,
        )
        self._targets = np.full(m, spec.d, dtype=np.int64)
        self._values = np.zeros(m)
        self._kinds = np.full(m, KIND_UNUSED, dtype=np.int64)
        self._kind_plan: tuple[InterventionKind, ...] = episode_kinds(
            self.interventions, self._instance.seed, m
        )
        if self._default_limit is not None:
            self.max_steps = self._limit_for(session.budget if self.panel == PANEL_ACTIVE else 0)
        self._steps = 0
        self._invalid_actions = 0
        self._tool_result = _TOOL_OK
        self._last_error: str | None = None
        self._last_action: Any = None
        self._final_info: dict[str, Any] | None = None
        self._hypotheses: list[PDAG | None] = []
        self._hypothesis_error: str | None = None
        self._static_info: dict[str, Any] = {
            "n_nodes": self.n_nodes,
            "budget": 0 if self.panel == PANEL_OBSERVATIONAL else session.budget,
            "latent": self.level.spec.latent,
            "real_data": int(spec.world != "scm"),  # 1 on measured data (DESIGN §3.5, §3.6)
            "nonlinear": int(spec.family == NONLINEAR and spec.fit == "none"),  # §3.1
        }
        return self._observation(), self._info()

    def step(
        self, action: tuple[int, dict[str, Any]]
    ) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        session = self._session
        if session is None:
            raise RuntimeError("call reset() before step()")
        if self._final_info is not None:
            self._last_error = "the episode has ended; call reset()"
            self._hypothesis_error = None
            truncated_end = bool(self._final_info["truncated_empty_submission"])
            return self._observation(), 0.0, not truncated_end, truncated_end, self._info()
        # The one membership check; the common action is recognised without the space's own.
        # A typed Submit of a PAG is how circle marks reach a level with hidden confounders
        # (the code matrix has none); it is taken as it is.
        received = action
        self._decoded: tuple[Any, Action] | None = None
        typed = action if self.latent and isinstance(action, actions.Submit) else None
        request = None if typed is not None else actions.intervene_request(action, self.n_nodes)
        codes = None
        if request is None and typed is None:
            # A stated hypothesis is taken off before the action is checked and carried out.
            action, codes = actions.split_hypothesis(action, n_nodes=self.n_nodes)
            if codes is not None:
                request = actions.intervene_request(action, self.n_nodes)
        if request is None and typed is None and not self.action_space.contains(action):
            raise ValueError(f"action is not an element of the action space: {action!r}")
        self._steps += 1
        self._last_error = None
        self._hypothesis_error = None
        self._last_action = action
        used = session.interventions_used
        try:
            if request is not None:  # the hot path: no typed action, no generic dispatch
                self._intervene(*request)
            elif typed is not None:
                self._apply(typed)
            else:  # decoding an element can still fail (a cyclic graph): an invalid action
                decoded = actions.decode(action, n_nodes=self.n_nodes, latent=self.latent)
                self._decoded = (received, decoded)
                self._apply(decoded)
        except (ValueError, SessionError) as error:
            self._last_error = str(error)
            self._invalid_actions += 1
            self._tool_result = _TOOL_INVALID
        if session.interventions_used > used:
            self._hypotheses.append(self._hypothesis(codes))
        terminated = session.sealed
        truncated = False
        if not terminated and self._steps >= self.max_steps:
            session.submit_graph(PDAG.empty(self.n_nodes), stated=self._hypotheses)
            truncated = True
        reward = 0.0
        if terminated or truncated:
            report = session.report
            assert report is not None
            reward = reward_of(report, self.reward_name)
            self._final_info = {
                "score": report.to_dict(),
                "submission": session.submission,
                "truncated_empty_submission": truncated,
                "instance_seed": self._instance.seed if self._instance else None,
                "revision": self._revision_record(),
            }
        return self._observation(), reward, terminated, truncated, self._info()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode=")
            return None
        from acdb_gym.envs import rendering

        state = self._render_state()
        if self.render_mode == "ansi":
            return rendering.render_text(state)
        return rendering.render_rgb(state)

    # ------------------------------------------------------------------ state
    @property
    def session(self) -> Session:
        """The live session (budget, experiments, submission); never exposes the graph."""
        return self._require_session()

    def decoded_action(self, action: Any) -> Action | None:
        """The typed action the last step decoded from ``action`` (the very object that step
        was given), so a caller describing the step need not decode it again; None for another
        object, before any step, or when the step did not decode it (the intervene fast path,
        a typed action, an element that failed to decode)."""
        decoded = getattr(self, "_decoded", None)
        if decoded is None or decoded[0] is not action:
            return None
        return decoded[1]

    @property
    def invalid_actions(self) -> int:
        """Invalid actions in the current episode."""
        return self._invalid_actions

    @property
    def steps_taken(self) -> int:
        """Steps taken in the current episode."""
        return self._steps

    # ------------------------------------------------------------------ internals
    def _choose_instance(self, options: object) -> Instance:
        return choose_instance(self.level, options, self.np_random)

    def _hypothesis(self, codes: np.ndarray | None) -> PDAG | None:
        """The graph of a stated hypothesis; None (and ``info["hypothesis_error"]``) when the
        codes are no valid mixed graph, or when none was stated."""
        if codes is None:
            return None
        try:
            return actions.hypothesis_from_codes(codes)
        except ValueError as error:
            self._hypothesis_error = f"hypothesis not recorded: {error}"
            return None

    def _revision_record(self) -> RevisionRecord:
        session = self._require_session()
        assert session.submission is not None
        return RevisionRecord(
            self.n_nodes,
            tuple(e.target for e in session.experiments),
            tuple(self._hypotheses),
            pdag_view(session.submission),
        )

    def _require_session(self) -> Session:
        if self._session is None:
            raise RuntimeError("call reset() before step()")
        return self._session

    def _apply(self, action: Action) -> None:
        session = self._require_session()
        if isinstance(action, actions.Submit):
            session.submit_graph(action.graph, stated=self._hypotheses)
            self._tool_result = _TOOL_OK
        elif isinstance(action, actions.Intervene):
            self._intervene(action.var, action.value)
        else:
            if self.tools == TOOLS_RAW:
                name = type(action).__name__
                raise ValueError(
                    f"statistics tool {name} is not available with tools={TOOLS_RAW!r}"
                )
            result = session.run_tool(action.tool.name, action.arguments, regime=action.data_regime)
            self._tool_result = np.array([result.statistic, result.p_value, 1.0])

    def _intervene(self, var: int, value: float) -> None:
        if self.panel == PANEL_OBSERVATIONAL:
            raise ValueError("intervene is not available in the observational panel")
        session = self._session
        assert session is not None
        slot = session.interventions_used
        # Drawn straight into an array the session keeps; an invalid request raises here.
        # Past the plan (m slots) the budget is spent and the session refuses the request.
        kind = self._kind_plan[slot] if slot < len(self._kind_plan) else "hard"
        samples = session.intervene(
            var, value, kind=kind, out=np.empty((session.n_int, self.n_nodes))
        )
        self._data.add_experiment(samples)
        self._targets[slot] = var
        self._values[slot] = value
        self._kinds[slot] = INTERVENTION_KINDS.index(kind)
        self._tool_result = _TOOL_OK

    def _observation(self) -> Observation:
        session = self._session
        assert session is not None
        used = session.interventions_used
        budget = session.budget - used if self.panel == PANEL_ACTIVE else 0
        steps = self.max_steps - self._steps
        scalars = _INT_SCALARS
        observation: dict[str, Any] = {
            **self._data.observe(),
            "targets": self._targets.copy(),
            self._values_key: self._values.copy(),
            # Counters copied from templates: faster than np.asarray(k, dtype=np.int64).
            "budget_remaining": (
                scalars[budget].copy() if budget < len(scalars) else np.array([budget], np.int64)
            ),
            "steps_remaining": (
                scalars[steps].copy() if steps < len(scalars) else np.array([steps], np.int64)
            ),
            "tool_result": self._tool_result.copy(),
        }
        if self.interventions != "hard":
            observation[KINDS_KEY] = self._kinds.copy()
        # With observation="stats" the data keys are StatsObservation's instead.
        return cast("Observation", observation)

    def _info(self) -> dict[str, Any]:
        """Numbers only, the same keys at every step (DESIGN §8, "info"): vectorising stacks
        stack each key into an array, so a key that appears late or holds text breaks them."""
        session = self._session
        assert session is not None
        final = self._final_info
        return {
            **self._static_info,
            "interventions_used": session.interventions_used,
            "steps": self._steps,
            "invalid_actions": self._invalid_actions,
            "scored": final is not None,
            "score": score_info(self._score_fields, session.report if final else None),
            "truncated_empty_submission": bool(final and final["truncated_empty_submission"]),
            "instance_seed": -1 if final is None else int(final["instance_seed"]),
        }

    def details(self) -> dict[str, Any]:
        """What the numeric ``info`` leaves out: the text and the objects of the current step,
        for agents and the harness (:func:`~acdb_gym.agents.base.run_episode` hands an agent
        ``{**info, **env.unwrapped.details()}``; DESIGN §8, "info").

        | key | when | content |
        |-----|------|---------|
        | ``panel``, ``tools`` | always | the variant's names |
        | ``error`` | after an invalid action | why it was refused |
        | ``hypothesis_error`` | after a hypothesis that was no valid graph | why it was not recorded |
        | ``variable_names`` | with ``named=True`` | the real name of each variable |
        | ``experiment_targets`` | where the level restricts them | the nodes an experiment exists for |
        | ``score`` | at the end | the :class:`~acdb_gym.core.scoring.ScoreReport` as a dict |
        | ``submission`` | at the end | the scored graph (a ``PDAG``, or an ``ADMG``/``PAG``) |
        | ``revision`` | at the end | the :class:`~acdb_gym.envs.hypotheses.RevisionRecord` |
        | ``truncated_empty_submission``, ``instance_seed`` | at the end | as in ``info`` |

        Raises:
            RuntimeError: before ``reset``.
        """
        self._require_session()
        details: dict[str, Any] = {"panel": self.panel, "tools": self.tools}
        if self._last_error is not None:
            details["error"] = self._last_error
        if self._hypothesis_error is not None:
            details["hypothesis_error"] = self._hypothesis_error
        if self.named:
            assert self._instance is not None and self._instance.variable_names is not None
            details["variable_names"] = list(self._instance.variable_names)
        targets = self._require_session().intervention_targets
        if targets is not None:  # only where the level restricts the targets
            details["experiment_targets"] = tuple(sorted(targets))
        if self._final_info is not None:
            details.update(final_info_copy(self._final_info))
        return details

    def _last_action_was_tool(self) -> bool:
        if self._last_action is None:
            return False
        name = actions.kind_names()[int(self._last_action[0])]
        return name not in ("intervene", "submit_graph")

    def _render_state(self) -> Any:
        from acdb_gym.envs.rendering import RenderState, describe_action

        session = self._require_session()
        ended = self._final_info is not None
        return RenderState(
            title=f"{self.level.env_id} panel={self.panel} tools={self.tools}",
            n_nodes=self.n_nodes,
            budget=session.budget if self.panel == PANEL_ACTIVE else 0,
            budget_remaining=session.budget_remaining if self.panel == PANEL_ACTIVE else 0,
            steps=self._steps,
            max_steps=self.max_steps,
            experiments=[(e.target, e.value) for e in session.experiments],
            last_action=(
                None
                if self._last_action is None
                else describe_action(self._last_action, n_nodes=self.n_nodes)
            ),
            last_error=self._last_error,
            # Only after a statistics tool: at reset or after an intervention there is none.
            tool_result=(
                (
                    float(self._tool_result[0]),
                    float(self._tool_result[1]),
                    float(self._tool_result[2]),
                )
                if self._last_action_was_tool()
                else None
            ),
            submission=pdag_view(session.submission) if ended and session.submission else None,
            truth=self._instance.dag if ended and self._instance is not None else None,
            report=session.report if ended else None,
        )
