"""LLM agents take the frontier ladder like any other: the real SDKs against the local test
server play a frontier level with hidden confounders and one whose budget is below |I*|, and
the sweep runs them on it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import env_kwargs_for
from acdb_gym.cli import main as cli_main
from acdb_gym.core.ladders.shipped import FRONTIER_LADDER
from acdb_gym.results import RESULTS_FILE, read_results


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_model_plays_the_frontier_with_hidden_confounders(
    fake: SimpleNamespace, provider: str
) -> None:
    admg = FRONTIER_LADDER["NL20-Hidden3"].instance(1).admg
    assert admg is not None

    def behave(request):  # type: ignore[no-untyped-def]
        if request.turn == 0:
            return fake.Reply((fake.Call("intervene", {"variable": "X0", "value": 3.0}),))
        name = "X{}".format
        return fake.Reply(
            (
                fake.Call(
                    "submit_graph",
                    {
                        "directed_edges": [[name(i), name(j)] for i, j in admg.directed_edges()],
                        "undirected_edges": [],
                        "bidirected_edges": [
                            [name(i), name(j)] for i, j in admg.bidirected_edges()
                        ],
                    },
                ),
            )
        )

    server = fake.serve(behave)
    env = gym.make("ACDB-Frontier-NL20-Hidden3-v1", **env_kwargs_for("llm_raw"))
    result = run_episode(env, fake.agent(server, provider), manifest_index=1)
    assert result.interventions == 1 and result.invalid_actions == 0
    assert result.score["directed_f1"] == result.score["bidirected_f1"] == 1.0
    first = server.requests[0]
    assert "3 hidden variables" in first.system and "bidirected_edges" in first.system
    assert "nonlinear function of its" in first.system and "linear-Gaussian" not in first.system


def test_the_sweep_runs_an_llm_agent_on_a_budget_below_i_star(
    fake: SimpleNamespace, tmp_path: Path
) -> None:
    instance = FRONTIER_LADDER["NL30-Short2"].instance(0)
    server = fake.serve(fake.competent(instance.dag))
    args = ["sweep", "--ladder", "frontier", "--levels", "NL30-Short2", "--seeds", "1"]
    args += ["--agents", "llm_raw", "--panels", "active", "--provider", "openai"]
    args += ["--model", "test-model", "--base-url", server.base_url("openai")]
    args += ["--no-progress", "--workers", "1", "--out", str(tmp_path)]
    assert cli_main(args) == 0
    [row] = read_results(tmp_path / RESULTS_FILE, mode="strict").rows
    assert row.status == "ok" and row.ladder == "frontier" and row.directed_f1 == 1.0
    assert row.interventions_used == min(1, max(0, len(instance.i_star) - 2))
    assert "### Headroom" in (tmp_path / "report.md").read_text(encoding="utf-8")
