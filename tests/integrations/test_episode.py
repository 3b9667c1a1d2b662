"""ToolEpisode plays the LLM agents' protocol one call at a time: same tools, texts, steps and
scores as LLMAgent on the same replies, the env's step limit, nothing after the end."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import LLMAgent, build_tools, env_kwargs_for
from acdb_gym.core.ladders.shipped import get_level, ladder_env_id
from acdb_gym.integrations.episode import (
    ENDED_ERROR,
    ToolEpisode,
    episode_record,
    result_row,
)
from acdb_gym.results import ResultsAppender, ResultsFileError, read_results
from acdb_gym.sweep.run import Job

LADDER, LEVEL, INDEX = "v0", "L0", 0


def _truth_edges() -> list[tuple[int, int]]:
    return get_level(LADDER, LEVEL).instance(INDEX).dag.edges()


def _submit(edges: list[tuple[int, int]]) -> dict[str, Any]:
    return {
        "directed_edges": [[f"X{i}", f"X{j}"] for i, j in edges],
        "undirected_edges": [],
    }


def test_same_texts_steps_and_score_as_the_llm_agent(fake: SimpleNamespace) -> None:
    turns: list[tuple[Any, ...]] = [
        (("intervene", {"variable": "X0", "value": 3.0}),),
        (("intervene", {"variable": "X9", "value": 1.0}),),  # out of range: a step
        (),  # no call: a step
        (("intervene", {"variable": "X1", "value": 1.0}), ("intervene", {"variable": "X2"})),
        (("intervene", {"variable": "X1", "value": 1e9}),),  # beyond VALUE_BOUND
        (("submit_graph", _submit(_truth_edges())),),
    ]
    script = [fake.Reply(tuple(fake.Call(n, a) for n, a in calls)) for calls in turns]
    server = fake.serve(fake.Script(script))
    agent = LLMAgent("llm_raw", provider="openai", model="m", base_url=server.base_url("openai"))
    env = gym.make(ladder_env_id(LADDER, LEVEL), panel="active", **env_kwargs_for("llm_raw"))
    result = run_episode(env, agent, manifest_index=INDEX)
    shown = [
        m["content"] for m in server.requests[-1].body["messages"][2:] if m["role"] != "assistant"
    ]

    episode = ToolEpisode(ladder=LADDER, level=LEVEL, manifest_index=INDEX)
    assert server.requests[0].body["messages"][0]["content"] == episode.system_prompt
    assert server.requests[0].body["messages"][1]["content"] == episode.session_prompt
    assert server.requests[0].body["tools"][0]["function"]["parameters"] == (
        episode.tools[0].parameters
    )
    texts: list[str] = []
    for calls in turns:
        if not calls:
            texts.append(episode.no_call().text)
        elif len(calls) > 1:
            texts.extend([episode.several_calls(len(calls)).text] * len(calls))
        else:
            texts.append(episode.call(*calls[0]).text)
    assert texts[:-1] == shown  # the last result ends the episode and is never shown
    assert episode.ended and not episode.truncated
    assert episode.score == result.score.to_dict() and result.score.directed_f1 == 1.0
    assert (episode.steps, episode.invalid_actions) == (result.steps, result.invalid_actions)
    assert (episode.steps, episode.invalid_actions) == (6, 4)


def test_step_limit_scores_the_empty_graph_and_later_calls_change_nothing() -> None:
    episode = ToolEpisode(ladder=LADDER, level=LEVEL, manifest_index=INDEX, variant="llm_stats")
    names = [tool.name for tool in episode.tools]
    assert names == [t.name for t in build_tools("llm_stats", panel="active", n_nodes=5)]
    assert episode.max_steps == 32
    outcomes = [episode.call("correlation", {"i": "X0", "j": "X1"}) for _ in range(32)]
    assert not outcomes[0].is_error and "correlation(X0, X1)" in outcomes[0].text
    assert [o.ended for o in outcomes] == [False] * 31 + [True]
    assert "empty graph was scored" in outcomes[-1].text
    assert episode.truncated and episode.score is not None
    assert episode.score["skeleton_f1"] == 0.0
    late = episode.call("submit_graph", _submit(_truth_edges()))
    assert (late.text, late.is_error, episode.steps) == (ENDED_ERROR, True, 32)
    assert episode.score["skeleton_f1"] == 0.0


def test_observational_variant_and_bad_arguments() -> None:
    episode = ToolEpisode(ladder="v1", level="L2", manifest_index=3, variant="llm_corr_obs")
    assert episode.panel == "observational" and [t.name for t in episode.tools] == ["submit_graph"]
    assert "Correlation matrix" in episode.session_prompt
    refused = episode.call("intervene", {"variable": "X0", "value": 1.0})
    assert refused.is_error and "unknown tool 'intervene'" in refused.text
    bad_json = episode.call("submit_graph", None, argument_error="Expecting value")
    assert bad_json.is_error and "not valid JSON" in bad_json.text
    assert (episode.steps, episode.invalid_actions) == (2, 2)
    with pytest.raises(ValueError, match="variant must be one of"):
        ToolEpisode(ladder="v1", level="L2", manifest_index=0, variant="llm_magic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="panel must be one of"):
        ToolEpisode(ladder="v1", level="L2", manifest_index=0, panel="passive")  # type: ignore[arg-type]


def test_rows_are_sweep_rows(tmp_path: Any) -> None:
    episode = ToolEpisode(ladder=LADDER, level=LEVEL, manifest_index=INDEX)
    with pytest.raises(ValueError, match="has not ended"):
        episode_record(episode)
    episode.call("submit_graph", _submit(_truth_edges()))
    record = episode_record(episode)
    config = {"model": "m"}
    row = result_row(record, agent="mcp:llm_raw", agent_config=config, wall_time=0.5, repeat=1)
    job = Job(LADDER, LEVEL, INDEX, "mcp:llm_raw", "active", "raw", 1, config)
    assert row.job_id == job.job_id and row.seed == get_level(LADDER, LEVEL).manifest_seed(INDEX)
    assert (row.status, row.directed_f1, row.steps, row.truncated) == ("ok", 1.0, 1, False)
    failed = result_row(record, agent="mcp:llm_raw", agent_config={}, wall_time=1.0, error="gone")
    assert (failed.status, failed.directed_f1, failed.draws) == ("failed", None, 0)
    path = tmp_path / "results.jsonl"
    with ResultsAppender(path) as appender:
        appender.append(row)
        appender.append(failed)
    assert read_results(path, mode="strict").rows == (row, failed)
    with pytest.raises(ResultsFileError, match="lacks"):
        result_row({"ladder": "v0"}, agent="x", agent_config={}, wall_time=0.0)
