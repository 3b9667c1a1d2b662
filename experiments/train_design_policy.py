"""Train one permutation-equivariant targeting policy on every level of both ladders (PPO).

    python experiments/train_design_policy.py --out models/acdb_design_graph_v1 --minutes 22
    python experiments/train_design_policy.py --ladder v1-n3 --out runs/n3 --minutes 35

``--ladder`` trains on another ladder's levels instead (the few-sample ladder ``v1-n3``:
6 levels x 2 estimators = 12 envs); ``--estimators`` keeps one estimator's envs only.

A single-file PPO in the CleanRL manner. One design env per (ladder level, estimator) pair
(12 levels x {pc, true_cpdag} = 24 envs, d from 5 to 30) runs in this process with the
size-free graph observation (:mod:`acdb_gym.envs.design.graph_obs`); every step batches all 24
observations, padded to the largest d, through :class:`~acdb_gym.agents.rl.graph_policy.
NodeMessagePolicy`. Training instances use seeds in [2**32, 2**63 - 1) (never a manifest,
validation or test seed); validation uses seeds 10**9 + i. The reward is the env's terminal
directed F1 minus ``--intervention-cost`` per intervention (a tie-breaker that prefers fewer
experiments at equal F1).

Writes OUT/model.zip (rl:PATH loads it), OUT/config.json, OUT/eval.csv (validation every
``--eval-every`` updates), OUT/learning_curve.png and OUT/timing.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.rl.agent import PolicyMetadata, RLAgent
from acdb_gym.agents.rl.graph_policy import (
    NetworkConfig,
    NodeMessagePolicy,
    collate,
    save_network,
    trim,
)
from acdb_gym.agents.rl.selection import PAPER, protocol_levels
from acdb_gym.agents.rl.train import TRAIN_SEED_LOW, VALIDATION_SEED_BASE, held_out_instances
from acdb_gym.core.ladders.shipped import ALL_LADDERS, get_level
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.core.worlds.instance import Instance, InstanceGenerationError, generate_instance
from acdb_gym.envs.design.env import Estimator, InterventionDesignEnv


@dataclass(frozen=True)
class Config:
    """Training settings; each field is a ``--flag`` with its default."""

    out: Path = Path("runs/design_graph")
    ladder: str = "paper"  # "paper" (v0 and v1) or a ladder of ALL_LADDERS, e.g. v1-n3
    estimators: str = "true_cpdag,pc"  # the envs' estimators, comma-separated
    checkpoints: bool = False  # also save OUT/checkpoints/update_N.zip at every validation
    seed: int = 0
    minutes: float = 22.0  # wall-clock limit of the training loop (validation excluded)
    max_updates: int = 10_000
    rollout_steps: int = 32  # steps per env between updates
    epochs: int = 4
    minibatch: int = 192
    learning_rate: float = 3e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    intervention_cost: float = 0.005
    hidden: int = 48
    layers: int = 3
    eval_every: int = 10  # updates
    eval_episodes: int = 6  # validation instances per level and estimator


def parse_config() -> Config:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    for field in fields(Config):
        default = field.default
        flag = f"--{field.name.replace('_', '-')}"
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default)
        else:
            parser.add_argument(flag, type=type(default), default=default)
    config = Config(**vars(parser.parse_args()))
    if config.ladder != PAPER and config.ladder not in ALL_LADDERS:
        parser.error(f"--ladder must be {PAPER!r} or one of {sorted(ALL_LADDERS)}")
    if not estimators(config) or set(estimators(config)) - {"true_cpdag", "pc"}:
        parser.error(f"--estimators must name true_cpdag and/or pc, got {config.estimators!r}")
    return config


def training_levels(ladder: str) -> list[tuple[str, str]]:
    """The (ladder, level) pairs trained on: v0's and v1's for ``"paper"``, else the ladder's."""
    return [(level.ladder, level.name) for level in protocol_levels(ladder)]


def estimators(config: Config) -> list[str]:
    return [name for name in config.estimators.split(",") if name]


def ladder_label(config: Config) -> str:
    return "v0+v1" if config.ladder == PAPER else config.ladder


# --------------------------------------------------------------------------- envs
class TrainingEnv:
    """A design env in graph mode that resets on fresh training instances."""

    def __init__(self, ladder: str, level: str, estimator: str, seed: int) -> None:
        spec_d = get_level(ladder, level).spec.d
        self.env = InterventionDesignEnv(
            level,
            ladder=ladder,
            estimator=cast(Estimator, estimator),
            observation="graph",
            max_nodes=spec_d,
        )
        self.spec = get_level(ladder, level).spec
        self.rng = np.random.default_rng(seed)
        self.interventions = 0

    def reset(self) -> dict[str, np.ndarray]:
        self.interventions = 0
        return trim(self.env.reset(options={"instance": self._draw()})[0])

    def _draw(self) -> Instance:
        while True:
            seed = int(self.rng.integers(TRAIN_SEED_LOW, 2**63 - 1))
            try:
                return generate_instance(self.spec, seed)
            except InstanceGenerationError:
                continue


def make_envs(config: Config) -> list[TrainingEnv]:
    seed = config.seed
    combos = [
        (ladder, level, estimator)
        for ladder, level in training_levels(config.ladder)
        for estimator in estimators(config)
    ]
    return [TrainingEnv(*combo, seed=seed * 1000 + rank) for rank, combo in enumerate(combos)]


def batch_actions(actions: list[int], observations: list[dict[str, np.ndarray]]) -> torch.Tensor:
    """Per-observation actions (node index, or -1 for stop) as columns of the padded batch."""
    size = max(len(o["nodes"]) for o in observations)
    return torch.tensor([size if a < 0 else a for a in actions])


# --------------------------------------------------------------------------- validation
def validate(network: NodeMessagePolicy, config: Config, greedy: bool = False) -> dict[str, float]:
    """Mean terminal directed F1 (argmax policy, or greedy targeting) on validation seeds."""
    metadata = PolicyMetadata("ppo", ladder_label(config), "mix", 0, "pc", observation="graph")
    rewards: dict[str, list[float]] = {name: [] for name in estimators(config)}
    for ladder, level in training_levels(config.ladder):
        instances = held_out_instances(
            level, VALIDATION_SEED_BASE, config.eval_episodes, ladder=ladder
        )
        for estimator in rewards:
            env = InterventionDesignEnv(
                level, ladder=ladder, estimator=cast(Estimator, estimator), observation="graph"
            )
            for instance in instances:
                agent: Any = GreedyTargetingGraph() if greedy else RLAgent(network, metadata)
                rewards[estimator].append(run_episode(env, agent, instance=instance).reward)
    return {f"val_{name}": float(np.mean(values)) for name, values in rewards.items()}


class GreedyTargetingGraph:
    """Greedy max-undirected-degree targeting on the graph observation (validation reference)."""

    def reset(self, observation: Any, info: Any) -> None:
        pass

    def act(self, observation: Any, info: Any) -> np.int64:
        degree = observation["nodes"][:, 1] * (1 - observation["nodes"][:, 0])
        mask = observation["action_mask"][:-1].astype(bool)
        degree = np.where(mask, degree, 0.0)
        if degree.max(initial=0.0) <= 0.0:
            return np.int64(len(observation["action_mask"]) - 1)
        return np.int64(np.argmax(degree))


# --------------------------------------------------------------------------- PPO
def collect(
    network: NodeMessagePolicy,
    envs: list[TrainingEnv],
    observations: list[dict[str, np.ndarray]],
    config: Config,
    returns: list[float],
) -> dict[str, Any]:
    """One rollout of ``rollout_steps`` steps in every env; GAE advantages per env."""
    steps = config.rollout_steps
    n = len(envs)
    obs_store: list[list[dict[str, np.ndarray]]] = []
    actions = np.zeros((steps, n), dtype=np.int64)
    logprobs = np.zeros((steps, n), dtype=np.float32)
    values = np.zeros((steps + 1, n), dtype=np.float32)
    rewards = np.zeros((steps, n), dtype=np.float32)
    dones = np.zeros((steps, n), dtype=np.float32)
    for t in range(steps):
        with torch.no_grad():
            logits, value = network(collate(observations))
        distribution = torch.distributions.Categorical(logits=logits)
        chosen = distribution.sample()
        logprobs[t] = distribution.log_prob(chosen).numpy()
        values[t] = value.numpy()
        obs_store.append(list(observations))  # a copy: the list is refilled below
        size = logits.shape[1] - 1
        next_observations = []
        for k, env in enumerate(envs):
            index = int(chosen[k])
            d = len(observations[k]["nodes"])
            stop = index == size
            actions[t, k] = -1 if stop else index
            observation, reward, terminated, _, _ = env.env.step(d if stop else index)
            cost = 0.0 if stop else config.intervention_cost
            env.interventions += 0 if stop else 1
            rewards[t, k] = float(reward) - cost
            if terminated:
                dones[t, k] = 1.0
                returns.append(float(reward))
                next_observations.append(env.reset())
            else:
                next_observations.append(trim(observation))
        observations[:] = next_observations
    with torch.no_grad():
        values[steps] = network(collate(observations))[1].numpy()
    advantages = np.zeros((steps, n), dtype=np.float32)
    running = np.zeros(n, dtype=np.float32)
    for t in reversed(range(steps)):
        alive = 1.0 - dones[t]
        delta = rewards[t] + config.gamma * values[t + 1] * alive - values[t]
        running = delta + config.gamma * config.gae_lambda * alive * running
        advantages[t] = running
    return {
        "observations": [o for row in obs_store for o in row],
        "actions": actions.ravel(),
        "logprobs": logprobs.ravel(),
        "advantages": advantages.ravel(),
        "returns": (advantages + values[:steps]).ravel(),
    }


def size_buckets(
    observations: list[dict[str, np.ndarray]], minibatch: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Shuffled minibatches of rows of one d each: padding a d = 5 row to d = 30 would cost
    36 times its own work."""
    sizes = np.array([len(o["nodes"]) for o in observations])
    batches = []
    for d in np.unique(sizes):
        rows = rng.permutation(np.flatnonzero(sizes == d))
        count = max(1, round(rows.size / minibatch))
        batches.extend(np.array_split(rows, count))
    return [batches[i] for i in rng.permutation(len(batches))]


def update(
    network: NodeMessagePolicy,
    optimizer: torch.optim.Optimizer,
    rollout: dict[str, Any],
    config: Config,
    rng: np.random.Generator,
) -> dict[str, float]:
    """PPO's clipped objective over minibatches for ``epochs`` passes."""
    stats: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": []}
    for _ in range(config.epochs):
        for rows in size_buckets(rollout["observations"], config.minibatch, rng):
            observations = [rollout["observations"][i] for i in rows]
            actions = batch_actions([int(rollout["actions"][i]) for i in rows], observations)
            logits, value = network(collate(observations))
            distribution = torch.distributions.Categorical(logits=logits)
            new_logprob = distribution.log_prob(actions)
            advantage = torch.from_numpy(rollout["advantages"][rows])
            advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
            ratio = torch.exp(new_logprob - torch.from_numpy(rollout["logprobs"][rows]))
            clipped = torch.clamp(ratio, 1 - config.clip, 1 + config.clip)
            policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
            value_loss = ((value - torch.from_numpy(rollout["returns"][rows])) ** 2).mean()
            entropy = distribution.entropy().mean()
            loss = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(network.parameters(), config.max_grad_norm)
            optimizer.step()
            stats["policy_loss"].append(policy_loss.item())
            stats["value_loss"].append(value_loss.item())
            stats["entropy"].append(entropy.item())
    return {name: float(np.mean(values)) for name, values in stats.items()}


# --------------------------------------------------------------------------- main
def policy_metadata(config: Config, env_steps: int) -> dict[str, Any]:
    label = ladder_label(config)
    metadata = asdict(PolicyMetadata("ppo", label, "mix", 0, "pc", observation="graph"))
    estimator = "pc+true_cpdag" if len(estimators(config)) == 2 else estimators(config)[0]
    metadata.update(estimator=estimator, timesteps=env_steps, seed=config.seed)
    return metadata


def plot(rows: list[dict[str, float]], greedy: dict[str, float], config: Config) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [row["env_steps"] for row in rows]
    figure, axis = plt.subplots(figsize=(6.4, 4.0))
    for name, color in (("val_true_cpdag", "tab:blue"), ("val_pc", "tab:orange")):
        if name not in greedy:
            continue
        axis.plot(
            steps, [row[name] for row in rows], marker="o", color=color, label=f"policy, {name[4:]}"
        )
        axis.axhline(greedy[name], color=color, linestyle=":", label=f"greedy, {name[4:]}")
    axis.plot(
        steps, [row["train_f1"] for row in rows], "--", color="gray", label="training (sampled)"
    )
    levels = training_levels(config.ladder)
    axis.set_xlabel(f"environment steps (all {len(levels) * len(estimators(config))} envs)")
    axis.set_ylabel(f"directed F1, mean over {len(levels)} levels")
    where = "both ladders" if config.ladder == PAPER else config.ladder
    axis.set_title(f"NodeMessagePolicy, PPO on {where} (validation seeds)")
    axis.grid(alpha=0.3)
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(config.out / "learning_curve.png", dpi=100)
    plt.close(figure)


def main() -> None:
    config = parse_config()
    config.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    network = NodeMessagePolicy(NetworkConfig(hidden=config.hidden, layers=config.layers))
    optimizer = torch.optim.Adam(network.parameters(), lr=config.learning_rate, eps=1e-5)
    envs = make_envs(config)
    observations = [env.reset() for env in envs]
    greedy = validate(network, config, greedy=True)
    print(f"greedy targeting on the validation seeds: {greedy}", flush=True)
    rows: list[dict[str, float]] = []
    returns: list[float] = []
    start, train_seconds, env_steps = time.perf_counter(), 0.0, 0
    for number in range(1, config.max_updates + 1):
        tick = time.perf_counter()
        rollout = collect(network, envs, observations, config, returns)
        losses = update(network, optimizer, rollout, config, rng)
        train_seconds += time.perf_counter() - tick
        env_steps += len(rollout["actions"])
        last = number == config.max_updates or train_seconds > 60 * config.minutes
        if number % config.eval_every == 0 or last:
            row = {
                "update": number,
                "env_steps": env_steps,
                "train_seconds": round(train_seconds, 1),
                "train_f1": float(np.mean(returns[-200:])) if returns else 0.0,
                **validate(network, config),
                **losses,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            if config.checkpoints:
                save_network(
                    network,
                    config.out / "checkpoints" / f"update_{number}.zip",
                    policy_metadata(config, env_steps),
                )
        if last:
            break
    save_network(network, config.out / "model.zip", policy_metadata(config, env_steps))
    with (config.out / "eval.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()}
    (config.out / "config.json").write_text(json.dumps(settings, indent=2) + "\n")
    timing = {"train_seconds": train_seconds, "wall_seconds": time.perf_counter() - start}
    (config.out / "timing.json").write_text(json.dumps({**timing, "env_steps": env_steps}) + "\n")
    (config.out / "greedy_validation.json").write_text(json.dumps(greedy, indent=2) + "\n")
    plot(rows, greedy, config)
    print(f"saved {config.out / 'model.zip'} after {env_steps} env steps", flush=True)


if __name__ == "__main__":
    run_script(main)
