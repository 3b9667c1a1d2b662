"""Tests for the ladder ``real`` (DESIGN §7, "Real ladder"): its levels, manifests, Gymnasium
ids, the command line's level table, and variable names kept out of what agents see."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.agents.llm.prompts import session_prompt, task_prompt
from acdb_gym.cli import main
from acdb_gym.core.graphs import SACHS_PROTEINS
from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    LADDERS,
    MANIFEST_SIZE,
    REAL_LADDER,
    REAL_VERSION,
)
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.registration import ENV_IDS, REAL_IDS
from acdb_gym.report.shortcuts import AUDITED_LADDERS, instance_sortability
from acdb_gym.testing import check_acdb_env

LEVELS = (
    "SF-L3",
    "SF-Nonlinear-L3",
    "Sachs",
    "Sachs-Nonlinear",
    "Sachs-Fitted",
    "Sachs-Fitted-Spline",
    *(f"DREAM4-{n}" for n in range(1, 6)),
)


def test_the_real_ladder_has_its_levels_with_full_manifests() -> None:
    assert tuple(REAL_LADDER) == LEVELS
    assert ALL_LADDERS["real"] is REAL_LADDER
    for level in REAL_LADDER.values():
        assert len(level.manifest) == MANIFEST_SIZE
        assert len({entry.seed for entry in level.manifest}) == MANIFEST_SIZE
    sf, er = REAL_LADDER["SF-L3"].spec, LADDERS["v1"]["L3"].spec
    assert (sf.graph, er.graph) == ("sf", "er")
    assert (sf.d, sf.k, sf.n_obs, sf.n_int, sf.slack) == (er.d, er.k, er.n_obs, er.n_int, er.slack)


@pytest.mark.slow
@pytest.mark.parametrize("name", [*LEVELS[:6], "DREAM4-5"])
def test_the_first_manifest_worlds_regenerate_their_digests(name: str) -> None:
    # One DREAM4 level (they share the generator; a d = 100 world takes about 0.3 s).
    level = REAL_LADDER[name]
    indices = (0,) if name.startswith("DREAM4") else (0, 1, 199)
    for index in indices:
        assert level.instance(index).digest() == level.manifest[index].digest


def test_every_real_level_is_registered_apart_from_env_ids() -> None:
    assert set(REAL_IDS) == {f"ACDB-Real-{name}-v{REAL_VERSION}" for name in LEVELS}
    assert not set(REAL_IDS) & set(ENV_IDS)
    for env_id in REAL_IDS:
        assert env_id in gym.registry


def _instance(env: gym.Env[Any, Any]) -> Instance:
    base = env.unwrapped
    assert isinstance(base, ACDBEnv)
    assert base._instance is not None
    return base._instance


def _text_seen_by_agents(env_id: str) -> str:
    env = gym.make(env_id)
    observation, info = env.reset(options={"manifest_index": 0})
    instance = _instance(env)
    n = instance.n_nodes
    seen: list[Any] = [observation, info, task_prompt("llm_raw", panel="active", n_nodes=n)]
    seen.append(
        session_prompt(
            "llm_raw",
            observational=np.asarray(instance.d_obs),
            panel="active",
            budget=instance.budget,
            max_steps=50,
            n_int=instance.spec.n_int,
        )
    )
    env.close()
    return repr(seen)


@pytest.mark.parametrize("env_id", ["ACDB-Real-Sachs-v2", "ACDB-Real-Sachs-Fitted-Spline-v2"])
def test_agents_and_prompts_see_anonymous_names(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(options={"manifest_index": 3})
    names = _instance(env).variable_names
    assert names is not None and set(names) == set(SACHS_PROTEINS)
    env.close()
    text = _text_seen_by_agents(env_id)
    assert "X0" in text
    for protein in SACHS_PROTEINS:
        assert f"'{protein}'" not in text and f" {protein} " not in text, protein


def test_a_dream4_level_plays() -> None:
    env = gym.make("ACDB-Real-DREAM4-5-v2")
    _, info = env.reset(options={"manifest_index": 0})
    assert info["budget"] >= 1
    assert _instance(env).n_nodes == 100
    env.close()


def test_acdb_levels_lists_the_real_ladder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["levels"]) == 0
    out = capsys.readouterr().out
    assert "| real | Sachs-Fitted-Spline |" in out and "sachs, fitted (spline) |" in out
    assert "| real | DREAM4-2 |" in out and "dream4-2, linear_gaussian |" in out
    assert "| real | SF-L3 |" in out and "| v0 | L0 |" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    "env_id",
    ["ACDB-Real-Sachs-v2", "ACDB-Real-Sachs-Nonlinear-v2", "ACDB-Real-Sachs-Fitted-Spline-v2"],
)
def test_real_levels_keep_the_env_contract(env_id: str) -> None:
    env = gym.make(env_id, panel="active", tools="stats", render_mode="ansi")
    check_acdb_env(env, seed=7, n_random_steps=25)


def test_the_sortability_audit_reads_real_instances() -> None:
    var, r2 = instance_sortability("real", "Sachs-Fitted-Spline", 0)
    assert 0.0 <= var <= 1.0 and 0.0 <= r2 <= 1.0
    assert "real" in AUDITED_LADDERS and "large" not in AUDITED_LADDERS
