"""LLM tools and prompts on a level with hidden confounders: bidirected edges in and out."""

from __future__ import annotations

import pytest

from acdb_gym.agents.llm import prompts
from acdb_gym.agents.llm.function_tools import build_tools
from acdb_gym.agents.llm.parsing import ToolCallError, parse_tool_arguments
from acdb_gym.core.graphs import ADMG, PAG, PDAG
from acdb_gym.envs.actions import Submit
from acdb_gym.integrations.episode import ToolEpisode


def _submit(arguments: dict[str, object], *, latent: bool = True) -> object:
    return parse_tool_arguments(
        "submit_graph",
        arguments,
        offered=("submit_graph",),
        n_nodes=4,
        n_experiments=0,
        latent=latent,
    )


def test_the_prompt_and_the_submit_tool_name_the_hidden_confounders() -> None:
    sufficient = prompts.task_prompt("llm_raw", panel="active", n_nodes=4)
    latent = prompts.task_prompt("llm_raw", panel="active", n_nodes=4, latent=2)
    assert "There are no hidden confounders" in sufficient and "bidirected" not in sufficient
    assert "no hidden confounders" not in latent and "2 hidden variables" in latent
    assert "bidirected_edges" in latent
    (tool,) = build_tools("llm_raw", panel="observational", n_nodes=4, latent=True)
    assert tool.parameters["required"] == ["directed_edges", "undirected_edges", "bidirected_edges"]
    (plain,) = build_tools("llm_raw", panel="observational", n_nodes=4)
    assert "bidirected_edges" not in plain.parameters["properties"]


def test_bidirected_edges_parse_into_an_admg_or_a_pag() -> None:
    admg = _submit(
        {
            "directed_edges": [["X0", "X1"]],
            "undirected_edges": [],
            "bidirected_edges": [["X2", "X3"]],
        }
    )
    assert admg == Submit(ADMG.from_edges(4, directed=[(0, 1)], bidirected=[(2, 3)]))
    pag = _submit(
        {
            "directed_edges": [],
            "undirected_edges": [["X0", "X1"]],
            "bidirected_edges": [["X2", "X3"]],
        }
    )
    assert isinstance(pag, Submit) and isinstance(pag.graph, PAG)
    assert pag.graph.edge_strings() == ["X0 o-o X1", "X2 <-> X3"]
    plain = _submit({"directed_edges": [], "undirected_edges": [], "bidirected_edges": []})
    assert plain == Submit(PDAG.empty(4))
    with pytest.raises(ToolCallError, match="both as bidirected and as another edge"):
        _submit(
            {
                "directed_edges": [["X0", "X1"]],
                "undirected_edges": [],
                "bidirected_edges": [["X1", "X0"]],
            }
        )
    with pytest.raises(ToolCallError, match="bidirected_edges"):
        _submit(
            {"directed_edges": [], "undirected_edges": [], "bidirected_edges": []}, latent=False
        )


def test_a_tool_episode_on_the_latent_ladder_scores_a_bidirected_submission() -> None:
    episode = ToolEpisode(ladder="v1-latent", level="L0", manifest_index=0, panel="observational")
    assert "bidirected_edges" in episode.system_prompt
    truth = episode._env.hidden_instance().admg
    assert truth is not None
    name = "X{}".format
    outcome = episode.call(
        "submit_graph",
        {
            "directed_edges": [[name(i), name(j)] for i, j in truth.directed_edges()],
            "undirected_edges": [],
            "bidirected_edges": [[name(i), name(j)] for i, j in truth.bidirected_edges()],
        },
    )
    assert outcome.ended and not outcome.is_error
    score = episode.score
    assert score is not None and score["bidirected_f1"] == 1.0 and score["directed_f1"] == 1.0
