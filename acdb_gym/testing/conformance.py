"""The ACDB environment contract as a check: :func:`check_acdb_env` (DESIGN §8).

Its random rollouts are planned from the action space and the registered statistics tools
(:mod:`acdb_gym.core.statistic_tools`), so a newly registered tool is fuzzed like the built-in ones.

Over 500 lines because the contract is one list of checks read top to bottom (spaces,
out-of-space actions, rollouts, the numeric info, leaks, determinism), each a small function; a
reader checking an env against DESIGN §8 follows it in one file.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from acdb_gym.core import statistic_tools
from acdb_gym.core.graphs import PDAG
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS, SCORE_FIELDS
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.envs import actions
from acdb_gym.envs.actions import ActionKind
from acdb_gym.envs.episode_rules import UNSCORED
from acdb_gym.envs.observation_space import (
    COMPACT_OBSERVATION_KEYS,
    KINDS_KEY,
    OBSERVATION_KEYS,
    STATS_OBSERVATION_KEYS,
    VALUES_KEY,
)
from acdb_gym.envs.privileged import hidden_instance_of
from acdb_gym.testing.leaks import find_hidden_leak

__all__ = ["check_acdb_env"]

_INFINITE_BOUNDS = r".*A Box (observation|action) space (minimum|maximum) value is -?infinity"
"""Gymnasium's notice about unbounded Boxes; data and statistics are unbounded by nature."""

_SUBMIT_PROBABILITY = 0.08
"""Chance that a random plausible action submits a valid graph: episodes mix ends by
termination and by truncation."""


# --------------------------------------------------------------------------- the check


def check_acdb_env(env: gym.Env[Any, Any], *, seed: int = 0, n_random_steps: int = 50) -> None:
    """Check that ``env`` keeps the ACDB environment contract (DESIGN §8).

    The checks, in order:

    1. Gymnasium's ``check_env`` on ``env.unwrapped`` (its infinite-bounds notices silenced).
    2. The action space is a ``OneOf`` of the five kinds with the documented payloads, and the
       observation is a ``Dict`` with the documented keys and shapes.
    3. Actions outside the action space (a NaN value, an out-of-range node, an unknown kind, a
       bad graph code) raise ``ValueError`` and cost no step.
    4. ``n_random_steps`` random actions (samples of the action space mixed with plausible typed
       actions, resetting after each episode) never raise; every observation lies in the
       observation space; every episode ends by termination or by truncation within its step
       limit; ``info`` holds numbers only, the same keys at every step and no observation key;
       ``info["score"]`` holds the 19 score fields, -1 before the end (``info["scored"]``
       False) and finite at the end (``anytime_f1`` -1 when undefined, DESIGN §6);
       no observation, info or ``ansi`` render before the end reveals the hidden graph or
       weights (see :func:`find_hidden_leak`).
    5. Replaying the same actions after ``reset(seed=seed)`` gives an identical trajectory.

    ``env`` may be wrapped; its unwrapped environment must offer ``hidden_instance()`` and
    ``max_interventions`` as :class:`~acdb_gym.envs.acdb_env.ACDBEnv` does. Make it with
    ``render_mode="ansi"`` to have renders checked too.

    Args:
        env: the environment to check; it is reset and stepped.
        seed: seed of the resets and of the random actions.
        n_random_steps: random steps per rollout (two rollouts are played).

    Raises:
        AssertionError: the first violation found, with what was wrong.
        ValueError: ``n_random_steps`` is below 1.
    """
    if n_random_steps < 1:
        raise ValueError(f"n_random_steps must be at least 1, got {n_random_steps}")
    base = _acdb_base(env)
    _check_gymnasium_api(base)
    _check_spaces(env, seed=seed)
    _check_out_of_space_actions(env, seed=seed)
    plan = _random_plan(env, seed=seed, n_steps=n_random_steps)
    first = _play(env, plan, seed=seed)
    second = _play(env, plan, seed=seed)
    _check_same_trajectory(first, second)


def _same_score(reported: float, shown: float) -> bool:
    """A report's value and its ``info["score"]`` entry agree (NaN shows as UNSCORED)."""
    if isinstance(reported, float) and math.isnan(reported):
        return bool(shown == UNSCORED)
    return bool(reported == shown)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _acdb_base(env: gym.Env[Any, Any]) -> Any:
    base = env.unwrapped
    for name in ("hidden_instance", "max_interventions"):
        _require(
            hasattr(base, name),
            f"{type(base).__name__} has no {name!r}; check_acdb_env needs an ACDBEnv-like env",
        )
    return base


def _check_gymnasium_api(base: gym.Env[Any, Any]) -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_INFINITE_BOUNDS)
        try:
            check_env(base)
        except Exception as error:
            raise AssertionError(f"gymnasium's check_env failed: {error}") from error


# --------------------------------------------------------------------------- spaces


def _check_spaces(env: gym.Env[Any, Any], *, seed: int) -> None:
    observation, _ = env.reset(seed=seed)
    instance = hidden_instance_of(env)
    d, m = instance.n_nodes, int(env.unwrapped.max_interventions)  # type: ignore[attr-defined]
    _require(
        instance.budget <= m,
        f"budget {instance.budget} exceeds max_interventions {m}: experiments would not fit",
    )
    latent = instance.admg is not None
    _check_action_space(env.action_space, n_nodes=d, max_interventions=m, latent=latent)
    mode = getattr(env.unwrapped, "observation_mode", "raw")
    data_shapes, keys = {
        "stats": (
            {"sample_size": (m + 1,), "mean": (m + 1, d), "covariance": (m + 1, d, d)},
            STATS_OBSERVATION_KEYS,
        ),
        "compact": (
            {"correlation": (d * (d - 1) // 2,), "scale": (d,), "shift": (m, d), "spread": (m, d)},
            COMPACT_OBSERVATION_KEYS,
        ),
    }.get(
        mode,
        (
            {
                "observational": (instance.spec.n_obs, d),
                "interventional": (m, instance.spec.n_int, d),
            },
            OBSERVATION_KEYS,
        ),
    )
    shapes: dict[str, tuple[int, ...]] = {
        **data_shapes,
        "targets": (m,),
        VALUES_KEY: (m,),
        "budget_remaining": (1,),
        "steps_remaining": (1,),
        "tool_result": (3,),
    }
    if getattr(env.unwrapped, "interventions", "hard") != "hard":  # soft: one more key
        keys += (KINDS_KEY,)
        shapes[KINDS_KEY] = (m,)
    space = env.observation_space
    _require(isinstance(space, spaces.Dict), f"observation_space must be a Dict, got {space!r}")
    assert isinstance(space, spaces.Dict)
    _require(
        set(space.spaces) == set(keys),
        f"observation keys must be {sorted(keys)}, got {sorted(space.spaces)}",
    )
    for key, shape in shapes.items():
        _require(
            space[key].shape == shape,
            f"observation_space[{key!r}] must have shape {shape}, got {space[key].shape}",
        )
        _require(
            np.shape(observation[key]) == shape,
            f"observation[{key!r}] must have shape {shape}, got {np.shape(observation[key])}",
        )


def _check_action_space(
    space: gym.Space[Any], *, n_nodes: int, max_interventions: int, latent: bool = False
) -> None:
    _require(isinstance(space, spaces.OneOf), f"action_space must be a OneOf, got {space!r}")
    assert isinstance(space, spaces.OneOf)
    reference = actions.action_space(n_nodes, max_interventions, latent=latent)
    kinds = [name.upper() for name in actions.kind_names()]
    _require(
        len(space.spaces) == len(kinds),
        f"action_space must have {len(kinds)} kinds {kinds}, got {len(space.spaces)}",
    )
    for kind, got, want in zip(kinds, space.spaces, reference.spaces, strict=True):
        _require(isinstance(got, spaces.Dict), f"action kind {kind} must be a Dict")
        assert isinstance(got, spaces.Dict) and isinstance(want, spaces.Dict)
        _require(
            set(got.spaces) == set(want.spaces),
            f"action kind {kind} must have keys {sorted(want.spaces)}, got {sorted(got.spaces)}",
        )
        for key, subspace in want.spaces.items():
            _require(
                _same_space_shape(got[key], subspace),
                f"action kind {kind}[{key!r}] must be like {subspace}, got {got[key]}",
            )


def _same_space_shape(got: gym.Space[Any], want: gym.Space[Any]) -> bool:
    """Same type and shape; same sizes for discrete spaces; bounded floats for the Box."""
    if type(got) is not type(want) or got.shape != want.shape:
        return False
    if isinstance(got, spaces.Discrete) and isinstance(want, spaces.Discrete):
        return int(got.n) == int(want.n) and int(got.start) == int(want.start)
    if isinstance(got, spaces.MultiDiscrete) and isinstance(want, spaces.MultiDiscrete):
        return bool(np.array_equal(got.nvec, want.nvec))
    if isinstance(got, spaces.Box):
        return bool(np.issubdtype(got.dtype, np.floating) and got.is_bounded("both"))
    return True


# --------------------------------------------------------------------------- out-of-space actions


def _out_of_space_actions(
    space: spaces.OneOf, n_nodes: int, *, latent: bool = False
) -> list[tuple[str, Any]]:
    intervene_space = space.spaces[ActionKind.INTERVENE]
    assert isinstance(intervene_space, spaces.Dict)  # checked by _check_action_space
    value_space = intervene_space["value"]
    assert isinstance(value_space, spaces.Box)
    beyond = float(np.max(value_space.high)) * 2.0 + 1.0
    zero = np.asarray(0.0)
    n_kinds = len(actions.kind_names())
    submit = int(ActionKind.SUBMIT_GRAPH)
    top = 4 if latent else 3  # the first code past the last valid one
    return [
        ("an intervention value of NaN", actions.intervene(0, math.nan)),
        (f"an intervention value of {beyond:g}", actions.intervene(0, beyond)),
        (f"var = {n_nodes}", (0, {"var": np.int64(n_nodes), "value": zero})),
        (f"kind index {n_kinds}", (n_kinds, {"var": np.int64(0), "value": zero})),
        (f"a graph code of {top}", (submit, {"graph": np.full((n_nodes, n_nodes), top)})),
        ("a bare integer", 0),
    ]


def _check_out_of_space_actions(env: gym.Env[Any, Any], *, seed: int) -> None:
    observation, _ = env.reset(seed=seed)
    limit = int(observation["steps_remaining"][0])
    space = env.action_space
    assert isinstance(space, spaces.OneOf)
    n_nodes = hidden_instance_of(env).n_nodes
    latent = hidden_instance_of(env).admg is not None
    for what, action in _out_of_space_actions(space, n_nodes, latent=latent):
        _require(not space.contains(action), f"the action space contains {what}: {action!r}")
        try:
            env.step(action)
        except ValueError:
            continue
        except Exception as error:
            raise AssertionError(
                f"an action with {what} must raise ValueError, got {type(error).__name__}: {error}"
            ) from error
        raise AssertionError(f"an action with {what} did not raise ValueError")
    observation, *_ = _step(env, actions.correlation(0, 1), "after actions outside the space")
    _check_observation(env, observation, "after actions outside the space")
    _require(
        int(observation["steps_remaining"][0]) == limit - 1,
        f"actions outside the action space must cost no step: steps_remaining went from {limit} "
        f"to {int(observation['steps_remaining'][0])} over them and one valid step",
    )


def _step(env: gym.Env[Any, Any], action: Any, where: str) -> tuple[Any, ...]:
    """``env.step(action)`` for an action of the action space, which must not raise."""
    try:
        return env.step(action)
    except Exception as error:
        raise AssertionError(
            f"step {where} raised {type(error).__name__} on an action of the action space: "
            f"{error}; action {action!r}"
        ) from error


# --------------------------------------------------------------------------- random rollouts


def _random_plan(env: gym.Env[Any, Any], *, seed: int, n_steps: int) -> list[Any]:
    """Random actions, fixed in advance so that a replay plays exactly the same ones."""
    space = env.action_space
    assert isinstance(space, spaces.OneOf)
    n_nodes = hidden_instance_of(env).n_nodes
    m = int(env.unwrapped.max_interventions)  # type: ignore[attr-defined]
    sampler = actions.action_space(n_nodes, m, latent=hidden_instance_of(env).admg is not None)
    sampler.seed(seed)
    rng = np.random.default_rng(seed)
    plan = []
    for _ in range(n_steps):
        if rng.random() < 0.3:
            plan.append(sampler.sample())
        else:
            plan.append(_plausible_action(rng, n_nodes, m))
    return plan


def _plausible_action(rng: np.random.Generator, n_nodes: int, m: int) -> Any:
    """A typed action with sensible arguments (which may still be invalid in context): a
    submission, an intervention or a call of any registered statistics tool."""
    if rng.random() < _SUBMIT_PROBABILITY:
        return actions.submit(_random_pdag(rng, n_nodes))
    i, j = (int(v) for v in rng.choice(n_nodes, size=2, replace=False))
    others = [v for v in range(n_nodes) if v not in (i, j)]
    cond = [int(v) for v in rng.choice(others, size=min(len(others), int(rng.integers(3))))]
    regime = None if rng.random() < 0.6 else int(rng.integers(m))
    specs = statistic_tools.statistics_tools()
    kind = int(rng.integers(1 + len(specs)))
    if kind == 0:
        return actions.intervene(i, round(float(rng.normal(0.0, 3.0)), 3))
    return _tool_call(specs[kind - 1], (i, j), cond, regime, n_nodes)


def _tool_call(
    spec: statistic_tools.StatisticTool,
    pair: tuple[int, int],
    cond: list[int],
    regime: int | None,
    n_nodes: int,
) -> Any:
    arguments: list[Any] = list(pair[: len(spec.node_fields)])
    if "cond" in spec.fields:
        arguments.append(cond)
    if "regime" not in spec.fields:
        regime = None
    return actions.tool_action(spec.name, *arguments, n_nodes=n_nodes, regime=regime)


def _random_pdag(rng: np.random.Generator, n_nodes: int) -> PDAG:
    order = rng.permutation(n_nodes)
    forward = np.triu(rng.random((n_nodes, n_nodes)) < 0.3, k=1)
    directed = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    directed[np.ix_(order, order)] = forward
    undirected = directed & (rng.random((n_nodes, n_nodes)) < 0.3)
    undirected = undirected | undirected.T
    return PDAG(directed & ~undirected, undirected)


@dataclass(frozen=True)
class _Record:
    """One reset (``action`` None) or step of a rollout."""

    action: Any
    observation: Any
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


class _Episode:
    """Step-limit and end-of-episode bookkeeping of one episode."""

    def __init__(self, env: gym.Env[Any, Any], observation: Any) -> None:
        self.instance: Instance = hidden_instance_of(env)
        self.limit = int(observation["steps_remaining"][0])
        self.steps = 0


def _play(env: gym.Env[Any, Any], plan: Sequence[Any], *, seed: int) -> list[_Record]:
    observation, info = env.reset(seed=seed)
    records = [_Record(None, observation, 0.0, False, False, info)]
    episode = _start_episode(env, observation, info)
    keys = _info_keys(info)
    for action in plan:
        where = f"{episode.steps + 1} of an episode"
        observation, reward, terminated, truncated, info = _step(env, action, where)
        episode.steps += 1
        ended = bool(terminated or truncated)
        _check_step(env, episode, observation, float(reward), ended, info)
        _require(
            _info_keys(info) == keys,
            f"info at step {episode.steps} has keys {sorted(_info_keys(info))}, not the keys "
            f"of reset's info {sorted(keys)} (the same keys at every step)",
        )
        records.append(_Record(action, observation, float(reward), terminated, truncated, info))
        if ended:
            observation, info = env.reset()
            records.append(_Record(None, observation, 0.0, False, False, info))
            episode = _start_episode(env, observation, info)
    return records


def _start_episode(env: gym.Env[Any, Any], observation: Any, info: dict[str, Any]) -> _Episode:
    episode = _Episode(env, observation)
    _require(episode.limit >= 1, f"steps_remaining after reset must be >= 1, got {episode.limit}")
    _check_observation(env, observation, "after reset")
    _check_info(observation, info, "after reset")
    _require(_score_is_unset(info), "info after reset must not be scored (info['score'] -1)")
    _check_no_leak(env, episode, observation, info, "after reset")
    return episode


def _check_step(
    env: gym.Env[Any, Any],
    episode: _Episode,
    observation: Any,
    reward: float,
    ended: bool,
    info: dict[str, Any],
) -> None:
    where = f"at step {episode.steps} of an episode"
    _check_observation(env, observation, where)
    _check_info(observation, info, where)
    remaining = int(observation["steps_remaining"][0])
    _require(
        remaining == episode.limit - episode.steps,
        f"steps_remaining {where} must be {episode.limit - episode.steps}, got {remaining}",
    )
    _require(math.isfinite(reward), f"reward {where} must be finite, got {reward}")
    if not ended:
        _require(
            episode.steps < episode.limit,
            f"the episode did not end at its step limit of {episode.limit} steps",
        )
        _require(_score_is_unset(info), f"info {where} is scored before the end")
        _require(reward == 0.0, f"reward {where} must be 0 before the end, got {reward}")
        _check_no_leak(env, episode, observation, info, where)
        return
    _require(info.get("scored") is True, f"info at the end ({where}) must be scored")
    score = info["score"]
    fields = SCORE_FIELDS + (LATENT_SCORE_FIELDS if len(score) > len(SCORE_FIELDS) else ())
    _require(
        isinstance(score, np.ndarray) and score.shape == (len(fields),),
        f"info['score'] must be an array of the {len(fields)} score fields, got {score!r}",
    )
    bad = [name for name, value in zip(fields, score, strict=True) if not np.isfinite(value)]
    _require(not bad, f"info['score'] has non-finite fields {bad}")
    details = getattr(env.unwrapped, "details", None)
    if callable(details):
        report = details().get("score", {})
        # details() holds the report itself: an undefined anytime F1 is NaN there, -1 in info.
        _require(
            list(report) == list(fields)
            and all(
                _same_score(report[name], value) for name, value in zip(fields, score, strict=True)
            ),
            f"details()['score'] must hold info['score']'s fields and values, got {report!r}",
        )


def _info_keys(info: Mapping[str, Any]) -> set[str]:
    """Every key of ``info``, a nested dict's as ``outer/inner``."""
    keys = set()
    for key, value in info.items():
        if isinstance(value, Mapping):
            keys |= {f"{key}/{inner}" for inner in _info_keys(value)}
        else:
            keys.add(key)
    return keys


def _is_numeric(value: Any) -> bool:
    """A number, an array of numbers or a dict of those (what vectorising stacks stack)."""
    if isinstance(value, Mapping):
        return all(_is_numeric(inner) for inner in value.values())
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"
    return isinstance(value, bool | int | float | np.number | np.bool_)


def _check_info(observation: Any, info: Mapping[str, Any], where: str) -> None:
    """``info`` holds numbers only and no observation key (DESIGN §8, "info")."""
    bad = sorted(key for key, value in info.items() if not _is_numeric(value))
    _require(not bad, f"info {where} has keys whose values are not numbers: {bad}")
    shared = sorted(set(info) & set(observation)) if isinstance(observation, Mapping) else []
    _require(not shared, f"info {where} shares keys with the observation: {shared}")


def _score_is_unset(info: Mapping[str, Any]) -> bool:
    score = info.get("score")
    return (
        info.get("scored") is False
        and isinstance(score, np.ndarray)
        and bool((score == UNSCORED).all())
    )


def _check_observation(env: gym.Env[Any, Any], observation: Any, where: str) -> None:
    space = env.observation_space
    if space.contains(observation):
        return
    bad = [
        key
        for key, subspace in getattr(space, "spaces", {}).items()
        if not (isinstance(observation, Mapping) and subspace.contains(observation.get(key)))
    ]
    raise AssertionError(f"observation {where} is not in the observation space (keys {bad})")


def _check_no_leak(
    env: gym.Env[Any, Any],
    episode: _Episode,
    observation: Any,
    info: dict[str, Any],
    where: str,
) -> None:
    parts: list[tuple[str, Any]] = [("observation", observation), ("info", info)]
    details = getattr(env.unwrapped, "details", None)
    if callable(details):  # the text an agent is given beside info (error messages)
        parts.append(("details()", details()))
    if env.render_mode == "ansi":
        parts.append(("the ansi render", env.render()))
    for name, value in parts:
        leak = find_hidden_leak(value, episode.instance)
        _require(leak is None, f"{name} {where} reveals the hidden world: {leak}")


def _check_same_trajectory(first: list[_Record], second: list[_Record]) -> None:
    _require(
        len(first) == len(second),
        f"the same seed gave different trajectories: {len(first)} vs {len(second)} records",
    )
    for index, (a, b) in enumerate(zip(first, second, strict=True)):
        what = "reset" if a.action is None else "step"
        for name in ("observation", "reward", "terminated", "truncated", "info"):
            difference = _first_difference(getattr(a, name), getattr(b, name), name)
            _require(
                difference is None,
                f"the same seed gave different trajectories: record {index} ({what}), {difference}",
            )


def _first_difference(a: Any, b: Any, path: str) -> str | None:
    """Where ``a`` and ``b`` differ (arrays exactly, NaN equal to NaN), or None."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if set(a) != set(b):
            return f"{path} has keys {sorted(a)} vs {sorted(b)}"
        for key in a:
            found = _first_difference(a[key], b[key], f"{path}[{key!r}]")
            if found is not None:
                return found
        return None
    if isinstance(a, np.ndarray | np.generic) or isinstance(b, np.ndarray | np.generic):
        left, right = np.asarray(a), np.asarray(b)
        nan_ok = left.dtype.kind in "fc" and right.dtype.kind in "fc"
        same = (
            left.shape == right.shape
            and left.dtype == right.dtype
            and bool(np.array_equal(left, right, equal_nan=nan_ok))
        )
        return None if same else f"{path} differs"
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if type(a) is not type(b) or len(a) != len(b):
            return f"{path} differs in type or length"
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    return None if type(a) is type(b) and bool(a == b) else f"{path}: {a!r} vs {b!r}"
