"""The natively vectorized design env and MaskablePPO on it, against CartPole in the same run.

``ACDB-Design-L1-v0`` (or ``ACDB-Design-<--level>-<--ladder>``) made with
``gym.make_vec(..., vectorization_mode="vector_entry_point")``
(:class:`~acdb_gym.envs.design.vector.DesignVectorEnv`, PC estimator) over ``--envs`` worlds,
against Gymnasium's own native ``CartPole-v1`` vector env with as many copies. Every row takes
uniformly random valid actions (the ``action_masks()`` of each world), resets included, and
counts env steps (one per world per vector step).

Rows:

* **bank, cold**: worlds drawn from an instance bank (``--bank-size`` generated seeds, built
  here; its build and load time are reported), timed from the first step: each world's
  constants are prepared on its first reset and every new (state, targets) pair pays one Meek
  closure or one score;
* **bank, warm**: the same env after ``--warmup`` further vector steps, when the remembered
  closures and scores serve most steps (what a long training run sees);
* **fresh**: no bank, `--fresh-envs` worlds (default: ``--envs``), ``--repeats`` runs of
  ``--steps / 10`` vector steps (at least 5); every reset generates a
  world and runs PC (the single env's default); the worlds that reset in one step are set up
  together (one stacked PC, stacked summaries).

Training (a second table): ``--train-repeats`` paired rounds (default 3); each round trains
every model below for ``--timesteps`` steps right beside stable-baselines3's plain ``PPO`` on
``make_vec_env("CartPole-v1")`` (the peer), all with ``--train-envs`` copies, ``MlpPolicy``
(64-64), ``n_steps=256``, ``batch_size=256``, 10 epochs, one torch thread. Each row prints its
median steps per wall second (per CPU second in brackets, which other processes on a busy
machine inflate less) and the median over rounds of its rate over that round's peer: the ratio
the issue's target reads (MaskablePPO on the warm design vector env at least 1.0× PPO on
CartPole). The models: sb3-contrib's ``MaskablePPO`` on
:class:`~acdb_gym.agents.rl.vec_env.SB3DesignVecEnv` over the warmed bank, with
:class:`~acdb_gym.agents.rl.masked_policy.FastMaskableActorCriticPolicy` (the package's
bit-identical masked policy) and with sb3-contrib's own ``MlpPolicy``; the fast policy once on
a second, unseen bank (cold; first round only); both policies on CartPole (``ActionMasker``
with every action valid: the same algorithm on the peer env); PPO on CartPole with its
observation zero-padded to the design env's width (what the wider input costs the networks);
and plain ``PPO`` on the warmed bank (it does not read the masks; the design env takes a
masked-out action as "stop"). A last column splits each row's CPU time a step into the env's
``step_wait`` (the env and its VecEnv adapter) and the rest (the algorithm).

With ``--env-only`` the training rows are skipped, and the header adds what a bank's world
costs to load against what it costs to generate (the alternative to storing it: keeping only the
seed and regenerating the world at load), per world, on the same seeds.

Run: ``python benchmarks/design_vector.py [--smoke] [--envs N] [--bank-size W]
[--ladder v1-n3 --level Nonlinear-L2 --env-only]``
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import base_parser, load_average, markdown_table, print_header


def _timed(run: Callable[[], int]) -> tuple[float, float]:
    """Env steps per wall second and per CPU second of ``run()`` (which returns its steps)."""
    wall, cpu = time.perf_counter(), time.process_time()
    steps = run()
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def _random_steps(envs: Any, steps: int, seed: int = 0) -> Callable[[], int]:
    """Run ``steps`` vector steps of uniformly random valid actions (resets included)."""
    rng = np.random.default_rng(seed)
    masked = hasattr(envs, "action_masks")
    n = envs.num_envs
    actions_n = int(envs.single_action_space.n)

    def run() -> int:
        for _ in range(steps):
            if masked:
                masks = envs.action_masks()
                actions = (rng.random(masks.shape) * masks).argmax(axis=1)
            else:
                actions = rng.integers(actions_n, size=n)
            envs.step(actions)
        return steps * n

    return run


def _cell(rates: list[tuple[float, float]]) -> str:
    wall = statistics.median(rate[0] for rate in rates)
    cpu = statistics.median(rate[1] for rate in rates)
    return f"{wall:,.0f} ({cpu:,.0f})"


def _train(model: Any, timesteps: int) -> tuple[float, float, float]:
    """Steps per wall and per CPU second of ``model.learn(timesteps)``, and the CPU
    microseconds a step spent in the env's ``step_wait`` (the env and its VecEnv adapter)."""
    venv = model.get_env()
    step_wait = venv.step_wait
    env_cpu = [0.0]

    def timed_step_wait() -> Any:
        start = time.process_time()
        result = step_wait()
        env_cpu[0] += time.process_time() - start
        return result

    venv.step_wait = timed_step_wait

    def run() -> int:
        model.learn(total_timesteps=timesteps)
        return int(model.num_timesteps)  # whole rollouts: at least `timesteps`

    wall, cpu = _timed(run)
    return wall, cpu, env_cpu[0] / model.num_timesteps * 1e6


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--envs", type=int, default=64, help="worlds per vector env")
    parser.add_argument("--bank-size", type=int, default=1000, help="worlds in each bank")
    parser.add_argument("--steps", type=int, default=None, help="vector steps per timed run")
    parser.add_argument("--warmup", type=int, default=None, help="vector steps before 'warm'")
    parser.add_argument("--timesteps", type=int, default=None, help="training steps")
    parser.add_argument("--train-envs", type=int, default=16, help="worlds while training")
    parser.add_argument("--ladder", default="v0", help="a ladder with Design ids (default v0)")
    parser.add_argument("--level", default="L1", help="a level of that ladder (default L1)")
    parser.add_argument("--env-only", action="store_true", help="skip the training rows")
    parser.add_argument(
        "--fresh-envs", type=int, default=None, help="worlds in the fresh row (default --envs)"
    )
    parser.add_argument(
        "--train-repeats", type=int, default=None, help="paired training rounds (default 3)"
    )
    args = parser.parse_args()
    ladder, level = args.ladder, args.level
    env_id = f"ACDB-Design-{level}-{ladder}"
    warnings.filterwarnings("ignore")
    import gymnasium as gym
    import torch

    import acdb_gym  # noqa: F401  (registers the ids)
    from acdb_gym.core.worlds.instance import generate_instance
    from acdb_gym.envs.design.bank import build_bank, load_bank

    torch.set_num_threads(1)
    repeats = args.repeats or (1 if args.smoke else 3)
    steps = args.steps or (20 if args.smoke else 300)
    warmup = args.warmup if args.warmup is not None else (20 if args.smoke else 2000)
    timesteps = args.timesteps or (512 if args.smoke else 16384)
    bank_size = 20 if args.smoke else args.bank_size
    n = args.envs
    fresh_n = args.fresh_envs or n
    if args.train_repeats is None:
        args.train_repeats = 1 if args.smoke else 3
    rows: list[list[str]] = []
    training: list[list[str]] = []
    with tempfile.TemporaryDirectory() as scratch:
        start = time.perf_counter()
        bank = build_bank(
            Path(scratch) / "a", ladder=ladder, level=level, seeds=range(10**6, 10**6 + bank_size)
        )
        built = time.perf_counter() - start
        start = time.perf_counter()
        bank = load_bank(bank.path, sha256=bank.sha256)
        loaded = time.perf_counter() - start
        # The same worlds regenerated from their seeds (with a deadline, generation skips its
        # cache of recent instances; one that never passes changes nothing).
        start = time.perf_counter()
        for seed in bank.seeds[:200]:
            generate_instance(bank.level.spec, seed, deadline=math.inf)
        generated = (time.perf_counter() - start) / len(bank.seeds[:200])

        cartpole = gym.make_vec("CartPole-v1", n, vectorization_mode="vector_entry_point")
        cartpole.reset(seed=0)
        cartpole_rates = [_timed(_random_steps(cartpole, steps * 10, r)) for r in range(repeats)]

        envs = gym.make_vec(env_id, n, vectorization_mode="vector_entry_point", bank=bank)
        envs.reset(seed=0)
        cold = [_timed(_random_steps(envs, steps, seed=1))]
        _random_steps(envs, warmup, seed=2)()
        warm = [_timed(_random_steps(envs, steps, seed=3 + r)) for r in range(repeats)]
        fresh_envs = gym.make_vec(env_id, fresh_n, vectorization_mode="vector_entry_point")
        fresh_envs.reset(seed=0)
        fresh_steps = max(steps // 10, 5)
        fresh = [_timed(_random_steps(fresh_envs, fresh_steps, seed=4 + r)) for r in range(repeats)]
        peer = _cell(cartpole_rates)
        rows += [
            [f"env steps/s, bank of {bank_size}, cold (N={n})", _cell(cold), peer],
            [f"env steps/s, bank of {bank_size}, warm (N={n})", _cell(warm), peer],
            [
                f"env steps/s, fresh worlds (N={fresh_n}, generation + PC per reset)",
                _cell(fresh),
                peer,
            ],
        ]

        if not args.env_only:
            training = _training_rows(args, bank, scratch, timesteps)
        train_note = "" if args.env_only else f"; training {timesteps} steps"
        load_note = (
            f" ({loaded / bank_size * 1e3:.2f} ms a world; regenerating a world from its seed "
            f"instead takes {generated * 1e3:.2f} ms)"
        )

    print_header(
        f"The vectorized design env at training speed ({env_id}, PC estimator)",
        f"Steps per wall second (per CPU second in brackets); env rows the median of "
        f"{repeats} runs of {steps} vector steps (cold: one run; fresh: of {fresh_steps}), "
        f"CartPole {steps * 10} vector "
        f"steps per run{train_note}. Bank of {bank_size} worlds: built in "
        f"{built:.1f} s (generation + PC), loaded and verified in {loaded:.2f} s{load_note}.",
    )
    print(markdown_table(["measure", env_id, "CartPole-v1 (same run)"], rows))
    if training:
        print(
            f"\nTraining, {args.train_repeats} paired rounds of {timesteps} steps (MlpPolicy "
            "64-64, n_steps=256, batch_size=256, 10 epochs, one torch thread): steps per wall "
            "second (per CPU second), the median over rounds, and the median over rounds of the "
            "rate over that round's PPO on CartPole; the last column splits a step's CPU time "
            "into the env's `step_wait` (env and VecEnv adapter) and the rest (the "
            "algorithm: policy, buffer, updates).\n"
        )
        headers = [
            "training run",
            "steps/s",
            "× PPO on CartPole, wall (CPU)",
            "CPU µs a step: env + algorithm",
        ]
        print(markdown_table(headers, training))
    print(f"\nLoad average at the end: {load_average()}.")


def _training_rows(args: Any, bank: Any, scratch: str, timesteps: int) -> list[list[str]]:
    """MaskablePPO and its peers (module docstring), on ``bank`` and on a second, unseen one:
    ``--train-repeats`` paired rounds, each timing every model once right beside its round's
    PPO on CartPole; a row's ratio is the median over rounds of its rate over that peer's."""
    from acdb_gym.envs.design.bank import build_bank

    ladder, level, m = args.ladder, args.level, args.train_envs
    unseen = build_bank(
        Path(scratch) / "b",
        ladder=ladder,
        level=level,
        seeds=range(2 * 10**6, 2 * 10**6 + len(bank)),
    )
    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    from acdb_gym.agents.rl.masked_policy import FastMaskableActorCriticPolicy
    from acdb_gym.agents.rl.vec_env import SB3DesignVecEnv

    settings: dict[str, Any] = {"n_steps": 256, "batch_size": 256, "n_epochs": 10, "seed": 0}

    def design(chosen: Any) -> Any:
        return SB3DesignVecEnv.of(m, level, ladder=ladder, bank=chosen)

    def masked_cartpole(env: Any) -> Any:
        return ActionMasker(env, lambda _: np.ones(2, dtype=bool))

    width = int(np.prod(design(bank).observation_space.shape))

    def wide_cartpole(env: Any) -> Any:
        """CartPole's 4 numbers followed by zeros, as wide as the design env's observation."""
        space = gym.spaces.Box(-np.inf, np.inf, (width,), np.float32)

        def pad(observation: np.ndarray) -> np.ndarray:
            wide = np.zeros(width, dtype=np.float32)
            wide[: observation.size] = observation
            return wide

        return gym.wrappers.TransformObservation(env, pad, space)

    fast = FastMaskableActorCriticPolicy
    models: dict[str, Callable[[], Any]] = {
        "PPO on CartPole (the peer)": lambda: PPO(
            "MlpPolicy", make_vec_env("CartPole-v1", n_envs=m, seed=0), **settings
        ),
        f"MaskablePPO, FastMaskableActorCriticPolicy, warmed bank (N={m})": lambda: MaskablePPO(
            fast, design(bank), **settings
        ),
        f"MaskablePPO, sb3-contrib's MlpPolicy, warmed bank (N={m})": lambda: MaskablePPO(
            "MlpPolicy", design(bank), **settings
        ),
        f"MaskablePPO, FastMaskableActorCriticPolicy, unseen bank (N={m}; first round only)": (
            lambda: MaskablePPO(fast, design(unseen), **settings)
        ),
        "MaskablePPO, FastMaskableActorCriticPolicy, on CartPole (all actions valid)": lambda: (
            MaskablePPO(
                fast,
                make_vec_env("CartPole-v1", n_envs=m, seed=0, wrapper_class=masked_cartpole),
                **settings,
            )
        ),
        "MaskablePPO, sb3-contrib's MlpPolicy, on CartPole (all actions valid)": lambda: (
            MaskablePPO(
                "MlpPolicy",
                make_vec_env("CartPole-v1", n_envs=m, seed=0, wrapper_class=masked_cartpole),
                **settings,
            )
        ),
        "PPO on CartPole, observation zero-padded to the design env's width": lambda: PPO(
            "MlpPolicy",
            make_vec_env("CartPole-v1", n_envs=m, seed=0, wrapper_class=wide_cartpole),
            **settings,
        ),
        f"PPO (masks not read), warmed bank (N={m})": lambda: PPO(
            "MlpPolicy", design(bank), **settings
        ),
    }
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    ratios: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    env_costs: dict[str, list[float]] = {name: [] for name in models}
    for round_ in range(args.train_repeats):
        measured: dict[str, tuple[float, float, float]] = {}
        for name, make in models.items():
            if "unseen" in name and round_ > 0:
                continue  # the unseen bank is unseen once
            measured[name] = _train(make(), timesteps)
        peer = measured["PPO on CartPole (the peer)"]
        for name, (wall, cpu, env_us) in measured.items():
            rates[name].append((wall, cpu))
            ratios[name].append((wall / peer[0], cpu / peer[1]))
            env_costs[name].append(env_us)
    rows = []
    for name in models:
        wall = statistics.median(ratio[0] for ratio in ratios[name])
        cpu = statistics.median(ratio[1] for ratio in ratios[name])
        step_us = statistics.median(1e6 / rate[1] for rate in rates[name])
        env_us = statistics.median(env_costs[name])
        rows.append(
            [
                name,
                _cell(rates[name]),
                f"{wall:.2f}× ({cpu:.2f}×)",
                f"{env_us:.0f} + {step_us - env_us:.0f}",
            ]
        )
    return rows


if __name__ == "__main__":
    main()
