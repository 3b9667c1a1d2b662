"""FlatActions: the flat Box view of the full env's OneOf actions (DESIGN §8)."""

from __future__ import annotations

import itertools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from acdb_gym.core.graphs import PDAG
from acdb_gym.envs import actions
from acdb_gym.envs.actions import (
    Correlation,
    IndependenceTest,
    Intervene,
    PartialCorrelation,
    Submit,
)
from acdb_gym.envs.wrappers import KIND, VALUE, FlatActions, KindSet, make_flat

D = 6  # v0 L1
GRAPH = PDAG.from_edges(D, directed=[(0, 1), (3, 2), (5, 4)], undirected=[(1, 2), (0, 5)])

TYPED = [
    Intervene(2, 2.5),
    Intervene(5, -7.5),
    Intervene(0, 10.0),
    Correlation(0, 3, None),
    Correlation(4, 1, 5),
    PartialCorrelation(0, 1, (2, 4), 2),
    PartialCorrelation(5, 2, (), None),
    IndependenceTest(1, 5, (0,), None),
    IndependenceTest(3, 0, (1, 2, 4, 5), 0),
    Submit(GRAPH),
    Submit(PDAG.empty(D)),
]


def same_action(a: tuple[int, dict[str, Any]], b: tuple[int, dict[str, Any]]) -> bool:
    """Same kind (an int), same keys, equal values of the same types and dtypes."""
    return (
        type(a[0]) is type(b[0]) is int
        and a[0] == b[0]
        and a[1].keys() == b[1].keys()
        and all(
            type(a[1][k]) is type(b[1][k])
            and np.asarray(a[1][k]).dtype == np.asarray(b[1][k]).dtype
            and np.array_equal(a[1][k], b[1][k])
            for k in a[1]
        )
    )


def wrapped(env_id: str, *, kinds: KindSet = "variant", **kwargs: Any) -> FlatActions:
    return FlatActions(gym.make(env_id, **kwargs), kinds=kinds)


@pytest.fixture(scope="module")
def stats_env() -> FlatActions:
    return wrapped("ACDB-L1-v0", tools="stats")


@pytest.mark.parametrize("typed", TYPED, ids=repr)
def test_encode_then_decode_gives_the_same_env_action(
    stats_env: FlatActions, typed: actions.Action
) -> None:
    flat = stats_env.encode_flat(typed)
    assert flat.dtype == np.float32 and stats_env.action_space.contains(flat)
    assert same_action(stats_env.action(flat), actions.encode(typed, n_nodes=D))
    assert stats_env.decode(flat) == typed
    # An element of the OneOf encodes as its typed action does.
    assert np.array_equal(stats_env.encode_flat(actions.encode(typed, n_nodes=D)), flat)


def test_every_kind_is_covered_by_the_round_trips(stats_env: FlatActions) -> None:
    kinds = {actions.encode(typed, n_nodes=D)[0] for typed in TYPED}
    assert kinds == set(stats_env.layout.kinds) == set(range(len(actions.kind_names())))


def test_every_bin_round_trips_at_d_20() -> None:
    env = wrapped("ACDB-Calibrated-L3-v1", tools="stats", kinds="all")
    d, regimes = env.layout.n_nodes, env.layout.n_regimes
    assert (d, regimes) == (20, 21)
    for i, j in itertools.permutations(range(d), 2):
        assert env.decode(env.encode_flat(Correlation(i, j, None))) == Correlation(i, j, None)
    for regime in [None, *range(regimes - 1)]:
        typed = PartialCorrelation(1, 0, (2, 19), regime)
        assert env.decode(env.encode_flat(typed)) == typed
    for var in range(d):
        assert env.decode(env.encode_flat(Intervene(var, 2.5))) == Intervene(var, 2.5)


def test_a_value_that_is_no_float32_multiple_of_the_scale_decodes_within_its_rounding() -> None:
    env = wrapped("ACDB-L1-v0")
    decoded = env.decode(env.encode_flat(Intervene(1, 0.5)))  # 0.05 is no float32 number
    assert isinstance(decoded, Intervene) and decoded.value != 0.5
    assert abs(decoded.value - 0.5) <= 10.0 * 2.0**-24


def test_a_decoded_action_steps_the_env_as_the_typed_action_does() -> None:
    flat_env = wrapped("ACDB-L1-v0", tools="stats")
    plain = gym.make("ACDB-L1-v0", tools="stats")
    flat_env.reset(seed=3)
    plain.reset(seed=3)
    for typed in (Intervene(1, 2.5), PartialCorrelation(0, 2, (3,), 0), Submit(GRAPH)):
        got = flat_env.step(flat_env.encode_flat(typed))
        want = plain.step(actions.encode(typed, n_nodes=D))
        assert got[1:4] == want[1:4]
        assert all(np.array_equal(got[0][k], want[0][k]) for k in want[0])  # type: ignore[literal-required]
        assert data_equivalence(got[4], want[4], exact=True)
        assert "error" not in flat_env.unwrapped.details()
    assert got[2], "a valid submission terminates the episode"


def test_the_variant_kinds_split_the_kind_entry_and_all_kinds_keep_the_oneof_order() -> None:
    raw = wrapped("ACDB-L1-v0")
    assert raw.layout.kinds == (0, 4)  # intervene and submit_graph
    flat = np.zeros(raw.action_space.shape, np.float32)
    flat[KIND] = -0.2
    assert raw.action(flat)[0] == actions.ActionKind.INTERVENE
    flat[KIND] = 0.2
    assert raw.action(flat)[0] == actions.ActionKind.SUBMIT_GRAPH
    assert wrapped("ACDB-L1-v0", kinds="all").layout.kinds == (0, 1, 2, 3, 4)
    assert wrapped("ACDB-L1-v0", panel="observational").layout.kinds == (4,)
    with pytest.raises(ValueError, match="'correlation' is not in this layout's kinds"):
        raw.encode_flat(Correlation(0, 1, None))


def test_entries_outside_the_box_are_clipped() -> None:
    env = wrapped("ACDB-L1-v0")
    flat = env.encode_flat(Intervene(3, 10.0))
    flat[VALUE] = 7.0
    assert env.decode(flat) == Intervene(3, 10.0)
    flat[KIND] = 50.0
    assert isinstance(env.decode(flat), Submit)


def test_pair_entries_decode_to_each_edge_state() -> None:
    env = wrapped("ACDB-L1-v0")
    flat = env.encode_flat(Submit(PDAG.empty(D)))
    first_pair = 5 + D  # the pair (0, 1)
    for entry, edges in [
        (-0.9, ([], [])),
        (-0.3, ([(0, 1)], [])),
        (0.3, ([(1, 0)], [])),
        (0.9, ([], [(0, 1)])),
    ]:
        flat[first_pair] = entry
        assert env.decode(flat) == Submit(
            PDAG.from_edges(D, directed=edges[0], undirected=edges[1])
        )


def test_an_invalid_decoded_action_costs_a_step_and_sets_the_error() -> None:
    env = wrapped("ACDB-L1-v0", kinds="all")  # tools="raw": the statistics tools are refused
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(env.encode_flat(Correlation(0, 1, None)))
    assert "not available" in env.unwrapped.details()["error"] and info["steps"] == 1
    assert (reward, terminated, truncated) == (0.0, False, False)
    cyclic = env.encode_flat(Submit(PDAG.empty(D)))
    rows, columns = env.layout.pairs
    pair = {(int(r), int(c)): k for k, (r, c) in enumerate(zip(rows, columns, strict=True))}
    for (i, j), entry in {(0, 1): -0.3, (1, 2): -0.3, (0, 2): 0.3}.items():  # 0->1->2->0
        cyclic[5 + D + pair[i, j]] = entry
    _, _, terminated, _, info = env.step(cyclic)
    assert "cycle" in env.unwrapped.details()["error"]
    assert not terminated and info["invalid_actions"] == 2


def test_a_random_flat_rollout_runs_to_its_end() -> None:
    for env_id, kwargs in [("ACDB-L1-v0", {}), ("ACDB-L1-v0", {"tools": "stats"})]:
        env = wrapped(env_id, kinds="all", **kwargs)
        env.action_space.seed(0)
        observation, _ = env.reset(seed=0)
        terminated = truncated = False
        steps = 0
        while not (terminated or truncated):
            observation, _, terminated, truncated, info = env.step(env.action_space.sample())
            assert env.observation_space.contains(observation)
            steps += 1
        assert steps <= env.unwrapped.max_steps  # type: ignore[attr-defined]
        assert info["scored"] and info["steps"] == steps


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Intervene(0, 10.5), r"value must be in \[-10, 10\]"),
        (Intervene(0, 1.0, PDAG.empty(D)), "no stated hypothesis"),
        (Submit(PDAG.empty(3)), "graph must have 6 nodes, got 3"),
    ],
)
def test_actions_the_layout_cannot_express_are_refused(
    action: actions.Action, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        wrapped("ACDB-L1-v0").encode_flat(action)


def test_bad_flat_vectors_and_arguments_are_refused(stats_env: FlatActions) -> None:
    size = stats_env.layout.size
    with pytest.raises(ValueError, match=rf"shape \({size},\), got float32 \(3,\)"):
        stats_env.action(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="must be finite"):
        stats_env.action(np.full(size, np.nan, np.float32))
    with pytest.raises(ValueError, match="regime must be in"):
        stats_env.encode_flat(Correlation(0, 1, 6))
    with pytest.raises(ValueError, match=r"i must be in \[0, 6\), got 6"):
        stats_env.encode_flat(Correlation(6, 1, None))
    with pytest.raises(TypeError, match="wraps an ACDBEnv, got InterventionDesignEnv"):
        FlatActions(gym.make("ACDB-Design-L1-v0"))
    with pytest.raises(ValueError, match="kinds must be 'variant' or 'all'"):
        FlatActions(gym.make("ACDB-L1-v0"), kinds="some")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"value_scale must be finite and positive, got 0\.0"):
        FlatActions(gym.make("ACDB-L1-v0"), value_scale=0)


def test_make_flat_flattens_the_observation_and_keeps_its_numbers() -> None:
    env = make_flat("ACDB-L1-v0")
    plain = gym.make("ACDB-L1-v0")
    observation, _ = env.reset(seed=4)
    expected, _ = plain.reset(seed=4)
    assert observation.shape == env.observation_space.shape == (3017,)
    assert np.array_equal(observation, gym.spaces.flatten(plain.observation_space, expected))
    assert env.get_wrapper_attr("layout").kinds == (0, 4)
    kept = make_flat("ACDB-L1-v0", flatten_observation=False)
    assert isinstance(kept, FlatActions) and kept.observation_space == plain.observation_space


@pytest.mark.parametrize("flatten_observation", [True, False])
def test_gym_make_of_the_flat_env_spec_rebuilds_it(flatten_observation: bool) -> None:
    env = make_flat(
        "ACDB-L1-v0",
        kinds="all",
        value_scale=5.0,
        tools="stats",
        flatten_observation=flatten_observation,
    )
    assert env.spec is not None
    names = [wrapper.name for wrapper in env.spec.additional_wrappers]
    assert names == ["FlatActions", "FlatObservation"][: 1 + flatten_observation]
    rebuilt = gym.make(env.spec)
    flat = rebuilt
    while not isinstance(flat, FlatActions):
        flat = flat.env
    assert flat.layout == FlatActions(gym.make("ACDB-L1-v0"), kinds="all", value_scale=5.0).layout
    assert rebuilt.unwrapped.tools == "stats"
    assert rebuilt.observation_space == env.observation_space
    assert rebuilt.action_space == env.action_space
    first, _ = env.reset(seed=2)
    second, _ = rebuilt.reset(seed=2)
    action = env.action_space.sample()
    first_step, second_step = env.step(action), rebuilt.step(action)
    for a, b in ((first, second), (first_step[0], second_step[0])):
        assert data_equivalence(a, b)
