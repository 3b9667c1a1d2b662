"""The design env vectorized natively: N worlds stepped as arrays in one process.

:class:`DesignVectorEnv` is a :class:`gymnasium.vector.VectorEnv` over ``num_envs`` design
episodes whose state (raw orientations, estimates, shifts, budgets, observations, and what
each world's episode starts from) lives in ``(N, ...)`` arrays. A step is one array program
over the stepping worlds; per world only what its own generators hold runs in Python (the
bank draw and the generator's reset of a new episode, each intervening world's noise), plus
the look-ups of remembered Meek closures. On worlds of up to :data:`STACKED_MAX_NODES`
nodes: the samples of all linear-Gaussian worlds are one stacked product with their
do-matrices; only the tested edges' shift tests run, all in one pass
(:class:`~acdb_gym.discovery._two_sample.ReferenceRows`); the orientations of all worlds are
decided and applied together (:mod:`~acdb_gym.discovery.orientation_many`); a world whose raw
orientations did not change keeps its estimate; the stopping worlds are scored together
(:func:`~acdb_gym.core.many_scores.score_rows`, their anytime F1 by
:func:`~acdb_gym.core.anytime.anytime_areas`), the interventional essential graphs of target
sets not seen before computed together
(:func:`~acdb_gym.core.graphs.meek_many.essential_graphs_many`) and remembered per world.
Larger worlds test and orient one world at a time. Meek closures are remembered per distinct
raw state. With an :class:`~acdb_gym.envs.design.bank.InstanceBank` a reset costs no
generation and no PC.

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

import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from acdb_gym.core.anytime import anytime_areas, directed_f1s
from acdb_gym.core.graphs import PDAG, cpdag, essential_graph
from acdb_gym.core.graphs.meek import _ALL_RULES, _close
from acdb_gym.core.graphs.meek_many import MANY_MAX_NODES, close_many, essential_graphs_many
from acdb_gym.core.ladders.shipped import Level
from acdb_gym.core.many_scores import GraphRows, report_of_row, score_rows
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.core.types import PANEL_ACTIVE, Panel, is_integer, readonly
from acdb_gym.core.worlds.instance import WORLD_SEED_BOUND, Instance
from acdb_gym.core.worlds.kinds.base import INTERVENTIONS, stream_generators
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.sampler import (
    BLOCK_MAX_D,
    do_matrix_block,
    do_matrix_blocks,
    sampler_for,
)
from acdb_gym.discovery import greedy_interventional_search
from acdb_gym.discovery._two_sample import ReferenceRows, ShiftReference, stacked_pvalues

# The orienter's in-place step, shared so the two envs orient by the same code.
from acdb_gym.discovery.orientation import (
    MIN_POWER,
    OrientationRule,
    _orient_at,
    decide_orientations,
    no_shift_power,
)
from acdb_gym.discovery.orientation_many import decision_codes, orient_many
from acdb_gym.discovery.pc_many import stacked_correlations
from acdb_gym.envs.design.bank import InstanceBank
from acdb_gym.envs.design.cache import (
    _LRU,
    moments,
    stacked_moment_arrays,
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
"""Meek closures by raw state (about 0.5 kB each at d = 6, so under about 50 MB)."""

STACKED_MAX_NODES = 32
"""Largest ``d`` whose worlds a step runs as one array program: shift tests of the tested
edges only (:class:`~acdb_gym.discovery._two_sample.ReferenceRows`), orientations
(:func:`~acdb_gym.discovery.orientation_many.orient_many`) and linear-Gaussian samples (one
stacked product with the per-target matrices). Larger worlds take the per-world path."""

_STACKED_MAX_VALUES = 8_000_000
"""Most observational values the stacked shift-test table holds (64 MB); past it (many
worlds with large samples) the tests take the per-world path."""

_SCORE_COLUMN = {name: index for index, name in enumerate(SCORE_FIELDS)}


class _World:
    """What an episode on one instance starts from, computed once per instance."""

    __slots__ = (
        "adjacency",
        "allowed",
        "base_directed",
        "base_undirected",
        "block",
        "budget",
        "correlations",
        "essentials",
        "flags",
        "floats",
        "instance",
        "ints",
        "mean",
        "reference",
        "reference_record",
        "rng_state",
        "scale",
        "sd",
        "star",
        "start_closure",
        "start_directed",
        "start_undirected",
    )

    def __init__(
        self,
        instance: Instance,
        start: PDAG,
        summaries: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ShiftReference] | None = None,
        interventions: np.random.Generator | None = None,
        block: np.ndarray | None = None,
        records: _Records | None = None,
    ) -> None:
        if summaries is None:
            # As ShiftOrienter builds its reference: one contiguous row per variable.
            summaries = (
                moments(instance.d_obs),
                ShiftReference(np.ascontiguousarray(instance.d_obs.T)),
            )
        (mean, sd, correlations), self.reference = summaries
        self.instance = instance
        self.budget = instance.budget
        # What the score reads of the truth: its DAG, CPDAG, |I*| and (filled as episodes
        # end) the interventional essential graph of each target set, by set.
        self.adjacency = instance.dag.adjacency
        base = cpdag(instance.dag)
        self.base_directed, self.base_undirected = base.directed, base.undirected
        self.star = len(instance.i_star)
        self.essentials: dict[int | bytes, tuple[np.ndarray, np.ndarray]] = {}
        # Linear-Gaussian worlds draw from every target's do-matrix (InterventionSampler's).
        # (``block``: this block, when the caller made the blocks of many worlds at once.)
        scm = instance.scm
        self.block = (
            block
            if block is not None
            else np.stack(do_matrix_block(scm))  # type: ignore[arg-type]
            if isinstance(scm, LinearGaussianSCM) and scm.n_nodes <= BLOCK_MAX_D
            else None
        )
        self.mean = mean
        self.sd = sd
        self.scale = np.where(sd > 0, sd, 1.0) if records is None else records.scale
        self.correlations = correlations
        # The nodes an experiment exists for (all, unless the level restricts the targets).
        self.allowed = np.ones(instance.n_nodes, dtype=bool)
        if instance.intervention_targets is not None:
            self.allowed[:] = False
            self.allowed[sorted(instance.intervention_targets)] = True
        # The intervention stream's start (``interventions``: a new generator on it, if made).
        rng = instance.intervention_rng() if interventions is None else interventions
        self.rng_state = rng.bit_generator.state
        self.start_directed = start.directed
        self.start_undirected = start.undirected
        self.start_closure: tuple[np.ndarray, np.ndarray] | None = None  # Meek's, on first use
        # Everything a reset copies into the env's per-world arrays, as three records (so a
        # reset of many worlds is a few stacked copies): floats, flags and integers.
        # (``records``: the floats, integers and reference record, when the caller made
        # those of many worlds at once.)
        d = instance.n_nodes
        stacked = d <= STACKED_MAX_NODES
        self.floats = (
            np.concatenate(
                [self.mean, self.sd, self.scale]
                + (
                    [np.zeros(d**3) if self.block is None else self.block.ravel()]
                    if stacked
                    else []
                )
            )
            if records is None
            else records.floats
        )
        self.flags = np.concatenate(
            [self.allowed]
            + [
                matrix.ravel()
                for matrix in (
                    self.start_directed,
                    self.start_undirected,
                    self.adjacency,
                    self.base_directed,
                    self.base_undirected,
                )
            ]
        )
        if records is None:
            self.ints = np.array([self.budget, self.star, instance.seed], dtype=np.int64)
            self.reference_record = ReferenceRows.record(self.reference) if stacked else None
        else:
            self.ints, self.reference_record = records.ints, records.reference

    def essential(self, key: int | bytes, touched: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The interventional essential graph (directed, undirected) of the target set
        ``touched`` (booleans over the nodes; ``key`` names it), as :func:`score` takes it."""
        graph = self.essentials.get(key)
        if graph is None:
            targets = np.flatnonzero(touched).tolist()
            essential = essential_graph(self.instance.dag, targets) if targets else None
            graph = self.essentials[key] = (
                (essential.directed, essential.undirected)
                if essential is not None
                else (self.base_directed, self.base_undirected)
            )
        return graph


_BANK_WORLDS: weakref.WeakKeyDictionary[InstanceBank, dict[str, list[_World | None]]] = (
    weakref.WeakKeyDictionary()
)


def _bank_worlds(bank: InstanceBank, estimator: str) -> list[_World | None]:
    """The bank's worlds as ``estimator`` starts them, each made on first use and shared by
    every env on the bank while it lives: a world and what it remembers (the essential graph
    of each target set, the closure of its start) depend on the instance and the estimator
    alone, so a new env on a bank (one per training run) starts warm."""
    return _BANK_WORLDS.setdefault(bank, {}).setdefault(estimator, [None] * len(bank))


class _Records(NamedTuple):
    """A world's safe scales and reference record, and its :class:`_World` float and integer
    records, made stacked with other worlds' (rows of shared arrays, the same values)."""

    scale: np.ndarray
    floats: np.ndarray
    ints: np.ndarray
    reference: tuple[np.ndarray, np.ndarray] | None


def _stacked_samples(instances: list[Instance]) -> tuple[np.ndarray, np.ndarray] | None:
    """The observational samples of two or more instances stacked, ``(k, n_obs, d)``, and
    their :func:`~acdb_gym.discovery.pc_many.stacked_correlations`; None unless they share a
    shape. (A constant column gives NaN here, quietly: PC then refuses that sample by name.)"""
    if len(instances) < 2 or len({instance.d_obs.shape for instance in instances}) > 1:
        return None
    data = np.stack([instance.d_obs for instance in instances])
    with np.errstate(all="ignore"):
        return data, stacked_correlations(data)


def _new_worlds(
    instances: list[Instance],
    starts: list[PDAG],
    stacked: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[_World]:
    """The :class:`_World` of each instance, their summaries and records computed stacked
    (moments, shift-test references and records bit for bit as one at a time) when the
    samples share a shape (``stacked``: :func:`_stacked_samples`, if the caller has it)."""
    stacked = _stacked_samples(instances) if stacked is None else stacked
    if stacked is None:
        return [_World(instance, start) for instance, start in zip(instances, starts, strict=True)]
    data, matrices = stacked
    k, _, d = data.shape
    means, sds, correlations = stacked_moment_arrays(data, matrices)
    references, reference_floats, reference_flags = ReferenceRows.many(
        np.ascontiguousarray(data.transpose(0, 2, 1))
    )
    rngs = stream_generators([instance.seed for instance in instances], (INTERVENTIONS,))[0]
    scms = [instance.scm for instance in instances]
    blocks: np.ndarray | None = None
    if all(isinstance(scm, LinearGaussianSCM) for scm in scms) and scms[0].n_nodes <= BLOCK_MAX_D:
        blocks = do_matrix_blocks(cast(list[LinearGaussianSCM], scms))
    scales = np.where(sds > 0, sds, 1.0)
    in_table = d <= STACKED_MAX_NODES
    floats = np.concatenate(
        [means, sds, scales]
        + ([np.zeros((k, d**3)) if blocks is None else blocks.reshape(k, -1)] if in_table else []),
        axis=1,
    )
    ints = np.array(
        [[instance.budget, len(instance.i_star), instance.seed] for instance in instances],
        dtype=np.int64,
    )
    return [
        _World(
            instance,
            start,
            ((readonly(means[j]), readonly(sds[j]), readonly(correlations[j])), references[j]),
            rngs[j],
            None if blocks is None else blocks[j],
            _Records(
                scales[j],
                floats[j],
                ints[j],
                (reference_floats[j], reference_flags[j]) if in_table else None,
            ),
        )
        for j, (instance, start) in enumerate(zip(instances, starts, strict=True))
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
        min_world_seed: without a bank, each world generated at a reset has its seed drawn
            from ``[min_world_seed, 2**63 - 1)`` (default 0: as the single env draws it). The RL
            trainer passes ``2**32``, so training never meets a held-out world.
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
        min_world_seed: int = 0,
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
        if not is_integer(min_world_seed) or not 0 <= min_world_seed < WORLD_SEED_BOUND:
            raise ValueError(
                f"min_world_seed must be an integer in [0, 2**63 - 1), got {min_world_seed!r}"
            )
        if min_world_seed and bank is not None:
            raise ValueError("min_world_seed applies to generated worlds; a bank's are its own")
        self.min_world_seed = int(min_world_seed)
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
        self._m = d * (d - 1) // 2
        self._np_randoms: list[np.random.Generator | None] = [None] * n
        self._rngs = [np.random.default_rng(0) for _ in range(n)]  # states set at reset
        self._bank_worlds = _bank_worlds(bank, estimator) if bank is not None else []
        self._worlds: list[_World | None] = [None] * n
        # One sampler per episode (the measured cells' sampler remembers the cells it gave);
        # every family's sampler writes its rows into the step's buffer alike. Worlds with
        # do-matrices (``_blocks``, ``_fast``) draw without one.
        self._samplers: list[Any] = [None] * n
        self._stacked = d <= STACKED_MAX_NODES
        self._fast = np.zeros(n, dtype=bool)
        self._references: ReferenceRows | None = None  # made at the first reset
        self._tests_per_world = False  # True once the table cannot hold the worlds
        # What each world's episode starts from and never changes, as views into three
        # records per world (_World.floats, .flags, .ints): observational means, sds and safe
        # sds, do-matrices; the allowed targets, the starting graph, the truth as the score
        # reads it (DAG, CPDAG); budget, |I*| and seed.
        self._floats = np.zeros((n, 3 * d + (d**3 if self._stacked else 0)))
        self._mean, self._sd, self._scale = (self._floats[:, k * d : (k + 1) * d] for k in range(3))
        self._blocks = (
            self._floats[:, 3 * d :].reshape(n, d, d, d)
            if self._stacked
            else np.zeros((n, 0, 0, 0))
        )
        self._flags = np.zeros((n, d + 5 * d * d), dtype=bool)
        self._allowed = self._flags[:, :d]
        (
            self._start_directed,
            self._start_undirected,
            self._truth,
            self._base_directed,
            self._base_undirected,
        ) = (self._flags[:, d + k * d * d : d + (k + 1) * d * d].reshape(n, d, d) for k in range(5))
        self._ints = np.zeros((n, 3), dtype=np.int64)
        self._budgets, self._star, self._seeds = (
            self._ints[:, 0],
            self._ints[:, 1],
            self._ints[:, 2],
        )
        self._directed = np.zeros((n, d, d), dtype=bool)  # raw orientations (the orienter's)
        self._undirected = np.zeros((n, d, d), dtype=bool)
        self._shifts = np.zeros((n, d, d), dtype=np.float32)
        self._estimate_directed = np.zeros((n, d, d), dtype=bool)  # what "stop" submits
        self._estimate_undirected = np.zeros((n, d, d), dtype=bool)
        self._correlations = np.zeros((n, self._m), dtype=np.float32)
        self._intervened = np.zeros((n, d), dtype=np.float32)
        self._used = np.zeros(n, dtype=np.int64)
        self._ended = np.zeros(n, dtype=bool)
        # Per experiment (columns: as many as the largest budget): its target and the directed
        # F1 of the estimate held before it (the anytime F1).
        self._target_log = np.zeros((n, 0), dtype=np.int64)
        self._f1_before = np.zeros((n, 0))
        # The "bic" estimator's per-world experiments, search DAG and estimate.
        self._experiments: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(n)]
        self._pooled: list[tuple[Any, np.ndarray, np.ndarray] | None] = [None] * n
        self._search_dags: list[Any] = [None] * n
        # For render() and details(): the last action (-2 none, -1 "stop", else the target)
        # and the final score of a world whose episode ended (a row of score_rows' table).
        self._last_actions = np.full(n, -2, dtype=np.int64)
        self._final = np.zeros((n, len(SCORE_FIELDS)))
        self._has_final = np.zeros(n, dtype=bool)

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
        n, d = self.num_envs, self.n_nodes
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        restarting = self._ended.copy()  # next-step autoreset: these ignore their action
        if restarting.any():
            self._reset_worlds(np.flatnonzero(restarting))
        self._ended[:] = False
        acting = (
            ~restarting
            & (acts < d)
            & self._can_intervene()
            & self._allowed[np.arange(n), np.minimum(acts, d - 1)]
        )
        interveners = np.flatnonzero(acting)
        stoppers = np.flatnonzero(~restarting & ~acting)
        if interveners.size:
            self._intervene(interveners, acts[interveners].astype(np.int64))
            self._last_actions[interveners] = acts[interveners]
        table = None
        if stoppers.size:
            table = self._final[stoppers] = self._score_rows(stoppers)
            self._has_final[stoppers] = True
            if self.reward_name == "neg_shd":
                rewards[stoppers] = -table[:, _SCORE_COLUMN["shd"]]
            else:
                rewards[stoppers] = table[:, _SCORE_COLUMN[self.reward_name]]
            terminated[stoppers] = True
            self._last_actions[stoppers] = -1
        truncated = np.zeros(n, dtype=bool)
        self._ended = terminated.copy()  # sealed until reset: only "stop" is valid
        info = self._info(stoppers, table)
        if self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP and stoppers.size:
            last = self._observations()
            final_obs = np.empty(n, dtype=object)
            for i in stoppers.tolist():
                final_obs[i] = (
                    last[i]
                    if self.observation_mode == "flat"
                    else {key: value[i] for key, value in last.items()}
                )
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
        if self._ended[i] and self._has_final[i]:
            world = self._worlds[i]
            assert world is not None
            details["score"] = report_of_row(self._final[i]).to_dict()
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
        ended = bool(self._ended[i] and self._has_final[i])
        budget = int(self._budgets[i]) if self.panel == PANEL_ACTIVE else 0
        used = int(self._used[i])
        estimate = self._submission(i)
        values = self._mean[i] + self.shift * self._sd[i]
        last = int(self._last_actions[i])
        return RenderState(
            title=f"{self.level.env_id.replace('ACDB-', 'ACDB-Design-')} world {i} "
            f"estimator={self.estimator} panel={self.panel}",
            n_nodes=self.n_nodes,
            budget=budget,
            budget_remaining=budget - used if budget else 0,
            steps=used + int(ended),
            max_steps=int(self._budgets[i]) + 1,
            experiments=[(t, float(values[t])) for t in self._target_log[i, :used].tolist()],
            last_action=None if last == -2 else "stop" if last == -1 else f"intervene on X{last}",
            last_error=None,
            tool_result=None,
            estimate=None if ended else estimate,
            submission=estimate if ended else None,
            truth=world.instance.dag if ended else None,
            report=report_of_row(self._final[i]) if ended else None,
        )

    def _worlds_for(self, slots: list[int]) -> list[_World]:
        """The next world of each slot: from the bank, or generated from each slot's own
        generator and started by one PC call over all of them (cached starts skipped)."""
        if self.bank is not None:
            return [self._world_for(i) for i in slots]
        rngs = [self._np_randoms[i] for i in slots]
        assert all(rng is not None for rng in rngs)
        instances = fresh_instances(self.level, rngs, low=self.min_world_seed)  # type: ignore[arg-type]
        # Their correlations are computed once, for PC and for the worlds' summaries.
        stacked = _stacked_samples(instances)
        starts = starting_graphs(
            instances, self.estimator, correlations=None if stacked is None else stacked[1]
        )
        return _new_worlds(instances, starts, stacked)

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

    def _reset_worlds(self, slots: np.ndarray | list[int]) -> None:
        """Start the next episode of every slot in ``slots``: per world only what its own
        generators hold, every array of state set for all of them at once."""
        slot_list = [int(i) for i in slots]
        worlds = self._worlds_for(slot_list)
        index = np.asarray(slot_list, dtype=np.int64)
        for i, world in zip(slot_list, worlds, strict=True):
            self._worlds[i] = world
            self._rngs[i].bit_generator.state = world.rng_state
            if not self._stacked or world.block is None:
                self._samplers[i] = sampler_for(world.instance.scm)
            if self.estimator == "bic":
                self._experiments[i] = []
                self._pooled[i] = None
                self._search_dags[i] = None
        self._widen(max(world.budget for world in worlds))
        self._floats[index] = [world.floats for world in worlds]
        self._flags[index] = [world.flags for world in worlds]
        self._ints[index] = [world.ints for world in worlds]
        self._correlations[index] = [world.correlations for world in worlds]
        self._last_actions[index] = -2
        self._has_final[index] = False
        self._directed[index] = self._estimate_directed[index] = self._start_directed[index]
        self._undirected[index] = self._estimate_undirected[index] = self._start_undirected[index]
        self._shifts[index] = 0.0
        self._intervened[index] = 0.0
        self._used[index] = 0
        if self._stacked:
            self._fast[index] = [world.block is not None for world in worlds]
            self._put_references(index, worlds)

    def _put_references(self, index: np.ndarray, worlds: list[_World]) -> None:
        """The shift tests' observational half of the new worlds, into the stacked table."""
        records = [world.reference_record for world in worlds]
        if self._references is None and not self._tests_per_world:
            # Made at the first reset, which resets every slot.
            n_obs = len(records[0][0]) // self.n_nodes - 3  # type: ignore[index]
            if self.num_envs * self.n_nodes * n_obs <= _STACKED_MAX_VALUES:
                self._references = ReferenceRows(self.num_envs, self.n_nodes, n_obs)
            else:
                self._tests_per_world = True
        if self._references is not None:
            try:
                self._references.put(index, records)  # type: ignore[arg-type]
            except ValueError:  # worlds of other sample sizes: the per-world path from now on
                self._references = None
                self._tests_per_world = True

    def _widen(self, budget: int) -> None:
        """Room for ``budget`` experiments per world in the per-experiment arrays."""
        width = self._target_log.shape[1]
        if budget > width:
            grow = ((0, 0), (0, budget - width))
            self._target_log = np.pad(self._target_log, grow)
            self._f1_before = np.pad(self._f1_before, grow)

    def _can_intervene(self) -> np.ndarray:
        if self.panel != PANEL_ACTIVE:
            return np.zeros(self.num_envs, dtype=bool)
        return (self._used < self._budgets) & ~self._ended

    def _intervene(self, slots: np.ndarray, targets: np.ndarray) -> None:
        """One experiment in each world of ``slots`` (on ``targets``): samples, shift
        features, orientation tests and the new estimates, for all of them at once."""
        used = self._used[slots]
        # The directed F1 of the estimate each world held before this experiment.
        self._f1_before[slots, used] = directed_f1s(
            self._truth[slots], self._estimate_directed[slots]
        )
        self._target_log[slots, used] = targets
        values = self._mean[slots, targets] + self.shift * self._sd[slots, targets]
        samples = self._draw(slots, targets, values)
        if self.estimator == "bic":
            for k, (i, target) in enumerate(zip(slots.tolist(), targets.tolist(), strict=True)):
                self._experiments[i].append((target, samples[k].copy()))
        self._intervened[slots, targets] = 1.0
        self._used[slots] += 1
        # The shift features, as DesignState.add_experiment computes them, for all at once.
        shift = np.abs(samples.mean(axis=1) - self._mean[slots]) / self._scale[slots]
        shift[np.arange(len(slots)), targets] = 0.0
        self._shifts[slots, targets] = np.minimum(shift, SHIFT_CLIP) / SHIFT_CLIP
        if self.estimator == "bic":
            for i in slots.tolist():
                self._pooled[i] = None
                self._estimate_directed[i], self._estimate_undirected[i] = self._estimate(i)
            return
        # The orientation tests of the worlds with undirected edges at their target; a world
        # whose raw state stays as it was keeps its estimate (the closure of that state) but
        # after its first experiment, whose estimate becomes the closure of its start (kept
        # with the world).
        edges = self._undirected[slots, targets]
        changed = np.zeros(len(slots), dtype=bool)
        testing = np.flatnonzero(edges.any(axis=1))
        if testing.size:
            changed[testing] = self._orient(
                slots[testing], targets[testing], edges[testing], samples[testing]
            )
        kept = [(i, self._worlds[i]) for i in slots[(used == 0) & ~changed].tolist()]
        unclosed = [i for i, world in kept if world is not None and world.start_closure is None]
        for i, closure in zip(unclosed, self._estimates(unclosed), strict=True):
            self._worlds[i].start_closure = closure
        for i, world in kept:
            assert world is not None and world.start_closure is not None
            self._estimate_directed[i], self._estimate_undirected[i] = world.start_closure
        moved = slots[changed].tolist()
        for i, (directed, undirected) in zip(moved, self._estimates(moved), strict=True):
            self._estimate_directed[i], self._estimate_undirected[i] = directed, undirected

    def _draw(self, slots: np.ndarray, targets: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Each world's ``n_int`` samples of ``do(target = value)``, from its own generator:
        for the worlds with do-matrices the sampler's noise and product (``z @ A_target``),
        the products of all of them in one stacked call (the same BLAS product per world)."""
        k, d = len(slots), self.n_nodes
        samples = np.empty((k, self._n_int, d))
        fast = self._fast[slots] if self._stacked else np.zeros(k, dtype=bool)
        rngs = self._rngs
        for k_, i in enumerate(slots.tolist()):
            if fast[k_]:
                rngs[i].standard_normal(out=samples[k_])
            else:
                target = int(targets[k_])
                self._samplers[i].draw(target, float(values[k_]), self._n_int, rngs[i], samples[k_])
        if fast.all():
            samples[np.arange(k), :, targets] = values[:, None]
            return np.matmul(samples, self._blocks[slots, targets])
        chosen = np.flatnonzero(fast)
        if chosen.size:
            noise = samples[chosen]
            noise[np.arange(chosen.size), :, targets[chosen]] = values[chosen, None]
            samples[chosen] = np.matmul(noise, self._blocks[slots[chosen], targets[chosen]])
        return samples

    def _orient(
        self, slots: np.ndarray, targets: np.ndarray, edges: np.ndarray, samples: np.ndarray
    ) -> np.ndarray:
        """Test the shift at every undirected neighbour of each world's target and orient
        the edges as decided (the orienter's step); True where a world's raw state changed."""
        if self._references is not None:
            worlds, neighbours = np.nonzero(edges)
            rows = np.ascontiguousarray(samples[worlds, :, neighbours])
            p_values = self._references.pvalues(slots[worlds], neighbours, rows)
            codes = np.zeros(edges.shape, dtype=np.int8)
            codes[worlds, neighbours] = decision_codes(
                p_values,
                rule=self.rule,
                alpha=self.alpha,
                no_shift_threshold=self._no_shift,
                powered=self._powered,
            )
            return orient_many(self._directed, self._undirected, slots, targets, codes)
        tested = np.ascontiguousarray(samples.transpose(0, 2, 1))
        references = [self._worlds[i].reference for i in slots.tolist()]
        changed = np.zeros(len(slots), dtype=bool)
        for k, row in enumerate(stacked_pvalues(references, tested)):
            i, target = int(slots[k]), int(targets[k])
            neighbours = np.flatnonzero(edges[k])
            decisions = decide_orientations(
                row[neighbours],
                rule=self.rule,
                alpha=self.alpha,
                no_shift_threshold=self._no_shift,
                powered=self._powered,
            )
            changed[k] = _orient_at(
                self._directed[i], self._undirected[i], target, neighbours, decisions
            )
        return changed

    def _estimate(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The estimate "stop" would submit: the start before any experiment, else the raw
        orientations closed under Meek's rules (remembered per distinct raw state)."""
        world = self._worlds[i]
        assert world is not None
        if not self._used[i]:
            return world.start_directed, world.start_undirected
        if self.estimator == "bic":
            return self._pooled_estimate(i)
        raw_d, raw_u = self._directed[i], self._undirected[i]
        key = (raw_d.shape[0], raw_d.tobytes(), raw_u.tobytes())

        # Meek's rules on the raw arrays, as meek_closure runs them (the raw state is always
        # a valid PDAG: the orienter never closes a cycle), without building PDAG objects.
        return _CLOSURES.get(key, lambda: _close(raw_d, raw_u, _ALL_RULES))

    def _estimates(self, slots: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`_estimate` of each world in ``slots`` (each after an experiment), the raw
        states not remembered closed together (:func:`~acdb_gym.core.graphs.meek_many.close_many`,
        the same closures) on small worlds."""
        if self.estimator == "bic" or len(slots) < 2 or self.n_nodes > MANY_MAX_NODES:
            return [self._estimate(i) for i in slots]
        found: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        missing: dict[tuple[int, bytes, bytes], list[int]] = {}
        for i in slots:
            raw_d, raw_u = self._directed[i], self._undirected[i]
            key = (raw_d.shape[0], raw_d.tobytes(), raw_u.tobytes())  # as _estimate's
            closure = _CLOSURES.find(key)
            if closure is None:
                missing.setdefault(key, []).append(i)
            else:
                found[i] = closure
        if missing:
            first = [members[0] for members in missing.values()]
            closures = close_many(self._directed[first], self._undirected[first])
            for (key, members), closure in zip(missing.items(), closures, strict=True):
                _CLOSURES.put(key, closure)
                found.update(dict.fromkeys(members, closure))
        return [found[i] for i in slots]

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

    def _essentials(
        self, stoppers: np.ndarray, keys: list[int] | list[bytes], touched: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """The interventional essential graph of each stopping world's target set: remembered
        per world and set; those not seen before computed together
        (:func:`~acdb_gym.core.graphs.meek_many.essential_graphs_many`) on small worlds."""
        worlds = [self._worlds[i] for i in stoppers.tolist()]
        found = [world.essentials.get(key) for world, key in zip(worlds, keys, strict=True)]
        missing = [k for k, graph in enumerate(found) if graph is None and touched[k].any()]
        if len(missing) > 1 and self.n_nodes <= MANY_MAX_NODES:
            rows = stoppers[missing]
            directed, undirected = essential_graphs_many(
                self._truth[rows],
                self._base_directed[rows],
                self._base_undirected[rows],
                touched[missing],
            )
            for m, k in enumerate(missing):
                graph = (directed[m], undirected[m])
                found[k] = worlds[k].essentials[keys[k]] = graph
        return [
            graph if graph is not None else world.essential(key, row)
            for graph, world, key, row in zip(found, worlds, keys, touched, strict=True)
        ]

    def _score_rows(self, stoppers: np.ndarray) -> np.ndarray:
        """The score of every stopping world's estimate (a row of
        :func:`~acdb_gym.core.many_scores.score_rows`'s table each, :func:`score`'s values bit
        for bit), its anytime F1 from the directed F1 held before each experiment."""
        touched = self._intervened[stoppers] > 0
        d = self.n_nodes
        keys: list[int] | list[bytes] = (
            (touched @ (np.int64(1) << np.arange(d, dtype=np.int64))).tolist()
            if d < 63
            else [row.tobytes() for row in touched]
        )
        essentials = self._essentials(stoppers, keys, touched)
        directed = self._estimate_directed[stoppers]
        used = self._used[stoppers]
        table = score_rows(
            self._truth[stoppers],
            GraphRows(self._base_directed[stoppers], self._base_undirected[stoppers]),
            GraphRows(
                np.stack([graph[0] for graph in essentials]),
                np.stack([graph[1] for graph in essentials]),
            ),
            GraphRows(directed, self._estimate_undirected[stoppers]),
            used=used,
            star=self._star[stoppers],
            anytime_f1=np.zeros(len(stoppers)),
        )
        table[:, _SCORE_COLUMN["anytime_f1"]] = anytime_areas(
            self._f1_before[stoppers],
            used,
            table[:, _SCORE_COLUMN["directed_f1"]],
            self._budgets[stoppers],
        )
        return table

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

    def _info(
        self, stoppers: np.ndarray | None = None, table: np.ndarray | None = None
    ) -> dict[str, Any]:
        """The single env's info keys for every world, in Gymnasium's vector form (each key an
        array over worlds beside its ``_key`` mask, all True: every world has every key at
        every step); ``scored`` is True, and ``score`` (``table``'s rows) and
        ``instance_seed`` are filled in (else :data:`~acdb_gym.envs.episode_rules.UNSCORED`
        and -1), for the worlds that ended this step (``stoppers``)."""
        n = self.num_envs
        every = np.ones(n, dtype=bool)
        seeds = np.full(n, -1, dtype=np.int64)
        score = np.full((n, len(SCORE_FIELDS)), UNSCORED)
        scored = np.zeros(n, dtype=bool)
        if stoppers is not None and table is not None:
            seeds[stoppers] = self._seeds[stoppers]
            score[stoppers] = table
            scored[stoppers] = True
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
