"""ACDBEnv: determinism, a known-answer world, invalid actions, truncation, rewards, tools, hiding."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.ladders.shipped import LADDERS, LevelSpec
from acdb_gym.core.scoring import score
from acdb_gym.core.stats import fisher_z_test, partial_correlation
from acdb_gym.core.worlds.instance import Instance, generate_instance
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.episode_rules import UNSCORED
from acdb_gym.testing import SCORE_FIELDS, find_hidden_leak

Action = tuple[int, dict[str, Any]]

INFO_KEYS = {
    "n_nodes",
    "budget",
    "latent",
    "real_data",
    "nonlinear",
    "interventions_used",
    "steps",
    "invalid_actions",
    "scored",
    "score",
    "truncated_empty_submission",
    "instance_seed",
}
"""The keys of every ``info``, from reset to the end (numbers only; DESIGN §8, "info")."""

TWO_NODES = LevelSpec(d=2, k=1, n_obs=200, n_int=100, noise_var=1.0, slack=0)
ONE_EDGE_IN_L0 = LevelSpec(d=5, k=1, n_obs=500, n_int=100, noise_var=1.0, slack=0)
"""Fits v0 L0's (d, n_obs, n_int) = (5, 500, 100), so it can be injected with the public API."""


def make(env_id: str = "ACDB-L1-v0", **kwargs: Any) -> gym.Env[Any, Any]:
    return gym.make(env_id, **kwargs)


def unwrapped(env: gym.Env[Any, Any]) -> ACDBEnv:
    base = env.unwrapped
    assert isinstance(base, ACDBEnv)
    return base


def graph_codes(n_nodes: int, marks: dict[tuple[int, int], int]) -> np.ndarray:
    codes = np.zeros((n_nodes, n_nodes), dtype=np.int64)
    for (i, j), code in marks.items():
        codes[i, j] = code
    return codes


def submit_codes(n_nodes: int, marks: dict[tuple[int, int], int]) -> Action:
    return int(actions.ActionKind.SUBMIT_GRAPH), {"graph": graph_codes(n_nodes, marks)}


# --------------------------------------------------------------------------- determinism


def scripted_actions(n_nodes: int) -> list[Action]:
    return [
        actions.intervene(0, 2.0),
        actions.correlation(0, 1),
        actions.correlation(1, 2, regime=0),
        actions.partial_correlation(0, 2, [1], n_nodes=n_nodes),
        actions.independence_test(1, 3, [0, 2], n_nodes=n_nodes, regime=0),
        actions.correlation(4, 4),  # invalid
        actions.intervene(3, -1.5),
        actions.submit(PDAG.from_edges(n_nodes, directed=[(0, 1)], undirected=[(2, 3)])),
    ]


def test_same_seed_gives_identical_trajectories() -> None:
    first, second = make(tools="stats"), make(tools="stats")
    obs_a, info_a = first.reset(seed=123)
    obs_b, info_b = second.reset(seed=123)
    assert all(np.array_equal(obs_a[key], obs_b[key]) for key in obs_a)
    assert data_equivalence(info_a, info_b, exact=True)
    for action in scripted_actions(6):
        obs_a, reward_a, term_a, trunc_a, info_a = first.step(action)
        obs_b, reward_b, term_b, trunc_b, info_b = second.step(action)
        assert obs_a.keys() == obs_b.keys()
        for key in obs_a:
            assert np.array_equal(obs_a[key], obs_b[key]), key
        assert (reward_a, term_a, trunc_a) == (reward_b, term_b, trunc_b)
        assert data_equivalence(info_a, info_b, exact=True)  # the score at the end included
        details_a, details_b = unwrapped(first).details(), unwrapped(second).details()
        assert details_a == details_b  # includes the submitted PDAG at the end
    assert term_a and info_a["scored"] and "submission" in details_a
    # The next unseeded reset continues the same stream in both.
    obs_a, _ = first.reset()
    obs_b, _ = second.reset()
    assert np.array_equal(obs_a["observational"], obs_b["observational"])


def test_different_seeds_give_different_worlds() -> None:
    env = make()
    obs_a, _ = env.reset(seed=1)
    seed_a = unwrapped(env).hidden_instance().seed
    obs_b, _ = env.reset(seed=2)
    assert unwrapped(env).hidden_instance().seed != seed_a
    assert not np.array_equal(obs_a["observational"], obs_b["observational"])


def test_manifest_index_uses_the_preflighted_instance() -> None:
    env = make("ACDB-L2-v0")
    env.reset(options={"manifest_index": 3})
    instance = unwrapped(env).hidden_instance()
    entry = LADDERS["v0"]["L2"].manifest[3]
    assert (instance.seed, instance.digest()) == (entry.seed, entry.digest)


# --------------------------------------------------------------------------- known answers


def orient_by_experiment(
    observation: dict[str, np.ndarray], slot: int, source: int, other: int
) -> PDAG:
    """``source -> other`` when ``do(X_source)`` shifted ``X_other`` by over one sd, else back."""
    observational = observation["observational"][:, other]
    interventional = observation["interventional"][slot][:, other]
    shift = abs(interventional.mean() - observational.mean()) / observational.std(ddof=1)
    edge = (source, other) if shift > 1.0 else (other, source)
    return PDAG.from_edges(observation["observational"].shape[1], directed=[edge])


def push_value(observation: dict[str, np.ndarray], var: int) -> float:
    column = observation["observational"][:, var]
    return float(column.mean() + 5.0 * column.std(ddof=1))


def test_two_node_world_one_intervention_recovers_the_edge(
    make_custom_env: Callable[..., ACDBEnv],
) -> None:
    env = make_custom_env(TWO_NODES)
    assert env.max_interventions == 1
    directions = set()
    for seed in range(8):
        instance = generate_instance(TWO_NODES, seed)
        observation, _ = env.reset(options={"instance": instance})
        assert (len(instance.i_star), instance.budget) == (1, 1)
        observation, *_ = env.step(actions.intervene(0, push_value(observation, 0)))
        guess = orient_by_experiment(observation, 0, source=0, other=1)
        _, reward, terminated, truncated, _info = env.step(actions.submit(guess))
        assert (terminated, truncated) == (True, False)
        assert reward == 1.0
        assert unwrapped(env).details()["score"]["directed_f1"] == 1.0
        assert unwrapped(env).details()["score"]["efficiency"] == 1.0
        assert unwrapped(env).details()["score"]["shd"] == 0
        directions.add(instance.dag.edges()[0])
    assert directions == {(0, 1), (1, 0)}, "the seeds should cover both orientations"


def test_one_edge_world_injected_into_a_registered_level() -> None:
    env = make("ACDB-L0-v0")
    for seed in range(4):
        instance = generate_instance(ONE_EDGE_IN_L0, seed)
        observation, _ = env.reset(options={"instance": instance})
        # The only dependent pair is the edge; an experiment on one end orients it.
        corr = np.abs(np.corrcoef(observation["observational"], rowvar=False))
        np.fill_diagonal(corr, 0.0)
        a, b = (int(v) for v in np.unravel_index(np.argmax(corr), corr.shape))
        observation, *_ = env.step(actions.intervene(a, push_value(observation, a)))
        guess = orient_by_experiment(observation, 0, source=a, other=b)
        _, reward, terminated, _, info = env.step(actions.submit(guess))
        assert terminated
        assert reward == unwrapped(env).details()["score"]["directed_f1"] == 1.0
        assert unwrapped(env).details()["score"]["efficiency"] == 1.0
        assert info["instance_seed"] == seed


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # (directed_f1, neg_shd, skeleton_f1) for the world with the single edge a -> b
        ("correct", (1.0, 0.0, 1.0)),
        ("reversed", (0.0, -1.0, 1.0)),
        ("undirected", (0.0, -1.0, 1.0)),
        ("empty", (0.0, -1.0, 0.0)),
        ("correct plus an extra edge", (2 / 3, -1.0, 2 / 3)),
    ],
)
def test_reward_options_give_hand_computed_numbers(
    name: str, expected: tuple[float, float, float]
) -> None:
    instance = generate_instance(ONE_EDGE_IN_L0, 0)
    ((a, b),) = instance.dag.edges()
    c = next(v for v in range(5) if v not in (a, b))
    graphs = {
        "correct": PDAG.from_edges(5, directed=[(a, b)]),
        "reversed": PDAG.from_edges(5, directed=[(b, a)]),
        "undirected": PDAG.from_edges(5, undirected=[(a, b)]),
        "empty": PDAG.empty(5),
        "correct plus an extra edge": PDAG.from_edges(5, directed=[(a, b), (c, b)]),
    }
    for reward_name, value in zip(["directed_f1", "neg_shd", "skeleton_f1"], expected, strict=True):
        env = make("ACDB-L0-v0", reward=reward_name)
        env.reset(options={"instance": instance})
        _, reward, terminated, _, _info = env.step(actions.submit(graphs[name]))
        assert terminated
        assert reward == pytest.approx(value, abs=1e-12), reward_name
        reference = score(instance, graphs[name], interventions_used=0)
        assert unwrapped(env).details()["score"] == reference.to_dict()


def test_injected_instance_must_fit_the_level() -> None:
    env = make("ACDB-L1-v0")
    with pytest.raises(ValueError, match="does not fit level L1"):
        env.reset(options={"instance": LADDERS["v0"]["L0"].instance(0)})
    with pytest.raises(ValueError, match="must be an Instance"):
        env.reset(options={"instance": "not an instance"})
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"instance_seed": 3})


# --------------------------------------------------------------------------- invalid actions


def spend_budget(env: gym.Env[Any, Any]) -> dict[str, np.ndarray]:
    observation: dict[str, np.ndarray] = {}
    while unwrapped(env).session.budget_remaining > 0:
        observation, *_ = env.step(actions.intervene(0, 1.0))
    return observation


def one_experiment(env: gym.Env[Any, Any]) -> dict[str, np.ndarray]:
    observation, *_ = env.step(actions.intervene(2, 1.0))
    return observation


@dataclass(frozen=True)
class InvalidCase:
    name: str
    action: Action
    message: str
    env_kwargs: tuple[tuple[str, str], ...] = (("tools", "stats"),)
    setup: Callable[[gym.Env[Any, Any]], dict[str, np.ndarray]] | None = None
    """Steps to take first; returns the last observation."""


D = 6  # v0 L1
INVALID_CASES = [
    InvalidCase(
        "intervene in the observational panel",
        actions.intervene(0, 1.0),
        "not available in the observational panel",
        (("panel", "observational"),),
    ),
    InvalidCase(
        "correlation with tools=raw",
        actions.correlation(0, 1),
        "Correlation is not available with tools='raw'",
        (("tools", "raw"),),
    ),
    InvalidCase(
        "partial correlation with tools=raw",
        actions.partial_correlation(0, 1, [2], n_nodes=D),
        "PartialCorrelation is not available with tools='raw'",
        (("tools", "raw"),),
    ),
    InvalidCase(
        "independence test with tools=raw",
        actions.independence_test(0, 1, n_nodes=D),
        "IndependenceTest is not available with tools='raw'",
        (("tools", "raw"),),
    ),
    InvalidCase(
        "budget spent",
        actions.intervene(3, 1.0),
        "budget of",
        setup=spend_budget,
    ),
    InvalidCase("i == j", actions.correlation(2, 2), "i and j must differ"),
    InvalidCase(
        "i in its own conditioning set",
        actions.partial_correlation(0, 1, [0, 3], n_nodes=D),
        "cond must not contain i or j, got X0",
    ),
    InvalidCase(
        "j in its own conditioning set",
        actions.independence_test(0, 1, [1], n_nodes=D),
        "cond must not contain i or j, got X1",
    ),
    InvalidCase(
        "regime with no experiment",
        actions.correlation(0, 1, regime=0),
        "regime must be an experiment index in [0, 0), got 0",
    ),
    InvalidCase(
        "regime beyond the experiments",
        actions.independence_test(0, 1, n_nodes=D, regime=1),
        "regime must be an experiment index in [0, 1), got 1",
        setup=one_experiment,
    ),
    InvalidCase(
        "one-sided undirected code",
        submit_codes(D, {(0, 1): 2}),
        "missing mirror of X0 - X1",
    ),
    InvalidCase(
        "directed one way, undirected the other",
        submit_codes(D, {(3, 4): 1, (4, 3): 2}),
        "missing mirror of X4 - X3",
    ),
    InvalidCase(
        "directed both ways",
        submit_codes(D, {(1, 4): 1, (4, 1): 1}),
        "pairs directed both ways: X1 <-> X4",
    ),
    InvalidCase(
        "directed self-loop",
        submit_codes(D, {(2, 2): 1}),
        "self-loops are not allowed, got them at ['X2']",
    ),
    InvalidCase(
        "undirected self-loop",
        submit_codes(D, {(5, 5): 2}),
        "self-loops are not allowed, got them at ['X5']",
    ),
    InvalidCase(
        "directed cycle",
        submit_codes(D, {(0, 1): 1, (1, 2): 1, (2, 0): 1}),
        "directed cycle",
    ),
]


@pytest.mark.parametrize("case", INVALID_CASES, ids=[case.name for case in INVALID_CASES])
def test_invalid_action_costs_a_step_and_changes_nothing_else(case: InvalidCase) -> None:
    env = make("ACDB-L1-v0", **dict(case.env_kwargs))
    observation, _ = env.reset(options={"manifest_index": 1})
    if case.setup is not None:
        observation = case.setup(env)
    session = unwrapped(env).session
    before = (session.budget_remaining, session.interventions_used, session.tool_calls)
    invalid_before = unwrapped(env).invalid_actions
    state = observation

    observation, reward, terminated, truncated, info = env.step(case.action)

    assert case.message in unwrapped(env).details()["error"]
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert not info["scored"]
    assert set(info) == INFO_KEYS
    assert info["invalid_actions"] == invalid_before + 1
    assert observation["steps_remaining"] == state["steps_remaining"] - 1
    assert observation["tool_result"][2] == 0.0
    for key in (
        "observational",
        "interventional",
        "targets",
        "intervention_values",
        "budget_remaining",
    ):
        assert np.array_equal(observation[key], state[key]), key
    assert (session.budget_remaining, session.interventions_used, session.tool_calls) == before
    assert not session.sealed
    # The episode goes on: a valid submission still ends it.
    _, _, terminated, _, info = env.step(actions.submit(PDAG.empty(D)))
    assert terminated and "error" not in unwrapped(env).details()


def test_cycle_error_names_every_edge_of_the_cycle() -> None:
    env = make()
    env.reset(seed=0)
    env.step(submit_codes(D, {(0, 1): 1, (1, 2): 1, (2, 0): 1}))
    for edge in ("X0 -> X1", "X1 -> X2", "X2 -> X0"):
        assert edge in unwrapped(env).details()["error"]


@pytest.mark.parametrize(
    ("what", "action"),
    [
        ("NaN value", actions.intervene(0, float("nan"))),
        ("infinite value", actions.intervene(0, float("inf"))),
        ("value beyond the bound", actions.intervene(0, 2 * actions.VALUE_BOUND)),
        ("var out of range", actions.intervene(D, 1.0)),
        ("node out of range", actions.correlation(0, D)),
        ("regime out of range", actions.correlation(0, 1, regime=D + 5)),
        ("unknown kind", (5, {"var": np.int64(0), "value": np.asarray(0.0)})),
        ("graph code 3", submit_codes(D, {(0, 1): 3})),
        ("graph of the wrong size", actions.submit(PDAG.empty(D + 1))),
        ("missing payload key", (0, {"var": np.int64(0)})),
        ("not a tuple", [0, {"var": np.int64(0), "value": np.asarray(0.0)}]),
    ],
)
def test_action_outside_the_space_raises_and_changes_nothing(what: str, action: Any) -> None:
    env = make(tools="stats")
    observation, _ = env.reset(seed=5)
    with pytest.raises(ValueError, match="not an element of the action space"):
        env.step(action)
    assert unwrapped(env).steps_taken == 0
    assert unwrapped(env).invalid_actions == 0
    observation, *_ = env.step(actions.intervene(1, 1.0))
    assert observation["steps_remaining"] == 31
    assert observation["targets"][0] == 1


@pytest.mark.parametrize("end", ["submit", "truncation"])
def test_step_after_the_end_reports_an_error_and_changes_nothing(end: str) -> None:
    env = make(max_steps=3)
    env.reset(seed=11)
    env.step(actions.intervene(2, 1.5))
    if end == "submit":
        final, *_, final_info = env.step(actions.submit(PDAG.empty(D)))
    else:
        env.step(actions.correlation(0, 1))
        final, *_, final_info = env.step(actions.correlation(0, 1))
        assert final_info["truncated_empty_submission"]
    session = unwrapped(env).session
    report = session.report
    for action in (actions.intervene(3, 1.0), actions.submit(PDAG.empty(D))):
        observation, reward, terminated, truncated, info = env.step(action)
        assert "ended" in unwrapped(env).details()["error"]
        # The end is reported again the way it happened: terminated after a submission,
        # truncated after the step limit.
        assert reward == 0.0 and (terminated, truncated) == (end == "submit", end != "submit")
        assert data_equivalence(info, final_info, exact=True)
        for key in final:
            assert np.array_equal(observation[key], final[key]), key
    assert session.interventions_used == 1
    assert session.report is report


def test_step_before_reset_raises() -> None:
    env = ACDBEnv("L1")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(actions.intervene(0, 1.0))
    with pytest.raises(RuntimeError, match="reset"):
        env.hidden_instance()


# --------------------------------------------------------------------------- truncation


@pytest.mark.parametrize(
    ("tools", "max_steps", "limit"),
    [("raw", None, 16), ("stats", None, 32), ("raw", 4, 4), ("stats", 1, 1)],
)
def test_truncation_at_the_step_limit_scores_the_empty_graph(
    tools: str, max_steps: int | None, limit: int
) -> None:
    env = make(tools=tools, max_steps=max_steps)
    observation, _ = env.reset(options={"manifest_index": 2})
    assert observation["steps_remaining"] == limit
    instance = unwrapped(env).hidden_instance()
    for step in range(1, limit + 1):
        action = actions.intervene(1, 0.5) if step == 1 else actions.correlation(0, 1)
        observation, reward, terminated, truncated, info = env.step(action)
        if step < limit:
            assert not (terminated or truncated)
            assert not info["scored"] and reward == 0.0
    assert (terminated, truncated) == (False, True)
    assert observation["steps_remaining"] == 0
    assert set(unwrapped(env).details()["score"]) == set(SCORE_FIELDS)
    report = unwrapped(env).details()["score"]
    assert np.isnan(report["anytime_f1"])  # no graph stated before the experiment
    assert info["score"].tolist() == [
        UNSCORED if np.isnan(report[f]) else float(report[f]) for f in SCORE_FIELDS
    ]
    used = unwrapped(env).session.interventions_used
    expected = score(instance, PDAG.empty(D), interventions_used=used, targets=[1] * used)
    assert unwrapped(env).details()["score"] == expected.to_dict()
    assert info["truncated_empty_submission"] is True
    assert unwrapped(env).details()["submission"] == PDAG.empty(D)
    assert reward == 0.0  # directed F1 of the empty graph against a non-empty truth


@pytest.mark.parametrize(
    ("reward_name", "expected"),
    [
        ("directed_f1", lambda k: 0.0),
        ("neg_shd", lambda k: -float(k)),
        ("skeleton_f1", lambda k: 0.0),
    ],
)
def test_truncation_reward_options(reward_name: str, expected: Callable[[int], float]) -> None:
    env = make(reward=reward_name, max_steps=1)
    env.reset(options={"manifest_index": 0})
    k = unwrapped(env).hidden_instance().dag.n_edges
    _, reward, terminated, truncated, _info = env.step(actions.correlation(0, 1))
    assert (terminated, truncated) == (False, True)
    assert reward == expected(k)
    assert (
        unwrapped(env).details()["score"]["shd"]
        == unwrapped(env).details()["score"]["shd_missing"]
        == k
    )


def test_valid_submission_on_the_last_step_terminates() -> None:
    env = make(max_steps=1)
    env.reset(options={"manifest_index": 0})
    dag = unwrapped(env).hidden_instance().dag
    _, reward, terminated, truncated, info = env.step(actions.submit(dag))
    assert (terminated, truncated) == (True, False)
    assert info["truncated_empty_submission"] is False
    assert reward == 1.0 and unwrapped(env).details()["score"]["shd"] == 0


# --------------------------------------------------------------------------- statistics tools


def regression_residual_correlation(data: np.ndarray, i: int, j: int, cond: list[int]) -> float:
    design = np.column_stack([np.ones(len(data)), data[:, cond]])
    res_i = data[:, i] - design @ np.linalg.lstsq(design, data[:, i], rcond=None)[0]
    res_j = data[:, j] - design @ np.linalg.lstsq(design, data[:, j], rcond=None)[0]
    return float(np.corrcoef(res_i, res_j)[0, 1])


def test_tool_results_match_independent_computations() -> None:
    env = make(tools="stats")
    observation, _ = env.reset(options={"manifest_index": 0})
    data = observation["observational"]

    observation, *_ = env.step(actions.correlation(1, 4))
    statistic, p_value, valid = observation["tool_result"]
    assert statistic == pytest.approx(np.corrcoef(data[:, 1], data[:, 4])[0, 1], abs=1e-12)
    assert p_value == pytest.approx(fisher_z_test(data, 1, 4).p_value, rel=1e-9, abs=1e-300)
    assert valid == 1.0

    observation, *_ = env.step(actions.partial_correlation(0, 3, [1, 2], n_nodes=D))
    statistic, p_value, valid = observation["tool_result"]
    assert statistic == pytest.approx(
        regression_residual_correlation(data, 0, 3, [1, 2]), abs=1e-10
    )
    assert p_value == pytest.approx(fisher_z_test(data, 0, 3, (1, 2)).p_value, rel=1e-9, abs=1e-300)

    observation, *_ = env.step(actions.independence_test(0, 5, [2], n_nodes=D))
    test = fisher_z_test(data, 0, 5, (2,))
    assert observation["tool_result"][0] == pytest.approx(test.statistic, rel=1e-12)
    assert observation["tool_result"][1] == pytest.approx(test.p_value, rel=1e-9, abs=1e-300)


def test_regime_k_uses_the_kth_experiment() -> None:
    env = make(tools="stats")
    env.reset(options={"manifest_index": 0})
    env.step(actions.intervene(2, 3.0))
    observation, *_ = env.step(actions.intervene(5, -2.0))
    experiments = unwrapped(env).session.experiments
    for k, target in enumerate((2, 5)):
        assert observation["targets"][k] == target
        assert np.array_equal(observation["interventional"][k], experiments[k].samples)
        assert np.all(
            observation["interventional"][k][:, target] == observation["intervention_values"][k]
        )
    results = []
    for k in (0, 1):
        samples = observation["interventional"][k]
        tool_obs, *_ = env.step(actions.correlation(0, 1, regime=k))
        assert tool_obs["tool_result"][0] == pytest.approx(
            np.corrcoef(samples[:, 0], samples[:, 1])[0, 1], abs=1e-12
        )
        tool_obs, *_ = env.step(actions.partial_correlation(0, 1, [3], n_nodes=D, regime=k))
        assert tool_obs["tool_result"][0] == pytest.approx(
            partial_correlation(samples, 0, 1, (3,)), abs=1e-12
        )
        tool_obs, *_ = env.step(actions.independence_test(0, 4, [1], n_nodes=D, regime=k))
        test = fisher_z_test(samples, 0, 4, (1,))
        assert tuple(tool_obs["tool_result"][:2]) == pytest.approx((test.statistic, test.p_value))
        results.append(test.statistic)
    assert results[0] != results[1]
    # The target is constant in its own experiment: a clear error, not NaN.
    tool_obs, *_ = env.step(actions.correlation(2, 0, regime=0))
    assert "X2 is constant" in unwrapped(env).details()["error"]
    assert tool_obs["tool_result"][2] == 0.0


# --------------------------------------------------------------------------- information hiding


def episode_views(env: gym.Env[Any, Any], plan: list[Action]) -> tuple[list[Any], list[Any], Any]:
    """What the agent saw before the end (observations, infos and renders) and the final step."""
    observation, info = env.reset(options={"manifest_index": 0})
    seen, texts = [observation, info, unwrapped(env).details()], [env.render()]
    for action in plan:
        observation, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return seen, texts, (observation, reward, info, env.render())
        seen += [observation, info, unwrapped(env).details()]
        texts.append(env.render())
        assert set(info) == INFO_KEYS
    raise AssertionError("the plan did not end the episode")


def hiding_plan(instance: Instance) -> list[Action]:
    d = instance.n_nodes
    return [
        actions.correlation(0, 1),
        actions.intervene(2, 1.25),
        actions.partial_correlation(0, 3, [1], n_nodes=d),
        actions.independence_test(1, 4, [0, 2], n_nodes=d, regime=0),
        submit_codes(d, {(0, 1): 1, (1, 0): 1}),  # invalid, with an error message
        actions.correlation(2, 2),
        actions.intervene(0, -3.0),
        submit_codes(d, {(0, 1): 1, (1, 2): 1, (2, 0): 1}),
        actions.submit(PDAG.empty(d)),
    ]


@pytest.mark.parametrize("env_id", ["ACDB-L1-v0", "ACDB-L5-v0", "ACDB-Calibrated-L0-v1"])
def test_nothing_before_the_end_reveals_the_graph_or_weights(env_id: str) -> None:
    env = make(env_id, tools="stats", render_mode="ansi")
    env.reset(options={"manifest_index": 0})
    instance = unwrapped(env).hidden_instance()
    seen, texts, (final_obs, _, final_info, final_text) = episode_views(env, hiding_plan(instance))
    adjacency = instance.dag.adjacency
    weights = instance.weights[adjacency]
    edge_list = ", ".join(f"X{i}->X{j}" for i, j in instance.dag.edges())
    text = "\n".join(texts + [repr(item) for item in seen if isinstance(item, dict)])
    assert edge_list not in text
    for weight in weights:
        assert f"{weight:.4f}" not in text and f"{abs(weight):.4f}" not in text
    for observation in seen[::3]:
        for value in observation.values():
            assert not (value.shape == adjacency.shape and np.array_equal(value != 0, adjacency))
            assert not np.isin(value, weights).any()
    for item in seen + texts:
        assert find_hidden_leak(item, instance) is None
    # Positive control: the same searches find the truth once the episode has ended.
    assert edge_list in final_text
    assert find_hidden_leak(final_text, instance) is not None
    assert final_info["scored"] and find_hidden_leak(final_obs, instance) is None


def test_observation_carries_the_session_data() -> None:
    env = make()
    observation, info = env.reset(options={"manifest_index": 4})
    base = unwrapped(env)
    instance = base.hidden_instance()
    assert np.array_equal(observation["observational"], instance.d_obs)
    assert observation["budget_remaining"] == instance.budget == info["budget"]
    assert np.all(observation["targets"] == D)
    assert not observation["interventional"].any() and not observation["intervention_values"].any()
    observation, *_ = env.step(actions.intervene(4, -2.5))
    assert observation["budget_remaining"] == instance.budget - 1
    assert (observation["targets"][0], observation["intervention_values"][0]) == (4, -2.5)
    assert np.all(observation["targets"][1:] == D)
    assert not observation["interventional"][1:].any()


def test_observational_panel_hides_the_budget() -> None:
    env = make(panel="observational")
    observation, info = env.reset(options={"manifest_index": 0})
    assert observation["budget_remaining"] == 0 and info["budget"] == 0
    _, _, _, _, info = env.step(actions.submit(PDAG.empty(D)))
    assert (
        unwrapped(env).details()["score"]["interventions_used"] == 0
        and unwrapped(env).details()["score"]["efficiency"] == 1.0
    )


def test_kept_observations_stay_true_snapshots() -> None:
    """Every observation keeps what it showed when it was returned, through later steps of the
    episode and the next reset, and no two observations share memory: each is the caller's own
    copy, writable except the read-only interventional block."""
    env = make(tools="stats")
    kept: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def keep(observation: dict[str, Any]) -> None:
        kept.append((observation, {key: array.copy() for key, array in observation.items()}))

    observation, _ = env.reset(seed=3)
    keep(observation)
    script = [
        actions.intervene(0, 1.0),
        actions.correlation(0, 1),
        actions.intervene(2, -1.5),
        actions.correlation(0, 0),  # invalid: same node twice
        actions.intervene(3, 0.5),
        actions.submit(PDAG.empty(D)),
    ]
    for action in script:
        observation, *_ = env.step(action)
        keep(observation)
    keep(env.reset(seed=4)[0])
    env.step(actions.intervene(1, 2.0))
    for index, (observation, snapshot) in enumerate(kept):
        for key, array in observation.items():
            np.testing.assert_array_equal(array, snapshot[key], err_msg=f"step {index} {key}")
    for (first, _), (second, _) in itertools.combinations(kept, 2):
        for key in first:
            assert not np.shares_memory(first[key], second[key]), key
    observation = kept[1][0]
    observation["observational"][:] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        observation["interventional"][:] = 7.0
    block = observation["interventional"]
    with pytest.raises(ValueError, match="WRITEABLE"):
        block.flags.writeable = True
    again, *_ = env.step(actions.intervene(2, 1.0))
    assert again["observational"].any()


def test_run_episode_with_an_intervene_then_submit_agent() -> None:
    from acdb_gym.agents.base import run_episode

    class InterveneThenSubmit:
        name = "intervene_then_submit"

        def reset(self, observation: Any, info: Any) -> None:
            self.step = 0

        def act(self, observation: Any, info: Any) -> Any:
            self.step += 1
            if self.step == 1:
                return actions.intervene(0, 2.0)
            return actions.submit(PDAG.empty(D))

    result = run_episode(make(), InterveneThenSubmit(), manifest_index=0)
    assert (result.steps, result.interventions, result.invalid_actions) == (2, 1, 0)
    assert not result.truncated and set(result.score.to_dict()) == set(SCORE_FIELDS)
