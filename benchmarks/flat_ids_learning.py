"""Does a standard algorithm learn on the full env through its registered flat ids?

MaskablePPO (sb3-contrib, MLP 64-64, default hyper-parameters but ``n_steps=512``) trains on
``ACDB-Flat-L1-v0`` (the paper's L1) and ``ACDB-Flat-Calibrated-L1-v1`` (the calibrated L1),
made by id with ``action="discrete"`` (masked ``MultiDiscrete``, every submission acyclic by
construction) and ``observation="compact"`` (correlations, scales, shifts), on generated worlds
(every reset draws a fresh instance; no manifest seed is trained on). It is then evaluated once
on the test split (manifest indices 100–199), deterministically with its action masks, against
the random masked policy on the same instances (the floor a learner must clear; seeded) and the
level's closed-form random floor (the ``random`` baseline, README). Directed F1 in %, mean with
the 95% bootstrap CI; Δ is trained − random, paired by instance, with the two-sided sign-flip p.

A learning benchmark, not a timing: the wall time is reported only so a rerun can be planned.

Run: ``python benchmarks/flat_ids_learning.py [--smoke] [--timesteps N] [--seed S] [--only ID]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, markdown_table, print_header

LEVELS = (("ACDB-Flat-L1-v0", "v0", "L1"), ("ACDB-Flat-Calibrated-L1-v1", "v1", "L1"))
MAKE_KWARGS = {"action": "discrete", "observation": "compact"}
TEST = range(100, 200)


def _split_masks(env: Any, masks: Any) -> tuple[Any, ...]:
    import numpy as np

    cuts = np.cumsum(env.action_space.nvec)[:-1]
    return tuple(part.astype(np.int8) for part in np.split(masks, cuts))


def _play(env: Any, choose: Any, index: int) -> float:
    """Directed F1 of one episode on manifest instance ``index``."""
    observation, _ = env.reset(options={"manifest_index": index})
    while True:
        masks = env.get_wrapper_attr("action_masks")()
        observation, _, terminated, truncated, _ = env.step(choose(observation, masks))
        if terminated or truncated:
            return float(env.unwrapped.details()["score"]["directed_f1"])


def _evaluate(env_id: str, model: Any, seed: int) -> tuple[list[float], list[float]]:
    import gymnasium as gym

    env = gym.make(env_id, **MAKE_KWARGS)
    env.action_space.seed(seed)

    def trained(observation: Any, masks: Any) -> Any:
        action, _ = model.predict(observation, action_masks=masks, deterministic=True)
        return action

    def random(observation: Any, masks: Any) -> Any:
        return env.action_space.sample(mask=_split_masks(env, masks))

    learned = [_play(env, trained, index) for index in TEST]
    floor = [_play(env, random, index) for index in TEST]
    return learned, floor


def _train(env_id: str, timesteps: int, seed: int) -> Any:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)
    envs = make_vec_env(env_id, n_envs=4, seed=seed, env_kwargs=MAKE_KWARGS)
    model = MaskablePPO("MlpPolicy", envs, n_steps=512, seed=seed, device="cpu", verbose=0)
    model.learn(total_timesteps=timesteps)
    return model


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--timesteps", type=int, default=200_000, help="PPO steps per level")
    parser.add_argument("--seed", type=int, default=0, help="training and evaluation seed")
    parser.add_argument("--only", default=None, help="one id of LEVELS (default: both)")
    args = parser.parse_args()
    timesteps = 2_048 if args.smoke else args.timesteps
    global TEST
    if args.smoke:
        TEST = range(100, 104)

    import acdb_gym  # noqa: F401  (registers the ids)
    from acdb_gym.core.ladders.shipped import get_level
    from acdb_gym.report.statistics import bootstrap_ci, sign_flip_pvalue

    print_header(
        "MaskablePPO on the full env through its flat ids (test split, manifest 100-199)",
        f'`gym.make(id, action="discrete", observation="compact")`, {timesteps:,} PPO '
        f"steps per level on generated worlds, seed {args.seed}; evaluated on "
        f"{len(TEST)} test instances.",
    )
    import numpy as np

    rows = []
    for env_id, ladder, level in LEVELS:
        if args.only is not None and env_id != args.only:
            continue
        start = time.perf_counter()
        model = _train(env_id, timesteps, args.seed)
        learned, floor = _evaluate(env_id, model, args.seed)
        minutes = (time.perf_counter() - start) / 60
        trained_ci = bootstrap_ci([np.asarray(learned) * 100])
        random_ci = bootstrap_ci([np.asarray(floor) * 100])
        difference = (np.asarray(learned) - np.asarray(floor)) * 100
        p = sign_flip_pvalue(difference)
        print(f"<!-- {env_id} done -->", flush=True)
        rows.append(
            [
                f"`{env_id}`",
                f"{trained_ci.mean:.1f} [{trained_ci.low:.1f}, {trained_ci.high:.1f}]",
                f"{random_ci.mean:.1f} [{random_ci.low:.1f}, {random_ci.high:.1f}]",
                f"{100 * get_level(ladder, level).spec.random_floor:.1f}",
                f"{difference.mean():+.1f}",
                f"{p:.2g}",
                f"{minutes:.1f}",
            ]
        )
        print("<!-- row: " + " | ".join(rows[-1]) + " -->", flush=True)
    print(
        markdown_table(
            [
                "id",
                "MaskablePPO",
                "random masked policy",
                "random floor (closed form)",
                "Δ (PPO − random)",
                "p",
                "train + eval (min)",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
