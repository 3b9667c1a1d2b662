"""The opt-in revision variant of the LLM agents (``state_hypothesis``): the real SDKs against
the local scripted model server, through the env, the sweep and the report."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import env_kwargs_for
from acdb_gym.cli import main as cli_main
from acdb_gym.core.graphs import PDAG
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.envs.hypotheses import RevisionRecord
from acdb_gym.results import read_results

INSTANCE = get_level("v0", "L0").instance(0)  # d = 5, 8 edges, budget 3
TRUTH = INSTANCE.dag
FIRST = PDAG.from_edges(5, undirected=[TRUTH.edges()[0]])
SECOND = PDAG.from_edges(5, directed=TRUTH.edges()[:2])


def _names(edges: list[tuple[int, int]]) -> list[list[str]]:
    return [[f"X{i}", f"X{j}"] for i, j in edges]


def _intervene(variable: str, hypothesis: PDAG | None, **extra: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {"variable": variable, "value": 2.0, **extra}
    if hypothesis is not None:
        arguments["hypothesis_directed_edges"] = _names(hypothesis.directed_edges())
        arguments["hypothesis_undirected_edges"] = _names(hypothesis.undirected_edges())
    return arguments


def _stating(fake: SimpleNamespace) -> Any:
    """A model that states FIRST, then SECOND with two interventions, then submits the truth."""

    def behave(request: Any) -> Any:
        calls = {
            0: ("intervene", _intervene("X0", FIRST)),
            1: ("intervene", _intervene("X1", SECOND)),
        }
        if request.turn in calls:
            return fake.Reply((fake.Call(*calls[request.turn]),))
        return fake.submit_reply(TRUTH.edges())

    return behave


def _env() -> gym.Env[Any, Any]:
    return gym.make("ACDB-L0-v0", panel="active", **env_kwargs_for("llm_raw"))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_stated_hypotheses_are_recorded(fake: SimpleNamespace, provider: str) -> None:
    server = fake.serve(_stating(fake))
    agent = fake.agent(server, provider, max_retries=0, state_hypothesis=True)
    result = run_episode(_env(), agent, manifest_index=0)
    assert agent.states_hypotheses
    assert result.score.directed_f1 == 1.0 and result.invalid_actions == 0
    assert result.revision is not None
    assert result.revision.targets == (0, 1)
    assert result.revision.hypotheses == (FIRST, SECOND)
    assert result.revision.final == TRUTH.to_pdag()
    first = server.requests[0]
    assert "state your current hypothesis" in first.system
    assert "hypothesis_directed_edges" in first.raw_text


def test_off_the_requests_carry_no_hypothesis_arguments(fake: SimpleNamespace) -> None:
    server = fake.serve(fake.competent(TRUTH))
    agent = fake.agent(server, "openai", max_retries=0)
    result = run_episode(_env(), agent, manifest_index=0)
    assert not agent.states_hypotheses and "state_hypothesis" not in agent.config
    assert result.revision is not None and result.revision.hypotheses == (None,)
    assert all("hypothesis" not in request.raw_text for request in server.requests)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (_intervene("X0", None), "missing required argument"),
        (
            _intervene(
                "X0",
                None,
                hypothesis_directed_edges=[["X0", "X1"], ["X1", "X0"]],
                hypothesis_undirected_edges=[],
            ),
            "invalid hypothesis",
        ),
    ],
)
def test_a_bad_hypothesis_makes_the_call_invalid(
    fake: SimpleNamespace, arguments: dict[str, Any], message: str
) -> None:
    script = fake.Script([fake.Reply((fake.Call("intervene", arguments),))])
    script.then = lambda request: fake.submit_reply(TRUTH.edges())
    server = fake.serve(script)
    result = run_episode(_env(), fake.agent(server, "openai", max_retries=0, state_hypothesis=True))
    assert result.invalid_actions == 1 and result.interventions == 0
    text, is_error, _ = server.requests[1].last_results[0]
    assert is_error and message in text


@pytest.mark.slow
def test_the_sweep_flag_writes_revision_rows_and_the_report_section(
    fake: SimpleNamespace, tmp_path: Path
) -> None:
    server = fake.serve(_stating(fake))
    out = tmp_path / "run"
    argv = [
        "sweep", "--levels", "L0", "--seeds", "1", "--agents", "llm_raw", "--panels", "active",
        "--provider", "openai", "--model", "test-model", "--base-url", server.base_url("openai"),
        "--state-hypothesis", "--out", str(out), "--no-progress",
    ]  # fmt: skip
    assert cli_main(argv) == 0
    (row,) = read_results(out / "results.jsonl", mode="strict").rows
    assert row.status == "ok" and row.agent_config["state_hypothesis"] is True
    assert row.revision is not None
    record = RevisionRecord.from_dict(row.revision)
    assert record.targets == (0, 1) and record.hypotheses == (FIRST, SECOND)
    assert record.final == TRUTH.to_pdag()
    report = (out / "report.md").read_text()
    assert "## Revision" in report
    assert "| llm_raw[test-model] (active) | L0 | 1 | 2 |" in report
