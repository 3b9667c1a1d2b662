"""Train an intervention-design policy on ``ACDB-Design-L{n}-v0`` with stable-baselines3.

    acdb train --level L1 --total-timesteps 80000 --out runs/rl_l1
    python experiments/train_rl.py --help

MaskablePPO (sb3-contrib, which reads the env's ``action_masks()``) by default, PPO as an
option. Training instances come from seeds at or above 2**32, periodic evaluation uses the
held-out validation seeds 10**9, 10**9 + 1, ... and the final comparison
(``experiments/eval_rl.py``) the test seeds from 10**9 + 10**6: none of them is a manifest seed
(all below 200000), so no benchmark instance is ever trained or tuned on.

Everything lands in ``--out``: ``config.json``; ``progress.csv`` (SB3's training metrics);
``eval.csv`` (one row per evaluation: timesteps, wall time, steps/s, validation reward);
``learning_curve.png``; ``checkpoints/step_N.zip``; ``timing.json`` (env vs SB3 time); and the
final ``model.zip``, which ``RLAgent.load`` and ``--agents rl:PATH`` accept.

The run reads top to bottom: config (:mod:`~acdb_gym.agents.rl.train_config`) -> worlds and
envs (:mod:`~acdb_gym.agents.rl.training_worlds`) -> model -> learn with periodic held-out
evaluation (:mod:`~acdb_gym.agents.rl.evaluation`) -> save, plot, time (this module).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from acdb_gym import __version__
from acdb_gym.agents.rl.agent import (
    MissingExtraError,
    PolicyMetadata,
    algorithm_class,
    save_policy,
)
from acdb_gym.agents.rl.evaluation import HeldOutEvaluator, plot_learning_curve
from acdb_gym.agents.rl.train_config import TrainConfig, build_parser, parse_config
from acdb_gym.agents.rl.training_worlds import (
    TEST_SEED_BASE,
    TRAIN_SEED_LOW,
    VALIDATION_SEED_BASE,
    EnvTimer,
    TrainingInstances,
    held_out_instances,
)
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.envs.design.env import InterventionDesignEnv

__all__ = [
    "TEST_SEED_BASE",
    "TRAIN_SEED_LOW",
    "VALIDATION_SEED_BASE",
    "EnvTimer",
    "TrainConfig",
    "TrainResult",
    "TrainingInstances",
    "build_parser",
    "held_out_instances",
    "main",
    "parse_config",
    "train",
]


# --------------------------------------------------------------------------- training
@dataclass(frozen=True)
class TrainResult:
    """What a training run produced.

    Attributes:
        model_path: the final policy (``OUT/model.zip``).
        eval_rows: one dict per evaluation (the rows of ``eval.csv``).
        timing: wall-time breakdown (also in ``OUT/timing.json``).
    """

    model_path: Path
    eval_rows: tuple[dict[str, float], ...]
    timing: dict[str, float]


def train(config: TrainConfig) -> TrainResult:
    """Train a policy as ``config`` says and write everything to ``config.out``.

    Raises:
        MissingExtraError: torch / stable-baselines3 / sb3-contrib are missing.
    """
    # 1. Libraries, threads and the output directory.
    algo_class = algorithm_class(config.algo)  # raises MissingExtraError without [rl]
    import torch
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    torch.set_num_threads(config.torch_threads)
    config.out.mkdir(parents=True, exist_ok=True)
    (config.out / "config.json").write_text(json.dumps(asdict(config), indent=2, default=str))

    # 2. Environments on training-only instance seeds, timed: one design env per worker, or
    #    config.envs worlds of the native vector env in this process.
    def make_env(rank: int) -> Any:
        def thunk() -> gym.Env[np.ndarray, np.int64]:
            env = InterventionDesignEnv(config.level, **config.env_settings)
            return EnvTimer(TrainingInstances(env, seed=config.seed + rank))

        return thunk

    timer = _vector_env(config) if config.envs else None
    if timer is not None:
        vec_env = VecMonitor(timer)
    else:
        thunks = [make_env(rank) for rank in range(config.workers)]
        vec_env = VecMonitor(DummyVecEnv(thunks) if config.workers == 1 else SubprocVecEnv(thunks))

    def env_time(name: str) -> float:
        """The training envs' summed ``env_seconds`` or ``env_cpu_seconds``."""
        if timer is not None:
            return float(getattr(timer, name))
        return float(sum(vec_env.get_attr(name)))

    # 3. The model. SB3 seeds Python, NumPy and torch globally from `seed`, and the envs with
    #    seed + rank (TrainingInstances restarts its seed stream from that).
    #    MaskablePPO gets the package's bit-identical, faster masked policy (masked_policy.py).
    model = algo_class(
        _policy_class(config),
        vec_env,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        ent_coef=config.ent_coef,
        policy_kwargs={"net_arch": list(config.net_arch)},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    logger = configure(str(config.out), ["csv"])
    model.set_logger(logger)
    metadata = PolicyMetadata(
        algo=config.algo,
        ladder=config.ladder,
        level=config.level,
        n_nodes=get_level(config.ladder, config.level).spec.d,
        estimator=config.estimator,
        shift=config.shift,
        alpha=config.alpha,
        seed=config.seed,
        version=__version__,
    )

    # 4. Learn, evaluating on held-out validation instances and checkpointing on schedule.
    start, start_cpu = time.perf_counter(), time.process_time()
    evaluator = HeldOutEvaluator(config, metadata, start)
    try:
        model.learn(total_timesteps=config.total_timesteps, callback=evaluator)
    finally:
        logger.close()  # progress.csv: closed here, not whenever the logger is collected
    timing = _timing(
        timesteps=model.num_timesteps,
        workers=config.workers,
        learn_seconds=time.perf_counter() - start,
        env_seconds=env_time("env_seconds"),
        eval_seconds=evaluator.eval_seconds,
        checkpoint_seconds=evaluator.checkpoint_seconds,
    )
    if config.workers == 1:  # CPU times are per process: comparable only with in-process envs
        learn_cpu = time.process_time() - start_cpu
        overhead_cpu = evaluator.eval_cpu_seconds + evaluator.checkpoint_cpu_seconds
        env_cpu = env_time("env_cpu_seconds")
        timing.update(_cpu_timing(learn_cpu - overhead_cpu, env_cpu))
    vec_env.close()
    if not evaluator.rows or evaluator.rows[-1]["timesteps"] < model.num_timesteps:
        evaluator.evaluate(model)

    # 5. Save the final model, the learning curve and the time breakdown.
    model_path = save_policy(model, config.out / "model.zip", evaluator._metadata(model))
    plot_learning_curve(evaluator.rows, config)
    (config.out / "timing.json").write_text(json.dumps(timing, indent=2) + "\n")
    return TrainResult(model_path, tuple(evaluator.rows), timing)


def _vector_env(config: TrainConfig) -> Any:
    """``config.envs`` worlds of the design env's native vector env for SB3, timed: each
    generated at its reset from a seed at or above :data:`TRAIN_SEED_LOW` drawn from its own
    generator (world ``i``'s from ``seed + i``, as SB3 seeds a ``VecEnv``)."""
    from acdb_gym.agents.rl.vec_env import SB3DesignVecEnv, TimedVecEnv

    settings = {**config.env_settings, "min_world_seed": TRAIN_SEED_LOW}
    venv = SB3DesignVecEnv.of(config.envs, config.level, **settings)
    return TimedVecEnv(venv)


def _policy_class(config: TrainConfig) -> Any:
    """``FastMaskableActorCriticPolicy`` for MaskablePPO (the same numbers as sb3-contrib's
    ``MlpPolicy``, faster), ``"MlpPolicy"`` for PPO."""
    if config.algo != "maskable_ppo":
        return "MlpPolicy"
    from acdb_gym.agents.rl.masked_policy import FastMaskableActorCriticPolicy

    return FastMaskableActorCriticPolicy


def _timing(
    *,
    timesteps: int,
    workers: int,
    learn_seconds: float,
    env_seconds: float,
    eval_seconds: float,
    checkpoint_seconds: float,
) -> dict[str, float]:
    """Where the training time went. ``env_seconds`` sums the workers' time in ``reset`` and
    ``step`` (training envs only); with one worker the rest of the training time is SB3's
    (policy inference, GAE, gradient updates, logging). With several workers the env time runs
    in parallel, so only the per-worker mean is comparable."""
    training_seconds = learn_seconds - eval_seconds - checkpoint_seconds
    env_per_worker = env_seconds / workers
    sb3_seconds = training_seconds - env_per_worker
    return {
        "timesteps": float(timesteps),
        "workers": float(workers),
        "learn_seconds": learn_seconds,
        "training_seconds": training_seconds,
        "eval_seconds": eval_seconds,
        "checkpoint_seconds": checkpoint_seconds,
        "env_seconds": env_seconds,
        "env_seconds_per_worker": env_per_worker,
        "sb3_seconds": sb3_seconds,
        "steps_per_second": timesteps / training_seconds,
        "env_share": env_per_worker / training_seconds,
        "sb3_share": sb3_seconds / training_seconds,
    }


def _cpu_timing(training_cpu_seconds: float, env_cpu_seconds: float) -> dict[str, float]:
    """The same split in CPU seconds of this process (robust to other load on the machine)."""
    return {
        "training_cpu_seconds": training_cpu_seconds,
        "env_cpu_seconds": env_cpu_seconds,
        "sb3_cpu_seconds": training_cpu_seconds - env_cpu_seconds,
        "env_cpu_share": env_cpu_seconds / training_cpu_seconds,
        "sb3_cpu_share": 1.0 - env_cpu_seconds / training_cpu_seconds,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acdb train`` and ``experiments/train_rl.py``."""
    config = parse_config(argv)
    try:
        result = train(config)
    except MissingExtraError as error:
        print(f"acdb train: error: {error}", file=sys.stderr)
        return 2
    timing = result.timing
    final = result.eval_rows[-1]
    share = f"env {timing['env_share']:.0%} / SB3 {timing['sb3_share']:.0%} of wall time"
    if "env_cpu_share" in timing:
        share += f", env {timing['env_cpu_share']:.0%} of CPU time"
    print(
        f"saved {result.model_path}: {int(timing['timesteps'])} steps in "
        f"{timing['training_seconds']:.0f} s ({timing['steps_per_second']:.1f} steps/s; {share}; "
        f"evaluation {timing['eval_seconds']:.0f} s); validation reward "
        f"{final['val_mean_reward']:.3f}"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
