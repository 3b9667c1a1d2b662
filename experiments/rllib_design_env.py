"""RLlib's PPO on the design env, for the compatibility note in models/README.md.

RLlib pins gymnasium 1.2.2 while acdb_gym's own environment uses 1.4, so this runs in a
separate virtual environment and never in CI::

    python -m venv /work/venvs/rllib
    /work/venvs/rllib/bin/pip install "ray[rllib]" torch .
    RAY_AUTH_MODE=disabled /work/venvs/rllib/bin/python experiments/rllib_design_env.py --iterations 3

It registers ``ACDB-Design-L1-v0`` (PC estimator) with Ray, trains PPO on one local env runner
for a few iterations and prints, per iteration, the env steps sampled, the mean episode return
and the wall time.
"""

from __future__ import annotations

import time
import warnings

from acdb_gym.core.scripts import OneLineParser, run_script


def make_env(config: dict[str, object]) -> object:
    import gymnasium as gym

    import acdb_gym  # noqa: F401  (registers the ids)

    return gym.make(str(config.get("env_id", "ACDB-Design-L1-v0")))


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--batch", type=int, default=512, help="train batch size (env steps)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import gymnasium
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    register_env("acdb_design", make_env)
    config = (
        PPOConfig()
        .environment("acdb_design", env_config={"env_id": "ACDB-Design-L1-v0"})
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=args.batch, minibatch_size=64, num_epochs=2)
    )
    algo = config.build_algo()
    print(f"gymnasium {gymnasium.__version__}, ray {ray.__version__}")
    for iteration in range(args.iterations):
        start = time.perf_counter()
        result = algo.train()
        runners = result.get("env_runners", {})
        print(
            f"iteration {iteration + 1}: "
            f"env steps {runners.get('num_env_steps_sampled_lifetime')}, "
            f"mean return {runners.get('episode_return_mean')}, "
            f"{time.perf_counter() - start:.1f} s"
        )
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    run_script(main)
