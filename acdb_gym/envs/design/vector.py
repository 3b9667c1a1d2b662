"""The design env vectorized natively: N worlds stepped as arrays in one process.

:class:`DesignVectorEnv` is a :class:`gymnasium.vector.VectorEnv` over ``num_envs`` design
episodes whose state (raw orientations, estimates, shifts, budgets, observations) lives in
``(N, ...)`` arrays. A step draws every intervening world's samples from that world's own
generator, tests all of their shifts in one batch of numpy calls
(:func:`~acdb_gym.discovery._two_sample.stacked_pvalues`), and scores every stopping world;
Meek closures and scores are remembered per distinct state, so worlds that reach a state
again (a bank reused for a whole run) pay only a dictionary look-up. With an
:class:`~acdb_gym.envs.design.bank.InstanceBank` a reset costs no generation and no PC.

Results equal :class:`~acdb_gym.envs.design.env.InterventionDesignEnv`'s bit for bit: world
``i`` of ``reset(seed=s)`` is the single env of ``reset(seed=s + i)`` (Gymnasium's
convention), with the same observations, rewards, terminations and final scores for the same
actions, resets included (``tests/envs/test_design_vector.py`` checks it). With a bank, each
reset draws the bank index ``np_random.integers(len(bank))`` from the world's generator, and
the single env given ``options={"instance": bank.instances[j]}`` is its twin.

Make it by id (the Design ids register it as their ``vector_entry_point``)::

    envs = gym.make_vec("ACDB-Design-L1-v0", 64, vectorization_mode="vector_entry_point",
                        bank=load_bank("banks/v0-L1", sha256=DIGEST))

(``DIGEST``: the bank's digest, printed when it was built; see :func:`~acdb_gym.envs.design.bank.load_bank`.)

The valid actions: ``np.stack(envs.call("action_masks"))`` (``(N, A)`` booleans), read the
same way from Gymnasium's sync and async vector envs of the single env; ``envs.action_masks()``
returns the same array directly (what SB3's MaskablePPO calls through
:class:`acdb_gym.agents.rl.vec_env.SB3DesignVecEnv`), and with ``observation="graph"`` the
observation's ``action_mask`` holds it (TorchRL's ``ActionMask`` reads it there).

Over 500 lines because the per-world state, the batched step and the autoreset rules are one
array program whose parts read each other's arrays; the world bank, the SB3 adapter and the
single env's rules live elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from acdb_gym.core.graphs import PDAG, cpdag
from acdb_gym.core.graphs.meek import _ALL_RULES, _close
from acdb_gym.core.ladders.shipped import Level
from acdb_gym.core.scoring import SCORE_FIELDS, ScoreReport, anytime_area, directed_f1_of, score
from acdb_gym.core.types import PANEL_ACTIVE, Panel
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.core.worlds.sampler import sampler_for
from acdb_gym.discovery import greedy_interventional_search
from acdb_gym.discovery._two_sample import ShiftReference, stacked_pvalues

# The orienter's in-place step, shared so the two envs orient by the same code.
from acdb_gym.discovery.orientation import (
    MIN_POWER,
    OrientationRule,
    _orient_at,
    decide_orientations,
    no_shift_power,
)
from acdb_gym.envs.design.bank import InstanceBank
from acdb_gym.envs.design.cache import (
    _LRU,
    moments,
    stacked_moments,
    starting_graph,
    starting_graphs,
)
from acdb_gym.envs.design.env import Estimator, ObservationMode, check_design_arguments
from acdb_gym.envs.design.graph_obs import graph_observation, graph_observation_space
from acdb_gym.envs.design.observation import observation_size
from acdb_gym.envs.design.state import BIC_PENALTY, SHIFT_CLIP
from acdb_gym.envs.episode_rules import (
    UNSCORED,
    RewardName,
    check_choice,
    check_seed,
    fresh_instances,
)

__all__ = ["DesignVectorEnv"]

_CLOSURES: _LRU[tuple[np.ndarray, np.ndarray]] = _LRU(maxsize=100_000)
"""Meek closures by raw state (about 0.5 kB each at d = 6)."""
_SCORES: _LRU[tuple[float | int, ...]] = _LRU(maxsize=100_000)
"""Score fields (:data:`SCORE_FIELDS`, in order) by world, estimate and targets (about 0.5 kB
each), so a long run keeps both caches under about 100 MB."""


class _World:
    """What an episode on one instance starts from, computed once per instance."""

    __slots__ = (
        "allowed",
        "budget",
        "correlations",
        "instance",
        "key",
        "mean",
        "reference",
        "rng_state",
        "scale",
        "sd",
        "start_directed",
        "start_undirected",
    )

    def __init__(
        self,
        instance: Instance,
        start: PDAG,
        summaries: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ShiftReference] | None = None,
    ) -> None:
        if summaries is None:
            # As ShiftOrienter builds its reference: one contiguous row per variable.
            summaries = (
                moments(instance.d_obs),
                ShiftReference(np.ascontiguousarray(instance.d_obs.T)),
            )
        (mean, sd, correlations), self.reference = summaries
        self.instance = instance
        self.key = instance.digest()
        self.budget = instance.budget
        self.mean = mean
        self.sd = sd
        self.scale = np.where(sd > 0, sd, 1.0)
        self.correlations = correlations
        # The nodes an experiment exists for (all, unless the level restricts the targets).
        self.allowed = np.ones(instance.n_nodes, dtype=bool)
        if instance.intervention_targets is not None:
            self.allowed[:] = False
            self.allowed[sorted(instance.intervention_targets)] = True
        self.rng_state = instance.intervention_rng().bit_generator.state
        self.start_directed = start.directed
        self.start_undirected = start.undirected


def _new_worlds(instances: list[Instance], starts: list[PDAG]) -> list[_World]:
    """The :class:`_World` of each instance, their summaries computed stacked (moments and
    shift-test references bit for bit as one at a time) when the samples share a shape."""
    if len(instances) < 2 or len({instance.d_obs.shape for instance in instances}) > 1:
        return [_World(instance, start) for instance, start in zip(instances, starts, strict=True)]
    data = np.stack([instance.d_obs for instance in instances])
    summaries = zip(
        stacked_moments(data),
        ShiftReference.many(np.ascontiguousarray(data.transpose(0, 2, 1))),
        strict=True,
    )
    return [
        _World(instance, start, summary)
        for instance, start, summary in zip(instances, starts, summaries, strict=True)
    ]


class DesignVectorEnv(VectorEnv[Any, np.ndarray, np.ndarray]):
    """``num_envs`` intervention-design episodes stepped together (see the module docstring).

    ## Description

    :class:`~acdb_gym.envs.design.env.InterventionDesignEnv` over ``N`` worlds at once, equal
    to ``N`` single envs bit for bit (world ``i`` of ``reset(seed=s)`` is the single env of
    ``reset(seed=s + i)``).

    ## Action Space

    ``MultiDiscrete([A] * N)`` with ``A = d + 1`` (``observation="flat"``) or
    ``max_nodes + 1`` (``"graph"``): per world, intervene on a node or stop (the last action),
    as the single env. :meth:`action_masks` gives the valid ones, ``(N, A)``.

    ## Observation Space

    The single env's, batched: ``Box(-1, 1, (N, M + 2 d^2 + d + 1), float32)``, or the graph
    ``Dict`` with a leading ``N`` axis (its ``action_mask`` included).

    ## Rewards

    Per world, 0 until "stop", then the chosen score of the submitted estimate.

    ## Starting State

    A fresh instance from each world's ``np_random`` or, with ``bank``, the bank's world
    ``np_random.integers(len(bank))``.

    ## Episode End

    A world terminates on "stop" (or a masked-out action); there is no truncation. Its next
    step resets it (``"next_step"``) or it resets at once (``"same_step"``). ``info`` holds the
    single env's keys for every world at every step (``n_nodes``, ``total_budget``,
    ``interventions_used``, ``scored``, ``score``: ``(N, len(SCORE_FIELDS))``, -1 but for the
    worlds that ended this step, and ``instance_seed``, -1 but for those), each beside
    Gymnasium's ``_key`` mask.

    ## Version History

    * v0: initial version (registered as the Design ids' ``vector_entry_point``).

    Args:
        num_envs: number of worlds ``N``.
        level: a shipped level's name, as the single env's.
        ladder: its ladder.
        estimator: ``"pc"``, ``"true_cpdag"`` or ``"bic"``, as the single env's.
        observation: ``"flat"`` or ``"graph"``, as the single env's.
        max_nodes: the graph observation's padding, as the single env's.
        shift: the intervention value in observational sd, as the single env's.
        alpha: the orientation tests' level, as the single env's.
        rule: how a test that finds no shift is read, as the single env's.
        detectable_shift: the shift the power rule needs the test to see, as the single env's.
        panel: ``"active"`` or ``"observational"``.
        reward: as the single env's.
        bank: draw every reset's world from this bank (of the same level) instead of
            generating one; the ``"pc"`` estimator then starts from the bank's stored CPDAG.
        autoreset_mode: ``"next_step"`` (Gymnasium's default: the step after an episode's end
            resets that world and ignores its action) or ``"same_step"`` (reset at once; the
            last observation and info are in ``info["final_obs"]`` / ``info["final_info"]``).
        render_mode: ``"ansi"`` or ``"rgb_array"``: :meth:`render` returns one frame per
            world, as the single env draws it (``gym.make_vec(id, n, render_mode="ansi")``).

    Valid actions are read one way, as from Gymnasium's sync and async vector envs:
    ``np.stack(envs.call("action_masks"))``. :meth:`action_masks` returns the same ``(N, A)``
    array directly (for MaskablePPO through :class:`~acdb_gym.agents.rl.vec_env.SB3DesignVecEnv`).
    ``gym.make_vec(id, n, vectorization_mode="vector_entry_point", wrappers=[...])`` is refused
    by Gymnasium (a vector entry point takes no per-env wrappers): wrap the vector env itself
    with ``gymnasium.wrappers.vector`` wrappers, or use ``vectorization_mode="sync"`` to wrap
    each single env.
    """

    metadata = {  # noqa: RUF012
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 1,
    }

    _PER_WORLD_CALLS = ("action_masks", "details", "hidden_instance", "render")
    """What :meth:`call` answers per world; any other name must be a setting all worlds share."""

    def __init__(
        self,
        num_envs: int = 8,
        level: str = "L1",
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
        bank: InstanceBank | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
    ) -> None:
        if not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
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
        modes = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}
        mode = (
            modes.get(autoreset_mode, autoreset_mode)
            if isinstance(autoreset_mode, str)
            else autoreset_mode
        )
        if mode not in modes.values():
            raise ValueError(
                f"autoreset_mode must be 'next_step' or 'same_step', got {autoreset_mode!r}"
            )
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(type(self).metadata["render_modes"]))
        if bank is not None and bank.level.spec != self.level.spec:
            raise ValueError(
                f"bank holds worlds of {bank.level.ladder} {bank.level.name}, "
                f"not of {self.level.ladder} {self.level.name}"
            )
        d = self.level.spec.d
        if observation == "graph" and (not isinstance(max_nodes, int) or max_nodes < d):
            raise ValueError(f"max_nodes must be an integer >= d = {d}, got {max_nodes!r}")
        self.num_envs = n = int(num_envs)
        self.n_nodes = d
        self.estimator: Estimator = estimator
        self.observation_mode: ObservationMode = observation
        self.max_nodes = int(max_nodes) if observation == "graph" else d
        self.shift, self.alpha = float(shift), float(alpha)
        self.panel: Panel = panel
        self.reward_name: RewardName = reward
        self.bank = bank
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.render_mode = render_mode
        self.single_action_space = spaces.Discrete(self.max_nodes + 1)
        self.action_space = batch_space(self.single_action_space, n)
        self.single_observation_space: spaces.Space[Any] = (
            graph_observation_space(self.max_nodes)
            if observation == "graph"
            else spaces.Box(-1.0, 1.0, (observation_size(d),), np.float32)
        )
        self.observation_space = batch_space(self.single_observation_space, n)
        self._n_int = self.level.spec.n_int
        # Every experiment of a level has n_int rows against n_obs: one power for all.
        self._powered = self.rule == "power" and (
            no_shift_power(
                self._n_int,
                self.level.spec.n_obs,
                detectable_shift=self.detectable_shift,
                alpha=self.alpha,
            )
            >= MIN_POWER
        )
        self._no_shift = 0.2 if self.rule == "band" else self.alpha
        # The "bic" estimator's per-world experiments, search DAG and estimate.
        self._experiments: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(n)]
        self._pooled: list[tuple[Any, np.ndarray, np.ndarray] | None] = [None] * n
        self._search_dags: list[Any] = [None] * n
        # The directed F1 of each world's estimate before each experiment (the anytime F1).
        self._f1_before: list[list[float | None]] = [[] for _ in range(n)]
        self._m = d * (d - 1) // 2
        self._np_randoms: list[np.random.Generator | None] = [None] * n
        self._rngs = [np.random.default_rng(0) for _ in range(n)]  # states set at reset
        self._bank_worlds: list[_World | None] = [None] * (len(bank) if bank else 0)
        self._worlds: list[_World | None] = [None] * n
        # One sampler per episode (the measured cells' sampler remembers the cells it gave);
        # every family's sampler writes its rows into the step's buffer alike.
        self._samplers: list[Any] = [None] * n
        self._allowed = np.ones((n, d), dtype=bool)
        self._targets: list[list[int]] = [[] for _ in range(n)]
        self._directed = np.zeros((n, d, d), dtype=bool)  # raw orientations (the orienter's)
        self._undirected = np.zeros((n, d, d), dtype=bool)
        self._shifts = np.zeros((n, d, d), dtype=np.float32)
        self._estimate_directed = np.zeros((n, d, d), dtype=bool)  # what "stop" submits
        self._estimate_undirected = np.zeros((n, d, d), dtype=bool)
        self._correlations = np.zeros((n, self._m), dtype=np.float32)
        self._intervened = np.zeros((n, d), dtype=np.float32)
        self._used = np.zeros(n, dtype=np.int64)
        self._mean = np.zeros((n, d))  # observational means, sds and safe sds per world
        self._sd = np.zeros((n, d))
        self._scale = np.ones((n, d))
        self._budgets = np.zeros(n, dtype=np.int64)
        self._ended = np.zeros(n, dtype=bool)
        self._last_actions: list[str | None] = [None] * n  # for render()
        self._final_scores: list[dict[str, float] | None] = [None] * n

    # ------------------------------------------------------------------ gym API
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every world; ``seed`` is an int (world ``i`` gets ``seed + i``), a sequence
        of ``N`` seeds, or None (keep each world's generator)."""
        if options:
            raise ValueError(f"the vectorized design env takes no reset options, got {options!r}")
        if seed is None:
            seeds: Sequence[int | None] = [None] * self.num_envs
        elif not isinstance(seed, Sequence) or isinstance(seed, str):
            first = check_seed(seed)
            assert first is not None
            seeds = [first + i for i in range(self.num_envs)]
        else:
            seeds = [check_seed(world_seed) for world_seed in seed]
            if len(seeds) != self.num_envs:
                raise ValueError(f"expected {self.num_envs} seeds, got {len(seeds)}")
        for i, world_seed in enumerate(seeds):
            if world_seed is not None or self._np_randoms[i] is None:
                self._np_randoms[i] = seeding.np_random(world_seed)[0]
        self._reset_worlds(list(range(self.num_envs)))
        self._ended[:] = False
        return self._observations(), self._info()

    def step(
        self, actions: np.ndarray | Sequence[int]
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per world; see the module docstring for autoreset."""
        if self._worlds[0] is None:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.dtype == np.bool_:
            # MultiDiscrete holds boolean arrays (NumPy casts them): each is the integer it is.
            acts = acts.astype(np.int64)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integers, got {actions!r}")
        if acts.min() < 0 or acts.max() > self.max_nodes:
            raise ValueError(f"actions must be in [0, {self.max_nodes}], got {acts.tolist()}")
        n = self.num_envs
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        restarting = self._ended.copy()  # next-step autoreset: these ignore their action
        self._reset_worlds(np.flatnonzero(restarting).tolist())
        self._ended[:] = False
        can = self._can_intervene()
        act_list = acts.tolist()
        interveners = [
            i
            for i in range(n)
            if not restarting[i]
            and act_list[i] < self.n_nodes
            and can[i]
            and self._allowed[i, act_list[i]]
        ]
        acting = set(interveners)
        stoppers = [i for i in range(n) if not restarting[i] and i not in acting]
        if interveners:
            self._intervene(interveners, [act_list[i] for i in interveners])
        scores: dict[int, dict[str, float]] = {}
        for i in interveners:
            self._last_actions[i] = f"intervene on X{act_list[i]}"
        for i in stoppers:
            report, reward = self._score(i)
            scores[i] = self._final_scores[i] = report
            rewards[i] = reward
            terminated[i] = True
            self._last_actions[i] = "stop"
        truncated = np.zeros(n, dtype=bool)
        self._ended = terminated.copy()  # sealed until reset: only "stop" is valid
        info = self._info(scores)
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP and stoppers:
            last = self._observations()
            final_obs = np.empty(n, dtype=object)
            for i in stoppers:
                final_obs[i] = last[i] if self.observation_mode == "flat" else None
            if self.observation_mode == "graph":
                for i in stoppers:
                    final_obs[i] = {key: value[i] for key, value in last.items()}
            self._reset_worlds(stoppers)
            self._ended[:] = False
            info = {
                **self._info(),
                "final_obs": final_obs,
                "_final_obs": terminated.copy(),
                "final_info": info,
                "_final_info": terminated.copy(),
            }
        return self._observations(), rewards, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """``(N, A)`` booleans: interventions while the world's budget remains (active panel)
        and its episode has not ended, on the nodes an experiment exists for, and "stop" (the
        last action) always."""
        masks = np.zeros((self.num_envs, self.max_nodes + 1), dtype=bool)
        masks[:, : self.n_nodes] = self._can_intervene()[:, None] & self._allowed
        masks[:, self.max_nodes] = True
        return masks

    @property
    def autoreset_mode(self) -> AutoresetMode:
        """The autoreset mode, as Gymnasium's own vector envs expose it (TorchRL reads it)."""
        mode: AutoresetMode = self.metadata["autoreset_mode"]
        return mode

    def render(self) -> tuple[Any, ...] | None:
        """Each world's frame, as the single env renders it (``ansi`` text, ``rgb_array``
        pictures): budget, experiments and current estimate; for a world whose episode ended
        this step (``"next_step"`` autoreset), its submission against the true DAG and score."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode=")
            return None
        from acdb_gym.envs.rendering import render_rgb, render_text

        draw = render_text if self.render_mode == "ansi" else render_rgb
        return tuple(draw(self._render_state(i)) for i in range(self.num_envs))

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Gymnasium's ``VectorEnv.call``: one result per world, as ``SyncVectorEnv`` and
        ``AsyncVectorEnv`` of the single env return them, so one line reads them from any of
        the three (``np.stack(envs.call("action_masks"))``, the documented way to read masks).

        Per world: ``action_masks`` (each world's mask), ``details`` (as
        :meth:`InterventionDesignEnv.details
        <acdb_gym.envs.design.env.InterventionDesignEnv.details>`), ``hidden_instance`` and
        ``render``. Any other name is a setting every world shares (``n_nodes``,
        ``estimator``, ``level``, ``max_nodes``...), given once per world.

        Raises:
            AttributeError: ``name`` is neither, or is a method of the vector env as a whole
                (``step``, ``reset``: call it on the vector env itself).
        """
        if name in self._PER_WORLD_CALLS:
            return tuple(self._call_world(name, i, *args, **kwargs) for i in range(self.num_envs))
        value = getattr(self, name, None)
        if value is None and not hasattr(self, name):
            raise AttributeError(f"the vectorized design env has no attribute {name!r}")
        if callable(value):
            raise AttributeError(
                f"{name!r} is a method of the vector env as a whole, not of each world; call "
                f"it on the env itself (per-world calls: {list(self._PER_WORLD_CALLS)})"
            )
        return (value,) * self.num_envs

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Gymnasium's ``VectorEnv.get_attr``: :meth:`call` of a setting or per-world name."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Gymnasium's ``VectorEnv.set_attr`` for a setting the worlds share, which must then
        get one value (the same value for every world, or a list of ``N`` equal values).

        Raises:
            ValueError: different values for different worlds.
            AttributeError: an unknown attribute or a per-world one.
        """
        if isinstance(values, list | tuple):
            if len(values) != self.num_envs or any(v != values[0] for v in values):
                raise ValueError(
                    f"the worlds share their settings: {name!r} takes one value (or "
                    f"{self.num_envs} equal ones), got {values!r}"
                )
            values = values[0]
        if name in self._PER_WORLD_CALLS or not hasattr(self, name):
            raise AttributeError(f"{name!r} is not a setting of the vectorized design env")
        setattr(self, name, values)

    def details(self, i: int) -> dict[str, Any]:
        """World ``i``'s details (:meth:`InterventionDesignEnv.details
        <acdb_gym.envs.design.env.InterventionDesignEnv.details>`): ``estimator`` and
        ``panel``, and once its episode ended, ``score``, ``submission`` and ``instance_seed``."""
        details: dict[str, Any] = {"estimator": self.estimator, "panel": self.panel}
        final = self._final_scores[i]
        if self._ended[i] and final is not None:
            world = self._worlds[i]
            assert world is not None
            details["score"] = dict(final)
            details["submission"] = self._submission(i)
            details["instance_seed"] = world.instance.seed
        return details

    def hidden_instance(self, i: int) -> Instance:
        """World ``i``'s hidden instance (the harness and privileged agents only)."""
        world = self._worlds[i]
        if world is None:
            raise RuntimeError("call reset() before hidden_instance()")
        return world.instance

    # ------------------------------------------------------------------ internals
    def _call_world(self, name: str, i: int, *args: Any, **kwargs: Any) -> Any:
        if name == "action_masks":
            return self.action_masks()[i]
        if name == "render":
            frames = self.render()
            return None if frames is None else frames[i]
        method = getattr(self, name)
        return method(i, *args, **kwargs)

    def _submission(self, i: int) -> PDAG:
        directed, undirected = self._estimate(i)
        return PDAG._valid(directed.copy(), undirected.copy())

    def _render_state(self, i: int) -> Any:
        from acdb_gym.envs.rendering import RenderState

        world = self._worlds[i]
        if world is None:
            raise RuntimeError("call reset() before render()")
        ended = bool(self._ended[i]) and self._final_scores[i] is not None
        budget = int(self._budgets[i]) if self.panel == PANEL_ACTIVE else 0
        used = int(self._used[i])
        estimate = self._submission(i)
        values = self._mean[i] + self.shift * self._sd[i]
        final = self._final_scores[i]
        return RenderState(
            title=f"{self.level.env_id.replace('ACDB-', 'ACDB-Design-')} world {i} "
            f"estimator={self.estimator} panel={self.panel}",
            n_nodes=self.n_nodes,
            budget=budget,
            budget_remaining=budget - used if budget else 0,
            steps=used + int(ended),
            max_steps=int(self._budgets[i]) + 1,
            experiments=[(t, float(values[t])) for t in self._targets[i]],
            last_action=self._last_actions[i],
            last_error=None,
            tool_result=None,
            estimate=None if ended else estimate,
            submission=estimate if ended else None,
            truth=world.instance.dag if ended else None,
            report=ScoreReport(**final) if ended and final is not None else None,  # type: ignore[arg-type]
        )

    def _worlds_for(self, slots: list[int]) -> list[_World]:
        """The next world of each slot: from the bank, or generated from each slot's own
        generator and started by one PC call over all of them (cached starts skipped)."""
        if self.bank is not None:
            return [self._world_for(i) for i in slots]
        rngs = [self._np_randoms[i] for i in slots]
        assert all(rng is not None for rng in rngs)
        instances = fresh_instances(self.level, rngs)  # type: ignore[arg-type]
        starts = starting_graphs(instances, self.estimator)
        return _new_worlds(instances, starts)

    def _world_for(self, i: int) -> _World:
        rng = self._np_randoms[i]
        assert rng is not None and self.bank is not None
        j = int(rng.integers(len(self.bank)))
        world = self._bank_worlds[j]
        if world is None:
            instance = self.bank.instances[j]
            start = (
                self.bank.starts[j]
                if self.estimator == "pc"
                else cpdag(instance.dag)
                if self.estimator == "true_cpdag"
                else starting_graph(instance, self.estimator)
            )
            world = self._bank_worlds[j] = _World(instance, start)
        return world

    def _reset_worlds(self, slots: list[int]) -> None:
        for i, world in zip(slots, self._worlds_for(slots), strict=True):
            self._reset_world(i, world)

    def _reset_world(self, i: int, world: _World) -> None:
        self._worlds[i] = world
        self._last_actions[i] = None
        self._final_scores[i] = None
        self._samplers[i] = sampler_for(world.instance.scm)
        self._allowed[i] = world.allowed
        self._rngs[i].bit_generator.state = world.rng_state
        self._targets[i] = []
        self._experiments[i] = []
        self._pooled[i] = None
        self._search_dags[i] = None
        self._f1_before[i] = []
        self._directed[i] = world.start_directed
        self._undirected[i] = world.start_undirected
        self._shifts[i] = 0.0
        self._estimate_directed[i] = world.start_directed
        self._estimate_undirected[i] = world.start_undirected
        self._correlations[i] = world.correlations
        self._intervened[i] = 0.0
        self._used[i] = 0
        self._budgets[i] = world.budget
        self._mean[i] = world.mean
        self._sd[i] = world.sd
        self._scale[i] = world.scale

    def _can_intervene(self) -> np.ndarray:
        if self.panel != PANEL_ACTIVE:
            return np.zeros(self.num_envs, dtype=bool)
        return (self._used < self._budgets) & ~self._ended

    def _intervene(self, slots: list[int], targets: list[int]) -> None:
        worlds = [self._worlds[i] for i in slots]
        n_int = self._n_int
        samples = np.empty((len(slots), n_int, self.n_nodes))
        values = (self._mean[slots, targets] + self.shift * self._sd[slots, targets]).tolist()
        for k, (i, target, world) in enumerate(zip(slots, targets, worlds, strict=True)):
            assert world is not None
            truth = world.instance.dag.adjacency
            self._f1_before[i].append(directed_f1_of(truth, self._estimate_directed[i]))
            self._samplers[i].draw(target, values[k], n_int, self._rngs[i], samples[k])
            self._targets[i].append(target)
            if self.estimator == "bic":
                self._experiments[i].append((target, samples[k].copy()))
        self._intervened[slots, targets] = 1.0
        self._used[slots] += 1
        # The shift features, as DesignState.add_experiment computes them, for all at once.
        shift = np.abs(samples.mean(axis=1) - self._mean[slots]) / self._scale[slots]
        shift[np.arange(len(slots)), targets] = 0.0
        self._shifts[slots, targets] = np.minimum(shift, SHIFT_CLIP) / SHIFT_CLIP
        # The orientation tests of the worlds with undirected edges at their target.
        edges = self._undirected[slots, targets]
        testing = np.flatnonzero(edges.any(axis=1)).tolist() if self.estimator != "bic" else []
        if testing:
            tested = np.ascontiguousarray(samples[testing].transpose(0, 2, 1))
            references = [worlds[k].reference for k in testing]  # type: ignore[union-attr]
            p_values = stacked_pvalues(references, tested)
            for k, row in zip(testing, p_values, strict=True):
                i, target = slots[k], targets[k]
                neighbours = np.flatnonzero(edges[k])
                decisions = decide_orientations(
                    row[neighbours],
                    rule=self.rule,
                    alpha=self.alpha,
                    no_shift_threshold=self._no_shift,
                    powered=self._powered,
                )
                _orient_at(self._directed[i], self._undirected[i], target, neighbours, decisions)
        for i in slots:
            if self.estimator == "bic":
                self._pooled[i] = None
            self._estimate_directed[i], self._estimate_undirected[i] = self._estimate(i)

    def _estimate(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The estimate "stop" would submit: the start before any experiment, else the raw
        orientations closed under Meek's rules (remembered per distinct raw state)."""
        world = self._worlds[i]
        assert world is not None
        if not self._targets[i]:
            return world.start_directed, world.start_undirected
        if self.estimator == "bic":
            return self._pooled_estimate(i)
        raw_d, raw_u = self._directed[i], self._undirected[i]
        key = (raw_d.shape[0], raw_d.tobytes(), raw_u.tobytes())

        # Meek's rules on the raw arrays, as meek_closure runs them (the raw state is always
        # a valid PDAG: the orienter never closes a cycle), without building PDAG objects.
        return _CLOSURES.get(key, lambda: _close(raw_d, raw_u, _ALL_RULES))

    def _pooled_estimate(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``"bic"`` estimate of world ``i``: the pooled search on all its data, warm-
        started from its last search (as :class:`~acdb_gym.envs.design.env.DesignState`)."""
        pooled = self._pooled[i]
        if pooled is None:
            world = self._worlds[i]
            assert world is not None
            previous = self._search_dags[i]
            result = greedy_interventional_search(
                world.instance.d_obs, self._experiments[i], penalty=BIC_PENALTY, start=previous
            )
            graph = result.essential_graph
            pooled = self._pooled[i] = (result.dag, graph.directed, graph.undirected)
        self._search_dags[i] = pooled[0]
        return pooled[1], pooled[2]

    def _score(self, i: int) -> tuple[dict[str, float], float]:
        world = self._worlds[i]
        assert world is not None
        directed, undirected = self._estimate(i)
        targets = tuple(self._targets[i])
        # The score reads the targets only as a set (essential_f1) and their count.
        key = (
            world.key,
            directed.tobytes(),
            undirected.tobytes(),
            frozenset(targets),
            len(targets),
        )

        def compute() -> tuple[float | int, ...]:
            report = score(
                world.instance,
                PDAG._valid(directed, undirected),  # a start or a closure: valid already
                interventions_used=len(targets),
                targets=targets,
            )
            values = report.to_dict()
            assert tuple(values) == SCORE_FIELDS  # a causally sufficient world's report
            return tuple(values.values())

        report = dict(zip(SCORE_FIELDS, _SCORES.get(key, compute), strict=True))
        report["anytime_f1"] = anytime_area(
            self._f1_before[i], float(report["directed_f1"]), world.budget
        )
        if self.reward_name == "neg_shd":
            return report, -float(report["shd"])
        return report, float(report[self.reward_name])

    def _flat(self) -> np.ndarray:
        """The flat observations of all worlds, as DesignState.observation encodes one."""
        n, d, m = self.num_envs, self.n_nodes, self._m
        flat = np.empty((n, observation_size(d)), dtype=np.float32)
        flat[:, :m] = self._correlations
        graph = self._estimate_directed.astype(np.float32) + 0.5 * self._estimate_undirected
        flat[:, m : m + d * d] = graph.reshape(n, d * d)
        flat[:, m + d * d : m + d * d + d] = self._intervened
        flat[:, m + d * d + d : -1] = self._shifts.reshape(n, d * d)
        budgets = self._budgets
        remaining = budgets - self._used if self.panel == PANEL_ACTIVE else np.zeros(n)
        flat[:, -1] = np.where(budgets > 0, remaining / np.maximum(budgets, 1), 0.0)
        return flat

    def _observations(self) -> Any:
        flat = self._flat()
        if self.observation_mode == "flat":
            return flat
        can = self._can_intervene()
        remaining = self._budgets - self._used if self.panel == PANEL_ACTIVE else 0 * self._used
        parts = [
            graph_observation(
                flat[i],
                self.n_nodes,
                budget_remaining=int(remaining[i]),
                can_intervene=bool(can[i]),
                max_nodes=self.max_nodes,
                allowed=None if self._allowed[i].all() else self._allowed[i],
            )
            for i in range(self.num_envs)
        ]
        return {key: np.stack([part[key] for part in parts]) for key in parts[0]}

    def _info(self, scores: dict[int, dict[str, float]] | None = None) -> dict[str, Any]:
        """The single env's info keys for every world, in Gymnasium's vector form (each key an
                array over worlds beside its ``_key`` mask, all True: every world has every key at
                every step); ``scored`` is True, and ``score`` and ``instance_seed`` are filled in (else
        :data:`~acdb_gym.envs.episode_rules.UNSCORED` and -1), for the worlds that ended this step."""
        n = self.num_envs
        every = np.ones(n, dtype=bool)
        scores = scores or {}
        seeds = np.full(n, -1, dtype=np.int64)
        for i in scores:
            world = self._worlds[i]
            assert world is not None
            seeds[i] = world.instance.seed
        score = np.full((n, len(SCORE_FIELDS)), UNSCORED)
        for i, values in scores.items():
            score[i] = [float(values[field]) for field in SCORE_FIELDS]
        scored = np.zeros(n, dtype=bool)
        scored[list(scores)] = True
        return {
            "n_nodes": np.full(n, self.n_nodes, dtype=np.int64),
            "_n_nodes": every,
            "total_budget": self._budgets.copy(),
            "_total_budget": every.copy(),
            "interventions_used": self._used.copy(),
            "_interventions_used": every.copy(),
            "scored": scored,
            "_scored": every.copy(),
            "score": score,
            "_score": every.copy(),
            "instance_seed": seeds,
            "_instance_seed": every.copy(),
        }
