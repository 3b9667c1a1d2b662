"""The named option (DESIGN §2, "Anonymous names"): on a level over a real topology, an env made
with ``named=True`` gives the variables' real names at reset, and an LLM agent with ``named``
tells the model; by default nothing names them, and the option is refused where no names exist."""

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
from acdb_gym.envs.privileged import hidden_instance_of
from acdb_gym.results import RESULTS_FILE, read_results


def test_a_named_env_gives_this_worlds_names_at_reset() -> None:
    env = gym.make("ACDB-Real-Sachs-v2", named=True)
    _, info = env.reset(options={"manifest_index": 3})
    details = env.unwrapped.details()  # type: ignore[attr-defined]
    instance = hidden_instance_of(env)
    assert instance.variable_names is not None
    assert details["variable_names"] == list(instance.variable_names)
    assert sorted(details["variable_names"]) == sorted(SACHS_PROTEINS)
    assert "variable_names" not in info  # text: in the details an agent is given, not in info
    unnamed = gym.make("ACDB-Real-Sachs-v2")
    unnamed.reset(options={"manifest_index": 3})
    assert "variable_names" not in unnamed.unwrapped.details()  # type: ignore[attr-defined]


@pytest.mark.parametrize("env_id", ["ACDB-Calibrated-L2-v1", "ACDB-Real-SF-L3-v2"])
def test_named_is_refused_where_variables_have_no_names(env_id: str) -> None:
    with pytest.raises(ValueError, match="named=True shows the real names"):
        gym.make(env_id, named=True)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_named_agent_tells_the_model_and_an_unnamed_one_does_not(
    fake: SimpleNamespace, provider: str
) -> None:
    named_env = gym.make("ACDB-Real-Sachs-v2", named=True)
    named_env.reset(options={"manifest_index": 3})
    names = named_env.unwrapped.details()["variable_names"]  # type: ignore[attr-defined]
    pairs = ", ".join(f"X{index} = {name}" for index, name in enumerate(names))
    sessions = {}
    for named in (True, False):
        server = fake.serve(fake.Script([fake.submit_reply([(0, 1)])]))
        env = gym.make("ACDB-Real-Sachs-v2", named=named, **env_kwargs_for("llm_raw"))
        result = run_episode(env, fake.agent(server, provider, named=named), manifest_index=3)
        assert result.steps == 1
        sessions[named] = server.requests[0].session
    assert f"a real system: {pairs}." in sessions[True]
    for protein in SACHS_PROTEINS:
        assert re.search(rf"\b{re.escape(protein)}\b", sessions[False]) is None, protein


def test_a_named_agent_on_an_env_without_names_is_refused(fake: SimpleNamespace) -> None:
    server = fake.serve(fake.Script([fake.submit_reply([(0, 1)])]))
    env = gym.make("ACDB-Real-Sachs-v2", **env_kwargs_for("llm_raw"))
    with pytest.raises(ValueError, match="needs an env made with named=True"):
        run_episode(env, fake.agent(server, "openai", named=True), manifest_index=0)


@pytest.mark.slow
def test_the_sweep_runs_named_jobs_and_refuses_levels_without_names(
    fake: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = fake.serve(fake.Script([fake.submit_reply([(0, 1)])]))
    args = ["sweep", "--ladder", "real", "--levels", "Sachs", "--seeds", "1", "--agents"]
    args += ["llm_raw", "--panels", "active", "--provider", "openai", "--model", "test-model"]
    args += ["--base-url", server.base_url("openai"), "--no-progress", "--workers", "1"]
    assert cli_main([*args, "--named", "--out", str(tmp_path / "named")]) == 0
    [row] = read_results(tmp_path / "named" / RESULTS_FILE, mode="strict").rows
    assert row.status == "ok" and row.agent_config["named"] is True
    assert "real system" in server.requests[0].session
    capsys.readouterr()
    bad = [a if a != "real" else "v1" for a in args]
    bad[bad.index("Sachs")] = "L0"
    assert cli_main([*bad, "--named", "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acdb: error: --named needs levels over a real topology"), err
