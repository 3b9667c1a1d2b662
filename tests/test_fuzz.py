"""Fuzzing every env variant with random and adversarial actions (hypothesis).

Short by default; the long run reported in SECURITY.md sets ``ACDB_FUZZ_EXAMPLES=400`` (over
10,000 actions per variant) and ``ACDB_FUZZ_REPORT=path.jsonl`` to record the counts.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acdb_gym  # noqa: F401
from acdb_gym.core.ladders.shipped import ladder_env_id
from acdb_gym.envs.acdb_env import ACDBEnv

EXAMPLES = int(os.environ.get("ACDB_FUZZ_EXAMPLES", "15"))
ACTIONS_PER_EXAMPLE = 40

VARIANTS = [
    (ladder, level, panel, tools)
    for ladder, level in (("v0", "L0"), ("v0", "L5"), ("v1", "L1"))
    for panel in ("active", "observational")
    for tools in ("raw", "stats")
]

_NODE_CORRUPTIONS = [-1, -3, 2**40, -(2**40)]
_VALUE_CORRUPTIONS = [math.nan, math.inf, -math.inf, 1e300, 2e4]


@st.composite
def _graph(draw: st.DrawFn, d: int) -> np.ndarray:
    """A sparse code matrix: often a valid PDAG, often with cycles, self-loops, or
    one-sided undirected marks."""
    graph = np.zeros((d, d), dtype=np.int64)
    for _ in range(draw(st.integers(0, 2 * d))):
        i, j = draw(st.integers(0, d - 1)), draw(st.integers(0, d - 1))
        code = draw(st.sampled_from([1, 1, 2]))
        graph[i, j] = code
        if code == 2 and draw(st.integers(0, 4)) > 0:
            graph[j, i] = 2
    return graph


@st.composite
def _valid_action(draw: st.DrawFn, d: int, m: int) -> tuple[int, dict[str, Any]]:
    kind = draw(st.sampled_from([0, 0, 0, 1, 2, 3, 4, 4]))
    node = st.integers(0, d - 1)
    if kind == 0:
        return 0, {"var": np.int64(draw(node)), "value": np.asarray(draw(st.floats(-50, 50)))}
    if kind == 4:
        return 4, {"graph": draw(_graph(d))}
    payload: dict[str, Any] = {
        "i": np.int64(draw(node)),
        "j": np.int64(draw(node)),
        "regime": np.int64(draw(st.integers(0, m))),
    }
    if kind in (2, 3):
        cond = draw(st.lists(st.sampled_from([0, 0, 0, 1]), min_size=d, max_size=d))
        payload["cond"] = np.array(cond, dtype=np.int8)
    return kind, payload


@st.composite
def _action(draw: st.DrawFn, d: int, m: int) -> Any:
    kind, payload = draw(_valid_action(d, m))
    corruption = draw(st.integers(0, 9))
    if corruption == 0:  # out-of-space number
        if kind == 0:
            payload["value"] = np.asarray(draw(st.sampled_from(_VALUE_CORRUPTIONS)))
        elif kind == 4:
            payload["graph"] = payload["graph"].copy()
            payload["graph"][0, -1] = draw(st.sampled_from([3, -1, 99]))
        else:
            payload["i"] = np.int64(draw(st.sampled_from(_NODE_CORRUPTIONS)))
    elif corruption == 1:  # wrong structure
        return draw(st.sampled_from([None, "submit", (kind,), (kind, payload, 1), (9, payload),
                                     (-1, payload), (kind, {})]))  # fmt: skip
    return kind, payload


@pytest.mark.slow
@pytest.mark.parametrize(("ladder", "level", "panel", "tools"), VARIANTS)
def test_fuzz_env_variant(ladder: str, level: str, panel: str, tools: str) -> None:
    env = gym.make(ladder_env_id(ladder, level), panel=panel, tools=tools).unwrapped
    assert isinstance(env, ACDBEnv)
    d, m = env.n_nodes, env.max_interventions
    counters = {"actions": 0, "episodes": 0, "rejected": 0, "invalid": 0, "after_end": 0}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        st.integers(0, 2**31 - 1),
        st.lists(_action(d, m), min_size=ACTIONS_PER_EXAMPLE // 2, max_size=ACTIONS_PER_EXAMPLE),
    )
    def run(seed: int, actions: list[Any]) -> None:
        obs, _ = env.reset(seed=seed)
        ended = False
        for action in actions:
            if ended and counters["actions"] % 2:
                # Half the time, start a new episode; otherwise probe the ended one again.
                obs, _ = env.reset(seed=seed + counters["actions"])
                ended = False
            counters["actions"] += 1
            budget_before = env.session.budget_remaining
            in_space = env.action_space.contains(action) if isinstance(action, tuple) else False
            try:
                obs, reward, terminated, truncated, info = env.step(action)
            except ValueError:
                assert not in_space, f"in-space action raised: {action!r}"
                counters["rejected"] += 1
                assert env.session.budget_remaining == budget_before
                continue
            assert in_space or ended, f"out-of-space action accepted: {action!r}"
            assert env.observation_space.contains(obs)
            assert 0 <= env.session.budget_remaining <= env.session.budget
            assert env.session.interventions_used <= env.session.budget
            if panel == "observational":
                assert env.session.interventions_used == 0
            details = env.details()
            if ended:
                counters["after_end"] += 1
                assert "ended" in details["error"] and reward == 0.0 and (terminated or truncated)
                continue
            if "error" in details:
                counters["invalid"] += 1
            if terminated or truncated:
                assert info["scored"] and "score" in details and math.isfinite(float(reward))
                counters["episodes"] += 1
                ended = True
            else:
                assert not info["scored"] and "score" not in details and reward == 0.0

    run()
    assert counters["actions"] >= EXAMPLES * ACTIONS_PER_EXAMPLE // 2
    assert counters["rejected"] > 0 and counters["invalid"] > 0
    report = os.environ.get("ACDB_FUZZ_REPORT")
    if report:  # the long run records its counts for SECURITY.md
        with open(report, "a") as handle:
            handle.write(json.dumps({"variant": [ladder, level, panel, tools], **counters}) + "\n")
