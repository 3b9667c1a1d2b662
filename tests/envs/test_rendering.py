"""Renders: ``ansi`` text and ``rgb_array`` pictures, before and after the end."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.rendering import EDGE_COLOURS, classify_edges

D = 6


def unwrapped(env: gym.Env[Any, Any]) -> ACDBEnv:
    base = env.unwrapped
    assert isinstance(base, ACDBEnv)
    return base


def scored_submission(truth: DAG) -> PDAG:
    """A submission with one edge of every class: correct, reversed, unresolved, extra, and
    the rest missing."""
    (a, b), (c, e), (f, g) = truth.edges()[:3]
    skeleton = truth.skeleton()
    extra = next((i, j) for i in range(D) for j in range(i + 1, D) if not skeleton[i, j])
    return PDAG.from_edges(D, directed=[(a, b), (e, c), extra], undirected=[(f, g)])


def play_to_the_end(env: gym.Env[Any, Any]) -> None:
    env.step(actions.intervene(0, 2.0))
    truth = unwrapped(env).hidden_instance().dag
    _, _, terminated, _, _ = env.step(actions.submit(scored_submission(truth)))
    assert terminated


def colour_pixels(image: np.ndarray, hex_colour: str) -> int:
    rgb = np.array([int(hex_colour[k : k + 2], 16) for k in (1, 3, 5)])
    return int((np.abs(image.astype(int) - rgb).max(axis=-1) <= 3).sum())


@pytest.mark.slow
def test_rgb_render_before_and_after_the_end(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    env = gym.make("ACDB-L1-v0", render_mode="rgb_array")
    env.reset(options={"manifest_index": 2})
    before = env.render()
    assert isinstance(before, np.ndarray)
    assert before.ndim == 3 and before.shape[2] == 3 and before.dtype == np.uint8
    play_to_the_end(env)
    after = env.render()
    assert isinstance(after, np.ndarray)
    assert after.shape == before.shape and after.dtype == np.uint8
    assert not np.array_equal(before, after)
    # Each class has an edge drawn in its colour (far more pixels than its legend line alone);
    # before the end no edge is drawn (a few grey pixels are anti-aliased node outlines).
    for name, colour in EDGE_COLOURS.items():
        assert colour_pixels(before, colour) < 100, name
        assert colour_pixels(after, colour) > 200, name

    path = tmp_path / "episode.png"
    plt.imsave(path, after)
    loaded = plt.imread(path)
    assert loaded.shape[:2] == after.shape[:2]
    assert np.abs(loaded[..., :3] * 255 - after).max() <= 1


def test_rgb_render_before_the_end_shows_nothing_of_the_graph() -> None:
    env = gym.make("ACDB-L1-v0", render_mode="rgb_array")
    by_budget: dict[int, list[int]] = {}
    for index in range(8):
        env.reset(options={"manifest_index": index})
        by_budget.setdefault(unwrapped(env).session.budget, []).append(index)
    pair = next(group for group in by_budget.values() if len(group) >= 2)[:2]
    pictures: list[np.ndarray] = []
    graphs = []
    for index in pair:
        env.reset(options={"manifest_index": index})
        env.step(actions.intervene(3, 1.0))
        env.step(actions.correlation(0, 1))  # invalid with tools="raw": the same error text
        picture = env.render()
        assert isinstance(picture, np.ndarray)
        pictures.append(picture)
        graphs.append(unwrapped(env).hidden_instance().dag)
    assert graphs[0] != graphs[1]
    assert np.array_equal(pictures[0], pictures[1])


def test_ansi_render_before_and_after_the_end() -> None:
    env = gym.make("ACDB-L1-v0", render_mode="ansi")
    env.reset(options={"manifest_index": 2})
    env.step(actions.intervene(0, 2.0))
    text = env.render()
    assert isinstance(text, str)
    assert "interventions left" in text and "do(X0=2)" in text
    assert "true DAG" not in text and "submitted" not in text
    truth = unwrapped(env).hidden_instance().dag
    env.step(actions.submit(scored_submission(truth)))
    text = env.render()
    assert isinstance(text, str)
    true_edges = ", ".join(f"X{i}->X{j}" for i, j in truth.edges())
    assert f"true DAG:  {true_edges}" in text
    assert "submitted:" in text and "directed F1" in text and "SHD" in text


def test_classify_edges_puts_every_pair_in_one_class() -> None:
    truth = DAG.from_edges(D, [(0, 1), (1, 2), (2, 3), (3, 4)])
    submission = PDAG.from_edges(D, directed=[(0, 1), (2, 1), (0, 5)], undirected=[(2, 3)])
    assert classify_edges(truth, submission) == {
        "correct": [(0, 1)],
        "reversed": [(2, 1)],
        "unresolved": [(2, 3)],
        "extra": [(0, 5)],
        "missing": [(3, 4)],
    }


def test_render_without_a_mode_warns_and_returns_none() -> None:
    env = ACDBEnv("L1")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


def test_rgb_render_emits_no_warnings() -> None:
    env = gym.make("ACDB-L1-v0", render_mode="rgb_array")
    env.reset(options={"manifest_index": 2})
    play_to_the_end(env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.render()


def test_text_render_names_the_last_action_even_when_it_was_invalid() -> None:
    env = ACDBEnv("L1", render_mode="ansi")
    env.reset(options={"manifest_index": 0})
    env.step(actions.intervene(3, 2.5))
    text = env.render()
    assert isinstance(text, str) and "last action: Intervene(var=3, value=2.5)" in text
    cyclic = np.zeros((D, D), dtype=np.int64)
    cyclic[0, 1] = cyclic[1, 0] = 1  # both directions: not a mixed graph
    env.step((int(actions.ActionKind.SUBMIT_GRAPH), {"graph": cyclic}))
    text = env.render()
    assert isinstance(text, str)
    assert "last action: invalid submit_graph action (" in text and "error:" in text
