"""Exact input validation (SECURITY.md): every bad reset option, constructor argument and
typed-action argument is a ValueError naming it; end-of-episode infos are copies; both envs
treat a step after the end alike."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import acdb_gym  # noqa: F401  (registers the ids)
from acdb_gym.core.graphs import PDAG
from acdb_gym.envs import actions
from acdb_gym.envs.actions import Correlation, Intervene, PartialCorrelation

ENV_IDS = ("ACDB-L1-v0", "ACDB-Design-L1-v0")


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"manifest_index": None}, "manifest_index"),
        ({"manifest_index": float("inf")}, "manifest_index"),
        ({"manifest_index": 1.5}, "manifest_index"),
        ({"manifest_index": True}, "manifest_index"),
        ({"manifest_index": "3"}, "manifest_index"),
        ({"manifest_index": 200}, "manifest_index"),
        ({"manifest_index": -1}, "manifest_index"),
        ({"instance": "x"}, "instance"),
        ({"seed": 3}, "unknown reset options"),
        ({"manifest_index": 0, "instance": None}, "exclude each other"),
        (5, "reset options must be a dict"),
        ("manifest_index", "reset options must be a dict"),
        ([("manifest_index", 0)], "reset options must be a dict"),
    ],
)
def test_every_bad_reset_option_is_a_value_error_naming_it(
    env_id: str, options: Any, named: str
) -> None:
    env = gym.make(env_id)
    with pytest.raises(ValueError, match=named):
        env.reset(options=options)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_good_reset_options_still_work(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(options={"manifest_index": np.int64(2)})
    env.reset(options={})
    env.reset(options=None)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"max_steps": 2.5}, "max_steps"),
        ({"max_steps": True}, "max_steps"),
        ({"max_steps": "8"}, "max_steps"),
        ({"max_steps": 0}, "max_steps"),
        ({"panel": ["active"]}, "panel"),
        ({"render_mode": "video"}, "render_mode"),
        ({"ladder": None}, "ladder"),
    ],
)
@pytest.mark.filterwarnings("ignore:.*render_mode='video'")  # Gymnasium warns, then we refuse
def test_bad_constructor_arguments_fail_at_make(kwargs: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        gym.make("ACDB-L1-v0", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"shift": "3"}, "shift"),
        ({"shift": float("nan")}, "shift"),
        ({"alpha": True}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"render_mode": "human"}, "render_mode"),
        ({"level": 1}, "level"),
    ],
)
def test_bad_design_env_arguments_fail_at_construction(kwargs: dict[str, Any], named: str) -> None:
    from acdb_gym.envs.design.env import InterventionDesignEnv

    with pytest.raises(ValueError, match=named):
        InterventionDesignEnv(**kwargs)


def test_max_steps_as_a_numpy_integer_is_accepted() -> None:
    env = gym.make("ACDB-L1-v0", max_steps=np.int64(3))
    assert env.unwrapped.max_steps == 3  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [1.7, "3", True, np.bool_(True), None, 2.0])
def test_typed_actions_reject_non_integer_node_indices(bad: Any) -> None:
    with pytest.raises(ValueError, match="integer node index"):
        actions.intervene(bad, 1.0)
    with pytest.raises(ValueError, match="integer node index"):
        Intervene(bad, 1.0)
    with pytest.raises(ValueError, match="integer node index"):
        actions.correlation(0, bad)
    with pytest.raises(ValueError, match="integer node index"):
        Correlation(bad, 1)
    with pytest.raises(ValueError, match="integer node index"):
        PartialCorrelation(0, 1, (bad,))
    if bad is not None:  # regime None means the observational data
        with pytest.raises(ValueError, match="integer node index"):
            actions.partial_correlation(0, 1, [2], n_nodes=4, regime=bad)


@pytest.mark.parametrize("bad", ["high", True, None, [1.0], 1j])
def test_typed_actions_reject_values_that_are_not_real_numbers(bad: Any) -> None:
    with pytest.raises(ValueError, match="value must be"):
        actions.intervene(0, bad)
    with pytest.raises(ValueError, match="value must be"):
        Intervene(0, bad)


def test_typed_actions_accept_numpy_scalars_and_normalise_them() -> None:
    assert Intervene(np.int64(2), np.float32(1.5)) == Intervene(2, 1.5)
    assert Correlation(np.int32(0), np.int64(1)) == Correlation(0, 1)
    kind, payload = actions.intervene(np.int64(1), np.asarray(2.0))
    assert kind == 0 and int(payload["var"]) == 1 and float(payload["value"]) == 2.0


def _end(env: gym.Env[Any, Any], env_id: str) -> dict[str, Any]:
    env.reset(options={"manifest_index": 0})
    if env_id.startswith("ACDB-Design"):
        *_, info = env.step(np.int64(env.unwrapped.n_nodes))  # type: ignore[attr-defined]
    else:
        *_, info = env.step(actions.submit(PDAG.empty(6)))
    return info


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_final_score_is_a_copy_every_time(env_id: str) -> None:
    env = gym.make(env_id)
    info = _end(env, env_id)
    original = info["score"].copy()
    details = env.unwrapped.details()  # type: ignore[attr-defined]
    info["score"][0] = -123.0
    details["score"]["directed_f1"] = -123.0
    action = np.int64(0) if env_id.startswith("ACDB-Design") else actions.intervene(0, 1.0)
    *_, later = env.step(action)
    np.testing.assert_array_equal(later["score"], original)
    assert env.unwrapped.details()["score"]["directed_f1"] != -123.0  # type: ignore[attr-defined]
    later["score"][1] = -1
    *_, again = env.step(action)
    np.testing.assert_array_equal(again["score"], original)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_step_after_the_end_is_the_same_in_both_envs(env_id: str) -> None:
    env = gym.make(env_id)
    _end(env, env_id)
    action = np.int64(0) if env_id.startswith("ACDB-Design") else actions.intervene(0, 1.0)
    _, reward, terminated, truncated, _info = env.step(action)
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert env.unwrapped.details()["error"] == "the episode has ended; call reset()"


def test_the_design_env_renders_text_and_pictures_without_the_answer_before_the_end() -> None:
    env = gym.make("ACDB-Design-L1-v0", render_mode="ansi", estimator="pc")
    env.reset(options={"manifest_index": 0})
    env.step(np.int64(0))
    text = env.render()
    assert isinstance(text, str)
    assert "intervene on X0" in text and "current estimate:" in text and "true DAG" not in text
    env.step(np.int64(6))
    final = env.render()
    assert isinstance(final, str) and "true DAG" in final and "directed F1" in final
    picture = gym.make("ACDB-Design-L1-v0", render_mode="rgb_array")
    picture.reset(options={"manifest_index": 0})
    image = picture.render()
    assert isinstance(image, np.ndarray) and image.ndim == 3 and image.shape[2] == 3


@pytest.mark.parametrize("seed", [1.5, "3", True, -1, np.float64(2.0), [1]])
def test_a_seed_that_is_not_a_non_negative_integer_is_a_value_error(seed: Any) -> None:
    from acdb_gym.envs.design.vector import DesignVectorEnv

    envs: list[Any] = [gym.make(env_id) for env_id in ENV_IDS]
    envs.append(DesignVectorEnv(2, "L1", ladder="v0"))
    for env in envs:
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
        env.reset(seed=np.int64(3))  # a NumPy integer is an integer
