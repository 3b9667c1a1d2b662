"""The natively vectorized design env and the instance bank (every family the design env takes):
equal to N single envs, by id."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding

from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.discovery import pc_cpdag
from acdb_gym.envs.design import cache
from acdb_gym.envs.design.bank import BankError, InstanceBank, build_bank, load_bank
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.design.vector import DesignVectorEnv
from acdb_gym.envs.episode_rules import choose_instance

SEEDS = range(500_000, 500_006)
NONLINEAR_SEEDS = range(600_000, 600_020)


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> InstanceBank:
    return build_bank(tmp_path_factory.mktemp("banks") / "l1", ladder="v0", level="L1", seeds=SEEDS)


@pytest.fixture(scope="module")
def nonlinear_bank(tmp_path_factory: pytest.TempPathFactory) -> InstanceBank:
    """20 worlds of the few-sample ladder's nonlinear L2 (v1-nonlinear's worlds, n_int = 3)."""
    return build_bank(
        tmp_path_factory.mktemp("banks") / "n3",
        ladder="v1-n3",
        level="Nonlinear-L2",
        seeds=NONLINEAR_SEEDS,
    )


def _random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])


def _assert_same(vector_obs: Any, i: int, single_obs: Any) -> None:
    if isinstance(single_obs, dict):
        for key, value in single_obs.items():
            np.testing.assert_array_equal(vector_obs[key][i], value, err_msg=key)
    else:
        np.testing.assert_array_equal(vector_obs[i], single_obs)


def _run_side_by_side(
    venv: DesignVectorEnv,
    singles: list[InterventionDesignEnv],
    seed: int,
    steps: int,
    next_options: Any = lambda i: None,
) -> int:
    """Step the vector env and the single envs with the same random valid actions; every
    observation, reward, termination and final score must be equal. Returns the episodes
    that ended."""
    rng = np.random.default_rng(seed)
    obs, info = venv.reset(seed=seed)
    for i, env in enumerate(singles):
        single_obs, single_info = env.reset(seed=seed + i, options=next_options(i))
        _assert_same(obs, i, single_obs)
        assert info["total_budget"][i] == single_info["total_budget"]
        assert not info["scored"][i] and info["instance_seed"][i] == -1
    ended = [False] * len(singles)
    episodes = 0
    for _ in range(steps):
        masks = venv.action_masks()
        np.testing.assert_array_equal(masks, np.stack(venv.call("action_masks")))
        actions = _random_actions(masks, rng)
        obs, reward, terminated, truncated, info = venv.step(actions)
        assert not truncated.any()
        for i, env in enumerate(singles):
            if ended[i]:  # next-step autoreset: the vector env resets, the action is ignored
                single_obs, _ = env.reset(options=next_options(i))
                single_reward, single_term, single_info = 0.0, False, {}
            else:
                np.testing.assert_array_equal(masks[i], env.action_masks())
                single_obs, single_reward, single_term, _, single_info = env.step(int(actions[i]))
            _assert_same(obs, i, single_obs)
            assert reward[i] == single_reward
            assert terminated[i] == single_term
            if single_term:
                episodes += 1
                assert info["scored"][i] and info["_score"][i]
                assert info["instance_seed"][i] == single_info["instance_seed"]
                np.testing.assert_array_equal(info["score"][i], single_info["score"])
                assert venv.call("details")[i]["score"] == env.details()["score"]
                assert venv.call("details")[i]["submission"] == env.details()["submission"]
            ended[i] = single_term
    return episodes


def test_vector_env_equals_single_envs_on_the_same_seeds() -> None:
    venv = DesignVectorEnv(3, "L1", ladder="v0")
    singles = [InterventionDesignEnv("L1", ladder="v0") for _ in range(3)]
    assert _run_side_by_side(venv, singles, seed=11, steps=30) >= 10


def test_fresh_worlds_start_from_pc_run_together_and_cached() -> None:
    """Worlds reset together start from PC run on all their samples at once, equal to PC on
    each alone; a start already cached is served from the cache, and the others are cached."""
    cache.clear()
    level = get_level("v0", "L1")
    seed, n = 700, 4
    instances = [choose_instance(level, None, seeding.np_random(seed + i)[0]) for i in range(n)]
    cached = cache.starting_graph(instances[2], "pc")
    venv = DesignVectorEnv(n, "L1", ladder="v0")
    venv.reset(seed=seed)
    for i, instance in enumerate(instances):
        world = venv._worlds[i]
        assert world is not None and world.instance.digest() == instance.digest()
        expected = pc_cpdag(instance.d_obs)  # one at a time, without the cache
        np.testing.assert_array_equal(world.start_directed, expected.directed)
        np.testing.assert_array_equal(world.start_undirected, expected.undirected)
        assert cache.starting_graph(instance, "pc") == expected
    assert cache.starting_graph(instances[2], "pc") is cached
    assert venv._worlds[2].start_directed is cached.directed  # type: ignore[union-attr]


def test_vector_env_on_a_bank_equals_single_envs_given_the_same_worlds(
    bank: InstanceBank,
) -> None:
    # Each reset draws its bank index from the world's own generator, as documented.
    seed, n = 3, 2
    draws = [seeding.np_random(seed + i)[0] for i in range(n)]

    def options(i: int) -> dict[str, Any]:
        return {"instance": bank.instances[int(draws[i].integers(len(bank)))]}

    venv = DesignVectorEnv(n, "L1", ladder="v0", bank=bank, observation="graph", max_nodes=8)
    singles = [
        InterventionDesignEnv("L1", ladder="v0", observation="graph", max_nodes=8) for _ in range(n)
    ]
    assert _run_side_by_side(venv, singles, seed, steps=25, next_options=options) >= 5


def test_vector_env_on_a_nonlinear_bank_equals_single_envs_given_the_same_worlds(
    nonlinear_bank: InstanceBank,
) -> None:
    bank = load_bank(
        nonlinear_bank.path, sha256=nonlinear_bank.sha256
    )  # the worlds as read back, not as built
    seed, n = 21, 3
    draws = [seeding.np_random(seed + i)[0] for i in range(n)]

    def options(i: int) -> dict[str, Any]:
        return {"instance": bank.instances[int(draws[i].integers(len(bank)))]}

    venv = DesignVectorEnv(n, "Nonlinear-L2", ladder="v1-n3", bank=bank)
    singles = [InterventionDesignEnv("Nonlinear-L2", ladder="v1-n3") for _ in range(n)]
    assert _run_side_by_side(venv, singles, seed, steps=20, next_options=options) >= 5


def test_true_cpdag_estimator_and_neg_shd_reward_match_too(bank: InstanceBank) -> None:
    kwargs: dict[str, Any] = {"estimator": "true_cpdag", "reward": "neg_shd"}
    draws = [seeding.np_random(7)[0]]
    venv = DesignVectorEnv(1, "L1", ladder="v0", bank=bank, **kwargs)
    singles = [InterventionDesignEnv("L1", ladder="v0", **kwargs)]
    _run_side_by_side(
        venv,
        singles,
        7,
        steps=15,
        next_options=lambda i: {"instance": bank.instances[int(draws[i].integers(len(bank)))]},
    )


def test_same_step_autoreset_reports_the_last_observation(bank: InstanceBank) -> None:
    venv = DesignVectorEnv(2, "L1", ladder="v0", bank=bank, autoreset_mode="same_step")
    obs, _ = venv.reset(seed=0)
    stop = venv.single_action_space.n - 1
    before = obs.copy()
    obs, reward, terminated, _, info = venv.step(np.array([stop, 0]))
    assert terminated.tolist() == [True, False]
    np.testing.assert_array_equal(info["final_obs"][0], before[0])
    assert info["_final_obs"].tolist() == [True, False]
    assert reward[0] == info["final_info"]["score"][0, SCORE_FIELDS.index("directed_f1")]
    assert obs[0, -1] == 1.0 and info["interventions_used"][0] == 0  # a fresh episode


def test_design_ids_make_the_native_vector_env() -> None:
    envs = gym.make_vec("ACDB-Design-L1-v0", 3, vectorization_mode="vector_entry_point")
    assert isinstance(envs, DesignVectorEnv)
    assert envs.observation_space.shape == (3, InterventionDesignEnv().observation_space.shape[0])
    assert envs.action_space == gym.spaces.MultiDiscrete([7, 7, 7])
    obs, info = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    assert envs.action_masks().shape == (3, 7) and envs.action_masks().all()
    assert (
        set(info)
        & set(
            envs.single_observation_space.keys()
            if isinstance(envs.single_observation_space, gym.spaces.Dict)
            else []
        )
        == set()
    )
    v1 = gym.make_vec("ACDB-Design-Calibrated-L2-v1", 2, vectorization_mode="vector_entry_point")
    assert (v1.level.ladder, v1.level.name) == ("v1", "L2")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "estimator", "rule"),
    [
        ("ACDB-Design-FewSample-L4-v0", "pc", "power"),
        ("ACDB-Design-FewSample-Nonlinear-L2-v0", "true_cpdag", "power"),
        ("ACDB-Design-FewSample-L1-v0", "true_cpdag", "always"),
        ("ACDB-Design-FewSample-L1-v0", "pc", "band"),
        ("ACDB-Design-FewSample-L2-v0", "true_cpdag", "significant"),
        ("ACDB-Design-FewSample-L1-v0", "bic", "power"),
    ],
)
def test_few_sample_ids_make_a_vector_env_equal_to_single_envs(
    env_id: str, estimator: str, rule: str
) -> None:
    """The regime's ids (3 samples per experiment, v1 and v1-nonlinear worlds) by id: the native
    vector env plays what the single envs play on the same seeds, under every estimator and
    orientation rule, and the single env on a manifest index is the source ladder's world of
    that index."""
    kwargs = {"estimator": estimator, "rule": rule}
    venv = gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point", **kwargs)
    assert isinstance(venv, DesignVectorEnv) and venv.level.ladder == "v1-n3"
    singles = [gym.make(env_id, **kwargs).unwrapped for _ in range(2)]
    assert _run_side_by_side(venv, singles, seed=5, steps=12) >= 3  # type: ignore[arg-type]
    single = singles[0]
    single.reset(options={"manifest_index": 120})
    source = "v1-nonlinear" if "Nonlinear" in env_id else "v1"
    level = venv.level.name.removeprefix("Nonlinear-")
    world = get_level(source, level).instance(120)
    np.testing.assert_array_equal(single.hidden_instance().d_obs, world.d_obs)


def test_bad_arguments_are_refused(bank: InstanceBank) -> None:
    with pytest.raises(ValueError, match="num_envs must be a positive integer"):
        DesignVectorEnv(0)
    with pytest.raises(ValueError, match="autoreset_mode must be"):
        DesignVectorEnv(1, autoreset_mode="disabled")
    with pytest.raises(ValueError, match="bank holds worlds of v0 L1, not of v0 L2"):
        DesignVectorEnv(1, "L2", bank=bank)
    venv = DesignVectorEnv(2, bank=bank)
    with pytest.raises(RuntimeError, match="call reset"):
        venv.step(np.array([0, 0]))
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must be in \[0, 6\]"):
        venv.step(np.array([0, 7]))
    with pytest.raises(ValueError, match="actions must be 2 integers"):
        venv.step(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="takes no reset options"):
        venv.reset(options={"manifest_index": 0})


def test_bank_worlds_are_the_generated_worlds(bank: InstanceBank) -> None:
    loaded = load_bank(bank.path, sha256=bank.sha256)
    assert loaded.seeds == tuple(SEEDS)
    for instance, start in zip(loaded.instances[:3], loaded.starts[:3], strict=True):
        fresh = generate_instance(loaded.level.spec, instance.seed)
        assert instance.digest() == fresh.digest()
        np.testing.assert_array_equal(instance.d_obs, fresh.d_obs)
        np.testing.assert_array_equal(instance.scm.weights, fresh.scm.weights)
        assert (instance.i_star, instance.budget) == (fresh.i_star, fresh.budget)
        ours, theirs = instance.intervention_rng(), fresh.intervention_rng()
        np.testing.assert_array_equal(
            instance.scm.sample_do(1, 2.0, 50, ours), fresh.scm.sample_do(1, 2.0, 50, theirs)
        )
        expected = pc_cpdag(fresh.d_obs)
        np.testing.assert_array_equal(start.directed, expected.directed)
        np.testing.assert_array_equal(start.undirected, expected.undirected)


def test_bank_refuses_tampering_and_misuse(bank: InstanceBank, tmp_path: Path) -> None:
    with pytest.raises(BankError, match="exists"):
        build_bank(bank.path, ladder="v0", level="L1", seeds=[1])
    with pytest.raises(BankError, match="distinct non-negative"):
        build_bank(tmp_path / "b", ladder="v0", level="L1", seeds=[1, 1])
    with pytest.raises(BankError, match=r"without hidden confounders.*latent=2"):
        build_bank(tmp_path / "b", ladder="v1-latent", level="L1", seeds=[1])
    with pytest.raises(BankError, match="no bank at"):
        load_bank(tmp_path / "nothing")
    copy = build_bank(tmp_path / "c", ladder="v0", level="L1", seeds=[7, 8])
    index = json.loads((copy.path / "bank.json").read_text())
    index["digests"][1] = "0" * 16
    (copy.path / "bank.json").write_text(json.dumps(index))
    with pytest.raises(BankError, match="world of seed 8 has digest"):
        load_bank(copy.path, trust=True)
    with open(copy.path / "worlds.npz", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(BankError, match="does not match the SHA-256"):
        load_bank(copy.path, trust=True)
    assert not list(tmp_path.glob(".*"))  # no staging directory left behind


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ladder", "level", "seeds"),
    [
        ("v1-n3", "Nonlinear-L2", None),
        ("v1-nongaussian", "L1", range(5)),
        ("real", "Sachs", range(3)),
        ("real", "Sachs-Fitted-Spline", range(2)),
    ],
)
def test_every_family_is_banked_bit_for_bit(
    nonlinear_bank: InstanceBank, tmp_path: Path, ladder: str, level: str, seeds: range | None
) -> None:
    """Worlds read back are generate_instance's for the same (spec, seed): digest, data,
    covariates, names, and the same interventional samples from the same generator."""
    source = nonlinear_bank.path if seeds is None else tmp_path / "b"
    if seeds is not None:
        build_bank(source, ladder=ladder, level=level, seeds=seeds)
    loaded = load_bank(source, trust=True)
    assert loaded.level is get_level(ladder, level)
    for instance, start in zip(loaded.instances, loaded.starts, strict=True):
        fresh = generate_instance(loaded.level.spec, instance.seed)
        assert type(instance.scm) is type(fresh.scm)
        assert instance.digest() == fresh.digest()
        np.testing.assert_array_equal(instance.d_obs, fresh.d_obs)
        assert (instance.i_star, instance.budget) == (fresh.i_star, fresh.budget)
        assert instance.min_relevant_abs_rho == fresh.min_relevant_abs_rho
        assert instance.dependence_measure == fresh.dependence_measure
        assert instance.variable_names == fresh.variable_names
        ours, theirs = instance.intervention_rng(), fresh.intervention_rng()
        for var in range(instance.n_nodes):
            np.testing.assert_array_equal(
                instance.scm.sample_do(var, 1.5, 3, ours), fresh.scm.sample_do(var, 1.5, 3, theirs)
            )
        expected = pc_cpdag(fresh.d_obs)
        np.testing.assert_array_equal(start.directed, expected.directed)
        np.testing.assert_array_equal(start.undirected, expected.undirected)


def test_a_format_1_bank_still_loads(bank: InstanceBank, tmp_path: Path) -> None:
    """Format 1 (linear-Gaussian worlds, before other families were banked) has the same
    arrays and no measures or names in its index."""
    copy = tmp_path / "old"
    shutil.copytree(bank.path, copy)
    index = json.loads((copy / "bank.json").read_text())
    del index["dependence_measures"], index["variable_names"]
    (copy / "bank.json").write_text(json.dumps({**index, "format": 1}))
    loaded = load_bank(copy, trust=True)
    assert [i.digest() for i in loaded.instances] == [i.digest() for i in bank.instances]


def test_a_nonlinear_bank_refuses_a_changed_mechanism(
    nonlinear_bank: InstanceBank, tmp_path: Path
) -> None:
    """A mechanism parameter changed in worlds.npz, with the file's hash recorded anew, is
    caught by the world's digest; a truncated parameter array by its sizes."""
    copy = tmp_path / "bank"
    shutil.copytree(nonlinear_bank.path, copy)
    with np.load(copy / "worlds.npz") as data:
        arrays = {name: data[name] for name in data.files}

    def write(changed: dict[str, np.ndarray]) -> None:
        with open(copy / "worlds.npz", "wb") as handle:
            np.savez(handle, **changed)
        index = json.loads((copy / "bank.json").read_text())
        index["sha256"] = hashlib.sha256((copy / "worlds.npz").read_bytes()).hexdigest()
        (copy / "bank.json").write_text(json.dumps(index))

    first = arrays["mechanism_sizes"][0].sum()  # the first world's parameters come first
    changed = arrays["mechanism_parameters"].copy()
    changed[first - 1] += 1e-6
    write({**arrays, "mechanism_parameters": changed})
    with pytest.raises(BankError, match=f"world of seed {NONLINEAR_SEEDS[0]} has digest"):
        load_bank(copy, trust=True)
    write({**arrays, "mechanism_parameters": changed[:-1]})
    with pytest.raises(BankError, match="cannot be read back: mechanism_sizes sum to"):
        load_bank(copy, trust=True)
    index = json.loads((copy / "bank.json").read_text())
    index["format"] = 9
    (copy / "bank.json").write_text(json.dumps(index))
    with pytest.raises(BankError, match="bank format 9"):
        load_bank(copy, trust=True)


def test_maskable_ppo_trains_on_the_sb3_adapter(bank: InstanceBank) -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from acdb_gym.agents.rl.vec_env import SB3DesignVecEnv

    venv = SB3DesignVecEnv.of(4, "L1", ladder="v0", bank=bank)
    venv.seed(0)
    obs = venv.reset()
    assert obs.shape == (4, venv.observation_space.shape[0])
    stop = np.full(4, venv.action_space.n - 1)
    obs, reward, done, infos = venv.step(stop)
    assert done.all() and all("terminal_observation" in info for info in infos)
    assert [info["score"]["directed_f1"] for info in infos] == pytest.approx(reward.tolist())
    assert np.stack(venv.env_method("action_masks")).shape == (4, 7)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert model.num_timesteps == 64
    with pytest.raises(ValueError, match="same_step"):
        SB3DesignVecEnv(DesignVectorEnv(2, bank=bank))


def test_every_element_of_the_action_space_steps(bank: InstanceBank) -> None:
    """``MultiDiscrete`` holds boolean arrays (NumPy casts them to integers): step takes them
    as the integers they stand for, as every element of the space."""
    venv = DesignVectorEnv(2, bank=bank)
    venv.reset(seed=0)
    actions = np.array([True, False])
    assert venv.action_space.contains(actions)
    twin = DesignVectorEnv(2, bank=bank)
    twin.reset(seed=0)
    for ours, theirs in zip(venv.step(actions), twin.step(np.array([1, 0])), strict=True):
        if isinstance(ours, dict):
            assert ours.keys() == theirs.keys()
        else:
            np.testing.assert_array_equal(ours, theirs)
