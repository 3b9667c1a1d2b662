"""The selection record: test numbers only for a checkpoint chosen on the validation range."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from dataclasses import asdict
from pathlib import Path
from types import ModuleType

import pytest

torch = pytest.importorskip("torch")

from acdb_gym.agents.rl.agent import PolicyMetadata, RLAgent  # noqa: E402
from acdb_gym.agents.rl.graph_policy import NetworkConfig, NodeMessagePolicy, save_network  # noqa: E402
from acdb_gym.agents.rl.selection import (  # noqa: E402
    PAPER,
    UnselectedPolicyError,
    check_selected,
    protocol_levels,
    record_path,
    write_selection,
)
from acdb_gym.core.ladders.shipped import FEW_SAMPLE_LADDER, LADDERS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def policy(tmp_path: Path) -> Path:
    torch.manual_seed(0)
    network = NodeMessagePolicy(NetworkConfig(hidden=8, layers=1))
    metadata = asdict(PolicyMetadata("ppo", "v0+v1", "mix", 0, "pc", observation="graph"))
    return save_network(network, tmp_path / "model", metadata)


def test_a_selected_file_passes_and_still_loads(policy: Path) -> None:
    record = write_selection(policy, indices=range(20), scores={"a": 0.7, "b": 0.8}, chosen="b")
    assert check_selected(policy) == record
    assert record["indices"] == [0, 19]
    assert record_path(policy).name == "model.selection.json"
    RLAgent.load(policy)


def test_unselected_changed_or_test_selected_files_are_refused(policy: Path) -> None:
    with pytest.raises(UnselectedPolicyError, match="no selection record"):
        check_selected(policy)
    with pytest.raises(ValueError, match="validation"):
        write_selection(policy, indices=range(90, 110), scores={"a": 1.0}, chosen="a")
    write_selection(policy, indices=range(10), scores={"a": 1.0}, chosen="a")
    # A hand-written record that claims test indices is refused.
    record = json.loads(record_path(policy).read_text())
    record_path(policy).write_text(json.dumps({**record, "indices": [100, 199]}))
    with pytest.raises(UnselectedPolicyError, match="validation range"):
        check_selected(policy)
    record_path(policy).write_text(json.dumps(record))
    check_selected(policy)
    # Replacing the file after selection breaks the digest.
    policy.write_bytes(policy.read_bytes() + b"changed")
    with pytest.raises(UnselectedPolicyError, match="digest"):
        check_selected(policy)


def test_eval_script_refuses_test_numbers_before_evaluating(
    policy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script("eval_design_policy")
    played: list[object] = []
    monkeypatch.setattr(script, "run_level", lambda *args: played.append(args))
    out = tmp_path / "evaluation.json"
    with pytest.raises(UnselectedPolicyError):
        script.main(["--model", str(policy), "--first-index", "100", "--out", str(out)])
    with pytest.raises(UnselectedPolicyError):  # a range that reaches into the test split
        script.main(["--model", str(policy), "--first-index", "95", "--instances", "10"])
    assert not played and not out.exists()


def test_selection_script_writes_a_record_the_eval_script_accepts(
    policy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    select = _script("select_design_policy")
    other = tmp_path / "other.zip"
    shutil.copyfile(policy, other)
    scores = {str(policy): 0.5, str(other): 0.6}
    monkeypatch.setattr(select, "validation_score", lambda model, *_: scores[str(model)])
    out = tmp_path / "chosen" / "model.zip"
    select.main(["--candidates", str(policy), str(other), "--instances", "3", "--out", str(out)])
    record = check_selected(out)
    assert record["chosen"] == str(other) and record["indices"] == [0, 2]


def test_protocol_levels_are_the_paper_ladders_or_one_ladder() -> None:
    paper = protocol_levels(PAPER)
    assert paper == [*LADDERS["v0"].values(), *LADDERS["v1"].values()]
    assert protocol_levels("v1-n3") == list(FEW_SAMPLE_LADDER.values())
    with pytest.raises(ValueError, match="ladder must be 'paper' or one of"):
        protocol_levels("v9")


def test_a_ladder_selection_scores_that_ladder_and_records_it(
    policy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    select = _script("select_design_policy")
    real = select.validation_score(policy, [0], "v1-n3", ["true_cpdag"])  # 6 episodes
    assert 0.0 < real <= 1.0
    seen: list[tuple[object, ...]] = []

    def score(model: Path, indices: list[int], ladder: str, estimators: list[str]) -> float:
        seen.append((list(indices), ladder, list(estimators)))
        return 0.5

    monkeypatch.setattr(select, "validation_score", score)
    out = tmp_path / "n3" / "model.zip"
    argv = ["--candidates", str(policy), "--instances", "4", "--out", str(out)]
    select.main([*argv, "--ladder", "v1-n3", "--estimators", "true_cpdag"])
    assert seen == [([0, 1, 2, 3], "v1-n3", ["true_cpdag"])]
    record = check_selected(out)
    assert record["ladder"] == "v1-n3" and len(record["levels"]) == 6
    with pytest.raises(SystemExit):
        select.main([*argv, "--ladder", "v9"])


@pytest.mark.slow
def test_eval_script_plays_a_ladders_levels(
    policy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script("eval_design_policy")
    out = tmp_path / "evaluation.json"
    argv = ["--model", str(policy), "--ladder", "v1-n3", "--first-index", "0"]
    script.main([*argv, "--instances", "1", "--custom-instances", "0", "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["ladder"] == "v1-n3" and result["manifest_indices"] == [0, 0]
    cells = {(row["level"], row["estimator"]) for row in result["levels"]}
    assert len(cells) == 12 and ("Nonlinear-L4", "pc") in cells
    assert "**sum over the 6 levels**" in out.with_suffix(".md").read_text()


def test_eval_rl_refuses_test_indices_for_an_unselected_flat_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script("eval_rl")
    flat = tmp_path / "model.zip"
    shutil.copyfile(ROOT / "models" / "acdb_design_l1_v0" / "model.zip", flat)
    loaded: list[object] = []
    monkeypatch.setattr(script.RLAgent, "load", lambda *args, **kwargs: loaded.append(args))
    for indices in ("100:200", "99:101"):
        with pytest.raises(UnselectedPolicyError, match="no selection record"):
            script.main(["--model", str(flat), "--indices", indices])
    assert not loaded  # refused before the policy was even read
    monkeypatch.undo()
    # Selected on its own level's validation indices, it is evaluated on the test split.
    select = _script("select_design_policy")
    select.main(["--candidates", str(flat), "--instances", "1", "--out", str(flat)])
    record = check_selected(flat)
    assert (record["ladder"], record["levels"]) == ("v0", ["v0 L1"])
    out = tmp_path / "evaluation.json"
    argv = ["--model", str(flat), "--indices", "100:102", "--estimator", "true_cpdag"]
    script.main([*argv, "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["selection"] == record and result["episodes"] == 2


@pytest.mark.parametrize("name", ["acdb_design_graph", "acdb_design_l1_v0", "acdb_design_n3"])
def test_every_committed_policy_carries_a_valid_selection_record(name: str) -> None:
    record = check_selected(ROOT / "models" / name / "model.zip")
    assert record["indices"][1] < 100


def test_the_few_sample_policy_plays_its_ladder_through_the_full_env() -> None:
    import gymnasium as gym

    from acdb_gym.agents.base import run_episode
    from acdb_gym.core.ladders.shipped import get_level

    agent = RLAgent.load(ROOT / "models" / "acdb_design_n3" / "model.zip")
    assert (agent.metadata.ladder, agent.metadata.observation) == ("v1-n3", "graph")
    env = gym.make("ACDB-FewSample-Nonlinear-L2-v0")
    instance = get_level("v1-n3", "Nonlinear-L2").instance(3)
    result = run_episode(env, agent, instance=instance)
    assert not result.truncated and 0.0 <= result.score.directed_f1 <= 1.0
