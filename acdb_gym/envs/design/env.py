"""The RL view of ACDB: choose intervention targets; a fixed estimator builds the graph.

The estimator's state is :class:`~acdb_gym.envs.design.state.DesignState` (its names are
re-exported here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, SupportsFloat, cast, get_args

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.ladders.shipped import Level, get_level
from acdb_gym.core.latent_scoring import pdag_view
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.core.session import Session
from acdb_gym.core.types import PANEL_ACTIVE, PANELS, Panel
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.discovery.orientation import ORIENTATION_RULES, OrientationRule
from acdb_gym.envs.action_types import real_number
from acdb_gym.envs.design.cache import starting_graph
from acdb_gym.envs.design.lookahead import FreshLookahead
from acdb_gym.envs.design.observation import DesignObservation, observation_size
from acdb_gym.envs.design.state import (
    BIC_PENALTY,
    DETECTABLE_SHIFTS,
    DesignState,
    detectable_shift_for,
)
from acdb_gym.envs.episode_rules import (
    RewardName,
    check_choice,
    check_level_arguments,
    check_seed,
    choose_instance,
    final_info_copy,
    reward_of,
    score_info,
)
from acdb_gym.envs.privileged import HiddenInstanceAccess

__all__ = [
    "BIC_PENALTY",
    "DETECTABLE_SHIFTS",
    "DesignArguments",
    "DesignObservation",
    "DesignState",
    "Estimator",
    "InterventionDesignEnv",
    "ObservationMode",
    "check_design_arguments",
    "detectable_shift_for",
    "observation_size",
]

Estimator = Literal["pc", "true_cpdag", "bic"]
"""The design env's estimator: ``"pc"`` (PC's CPDAG, then shift tests and Meek's rules),
``"true_cpdag"`` (the true CPDAG, then the same tests: isolates targeting) or ``"bic"`` (every
estimate a greedy search on the interventional BIC of all data pooled, as ``bic_active``'s:
targeting measured where the estimator is strong)."""

ObservationMode = Literal["flat", "graph"]
"""``"flat"``: one Box whose length depends on ``d``; ``"graph"``: per-node and per-pair
features padded to ``max_nodes`` (:mod:`acdb_gym.envs.design.graph_obs`)."""


@dataclass(frozen=True)
class DesignArguments:
    """The checked arguments every design env (single or vectorized) shares.

    Attributes:
        level: the resolved level.
        shift: intervention value in observational sds above the mean.
        alpha: significance level of the orientation tests.
        rule: how a test that finds no shift is read.
        detectable_shift: the shift the ``"power"`` rule asks a test to be able to see
            (:func:`detectable_shift_for` of the level unless given).
    """

    level: Level
    shift: float
    alpha: float
    rule: OrientationRule
    detectable_shift: float


def check_design_arguments(
    level: str | Level,
    ladder: str,
    estimator: str,
    observation: str,
    panel: str,
    reward: str,
    shift: float,
    alpha: float,
    rule: str = "power",
    detectable_shift: float | None = None,
) -> DesignArguments:
    """The arguments every design env (single or vectorized) checks alike: the level, the
    choices, a finite ``shift``, ``alpha`` in (0, 1), the orientation rule and a finite,
    non-negative ``detectable_shift`` (None: the level's, :func:`detectable_shift_for`).

    Raises:
        ValueError: an unknown level or choice, or a bad ``shift``, ``alpha`` or
            ``detectable_shift``.
    """
    check_level_arguments(level, ladder)
    resolved = level if isinstance(level, Level) else get_level(ladder, level)
    check_choice("estimator", estimator, get_args(Estimator))
    check_choice("observation", observation, get_args(ObservationMode))
    check_choice("panel", panel, PANELS)
    check_choice("reward", reward, get_args(RewardName))
    check_choice("rule", rule, ORIENTATION_RULES)
    shift = real_number("shift", shift)
    alpha = real_number("alpha", alpha)
    if not np.isfinite(shift):
        raise ValueError(f"shift must be finite, got {shift}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if detectable_shift is None:
        detectable_shift = detectable_shift_for(resolved.spec, shift)
    detectable_shift = real_number("detectable_shift", detectable_shift)
    if not (np.isfinite(detectable_shift) and detectable_shift >= 0):
        raise ValueError(f"detectable_shift must be finite and >= 0, got {detectable_shift}")
    return DesignArguments(
        resolved, float(shift), float(alpha), cast(OrientationRule, rule), float(detectable_shift)
    )


class InterventionDesignEnv(HiddenInstanceAccess, gym.Env[np.ndarray, np.int64]):
    """Intervention design for RL: pick targets, then stop; a fixed estimator builds the graph.

    ## Description

    The same hidden worlds as :class:`~acdb_gym.envs.acdb_env.ACDBEnv`, reduced to the
    targeting decision. At reset the estimator's starting graph is computed (PC on the
    observational data, the true CPDAG with ``estimator="true_cpdag"``, or the pooled BIC
    search's graph with ``estimator="bic"``). Each intervention on node ``i`` sets ``X_i`` to
    its observational mean plus ``shift`` observational standard deviations. With ``"pc"`` and
    ``"true_cpdag"`` the current estimate is then the starting graph with undirected edges at
    intervened nodes oriented by a two-sample test of the neighbour's distribution (Welch +
    Brown–Forsythe, Bonferroni-combined, at ``alpha``), closed under Meek's rules: a shift
    orients ``i -> j``; a test that finds no shift orients ``j -> i`` only if it had the power
    to see a shift of ``detectable_shift`` sds (``rule="power"``, DESIGN §8), else the edge
    stays undirected. With ``"bic"`` every estimate is a greedy search on the interventional
    BIC of all data pooled (``bic_active``'s estimator).

    ## Action Space

    ``observation="flat"``: ``Discrete(d + 1)``: ``i < d`` intervenes on ``X_i``; ``d`` stops
    and submits the current estimate. ``observation="graph"``: ``Discrete(max_nodes + 1)``:
    ``i < d`` intervenes, ``max_nodes`` stops (``d <= i < max_nodes`` are padding, always
    masked). ``action_masks()`` (for sb3-contrib's MaskablePPO) forbids interventions once the
    budget is spent, in the observational panel, and on nodes without an experiment where the
    level restricts the targets (the real-experiment ladder). A masked-out action, if taken
    anyway, acts as "stop".

    ## Observation Space

    ``observation="graph"`` (size-free, for one policy across levels and sizes): a ``Dict`` of
    per-node features ``nodes (N, 8)``, per-pair features ``pairs (N, N, 6)``, ``node_mask
    (N,)``, ``action_mask (N + 1,)`` (equal to ``action_masks()``, for TorchRL's ``ActionMask``
    and RLlib) and ``budget (3,)``, padded with zeros to ``N = max_nodes``; the table of
    features is in :mod:`acdb_gym.envs.design.graph_obs` and DESIGN §8.

    ``observation="flat"`` (default; what ``models/acdb_design_l1_v0`` reads): a flat
    ``Box(-1, 1, (M + 2 d^2 + d + 1,), float32)`` with ``M = d (d - 1) / 2``:

    | slice | content |
    |-------|---------|
    | ``M`` | observational correlations (upper triangle, row-major) |
    | ``d^2`` | current estimate: 1 at ``[i, j]`` for ``i -> j``, 0.5 at both ends of ``i - j`` |
    | ``d`` | 1 where the node was intervened on |
    | ``d^2`` | ``[t, j]``: standardized mean shift of ``X_j`` under ``do(X_t)``, clipped to 10, / 10 |
    | 1 | remaining budget / budget (0 when the budget is 0) |

    ## Rewards

    0 until "stop"; then the chosen score of the submitted estimate (``directed_f1`` default).

    ## Starting State

    As ``ACDBEnv``: a fresh instance from ``np_random``, ``options={"manifest_index": i}`` or
    ``options={"instance": inst}``.

    ## Episode End

    Termination on "stop" (explicit, or an intervention that is masked out). Episodes last at
    most ``budget + 1`` steps, so there is no truncation. A step after the end changes nothing
    and returns the final info with ``info["error"]``, as ``ACDBEnv`` does. An action outside
    ``Discrete(d + 1)`` raises ``ValueError``.

    ## Arguments

    * ``level``, ``ladder``: as ``ACDBEnv`` (a :class:`~acdb_gym.core.ladders.shipped.Level` for a
      custom world of any size).
    * ``observation``: ``"flat"`` (default) or ``"graph"`` (size-free, see above).
    * ``max_nodes``: padding size of the graph observation (default 64); at least ``d``.
    * ``estimator``: ``"pc"`` (default), ``"true_cpdag"`` (isolates the targeting problem and
      trains far faster) or ``"bic"`` (pooled interventional BIC; about 35 ms a step at
      d = 12); report which was used.
    * ``shift``: intervention value in observational standard deviations above the mean.
    * ``alpha``: significance level of the orientation tests.
    * ``rule``: how a test that finds no shift is read: ``"power"`` (default), ``"significant"``,
      ``"band"`` or ``"always"`` (the rule before 0.2, which orients every neighbour of a
      silent experiment as a parent; for replays only).
    * ``detectable_shift``: the shift the ``"power"`` rule asks a test to see (default: by the
      level's family at a 3-sd intervention, :data:`DETECTABLE_SHIFTS`).
    * ``panel``: ``"active"`` or ``"observational"``; ``reward``: as ``ACDBEnv``.
    * ``render_mode``: ``"ansi"`` (text) or ``"rgb_array"`` (picture), as ``ACDBEnv``.

    ## Version History

    * v0: initial version, on the v0 ladder (``ACDB-Design-L*-v0``); the v1 ladder's levels
      are ``ACDB-Design-L*-v1``. Later: ``observation="graph"``, custom levels.
    * 0.2 of the package: a test that finds no shift orients only when it had the power to see
      one (``rule="power"``; the old rule is ``rule="always"``); ``estimator="bic"``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        level: str | Level = "L1",
        *,
        ladder: str = "v0",
        estimator: Estimator = "pc",
        observation: ObservationMode = "flat",
        max_nodes: int = 64,
        shift: float = 3.0,
        alpha: float = 0.01,
        rule: OrientationRule = "power",
        detectable_shift: float | None = None,
        panel: Panel = PANEL_ACTIVE,
        reward: RewardName = "directed_f1",
        render_mode: str | None = None,
    ) -> None:
        arguments = check_design_arguments(
            level,
            ladder,
            estimator,
            observation,
            panel,
            reward,
            shift,
            alpha,
            rule,
            detectable_shift,
        )
        self.level: Level = arguments.level
        shift, alpha = arguments.shift, arguments.alpha
        self.rule: OrientationRule = arguments.rule
        self.detectable_shift = arguments.detectable_shift
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(self.metadata["render_modes"]))
        self.render_mode = render_mode
        self.estimator: Estimator = estimator
        self.shift = float(shift)
        self.alpha = float(alpha)
        self.panel: Panel = panel
        self.reward_name: RewardName = reward
        d = self.level.spec.d
        self.n_nodes = d
        self.observation_mode: ObservationMode = observation
        self.max_nodes = self._check_max_nodes(max_nodes, d) if observation == "graph" else d
        self.action_space = spaces.Discrete(self.max_nodes + 1)
        self.observation_space: spaces.Space[Any] = spaces.Box(
            -1.0, 1.0, (observation_size(d),), np.float32
        )
        if observation == "graph":
            from acdb_gym.envs.design.graph_obs import graph_observation_space

            self.observation_space = graph_observation_space(self.max_nodes)
        self._session: Session | None = None
        self._instance: Instance | None = None
        self._state: DesignState | None = None
        self._final_info: dict[str, Any] | None = None
        self._last_action: str | None = None
        self._last_error: str | None = None
        self._lookahead = FreshLookahead(
            self.level,
            estimator,
            alpha=self.alpha,
            rule=self.rule,
            detectable_shift=self.detectable_shift,
        )

    # ------------------------------------------------------------------ gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=check_seed(seed))
        if seed is None and not options:
            self._lookahead.before_fresh_reset(self.np_random)
        else:
            self._lookahead.forget()
        instance = choose_instance(self.level, options, self.np_random)
        self._instance = instance
        self._final_info = None
        self._last_action = None
        self._last_error = None
        self._session = Session(instance)
        start = starting_graph(instance, self.estimator)
        self._state = DesignState(
            instance.d_obs,
            start,
            shift=self.shift,
            alpha=self.alpha,
            rule=self.rule,
            detectable_shift=self.detectable_shift,
            pooled=self.estimator == "bic",
        )
        return self._observation(), self._info()

    def step(
        self, action: np.int64 | int
    ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        session = self._require_session()
        if not self.action_space.contains(action):
            raise ValueError(f"action must be in [0, {self.max_nodes}], got {action!r}")
        if self._final_info is not None:
            # As ACDBEnv: a step after the end changes nothing and says so (details()["error"]).
            self._last_error = "the episode has ended; call reset()"
            return self._observation(), 0.0, True, False, self._info()
        act = int(action)
        if act < self.n_nodes and self.action_masks()[act]:
            self._intervene(act)
            self._last_action = f"intervene on X{act}"
            return self._observation(), 0.0, False, False, self._info()
        self._last_action = "stop"
        state = self._require_state()
        report = session.submit_graph(state.estimate, stated=state.stated)
        reward = reward_of(report, self.reward_name)
        self._final_info = {
            "score": report.to_dict(),
            "submission": session.submission,
            "instance_seed": self._require_instance().seed,
        }
        return self._observation(), reward, True, False, self._info()

    def render(self) -> str | np.ndarray | None:
        """``ansi``: budget, experiments and the current estimate (what the observation shows);
        once stopped, the submission against the true DAG and its score. ``rgb_array``: the
        same as a picture, as :class:`~acdb_gym.envs.acdb_env.ACDBEnv` draws it."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode=")
            return None
        from acdb_gym.envs.rendering import RenderState, render_rgb, render_text

        session = self._require_session()
        ended = self._final_info is not None
        draw = render_text if self.render_mode == "ansi" else render_rgb
        return draw(
            RenderState(
                title=f"{self.level.env_id.replace('ACDB-', 'ACDB-Design-')} "
                f"estimator={self.estimator} panel={self.panel}",
                n_nodes=self.n_nodes,
                budget=session.budget if self.panel == PANEL_ACTIVE else 0,
                budget_remaining=session.budget_remaining if self.panel == PANEL_ACTIVE else 0,
                steps=session.interventions_used + int(ended),
                max_steps=session.budget + 1,
                experiments=[(e.target, e.value) for e in session.experiments],
                last_action=self._last_action,
                last_error=None,
                tool_result=None,
                estimate=None if ended else self._require_state().estimate,
                submission=pdag_view(session.submission) if ended and session.submission else None,
                truth=self._instance.dag if ended and self._instance is not None else None,
                report=session.report if ended else None,
            )
        )

    def action_masks(self) -> np.ndarray:
        """Boolean mask of valid actions: interventions while budget remains (active panel
        only) on the nodes an experiment exists for (every node unless the level restricts
        them), and "stop" always."""
        session = self._require_session()
        mask = np.zeros(self.max_nodes + 1, dtype=bool)
        if self.panel == PANEL_ACTIVE and session.budget_remaining > 0 and not session.sealed:
            allowed = session.intervention_targets
            if allowed is None:
                mask[: self.n_nodes] = True
            else:
                mask[sorted(allowed)] = True
        mask[self.max_nodes] = True
        return mask

    # ------------------------------------------------------------------ state
    @property
    def session(self) -> Session:
        """The live session."""
        return self._require_session()

    @property
    def estimate(self) -> PDAG:
        """The graph that "stop" would submit now."""
        return self._require_state().estimate

    # ------------------------------------------------------------------ internals
    def _require_session(self) -> Session:
        if self._session is None:
            raise RuntimeError("call reset() before step()")
        return self._session

    def _require_state(self) -> DesignState:
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        return self._state

    def _intervene(self, target: int) -> None:
        state = self._require_state()
        samples = self._require_session().intervene(target, state.intervention_value(target))
        state.add_experiment(target, samples)

    @staticmethod
    def _check_max_nodes(max_nodes: int, n_nodes: int) -> int:
        if not isinstance(max_nodes, int | np.integer) or max_nodes < n_nodes:
            raise ValueError(f"max_nodes must be an integer >= d = {n_nodes}, got {max_nodes!r}")
        return int(max_nodes)

    def _observation(self) -> Any:
        session = self._require_session()
        remaining = session.budget_remaining if self.panel == PANEL_ACTIVE else 0
        flat = self._require_state().observation(budget_remaining=remaining, budget=session.budget)
        if self.observation_mode == "flat":
            return flat
        # Imported here: design_graph decodes flat observations with this module's classes.
        from acdb_gym.envs.design.graph_obs import graph_observation

        return graph_observation(
            flat,
            self.n_nodes,
            budget_remaining=remaining,
            can_intervene=bool(self.action_masks()[: self.n_nodes].any()),
            max_nodes=self.max_nodes,
            allowed=self._allowed_mask(),
        )

    def _require_instance(self) -> Instance:
        if self._instance is None:
            raise RuntimeError("call reset() before step()")
        return self._instance

    def _allowed_mask(self) -> np.ndarray | None:
        """Boolean ``(d,)`` of the nodes an experiment exists for, or None when every node may
        be a target."""
        allowed = self._require_session().intervention_targets
        if allowed is None:
            return None
        mask = np.zeros(self.n_nodes, dtype=bool)
        mask[sorted(allowed)] = True
        return mask

    def _info(self) -> dict[str, Any]:
        """Numbers only, the same keys at every step, none an observation key too (DESIGN §8,
        "info"): the graph observation has ``budget``, so the budget is ``total_budget`` here."""
        session = self._require_session()
        final = self._final_info
        return {
            "n_nodes": self.n_nodes,
            "total_budget": session.budget,
            "interventions_used": session.interventions_used,
            "scored": final is not None,
            "score": score_info(SCORE_FIELDS, session.report if final else None),
            "instance_seed": -1 if final is None else int(final["instance_seed"]),
        }

    def details(self) -> dict[str, Any]:
        """What the numeric ``info`` leaves out, as :meth:`ACDBEnv.details
        <acdb_gym.envs.acdb_env.ACDBEnv.details>`: ``estimator`` and ``panel`` always,
        ``error`` after a step past the end, and at the end ``score`` (the report as a dict),
        ``submission`` (the scored estimate) and ``instance_seed``.

        Raises:
            RuntimeError: before ``reset``.
        """
        self._require_session()
        details: dict[str, Any] = {"estimator": self.estimator, "panel": self.panel}
        if self._last_error is not None:
            details["error"] = self._last_error
        if self._final_info is not None:
            details.update(final_info_copy(self._final_info))
        return details
