"""The stronger active agents (pc_active, gies_active) and pc_active's evidence combination."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import acdb_gym  # noqa: F401  (registers the env ids)
from acdb_gym.agents.base import Agent, run_episode
from acdb_gym.baselines.active import (
    GIESActiveAgent,
    PCActiveAgent,
    ShiftEvidence,
    combine_shift_evidence,
    shift_evidence,
    shift_pvalues,
)
from acdb_gym.core.graphs import PDAG, minimum_intervention_set
from acdb_gym.core.instance import Instance
from acdb_gym.core.ladder import LADDERS
from acdb_gym.core.scm import LinearGaussianSCM
from acdb_gym.discovery import distribution_shift_pvalue, greedy_interventional_search, pc_cpdag
from acdb_gym.envs import actions

AGENTS = [PCActiveAgent, GIESActiveAgent]


def tiny_world(edges: list[tuple[int, int]], seed: int, *, budget: int = 2) -> Instance:
    """A unit-weight, unit-noise SCM on 5 nodes with the shape of v0 L0 (500 + 100 rows)."""
    spec = LADDERS["v0"]["L0"].spec
    weights = np.zeros((spec.d, spec.d))
    for i, j in edges:
        weights[i, j] = 1.0
    scm = LinearGaussianSCM(weights, np.ones(spec.d))
    d_obs = scm.sample(spec.n_obs, np.random.default_rng(seed))
    d_obs.flags.writeable = False
    dag = scm.dag
    return Instance(spec, seed, dag, scm, d_obs, minimum_intervention_set(dag), budget, 0.5, 1)


class RecordingEnv(gym.Wrapper[Any, Any, Any, Any]):
    """Records every action and checks it is an element of the action space."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.actions: list[Any] = []

    def step(self, action: Any) -> Any:
        assert self.env.action_space.contains(action), action
        self.actions.append(action)
        return self.env.step(action)


# --------------------------------------------------------------------------- tiny worlds

CHAIN = [(0, 1), (1, 2)]
COLLIDER = [(0, 2), (1, 2)]


@pytest.mark.parametrize("agent_class", AGENTS)
@pytest.mark.parametrize(("edges", "seeds"), [(CHAIN, (1, 2, 3)), (COLLIDER, (0, 1, 2))])
def test_agents_recover_three_node_worlds(
    agent_class: type[Agent], edges: list[tuple[int, int]], seeds: tuple[int, ...]
) -> None:
    # X3 and X4 are isolated. (For pc_active the seeds avoid PC's occasional 5%-level false
    # edge between independent nodes; gies_active recovers every seed tried.)
    env = gym.make("ACDB-L0-v0")
    for seed in seeds:
        result = run_episode(env, agent_class(), instance=tiny_world(edges, seed))
        assert result.score["shd"] == 0, (seed, result.trajectory[-1].action)
        assert result.score["directed_f1"] == 1.0


def test_the_chain_needs_an_experiment_and_one_suffices() -> None:
    env = gym.make("ACDB-L0-v0")
    instance = tiny_world(CHAIN, 2, budget=1)
    for agent in (PCActiveAgent(), GIESActiveAgent()):
        result = run_episode(env, agent, instance=instance)
        assert result.interventions == 1 and result.score["shd"] == 0
        assert agent.targets in ((0,), (1,), (2,))


# --------------------------------------------------------------------------- protocol


@pytest.mark.parametrize("agent_class", AGENTS)
@pytest.mark.parametrize(("ladder", "level"), [("v0", "L2"), ("v0", "L5"), ("v1", "L4")])
def test_agents_stay_within_budget_and_act_only_through_step(
    agent_class: type[Agent], ladder: str, level: str
) -> None:
    env = RecordingEnv(gym.make(LADDERS[ladder][level].env_id))
    for index in (0, 1):
        instance = LADDERS[ladder][level].instance(index)
        result = run_episode(env, agent_class(), manifest_index=index)
        assert result.interventions <= instance.budget
        assert result.invalid_actions == 0 and not result.truncated
        assert result.steps == result.interventions + 1
        kinds = [actions.decode(a, n_nodes=instance.n_nodes) for a in env.actions[-result.steps :]]
        assert all(isinstance(k, actions.Intervene) for k in kinds[:-1])
        assert isinstance(kinds[-1], actions.Submit)
        targets = [k.var for k in kinds[:-1] if isinstance(k, actions.Intervene)]
        assert len(set(targets)) == len(targets)


@pytest.mark.parametrize("agent_class", AGENTS)
def test_agents_are_deterministic(agent_class: type[Agent]) -> None:
    env = gym.make("ACDB-L2-v1")
    first = run_episode(env, agent_class(), manifest_index=3)
    second = run_episode(env, agent_class(), manifest_index=3)
    assert first.trajectory == second.trajectory and first.score == second.score


def test_agents_keep_the_last_step_for_the_submission() -> None:
    env = gym.make("ACDB-L0-v0", max_steps=2)
    for agent in (PCActiveAgent(), GIESActiveAgent()):
        result = run_episode(env, agent, manifest_index=0)
        assert not result.truncated and result.interventions == 1


def test_observational_panel_submits_the_observational_estimate() -> None:
    env = gym.make("ACDB-L1-v0", panel="observational")
    instance = LADDERS["v0"]["L1"].instance(2)
    pc = PCActiveAgent()
    result = run_episode(env, pc, manifest_index=2)
    assert result.interventions == 0 and pc.graph == pc_cpdag(instance.d_obs)
    gies = GIESActiveAgent()
    result = run_episode(env, gies, manifest_index=2)
    expected = greedy_interventional_search(instance.d_obs, [], penalty=2.0)
    assert result.interventions == 0 and gies.graph == expected.essential_graph


def test_stop_rule_submits_once_nothing_is_undirected() -> None:
    env = gym.make("ACDB-L0-v0")
    instance = tiny_world(CHAIN, 2, budget=4)
    explore = run_episode(env, GIESActiveAgent(), instance=instance)
    stop = run_episode(env, GIESActiveAgent(leftover="stop"), instance=instance)
    assert stop.interventions == 1 and explore.interventions == 4
    assert stop.score["shd"] == explore.score["shd"] == 0


def test_interventions_scale_with_the_observational_spread() -> None:
    instance = LADDERS["v0"]["L3"].instance(0)
    env = RecordingEnv(gym.make("ACDB-L3-v0"))
    run_episode(env, PCActiveAgent(shift=2.5), manifest_index=0)
    first = actions.decode(env.actions[0], n_nodes=instance.n_nodes)
    assert isinstance(first, actions.Intervene)
    column = instance.d_obs[:, first.var]
    assert first.value == pytest.approx(column.mean() + 2.5 * column.std())


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: PCActiveAgent(shift=0.0), "shift must be finite and non-zero, got 0.0"),
        (lambda: PCActiveAgent(pc_alpha=1.5), r"pc_alpha must be in \(0, 1\), got 1.5"),
        (lambda: PCActiveAgent(alpha=0.1, no_shift_threshold=0.05), "no_shift_threshold"),
        (lambda: GIESActiveAgent(penalty=-1.0), "penalty must be positive and finite, got -1.0"),
        (lambda: GIESActiveAgent(restarts=-1), "restarts must be >= 0"),
        (lambda: GIESActiveAgent(leftover="later"), "leftover must be one of"),  # type: ignore[arg-type]
    ],
)
def test_agents_reject_bad_settings(factory: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


def test_gies_agent_beats_pc_greedy_on_v0_l3() -> None:
    from acdb_gym.baselines import PCGreedyAgent

    env = gym.make("ACDB-L3-v0")
    gies = [run_episode(env, GIESActiveAgent(), manifest_index=i).score for i in range(3)]
    greedy = [run_episode(env, PCGreedyAgent(), manifest_index=i).score for i in range(3)]
    assert np.mean([s["directed_f1"] for s in gies]) > np.mean([s["directed_f1"] for s in greedy])
    assert np.mean([s["shd"] for s in gies]) < np.mean([s["shd"] for s in greedy])


# --------------------------------------------------------------------------- shift evidence


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy on the constant columns
def test_shift_pvalues_match_distribution_shift_pvalue_column_by_column() -> None:
    rng = np.random.default_rng(0)
    observational = rng.normal(size=(60, 5))
    samples = rng.normal(0.4, 1.5, size=(25, 5))
    samples[:, 1] = 3.0  # the intervened column is constant
    observational[:, 4] = samples[:, 4] = 2.0  # constant everywhere, same value
    expected = [distribution_shift_pvalue(observational[:, j], samples[:, j]) for j in range(5)]
    assert shift_pvalues(observational, samples) == pytest.approx(expected, rel=1e-9)


def chain_samples(n: int, rng: np.random.Generator, do0: float | None = None) -> np.ndarray:
    """X0 -> X1 -> X2 and an isolated X3, unit weights and noise."""
    noise = rng.normal(size=(n, 4))
    x0 = noise[:, 0] if do0 is None else np.full(n, do0)
    x1 = x0 + noise[:, 1]
    return np.column_stack([x0, x1, x1 + noise[:, 2], noise[:, 3]])


def test_shift_evidence_separates_children_from_indirect_descendants() -> None:
    rng = np.random.default_rng(1)
    observational, samples = chain_samples(2000, rng), chain_samples(400, rng, do0=4.0)
    evidence = shift_evidence(observational, 0, samples, direct_for=np.ones(4, dtype=np.bool_))
    assert np.isnan(evidence.shift[0]) and np.isnan(evidence.direct[0])
    assert evidence.shift[1] < 1e-6 and evidence.shift[2] < 1e-6 and evidence.shift[3] > 0.01
    assert evidence.direct[1] < 1e-6  # X1 is a child of X0
    assert evidence.direct[2] > 0.01  # X2 shifts only through X1


def test_direct_effect_test_is_calibrated_under_the_null() -> None:
    rng = np.random.default_rng(2)
    p_values = [
        shift_evidence(
            chain_samples(50, rng), 0, chain_samples(20, rng, do0=4.0), direct_for=np.ones(4, bool)
        ).direct[2]
        for _ in range(200)
    ]
    assert 0.01 < np.mean(np.array(p_values) < 0.05) < 0.10


# --------------------------------------------------------------------------- combination


def evidence(target: int, shift: list[float], direct: list[float] | None = None) -> ShiftEvidence:
    shift_array = np.array(shift, dtype=float)
    shift_array[target] = np.nan
    direct_array = np.full(len(shift), np.nan) if direct is None else np.array(direct, float)
    return ShiftEvidence(target, shift_array, direct_array)


def test_experiment_orients_incident_edges_and_overrides_pc() -> None:
    # PC: X0 - X1 <- X2 (the collider orientation is wrong). do(X1): X2 shifts, X0 does not.
    pc = PDAG.from_edges(3, directed=[(2, 1)], undirected=[(0, 1)])
    combined = combine_shift_evidence(pc, [evidence(1, [0.6, 0, 1e-8])])
    assert combined.graph == PDAG.from_edges(3, directed=[(0, 1), (1, 2)])
    assert combined.settled[0, 1] and combined.settled[1, 2]


def test_weak_evidence_abstains_even_against_pc() -> None:
    pc = PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])
    combined = combine_shift_evidence(pc, [evidence(1, [0.03, 0, 1e-8])])
    assert combined.graph == PDAG.from_edges(3, directed=[(1, 2)], undirected=[(0, 1)])


def test_pc_orientations_fill_in_where_experiments_are_silent() -> None:
    # do(X3) leaves X2 alone, so X2 -> X3; the collider at X2 is PC's alone and is kept.
    pc = PDAG.from_edges(4, directed=[(0, 2), (1, 2)], undirected=[(2, 3)])
    combined = combine_shift_evidence(pc, [evidence(3, [0.9, 0.9, 0.9, 0])])
    assert combined.graph == PDAG.from_edges(4, directed=[(0, 2), (1, 2), (2, 3)])
    assert combined.settled[2, 3] and not combined.settled[0, 2]


def test_contradictory_experiments_abstain() -> None:
    pc = PDAG.from_edges(2, undirected=[(0, 1)])
    both_shift = [evidence(0, [0, 1e-9]), evidence(1, [1e-9, 0])]
    assert combine_shift_evidence(pc, both_shift).graph == pc


def test_two_clean_experiments_remove_an_edge() -> None:
    pc = PDAG.from_edges(2, undirected=[(0, 1)])
    neither = [evidence(0, [0, 0.8]), evidence(1, [0.7, 0])]
    assert combine_shift_evidence(pc, neither).graph == PDAG.empty(2)
    assert combine_shift_evidence(pc, neither, repair_skeleton=False).graph == pc


def test_direct_effects_add_missing_edges_but_indirect_ones_do_not() -> None:
    pc = PDAG.from_edges(3, undirected=[(1, 2)])
    direct = evidence(0, [0, 1e-9, 1e-9], direct=[np.nan, 1e-9, 0.4])
    combined = combine_shift_evidence(pc, [direct])
    assert combined.graph == PDAG.from_edges(3, directed=[(0, 1), (1, 2)])
    without = combine_shift_evidence(pc, [direct], repair_skeleton=False)
    assert without.graph == pc


def test_descendant_cut_orients_edges_away_from_the_target() -> None:
    # do(X0) shifts X1 but clearly not X2, so the undirected X1 - X2 must be X2 -> X1.
    pc = PDAG.from_edges(3, undirected=[(0, 1), (1, 2)])
    combined = combine_shift_evidence(pc, [evidence(0, [0, 1e-9, 0.9])])
    assert combined.graph == PDAG.from_edges(3, directed=[(0, 1), (2, 1)])


def test_combination_rejects_bad_thresholds() -> None:
    pc = PDAG.empty(2)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\), got 0.0"):
        combine_shift_evidence(pc, [], alpha=0.0)
    with pytest.raises(ValueError, match=r"no_shift_threshold must be in \[alpha, 1\)"):
        combine_shift_evidence(pc, [], alpha=0.05, no_shift_threshold=0.01)
