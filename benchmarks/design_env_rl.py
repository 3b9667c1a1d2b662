"""The design env at RL speed: steps/s including resets, and MaskablePPO training throughput.

Measured on ``ACDB-Design-L1-v0`` with the default PC estimator, against Gymnasium's
``CartPole-v1`` in the same run (the RL reference), and optionally against another version of
the package (``--baseline DIR``, e.g. the previous revision unpacked with
``git archive REV acdb_gym | tar -x -C DIR``), run alternately with this one in fresh
subprocesses so both meet the same machine load.

Two ways of drawing instances:

* **fresh**: every reset draws a new instance from the env's ``np_random`` (the default; the
  instance generator and PC run at every reset, so nothing instance-keyed can be reused);
* **pool**: every reset picks one of the level's first ``--pool`` manifest instances at random
  (``options={"manifest_index": i}``), as a training run over a finite instance set does;
  instance generation and the estimator's start are then cached after their first use.

Rows: env steps/s under a uniformly random valid action (``action_masks()``), resets included
(what an RL rollout pays), and ``MaskablePPO`` (sb3-contrib, MLP 64-64, ``n_steps=512``, one
torch thread) learning ``--timesteps`` steps, as steps per wall second and per CPU second.

Run: ``python benchmarks/design_env_rl.py [--smoke] [--repeats N] [--baseline DIR]``
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, load_average, markdown_table, print_header

ENV_ID = "ACDB-Design-L1-v0"


def _actions(env: Any, steps: int, options: Any, *, seed: int = 0) -> tuple[float, float]:
    """Wall and CPU seconds of ``steps`` random valid actions, resets included; ``seed``
    seeds the env (so a warm-up with another seed meets other fresh instances)."""
    import numpy as np

    rng = np.random.default_rng(0)
    base = env.unwrapped
    has_mask = hasattr(base, "action_masks")
    env.reset(seed=seed, options=options())
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        if has_mask:
            action = int(rng.choice(np.flatnonzero(base.action_masks())))
        else:
            action = int(rng.integers(env.action_space.n))
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset(options=options())
    return time.perf_counter() - wall, time.process_time() - cpu


def _pool_options(pool: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(1)
    if pool == 0:
        return lambda: None
    return lambda: {"manifest_index": int(rng.integers(pool))}


def _make(env_id: str, pool: int) -> Any:
    import gymnasium as gym

    import acdb_gym  # noqa: F401  (registers the ids)

    return gym.make(env_id)


def _train(env_id: str, pool: int, timesteps: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``MaskablePPO.learn(timesteps)`` (or PPO on CartPole)."""
    import gymnasium as gym
    import torch

    torch.set_num_threads(1)
    env = _make(env_id, pool)
    options = _pool_options(pool)

    class Pool(gym.Wrapper):  # type: ignore[type-arg]
        def reset(self, **kwargs: Any) -> Any:
            return self.env.reset(seed=kwargs.get("seed"), options=options())

        def action_masks(self) -> Any:
            return self.env.unwrapped.action_masks()

    if env_id.startswith("ACDB"):
        from sb3_contrib import MaskablePPO

        model: Any = MaskablePPO("MlpPolicy", Pool(env), n_steps=512, batch_size=64, seed=0)
    else:
        from stable_baselines3 import PPO

        model = PPO("MlpPolicy", env, n_steps=512, batch_size=64, seed=0)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=timesteps)
    return time.perf_counter() - wall, time.process_time() - cpu


def worker(kind: str, env_id: str, pool: int, steps: int) -> None:
    """Measure one cell in this process and print ``{"steps", "wall", "cpu"}`` as JSON."""
    warnings.filterwarnings("ignore")
    if kind == "env":
        env = _make(env_id, pool)
        _actions(env, min(steps, 200), _pool_options(pool), seed=1)  # warm-up: imports, code paths
        wall, cpu = _actions(env, steps, _pool_options(pool))
    else:
        wall, cpu = _train(env_id, pool, steps)
    print(json.dumps({"steps": steps, "wall": wall, "cpu": cpu}))


def _run(package: Path | None, *args: str) -> dict[str, float]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if package is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, __file__, "--worker", *args], env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise RuntimeError(f"worker {args} failed:\n{out.stderr[-2000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--baseline", type=Path, help="directory holding another acdb_gym")
    parser.add_argument("--pool", type=int, default=100, help="manifest instances in the pool")
    parser.add_argument("--steps", type=int, default=None, help="env steps per timed run")
    parser.add_argument("--timesteps", type=int, default=None, help="MaskablePPO steps")
    parser.add_argument("--worker", nargs=4, metavar=("KIND", "ENV", "POOL", "STEPS"))
    args = parser.parse_args()
    if args.worker:
        kind, env_id, pool, steps = args.worker
        worker(kind, env_id, int(pool), int(steps))
        return
    repeats = args.repeats or (1 if args.smoke else 3)
    steps = args.steps or (200 if args.smoke else 3000)
    timesteps = args.timesteps or (512 if args.smoke else 4096)
    this = Path(__file__).resolve().parent.parent
    versions = {"this revision": this}
    if args.baseline is not None:
        versions = {"baseline": args.baseline.resolve(), **versions}
    cells: list[tuple[str, str, str, int, int]] = [
        ("env steps/s (random valid actions, resets incl.)", "fresh", ENV_ID, 0, steps),
        ("env steps/s (random valid actions, resets incl.)", "pool", ENV_ID, args.pool, steps),
        ("MaskablePPO training steps/s", "fresh", ENV_ID, 0, timesteps),
        ("MaskablePPO training steps/s", "pool", ENV_ID, args.pool, timesteps),
    ]
    if args.smoke:
        cells = cells[:2]
    results: dict[tuple[int, str], list[dict[str, float]]] = {}
    cartpole: dict[str, list[dict[str, float]]] = {"env": [], "train": []}
    for _ in range(repeats):  # versions alternate inside every repeat: same load for both
        for index, (label, _, env_id, pool, n) in enumerate(cells):
            kind = "env" if label.startswith("env") else "train"
            for name, package in versions.items():
                results.setdefault((index, name), []).append(
                    _run(package, kind, env_id, str(pool), str(n))
                )
        cartpole["env"].append(_run(None, "env", "CartPole-v1", "0", str(steps * 10)))
        if not args.smoke:
            cartpole["train"].append(_run(None, "train", "CartPole-v1", "0", str(timesteps)))

    def rate(runs: list[dict[str, float]], key: str) -> str:
        values = [run["steps"] / run[key] for run in runs]
        return f"{statistics.median(values):,.0f}"

    print_header(
        "The design env at RL speed (ACDB-Design-L1-v0, PC estimator)",
        f"Median of {repeats} runs (steps per wall second; per CPU second in brackets). "
        f"Load average at the end: {load_average()}.",
    )
    headers = ["measure", "instances", *versions, "CartPole-v1 (same run)"]
    rows = []
    for index, (label, draw, _, _, _) in enumerate(cells):
        kind = "env" if label.startswith("env") else "train"
        row = [label, draw if draw == "fresh" else f"pool of {args.pool}"]
        for name in versions:
            runs = results[(index, name)]
            row.append(f"{rate(runs, 'wall')} ({rate(runs, 'cpu')})")
        peer = cartpole[kind]
        row.append(f"{rate(peer, 'wall')} ({rate(peer, 'cpu')})" if peer else "–")
        rows.append(row)
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
