"""Periodic held-out evaluation during training: the eval log's columns, the evaluator SB3 calls
back, and the learning-curve plot."""

from __future__ import annotations

import csv
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.rl.agent import (
    PolicyMetadata,
    RLAgent,
    save_policy,
)
from acdb_gym.agents.rl.train_config import TrainConfig
from acdb_gym.agents.rl.training_worlds import VALIDATION_SEED_BASE, held_out_instances
from acdb_gym.envs.design.env import InterventionDesignEnv

__all__ = ["EVAL_COLUMNS", "HeldOutEvaluator", "plot_learning_curve"]

EVAL_COLUMNS = (
    "timesteps",
    "wall_seconds",
    "steps_per_second",
    "val_mean_reward",
    "val_standard_error",
    "val_mean_interventions",
    "train_mean_reward",
)


class HeldOutEvaluator:
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


def plot_learning_curve(rows: Sequence[dict[str, float]], config: TrainConfig) -> Path:
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
