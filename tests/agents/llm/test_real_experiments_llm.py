"""LLM agents on measured data (DESIGN §3.5, §3.6): the real SDKs against the local test server
play the real-experiment level (told the experiments are real perturbations, refused where no
experiment exists), run in the sweep with and without ``--named``, and play the cause-effect
pairs."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import env_kwargs_for
from acdb_gym.cli import main as cli_main
from acdb_gym.core.graphs import SACHS_PROTEINS
from acdb_gym.results import RESULTS_FILE, read_results

CELLS_ID = "ACDB-SachsExperiments-Cells-v0"
_TARGETS = re.compile(r"Experiments exist only for ((?:X\d+, )*X\d+);")


def _experimenter(fake: SimpleNamespace):  # type: ignore[no-untyped-def]
    """Reads the allowed targets from the system prompt: runs the first one's experiment, asks
    for a variable without one, then submits."""

    def behave(request):  # type: ignore[no-untyped-def]
        match = _TARGETS.search(request.system)
        assert match, "the system prompt names the targets with an experiment"
        allowed = match.group(1).split(", ")
        outside = next(f"X{v}" for v in range(11) if f"X{v}" not in allowed)
        if request.turn == 0:
            return fake.Reply((fake.Call("intervene", {"variable": allowed[0], "value": -1.0}),))
        if request.turn == 1:
            return fake.Reply((fake.Call("intervene", {"variable": outside, "value": 1.0}),))
        return fake.submit_reply([(0, 1)])

    return behave


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_model_runs_real_experiments_and_is_refused_elsewhere(
    fake: SimpleNamespace, provider: str
) -> None:
    server = fake.serve(_experimenter(fake))
    env = gym.make(CELLS_ID, **env_kwargs_for("llm_raw"))
    result = run_episode(env, fake.agent(server, provider), manifest_index=2)
    assert result.steps == 3 and result.interventions == 1 and result.invalid_actions == 1
    first, second, third = server.requests
    assert "runs a real experiment" in first.system and "not a perfect intervention" in first.system
    assert "The data are real measurements, not a simulation." in first.system
    [(text, is_error, _)] = second.last_results
    assert not is_error and "the real experiment on X" in text and "do(X" not in text
    [(text, is_error, _)] = third.last_results
    assert is_error and "has no experiment on this level; experiments exist for" in text


@pytest.mark.slow
def test_the_sweep_runs_llm_agents_on_real_experiments_named_and_anonymous(
    fake: SimpleNamespace, tmp_path: Path
) -> None:
    server = fake.serve(_experimenter(fake))
    args = ["sweep", "--ladder", "sachs-experiments", "--levels", "Cells", "--seeds", "1"]
    args += ["--agents", "llm_raw", "--panels", "active", "--provider", "openai"]
    args += ["--model", "test-model", "--base-url", server.base_url("openai")]
    args += ["--no-progress", "--workers", "1"]
    assert cli_main([*args, "--out", str(tmp_path / "anonymous")]) == 0
    assert cli_main([*args, "--named", "--out", str(tmp_path / "named")]) == 0
    for run, named in (("anonymous", False), ("named", True)):
        [row] = read_results(tmp_path / run / RESULTS_FILE, mode="strict").rows
        assert row.status == "ok" and row.interventions_used == 1 and row.invalid_actions == 1
        assert row.agent_config.get("named", False) is named
        assert (tmp_path / run / "report.md").exists()
    sessions = [request.session for request in server.requests if request.turn == 0]
    anonymous, named_session = sessions
    assert "measured quantities of a real system: X0 = " in named_session
    for protein in SACHS_PROTEINS:
        assert re.search(rf"\b{re.escape(protein)}\b", anonymous) is None, protein


def test_a_model_plays_a_cause_effect_pair(fake: SimpleNamespace) -> None:
    server = fake.serve(fake.Script([fake.submit_reply([(1, 0)])]))
    env = gym.make("ACDB-Tuebingen-Pairs-v0", **env_kwargs_for("llm_raw"))
    result = run_episode(env, fake.agent(server, "anthropic"), manifest_index=0)
    [request] = server.requests
    assert "either X0 -> X1 or X1 -> X0" in request.system
    assert "Interventions are not available on this level" in request.system
    assert "Observational data: 94 samples" in request.session
    truth = env.unwrapped._instance.dag.edges()  # type: ignore[attr-defined]
    assert result.score.directed_f1 == (1.0 if truth == [(1, 0)] else 0.0)
