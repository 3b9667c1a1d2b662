"""The package's trainer (``acdb train``) with one design env against ``--envs N`` worlds of the
native vector env, paired in one run.

Each round trains MaskablePPO (the trainer's defaults: MLP 64-64, ``n_steps=512``,
``batch_size=64``, 10 epochs, one torch thread) for ``--timesteps`` steps on ``ACDB-Design-L1-v0``
with ``--estimator`` (default ``true_cpdag``, as README's training command), no evaluation
and no checkpoints, once per setting: ``--workers 1`` (one single env; a fresh training world
at every reset), then ``--envs N`` for each ``N`` of ``--envs`` (fresh training worlds, N at a
time). Reported per setting: the median over rounds of steps per training second, wall and CPU
(the trainer's ``timing.json``), its env's share of the CPU time, and the median over rounds of
its CPU rate over that round's single-env run.

Run: ``python benchmarks/train_command.py [--smoke] [--repeats 3] [--timesteps 16384]
[--envs 16,64] [--estimator true_cpdag]``
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, load_average, markdown_table, print_header


def _run(out: Path, timesteps: int, estimator: str, envs: int) -> dict[str, float]:
    """One training run's ``timing.json``."""
    from acdb_gym.agents.rl.train import TrainConfig, train

    config = TrainConfig(
        out=out,
        estimator=estimator,  # type: ignore[arg-type]
        total_timesteps=timesteps,
        envs=envs,
        eval_every=0,
        eval_episodes=1,
        checkpoint_every=0,
        verbose=False,
    )
    return dict(train(config).timing)


def _cpu_rate(timing: dict[str, float]) -> float:
    """Steps per CPU second of training (a run counts whole rollouts: N worlds x n_steps)."""
    return timing["timesteps"] / timing["training_cpu_seconds"]


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--timesteps", type=int, default=None, help="training steps a run")
    parser.add_argument(
        "--envs", default=None, help="comma-separated world counts (default 16,64; smoke 4)"
    )
    parser.add_argument("--estimator", default="true_cpdag", help="the design env's estimator")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    repeats = args.repeats or (1 if args.smoke else 3)
    timesteps = args.timesteps or (1024 if args.smoke else 16384)
    counts = args.envs or ("4" if args.smoke else "16,64")
    settings = [0, *(int(n) for n in counts.split(","))]
    print_header(
        "The trainer with one design env against N worlds of the native vector env",
        f"MaskablePPO, {timesteps} steps a run, estimator {args.estimator}, {repeats} paired "
        f"rounds; load average at the start: {load_average()}.",
    )
    runs: dict[int, list[dict[str, Any]]] = {envs: [] for envs in settings}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(repeats):
            for envs in settings:
                out = Path(scratch) / f"r{round_}-e{envs}"
                runs[envs].append(_run(out, timesteps, args.estimator, envs))
    rows = []
    for envs in settings:
        timings = runs[envs]
        wall = statistics.median(t["timesteps"] / t["training_seconds"] for t in timings)
        cpu = statistics.median(_cpu_rate(t) for t in timings)
        gain = statistics.median(
            _cpu_rate(t) / _cpu_rate(base) for base, t in zip(runs[0], timings, strict=True)
        )
        share = statistics.median(t["env_cpu_share"] for t in timings)
        name = "one design env (--workers 1)" if envs == 0 else f"--envs {envs}"
        rows.append([name, f"{wall:,.0f} ({cpu:,.0f})", f"{share:.0%}", f"{gain:.2f}×"])
    print(
        markdown_table(
            ["trainer", "steps/s wall (CPU)", "env share of CPU", "CPU rate × one env"], rows
        )
    )
    print(f"\nLoad average at the end: {load_average()}.")


if __name__ == "__main__":
    main()
