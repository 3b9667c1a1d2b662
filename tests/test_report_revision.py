"""The report's revision analysis, pinned by a scripted agent whose hypotheses are built from the
true DAG (hand-computed F1s and flip counts), and the sweep's revision records end to end."""

from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.envs import actions
from acdb_gym.envs.hypotheses import RevisionRecord
from acdb_gym.report import write_report
from acdb_gym.report.document import markdown_text
from acdb_gym.report.revision import (
    ExperimentChange,
    episode_revision,
    revision_markdown,
    summarize_revisions,
    true_dag_of,
)
from acdb_gym.results import example_row, read_results
from acdb_gym.sweep.run import SweepConfig, run_sweep
from tests.test_report import typed

LEVEL = get_level("v0", "L0")  # d = 5, k = 8; manifest 0 has budget 3, manifest 1 budget 4


def _scripted_graphs(dag: DAG) -> tuple[list[PDAG], PDAG]:
    """Hypotheses before three experiments and the submission, from the true DAG's 8 edges
    e1..e8 (row-major) and a non-edge ``(a, b)`` that follows a topological order:

    - H0: empty                                          directed F1 0
    - H1: e1 e2 e3 right, e4 reversed, e5 undirected      P 3/4, R 3/8: F1 1/2
    - H2: H1 (the second experiment changes nothing)     F1 1/2
    - submission: e1 e2 e4 e5 right, e3 gone, a -> b      P 4/5, R 4/8: F1 8/13
    """
    e = dag.edges()
    assert len(e) == 8
    order = dag.topological_order()
    extra = next(
        (a, b)
        for i, a in enumerate(order)
        for b in order[i + 1 :]
        if not dag.adjacency[a, b] and not dag.adjacency[b, a]
    )
    d = dag.n_nodes
    h1 = PDAG.from_edges(d, directed=[e[0], e[1], e[2], e[3][::-1]], undirected=[e[4]])
    final = PDAG.from_edges(d, directed=[e[0], e[1], e[3], e[4], extra])
    return [PDAG.empty(d), h1, h1], final


class ScriptedAgent:
    """States known hypotheses: the scripted graphs on an instance with a budget of 3, else the
    true DAG with one experiment. Privileged only to build its script from the truth."""

    name = "scripted"
    privileged = True
    states_hypotheses = True

    def observe_instance(self, instance: Instance) -> None:
        dag = instance.dag
        if instance.budget == 3:
            self._before, self._final = _scripted_graphs(dag)
        else:
            self._before, self._final = [dag.to_pdag()], dag.to_pdag()

    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        self._done = 0

    def act(self, observation: Any, info: Mapping[str, Any]) -> Any:
        if self._done < len(self._before):
            self._done += 1
            hypothesis = self._before[self._done - 1]
            return actions.intervene(self._done - 1, 1.0, hypothesis=hypothesis)
        return actions.submit(self._final)


def _row(index: int) -> dict[str, Any]:
    env = gym.make(LEVEL.env_id)
    result = run_episode(env, ScriptedAgent(), manifest_index=index)
    assert result.revision is not None
    row = example_row(
        job_id=f"job{index}",
        ladder="v0",
        level="L0",
        manifest_index=index,
        seed=LEVEL.manifest_seed(index),
        agent="scripted",
        panel="active",
        directed_f1=result.score.directed_f1,
        revision=result.revision.to_dict(),
    )
    return json.loads(json.dumps(row))  # as the results file holds it


def test_the_scripted_episode_has_the_hand_computed_f1s_and_flips() -> None:
    row = _row(0)
    assert LEVEL.instance(0).budget == 3 and row["revision"]["targets"] == [0, 1, 2]
    (typed_row,) = typed(row)
    analysis = episode_revision(RevisionRecord.from_dict(row["revision"]), true_dag_of(typed_row))
    assert analysis.f1_after == pytest.approx([0.0, 0.5, 0.5, 8 / 13])
    assert analysis.f1_after[-1] == pytest.approx(row["directed_f1"])  # the scored submission
    assert analysis.changes == (
        ExperimentChange(toward=3, away=0, sideways=2),  # e1-e3 found; e4 reversed, e5 undirected
        ExperimentChange(toward=0, away=0, sideways=0),
        ExperimentChange(toward=2, away=2, sideways=0),  # e4, e5 fixed; e3 lost, a -> b added
    )


def test_two_scripted_episodes_aggregate_by_experiment_index() -> None:
    # Episode 2 (budget 4): the truth before its one experiment and after it.
    (summary,) = summarize_revisions(typed(_row(0), _row(1)))
    assert (summary.ladder, summary.level, summary.label) == ("v0", "L0", "scripted (active)")
    assert (summary.episodes, summary.experiments) == (2, 4)
    means = [Fraction(mean).limit_denominator(100) for mean, _ in summary.f1_after]
    assert means == [Fraction(1, 2), Fraction(3, 4), Fraction(1, 2), Fraction(8, 13)]
    assert [n for _, n in summary.f1_after] == [2, 2, 1, 1]
    assert (summary.toward, summary.away, summary.sideways) == (5 / 4, 2 / 4, 2 / 4)
    assert summary.unchanged == 2 / 4
    text = markdown_text(revision_markdown([summary]))
    assert "| scripted (active) | L0 | 2 | 4 | 1.25 | 0.50 | 0.50 | 50.0 |" in text
    assert "| scripted (active) | L0 | 50.0 (2) | 75.0 (2) | 50.0 (1) | 61.5 (1) |" in text


def test_unstated_hypotheses_are_left_out() -> None:
    dag = LEVEL.instance(0).dag
    record = RevisionRecord(5, (0, 1), (None, PDAG.empty(5)), dag.to_pdag())
    analysis = episode_revision(record, dag)
    assert analysis.f1_after == (None, 0.0, 1.0)
    assert analysis.changes == (None, ExperimentChange(toward=8, away=0, sideways=0))


def test_a_record_of_another_size_names_the_row() -> None:
    row = {**_row(0), "level": "L3", "seed": get_level("v0", "L3").manifest_seed(0)}
    with pytest.raises(ValueError, match=r"job0.*5 nodes, the true DAG 8"):
        summarize_revisions(typed(row))


@pytest.mark.slow
def test_sweep_rows_of_the_active_baselines_carry_revisions(tmp_path: Path) -> None:
    config = SweepConfig(
        out=tmp_path,
        levels=("L0",),
        seeds=2,
        agents=("pc", "pc_greedy", "pc_active"),
        progress=False,
    )
    run_sweep(config)
    rows = read_results(tmp_path / "results.jsonl", mode="strict").rows
    assert {r.agent for r in rows if r.revision is not None} == {"pc_greedy", "pc_active"}
    for row in rows:
        record = row.revision_record()
        if record is not None:
            analysis = episode_revision(record, true_dag_of(row))
            assert analysis.f1_after[-1] == pytest.approx(row.directed_f1)
    files = write_report(tmp_path)
    report = files.markdown.read_text()
    assert "## Revision" in report and "| pc_active (active) | L0 | 2 |" in report
    assert (tmp_path / "revision.csv").exists()
