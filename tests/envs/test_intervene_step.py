"""The intervene step: its recognition of plain ``intervene`` actions (which skips Gymnasium's
generic check) and its samples, drawn by the session into an array it keeps, which the observation
block copies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from acdb_gym.core.session import Session
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.actions import ActionKind, Intervene, intervene_request

D, M = 5, 6
SPACE = actions.action_space(D, M)


def _intervene_variants() -> list[Any]:
    good = actions.intervene(3, 2.5)
    payload = good[1]
    return [
        good,
        actions.intervene(0, -1e4),
        actions.intervene(D - 1, 1e4),
        actions.intervene(0, 1e4 + 1),  # out of bounds
        actions.intervene(0, float("nan")),
        (0, {"var": np.int64(D), "value": payload["value"]}),  # node out of range
        (0, {"var": np.int64(-1), "value": payload["value"]}),
        (0, {"var": 3, "value": payload["value"]}),  # Python int: left to the space
        (0, {"var": payload["var"], "value": 2.5}),  # Python float: left to the space
        (0, {"var": payload["var"], "value": np.asarray([2.5])}),  # wrong shape
        (0, {"var": payload["var"], "value": np.asarray(2.5, dtype=np.float32)}),
        (0, {**payload, "extra": 1}),
        (0, {"var": payload["var"]}),
        (np.int64(0), payload),
        (ActionKind.INTERVENE, payload),
        [0, payload],
        (1, payload),
        (0, payload, 0),
        "intervene",
        None,
    ]


def test_intervene_request_accepts_only_certain_elements_of_the_space() -> None:
    """The step's fast recognition never accepts what the space rejects, and then agrees with
    decode."""
    rng = np.random.default_rng(0)
    candidates = _intervene_variants()
    SPACE.seed(1)
    candidates += [SPACE.sample() for _ in range(300)]
    candidates += [actions.intervene(int(rng.integers(D)), rng.normal(0, 50)) for _ in range(100)]
    accepted = 0
    for action in candidates:
        request = intervene_request(action, D)
        if request is None:
            continue
        accepted += 1
        assert SPACE.contains(action), action
        assert actions.decode(action, n_nodes=D) == Intervene(*request)
        assert type(request[0]) is int and type(request[1]) is float
    # Everything actions.intervene builds within the bounds is recognised.
    assert accepted >= 103
    assert intervene_request(actions.intervene(2, 3.0), D) == (2, 3.0)


@pytest.mark.parametrize(("ladder", "level"), [("v0", "L3"), ("v1", "L5")])
def test_steps_draw_a_sessions_samples_into_the_observation_block(ladder: str, level: str) -> None:
    env = ACDBEnv(level, ladder=ladder)
    env.reset(options={"manifest_index": 1})
    reference = Session(env.level.instance(1))
    plan = [(0, 1.0), (env.n_nodes - 1, -2.5), (0, 1.0)]
    for slot, (var, value) in enumerate(plan):
        observation, *_ = env.step(actions.intervene(var, value))
        expected = reference.intervene(var, value)
        assert observation["interventional"][slot].tobytes() == expected.tobytes()
        samples = env.session.experiments[slot].samples
        assert not np.shares_memory(observation["interventional"], samples)
