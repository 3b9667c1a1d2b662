"""Stated hypotheses: an annotation of ``intervene`` that leaves the episode unchanged, recorded
per experiment and returned with the submission as a :class:`RevisionRecord`."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.envs import actions
from acdb_gym.envs.actions import Intervene
from acdb_gym.envs.hypotheses import RevisionRecord, graph_from_text, graph_to_text

CHAIN = PDAG.from_edges(6, directed=[(0, 1), (1, 2)], undirected=[(3, 4)])


def _rollout(env: gym.Env[Any, Any], steps: list[Any]) -> list[Any]:
    observation, info = env.reset(seed=3, options={"manifest_index": 1})
    frames: list[Any] = [observation]
    for action in steps:
        observation, reward, terminated, truncated, info = env.step(action)
        frames.append(
            (observation, reward, terminated, truncated, env.unwrapped.details().get("error"))
        )
    return [*frames, info["score"], env.unwrapped.details()["score"]]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return bool(a == b)


def test_a_stated_hypothesis_changes_nothing_but_the_record_and_the_anytime_f1() -> None:
    plain = [actions.intervene(2, 3.0), actions.intervene(0, -1.0), actions.submit(CHAIN)]
    stated = [
        actions.intervene(2, 3.0, hypothesis=PDAG.empty(6)),
        actions.intervene(0, -1.0, hypothesis=CHAIN),
        actions.submit(CHAIN),
    ]
    env = gym.make("ACDB-L1-v0")
    without = _rollout(env, plain)
    with_hypotheses = _rollout(env, stated)
    unstated_score, stated_score = without.pop(), with_hypotheses.pop()
    unstated_info, stated_info = without.pop(), with_hypotheses.pop()
    assert _same(without, with_hypotheses)
    assert np.isnan(unstated_score.pop("anytime_f1"))
    # The empty graph (F1 0), then CHAIN, held to the budget: (0 + f + ... + f) / (B + 1).
    anytime = stated_score.pop("anytime_f1")
    final, budget = stated_score["directed_f1"], env.unwrapped.session.budget
    assert anytime == pytest.approx(final * budget / (budget + 1))
    assert _same(unstated_score, stated_score)
    # In info the undefined anytime F1 reads -1 (UNSCORED); every other entry is the same.
    where = list(SCORE_FIELDS).index("anytime_f1")
    assert unstated_info[where] == -1.0 and stated_info[where] == pytest.approx(anytime)
    assert _same(np.delete(unstated_info, where), np.delete(stated_info, where))
    record = env.unwrapped.details()["revision"]
    assert record == RevisionRecord(6, (2, 0), (PDAG.empty(6), CHAIN), CHAIN)
    assert (
        record.after(0) == PDAG.empty(6) and record.after(1) == CHAIN and record.after(2) == CHAIN
    )


def test_the_action_space_and_its_sampling_are_unchanged() -> None:
    env = gym.make("ACDB-L1-v0")
    env.action_space.seed(7)
    sampled = [env.action_space.sample() for _ in range(50)]
    assert not any("hypothesis" in payload for _, payload in sampled)
    stated = actions.intervene(1, 2.0, hypothesis=CHAIN)
    assert env.action_space.contains(stated)  # the optional annotation is accepted
    kind, payload = stated
    assert not env.action_space.contains((kind, {**payload, "hypothesis": np.full((6, 6), 3)}))
    assert not env.action_space.contains((kind, {**payload, "other": 1}))
    assert not actions.action_space(6, 7).contains(stated)  # a bare OneOf knows no annotation


def test_every_episode_end_returns_the_record() -> None:
    env = gym.make("ACDB-L1-v0")
    env.reset(options={"manifest_index": 0})
    env.step(actions.intervene(4, 1.0))  # no hypothesis stated
    *_, _info = env.step(actions.submit(CHAIN))
    assert env.unwrapped.details()["revision"] == RevisionRecord(6, (4,), (None,), CHAIN)
    assert not env.unwrapped.details()["revision"].stated


def test_truncation_records_the_scored_empty_graph() -> None:
    env = gym.make("ACDB-L1-v0", max_steps=1)
    env.reset(options={"manifest_index": 0})
    *_, truncated, _info = env.step(actions.intervene(1, 2.0, hypothesis=CHAIN))
    assert truncated
    assert env.unwrapped.details()["revision"] == RevisionRecord(6, (1,), (CHAIN,), PDAG.empty(6))


def test_a_refused_experiment_records_nothing() -> None:
    env = gym.make("ACDB-L1-v0", panel="observational")
    env.reset(options={"manifest_index": 0})
    _, _, _, _, _ = env.step(actions.intervene(1, 2.0, hypothesis=CHAIN))
    assert "observational panel" in env.unwrapped.details()["error"]
    *_, _info = env.step(actions.submit(CHAIN))
    assert (
        env.unwrapped.details()["revision"].targets == ()
        and env.unwrapped.details()["revision"].hypotheses == ()
    )


def test_an_invalid_graph_is_recorded_as_none_and_the_experiment_still_runs() -> None:
    env = gym.make("ACDB-L1-v0")
    env.reset(options={"manifest_index": 0})
    kind, payload = actions.intervene(1, 2.0)
    cyclic = np.zeros((6, 6), dtype=np.int64)
    cyclic[0, 1] = cyclic[1, 0] = 1
    _, _, _, _, info = env.step((kind, {**payload, "hypothesis": cyclic}))
    assert "error" not in env.unwrapped.details() and info["interventions_used"] == 1
    assert "hypothesis not recorded" in env.unwrapped.details()["hypothesis_error"]
    *_, info = env.step(actions.submit(CHAIN))
    assert "hypothesis_error" not in env.unwrapped.details()
    assert env.unwrapped.details()["revision"].hypotheses == (None,)


@pytest.mark.parametrize(
    "codes",
    [np.zeros((5, 5), dtype=np.int64), np.full((6, 6), 3), np.zeros((6, 6)), "0>1"],
)
def test_malformed_codes_are_not_actions(codes: Any) -> None:
    env = gym.make("ACDB-L1-v0")
    env.reset(options={"manifest_index": 0})
    kind, payload = actions.intervene(1, 2.0)
    with pytest.raises(ValueError, match="hypothesis"):
        env.step((kind, {**payload, "hypothesis": codes}))
    assert env.unwrapped.steps_taken == 0


def test_typed_intervene_round_trips_its_hypothesis() -> None:
    typed = Intervene(2, 1.5, hypothesis=DAG.from_edges(3, [(0, 1)]))
    assert typed.hypothesis == PDAG.from_edges(3, directed=[(0, 1)])
    assert actions.decode(actions.encode(typed), n_nodes=3) == typed
    assert repr(Intervene(2, 1.5)) == "Intervene(var=2, value=1.5)"
    with pytest.raises(ValueError, match="hypothesis must be a PDAG"):
        Intervene(2, 1.5, hypothesis="0>1")  # type: ignore[arg-type]


def test_graph_text_round_trips_and_names_bad_tokens() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        order = rng.permutation(7)
        pairs = [(order[a], order[b]) for a in range(7) for b in range(a + 1, 7)]
        kinds = rng.integers(0, 3, len(pairs))
        directed = [p for p, k in zip(pairs, kinds, strict=True) if k == 1]
        undirected = [p for p, k in zip(pairs, kinds, strict=True) if k == 2]
        graph = PDAG.from_edges(7, directed=directed, undirected=undirected)
        assert graph_from_text(graph_to_text(graph), n_nodes=7) == graph
    assert graph_to_text(PDAG.empty(3)) == "" and graph_from_text("", n_nodes=3) == PDAG.empty(3)
    with pytest.raises(ValueError, match="'0=1'"):
        graph_from_text("0>1,0=1", n_nodes=3)
    with pytest.raises(ValueError, match="outside"):
        graph_from_text("0>3", n_nodes=3)


def test_record_dict_round_trip_and_errors() -> None:
    record = RevisionRecord(6, (2, 0), (PDAG.empty(6), None), CHAIN)
    data = record.to_dict()
    assert data == {"n_nodes": 6, "targets": [2, 0], "before": ["", None], "final": "0>1,1>2,3-4"}
    assert RevisionRecord.from_dict(data) == record
    with pytest.raises(ValueError, match="needs"):
        RevisionRecord.from_dict({"n_nodes": 6})
    with pytest.raises(ValueError, match="targets"):
        RevisionRecord.from_dict({**data, "targets": "20"})
    with pytest.raises(ValueError, match="one hypothesis"):
        RevisionRecord.from_dict({**data, "before": [""]})
