"""The training run's configuration: a frozen dataclass whose field docstrings are the CLI help."""

from __future__ import annotations

import argparse
import ast
import inspect
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

from acdb_gym.agents.rl.agent import (
    Algorithm,
)
from acdb_gym.core.ladders.shipped import get_level, ladder_env_id
from acdb_gym.core.scripts import OneLineParser
from acdb_gym.envs.design.env import Estimator

__all__ = ["TrainConfig", "build_parser", "parse_config"]


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
    envs: int = 0
    """train on this many worlds stepped together as arrays in this process by the design env's
    native vector env (fresh training worlds, as with workers; several times faster than one
    env a worker); 0 uses --workers single envs"""
    seed: int = 0
    """seed of the model and of the training instances (worker i draws from seed + i)"""
    torch_threads: int = 1
    """torch CPU threads"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    n_steps: int = 512
    """rollout steps per worker (or per world, with envs) between updates"""
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
        if self.envs and self.workers != 1:
            raise ValueError(
                f"envs steps its worlds in this process; give envs or workers, not both "
                f"(got envs={self.envs}, workers={self.workers})"
            )
        for name in ("eval_every", "checkpoint_every", "seed", "envs"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be non-negative, got {getattr(self, name)}")
        if not self.net_arch or min(self.net_arch) < 1:
            raise ValueError(f"net_arch must be positive layer sizes, got {self.net_arch}")

    @property
    def env_settings(self) -> dict[str, Any]:
        """The design env's settings every training env takes (single or vector): ladder,
        estimator, shift and alpha."""
        return {
            "ladder": self.ladder,
            "estimator": self.estimator,
            "shift": self.shift,
            "alpha": self.alpha,
        }

    @property
    def env_id(self) -> str:
        """The design env's id of the level (``ACDB-Design-L1-v0``)."""
        return ladder_env_id(self.ladder, self.level, view="Design")


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
    parser = OneLineParser(
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
