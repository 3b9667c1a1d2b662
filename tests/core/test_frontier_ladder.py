"""The frontier ladder (DESIGN §7, "Frontier ladder"): its levels, manifests, ids, design ids
where the world kind allows, the level table, the inspect task and the MCP episode."""

from __future__ import annotations

import gymnasium as gym
import pytest

from acdb_gym.cli import main
from acdb_gym.core.ladders.frontier import FRONTIER_SEED_BASE
from acdb_gym.core.ladders.shipped import ALL_LADDERS, FRONTIER_LADDER, LADDERS, MANIFEST_SIZE
from acdb_gym.envs.registration import ENV_IDS, FRONTIER_DESIGN_IDS, FRONTIER_IDS
from acdb_gym.integrations.episode import ToolEpisode
from acdb_gym.report.frontier import FLOOR_MAX
from acdb_gym.report.gate import has_design_env
from acdb_gym.testing import check_acdb_env

LEVELS = ("NL20", "NL20-N10", "NL20-Obs200", "NL20-Hidden3", "NL30-Short2", "NL40")


def test_the_frontier_has_six_levels_with_full_manifests_apart_from_the_paper() -> None:
    assert tuple(FRONTIER_LADDER) == LEVELS
    assert ALL_LADDERS["frontier"] is FRONTIER_LADDER and "frontier" not in LADDERS
    for index, level in enumerate(FRONTIER_LADDER.values()):
        assert len(level.manifest) == MANIFEST_SIZE
        seeds = [entry.seed for entry in level.manifest]
        assert len(set(seeds)) == MANIFEST_SIZE
        assert min(seeds) >= FRONTIER_SEED_BASE + 1000 * index
        assert level.spec.random_floor <= FLOOR_MAX
        assert level.spec.family == "nonlinear"


@pytest.mark.parametrize("name", LEVELS)
def test_manifest_worlds_regenerate_their_digests(name: str) -> None:
    level = FRONTIER_LADDER[name]
    for index in (0, 100, 199):
        assert level.instance(index).digest() == level.manifest[index].digest


def test_ids_and_design_ids_where_the_world_kind_allows() -> None:
    assert tuple(f"ACDB-Frontier-{name}-v1" for name in LEVELS) == FRONTIER_IDS
    assert not set(FRONTIER_IDS) & set(ENV_IDS)
    sufficient = [name for name in LEVELS if not FRONTIER_LADDER[name].spec.latent]
    assert tuple(f"ACDB-Design-Frontier-{name}-v1" for name in sufficient) == FRONTIER_DESIGN_IDS
    assert "NL20-Hidden3" not in sufficient
    for env_id in (*FRONTIER_IDS, *FRONTIER_DESIGN_IDS):
        assert env_id in gym.registry
    assert [has_design_env("frontier", name) for name in LEVELS] == [
        name in sufficient for name in LEVELS
    ]
    vector = gym.make_vec(
        "ACDB-Design-Frontier-NL20-v1", 2, vectorization_mode="vector_entry_point"
    )
    vector.reset(seed=0)
    vector.close()


def test_a_budget_below_i_star_and_hidden_confounders_play_through_the_env() -> None:
    short = gym.make("ACDB-Frontier-NL30-Short2-v1")
    budgets = []
    for index in range(5):
        observation, _ = short.reset(options={"manifest_index": index})
        instance = FRONTIER_LADDER["NL30-Short2"].instance(index)
        budget = int(observation["budget_remaining"][0])
        assert budget == max(0, len(instance.i_star) - 2)
        budgets.append(budget < len(instance.i_star))
    assert all(budgets)
    check_acdb_env(gym.make("ACDB-Frontier-NL20-Hidden3-v1").unwrapped)


def test_acdb_levels_lists_the_frontier(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["levels"]) == 0
    out = capsys.readouterr().out
    for name in LEVELS:
        assert f"| frontier | {name} |" in out
    assert "| frontier | NL30-Short2 | nonlinear, budget below I* by 2, sparse | 30 | 30 |" in out
    assert "| -2 |" in out


def test_the_inspect_task_takes_the_frontier_with_all_its_levels() -> None:
    pytest.importorskip("inspect_ai")
    from acdb_gym.integrations.inspect_task import acdb

    task = acdb(ladder="frontier", seeds=1)
    assert [sample.id for sample in task.dataset] == [f"frontier-{name}-000" for name in LEVELS]


def test_an_mcp_or_tool_episode_plays_a_frontier_level() -> None:
    episode = ToolEpisode(ladder="frontier", level="NL20-Hidden3", manifest_index=3)
    assert "X19" in episode.session_prompt and "X20" not in episode.session_prompt
    reply = episode.call("intervene", {"variable": "X0", "value": 2.0})
    assert not reply.is_error
    admg = FRONTIER_LADDER["NL20-Hidden3"].instance(3).admg
    assert admg is not None
    names = {
        key: [[f"X{i}", f"X{j}"] for i, j in edges]
        for key, edges in (
            ("directed_edges", admg.directed_edges()),
            ("bidirected_edges", admg.bidirected_edges()),
        )
    }
    final = episode.call("submit_graph", {**names, "undirected_edges": []})
    assert not final.is_error and episode.score is not None
    assert episode.score["directed_f1"] == episode.score["bidirected_f1"] == 1.0
