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

The script reads top to bottom: config -> envs -> model -> learn with periodic held-out
evaluation -> save, plot, time.
"""

from __future__ import annotations

import argparse
import ast
import csv
import inspect
import json
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal, SupportsFloat, get_args, get_origin, get_type_hints

import gymnasium as gym
import numpy as np

from acdb_gym import __version__
from acdb_gym.agents.base import run_episode
from acdb_gym.agents.rl.agent import (
    Algorithm,
    MissingExtraError,
    PolicyMetadata,
    RLAgent,
    algorithm_class,
    save_policy,
)
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.worlds.instance import Instance, generate_instance
from acdb_gym.envs.design.env import Estimator, InterventionDesignEnv

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

TRAIN_SEED_LOW = 2**32
"""Training instances use seeds in ``[2**32, 2**63 - 1)``."""

VALIDATION_SEED_BASE = 10**9
"""Periodic evaluation during training uses seeds ``10**9 + i``."""

TEST_SEED_BASE = 10**9 + 10**6
"""Final comparisons of trained policies use seeds ``10**9 + 10**6 + i``."""

MANIFEST_SEED_BOUND = 200_000
"""Every manifest seed is below this; held-out and training seeds never are."""


# --------------------------------------------------------------------------- config
@dataclass(frozen=True)
class TrainConfig:
    """Training run settings; each field's docstring is its ``--help`` text."""

    out: Path = Path("runs/rl")
    """directory for logs, checkpoints, the learning curve and the final model.zip"""
    level: str = "L1"
    """ladder level to train on (ACDB-Design-LEVEL-v0 for the v0 ladder)"""
    ladder: str = "v0"
    """ladder of the level"""
    estimator: Estimator = "true_cpdag"
    """the design env's estimator: true_cpdag (isolates targeting, about 10x faster per step) or
    pc (what RLAgent uses on ACDBEnv, where the true CPDAG is hidden)"""
    algo: Algorithm = "maskable_ppo"
    """maskable_ppo (sb3-contrib, uses action masks) or ppo (stable-baselines3)"""
    total_timesteps: int = 80_000
    """environment steps of training"""
    workers: int = 1
    """parallel env processes (SubprocVecEnv); 1 runs the env in this process (DummyVecEnv)"""
    seed: int = 0
    """seed of the model and of the training instances (worker i draws from seed + i)"""
    torch_threads: int = 1
    """torch CPU threads"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    n_steps: int = 512
    """rollout steps per worker between updates"""
    batch_size: int = 64
    """minibatch size"""
    n_epochs: int = 10
    """passes over each rollout"""
    gamma: float = 1.0
    """discount factor (episodes are a few steps long, reward only at the end)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    net_arch: tuple[int, ...] = (64, 64)
    """hidden layer sizes of the policy and value networks"""
    shift: float = 3.0
    """intervention value in observational standard deviations above the mean"""
    alpha: float = 0.01
    """significance level of the orientation tests"""
    eval_every: int = 10_000
    """evaluate on the validation seeds every this many steps (0: only at the end)"""
    eval_episodes: int = 100
    """validation instances per evaluation (seeds 10**9, 10**9 + 1, ...)"""
    checkpoint_every: int = 10_000
    """save OUT/checkpoints/step_N.zip every this many steps (0: never)"""
    verbose: bool = True
    """print one line per evaluation"""

    def __post_init__(self) -> None:
        get_level(self.ladder, self.level)
        if self.estimator not in get_args(Estimator):
            raise ValueError(
                f"estimator must be one of {get_args(Estimator)}, got {self.estimator!r}"
            )
        if self.algo not in get_args(Algorithm):
            raise ValueError(f"algo must be one of {get_args(Algorithm)}, got {self.algo!r}")
        positive = ("total_timesteps", "workers", "torch_threads", "n_steps", "batch_size")
        for name in (*positive, "n_epochs", "eval_episodes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("eval_every", "checkpoint_every", "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be non-negative, got {getattr(self, name)}")
        if not self.net_arch or min(self.net_arch) < 1:
            raise ValueError(f"net_arch must be positive layer sizes, got {self.net_arch}")

    @property
    def env_id(self) -> str:
        """The design env's id (for the v0 ladder; other ladders build the class directly)."""
        return f"ACDB-Design-{self.level}-{self.ladder}"


def _field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (read from its source)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(body, ast.ClassDef)
    docs = {}
    for node, after in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def build_parser() -> argparse.ArgumentParser:
    """The trainer's argument parser: one option per :class:`TrainConfig` field."""
    parser = argparse.ArgumentParser(
        prog="acdb train",
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    hints = get_type_hints(TrainConfig)
    docs = _field_docs(TrainConfig)
    for field in fields(TrainConfig):
        kind, help_text = hints[field.name], docs[field.name]
        flag = "--" + field.name.replace("_", "-")
        if kind is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=field.default, help=help_text
            )
        elif get_origin(kind) is Literal:
            parser.add_argument(flag, choices=get_args(kind), default=field.default, help=help_text)
        elif get_origin(kind) is tuple:
            item = get_args(kind)[0]
            parser.add_argument(flag, nargs="+", type=item, default=field.default, help=help_text)
        else:
            parser.add_argument(flag, type=kind, default=field.default, help=help_text)
    return parser


def parse_config(argv: Sequence[str] | None = None) -> TrainConfig:
    """Parse command-line arguments into a :class:`TrainConfig`."""
    values = vars(build_parser().parse_args(argv))
    values["net_arch"] = tuple(values["net_arch"])
    return TrainConfig(**values)


# --------------------------------------------------------------------------- env wrappers
class TrainingInstances(gym.Wrapper[np.ndarray, np.int64, np.ndarray, np.int64]):
    """Resets the design env on instances whose seeds are drawn from ``[2**32, 2**63 - 1)``, so
    training never meets a manifest, validation or test instance.

    Args:
        env: a design env.
        seed: seed of the instance-seed stream (a seed passed to ``reset`` restarts it).
    """

    def __init__(self, env: gym.Env[np.ndarray, np.int64], *, seed: int) -> None:
        super().__init__(env)
        self._rng = np.random.default_rng(seed)
        self._spec = env.unwrapped.level.spec  # type: ignore[attr-defined]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        instance_seed = int(self._rng.integers(TRAIN_SEED_LOW, 2**63 - 1))
        instance = generate_instance(self._spec, instance_seed)
        return self.env.reset(seed=seed, options={**(options or {}), "instance": instance})


class EnvTimer(gym.Wrapper[np.ndarray, np.int64, np.ndarray, np.int64]):
    """Accumulates the wall and CPU time spent inside the wrapped env's ``reset`` and ``step``.

    CPU time (of the calling process) stays meaningful when other work shares the cores.
    """

    def __init__(self, env: gym.Env[np.ndarray, np.int64]) -> None:
        super().__init__(env)
        self.env_seconds = 0.0
        self.env_cpu_seconds = 0.0
        self.env_steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        wall, cpu = time.perf_counter(), time.process_time()
        result = self.env.reset(seed=seed, options=options)
        self._add(wall, cpu)
        return result

    def step(
        self, action: np.int64
    ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        wall, cpu = time.perf_counter(), time.process_time()
        result = self.env.step(action)
        self._add(wall, cpu)
        self.env_steps += 1
        return result

    def _add(self, wall: float, cpu: float) -> None:
        self.env_seconds += time.perf_counter() - wall
        self.env_cpu_seconds += time.process_time() - cpu


def held_out_instances(level: str, base: int, count: int, *, ladder: str = "v0") -> list[Instance]:
    """The ``count`` instances of ``level`` with seeds ``base, base + 1, ...``.

    Raises:
        ValueError: a seed range that reaches into the manifest seeds (below 200000).
    """
    if base < MANIFEST_SEED_BOUND:
        raise ValueError(f"held-out seeds must be >= {MANIFEST_SEED_BOUND}, got base {base}")
    spec = get_level(ladder, level).spec
    return [generate_instance(spec, base + index) for index in range(count)]


# --------------------------------------------------------------------------- evaluation log
EVAL_COLUMNS = (
    "timesteps",
    "wall_seconds",
    "steps_per_second",
    "val_mean_reward",
    "val_standard_error",
    "val_mean_interventions",
    "train_mean_reward",
)


class _Evaluator:
    """Called by SB3 after every vector step: evaluates, logs and checkpoints on schedule."""

    def __init__(self, config: TrainConfig, metadata: PolicyMetadata, start: float) -> None:
        self.config = config
        self.metadata = metadata
        self.start = start
        self.env = InterventionDesignEnv(
            config.level,
            ladder=config.ladder,
            estimator=config.estimator,
            shift=config.shift,
            alpha=config.alpha,
        )
        self.instances = held_out_instances(
            config.level, VALIDATION_SEED_BASE, config.eval_episodes, ladder=config.ladder
        )
        self.rows: list[dict[str, float]] = []
        self.eval_seconds = self.eval_cpu_seconds = 0.0
        self.checkpoint_seconds = self.checkpoint_cpu_seconds = 0.0
        self.next_eval = config.eval_every or None
        self.next_checkpoint = config.checkpoint_every or None
        self.csv_path = config.out / "eval.csv"
        with self.csv_path.open("w", newline="") as handle:
            csv.writer(handle).writerow(EVAL_COLUMNS)

    def __call__(self, local_vars: dict[str, Any], global_vars: dict[str, Any]) -> bool:
        model = local_vars["self"]
        if self.next_eval is not None and model.num_timesteps >= self.next_eval:
            self.evaluate(model)
            self.next_eval += self.config.eval_every
        if self.next_checkpoint is not None and model.num_timesteps >= self.next_checkpoint:
            began, began_cpu = time.perf_counter(), time.process_time()
            path = self.config.out / "checkpoints" / f"step_{model.num_timesteps}.zip"
            save_policy(model, path, self._metadata(model))
            self.checkpoint_seconds += time.perf_counter() - began
            self.checkpoint_cpu_seconds += time.process_time() - began_cpu
            self.next_checkpoint += self.config.checkpoint_every
        return True

    def evaluate(self, model: Any) -> dict[str, float]:
        """Run the deterministic policy once on every validation instance; log one row."""
        began, began_cpu = time.perf_counter(), time.process_time()
        agent = RLAgent(model, self._metadata(model))
        episodes = [run_episode(self.env, agent, instance=inst) for inst in self.instances]
        rewards = np.array([episode.reward for episode in episodes])
        self.eval_seconds += time.perf_counter() - began
        self.eval_cpu_seconds += time.process_time() - began_cpu
        elapsed = time.perf_counter() - self.start
        training_seconds = elapsed - self.eval_seconds - self.checkpoint_seconds
        buffer = [info["r"] for info in (model.ep_info_buffer or [])]
        row = {
            "timesteps": float(model.num_timesteps),
            "wall_seconds": elapsed,
            "steps_per_second": model.num_timesteps / max(training_seconds, 1e-9),
            "val_mean_reward": float(rewards.mean()),
            "val_standard_error": float(rewards.std(ddof=1) / np.sqrt(rewards.size))
            if rewards.size > 1
            else 0.0,
            "val_mean_interventions": float(np.mean([e.interventions for e in episodes])),
            "train_mean_reward": float(np.mean(buffer)) if buffer else float("nan"),
        }
        self.rows.append(row)
        with self.csv_path.open("a", newline="") as handle:
            csv.writer(handle).writerow([row[column] for column in EVAL_COLUMNS])
        if self.config.verbose:
            print(
                f"{int(row['timesteps']):>8} steps  {row['steps_per_second']:6.1f} steps/s  "
                f"validation reward {row['val_mean_reward']:.3f} ± {row['val_standard_error']:.3f}"
                f"  ({row['val_mean_interventions']:.2f} interventions)  "
                f"train reward {row['train_mean_reward']:.3f}",
                flush=True,
            )
        return row

    def _metadata(self, model: Any) -> PolicyMetadata:
        return PolicyMetadata(**{**asdict(self.metadata), "timesteps": int(model.num_timesteps)})


def _plot_learning_curve(rows: Sequence[dict[str, float]], config: TrainConfig) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = np.array([row["timesteps"] for row in rows])
    mean = np.array([row["val_mean_reward"] for row in rows])
    error = np.array([row["val_standard_error"] for row in rows])
    train_reward = np.array([row["train_mean_reward"] for row in rows])
    figure, axis = plt.subplots(figsize=(6.4, 4.0))
    axis.plot(
        steps,
        mean,
        marker="o",
        label=f"validation ({config.eval_episodes} held-out instances, argmax)",
    )
    axis.fill_between(steps, mean - error, mean + error, alpha=0.25)
    axis.plot(steps, train_reward, linestyle="--", label="training episodes (sampled, last 100)")
    axis.set_xlabel("environment steps")
    axis.set_ylabel("terminal reward (directed F1)")
    axis.set_title(f"{config.algo} on {config.env_id}, estimator={config.estimator}")
    axis.grid(alpha=0.3)
    axis.legend(loc="lower right")
    figure.tight_layout()
    path = config.out / "learning_curve.png"
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


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

    # 2. Environments: one design env per worker, on training-only instance seeds, timed.
    def make_env(rank: int) -> Any:
        def thunk() -> gym.Env[np.ndarray, np.int64]:
            env = InterventionDesignEnv(
                config.level,
                ladder=config.ladder,
                estimator=config.estimator,
                shift=config.shift,
                alpha=config.alpha,
            )
            return EnvTimer(TrainingInstances(env, seed=config.seed + rank))

        return thunk

    thunks = [make_env(rank) for rank in range(config.workers)]
    vec_env = VecMonitor(DummyVecEnv(thunks) if config.workers == 1 else SubprocVecEnv(thunks))

    # 3. The model. SB3 seeds Python, NumPy and torch globally from `seed`, and the envs with
    #    seed + rank (TrainingInstances restarts its seed stream from that).
    model = algo_class(
        "MlpPolicy",
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
    evaluator = _Evaluator(config, metadata, start)
    try:
        model.learn(total_timesteps=config.total_timesteps, callback=evaluator)
    finally:
        logger.close()  # progress.csv: closed here, not whenever the logger is collected
    timing = _timing(
        timesteps=model.num_timesteps,
        workers=config.workers,
        learn_seconds=time.perf_counter() - start,
        env_seconds=float(sum(vec_env.get_attr("env_seconds"))),
        eval_seconds=evaluator.eval_seconds,
        checkpoint_seconds=evaluator.checkpoint_seconds,
    )
    if config.workers == 1:  # CPU times are per process: comparable only with in-process envs
        learn_cpu = time.process_time() - start_cpu
        overhead_cpu = evaluator.eval_cpu_seconds + evaluator.checkpoint_cpu_seconds
        env_cpu = float(sum(vec_env.get_attr("env_cpu_seconds")))
        timing.update(_cpu_timing(learn_cpu - overhead_cpu, env_cpu))
    vec_env.close()
    if not evaluator.rows or evaluator.rows[-1]["timesteps"] < model.num_timesteps:
        evaluator.evaluate(model)

    # 5. Save the final model, the learning curve and the time breakdown.
    model_path = save_policy(model, config.out / "model.zip", evaluator._metadata(model))
    _plot_learning_curve(evaluator.rows, config)
    (config.out / "timing.json").write_text(json.dumps(timing, indent=2) + "\n")
    return TrainResult(model_path, tuple(evaluator.rows), timing)


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
