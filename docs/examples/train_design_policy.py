"""Train a design policy: MaskablePPO picks which variables to intervene on in the design env
(``ACDB-Design-L1-v0``; a fixed estimator turns the data into the submitted graph), then plays
development instances against random targeting.

It trains on generated worlds (every reset draws a new one) and evaluates on manifest indices
0-19, the development split: numbers to look at, not claims (claims come from indices 100-199,
``models/README.md``).

Run: ``python docs/examples/train_design_policy.py [--timesteps 20000] [--out runs/my_policy]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym
import numpy as np
from sb3_contrib import MaskablePPO

import acdb_gym  # noqa: F401  (registers the ids)

ENV_ID = "ACDB-Design-L1-v0"


def evaluate(choose, indices: range) -> float:  # type: ignore[no-untyped-def]
    """Mean directed F1 of a targeting rule on manifest instances."""
    env = gym.make(ENV_ID, estimator="true_cpdag")
    scores = []
    for index in indices:
        observation, _ = env.reset(options={"manifest_index": index})
        while True:
            mask = env.unwrapped.action_masks()
            observation, reward, terminated, truncated, _ = env.step(choose(observation, mask))
            if terminated or truncated:
                scores.append(reward)
                break
    return float(np.mean(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=20_000, help="PPO steps")
    parser.add_argument("--instances", type=int, default=20, help="development instances")
    parser.add_argument("--out", type=Path, default=Path("runs/my_policy"))
    args = parser.parse_args()

    env = gym.make(ENV_ID, estimator="true_cpdag")  # starts from the true CPDAG: fast to train
    model = MaskablePPO("MlpPolicy", env, n_steps=512, seed=0, device="cpu", verbose=0)
    model.learn(total_timesteps=args.timesteps)
    args.out.mkdir(parents=True, exist_ok=True)
    model.save(args.out / "model.zip")

    rng = np.random.default_rng(0)
    indices = range(args.instances)
    policy = evaluate(
        lambda obs, mask: int(model.predict(obs, action_masks=mask, deterministic=True)[0]),
        indices,
    )
    # Random targeting: a random valid action (interventions while the budget lasts, or stop).
    random = evaluate(lambda obs, mask: int(rng.choice(np.flatnonzero(mask))), indices)
    print(
        f"after {args.timesteps:,} steps on {ENV_ID}: directed F1 {policy:.3f} (policy) vs "
        f"{random:.3f} (random targeting) on development indices 0-{args.instances - 1}; "
        f"saved to {args.out / 'model.zip'}"
    )


if __name__ == "__main__":
    main()
