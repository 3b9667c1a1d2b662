"""ACDBEnv.step(actions.intervene(...)) throughput vs the numpy floor of drawing the samples.

For every level of both ladders and two large synthetic levels, episodes are reset (untimed)
and every intervention the budget allows is timed as one ``env.step`` with a prebuilt action
(targets cycle through the nodes; value 1.0). The floor is what numpy alone needs for the same
``n_int x d`` samples of the same SCM: ``rng.standard_normal((n_int, d)) * noise_std @ mixing``
with the mixing matrix ``(I - W)^{-1}`` precomputed. "step / floor" is the ratio of medians.
Every step returns fresh copies of the observation arrays (the env contract), including every
experiment so far, so later steps of an episode copy more; the first step of each episode is
also reported on its own.

A second table splits one step into its parts, each timed alone on the same env: the action
space membership check (Gymnasium's ``OneOf``/``Dict`` ``contains``, and the env's fast check
that replaces it for well-formed ``intervene`` actions when present), decoding to a typed
action, drawing the samples (``LinearGaussianSCM.sample_do`` with its mixing matrix cached),
inverting ``I - W`` for a target not intervened on before in the episode (done once per target
and instance), building the observation (fresh copies of every array, as the env contract
requires), and the info dict. "rest" is the step's median minus the parts it uses: the session's
bookkeeping, writing the experiment into the env's buffer, Python call overhead.

Run: ``python benchmarks/intervene_throughput.py [--smoke] [--repeats N]``
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Timing,
    base_parser,
    make_env_for_spec,
    markdown_table,
    measure,
    print_header,
    ratio,
)

from acdb_gym.core.ladder import LADDERS, LevelSpec
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv

SYNTHETIC = {
    "wide (synthetic)": LevelSpec(d=100, k=150, n_obs=1000, n_int=1000, noise_var=1.0, slack=1),
    "tall (synthetic)": LevelSpec(d=20, k=30, n_obs=1000, n_int=10_000, noise_var=1.0, slack=1),
}


def step_timing(env: ACDBEnv, n_steps: int, seed: int) -> tuple[Timing, Timing]:
    """Timings of ``n_steps`` valid intervene steps (all, and the first of each episode),
    resetting (untimed) whenever the budget is spent."""
    import time

    times: list[float] = []
    first: list[float] = []
    d = env.n_nodes
    env.reset(seed=seed)
    target = 0
    while len(times) < n_steps or not first:
        if env.session.budget_remaining == 0:
            env.reset()
            continue
        opening = env.session.interventions_used == 0
        action = actions.intervene(target % d, 1.0)
        target += 1
        start = time.perf_counter()
        env.step(action)
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        if opening:
            first.append(elapsed)
    return Timing(tuple(times)), Timing(tuple(first))


def floor_timing(env: ACDBEnv, repeats: int) -> Timing:
    """numpy alone: ``standard_normal((n_int, d)) * noise_std @ mixing``."""
    scm = env.hidden_instance().scm
    noise_std = np.asarray(scm.noise_std)
    mixing = np.linalg.inv(np.eye(scm.n_nodes) - scm.weights)
    n_int = env.level.spec.n_int
    rng = np.random.default_rng(0)
    return measure(
        lambda: rng.standard_normal((n_int, scm.n_nodes)) * noise_std @ mixing, repeats=repeats
    )


def _levels(smoke: bool) -> list[tuple[str, str, ACDBEnv]]:
    envs: list[tuple[str, str, ACDBEnv]] = []
    for ladder_name, levels in LADDERS.items():
        for level in list(levels.values())[: 1 if smoke else None]:
            envs.append((ladder_name, level.name, ACDBEnv(level.name, ladder=ladder_name)))
    if not smoke:
        for name, spec in SYNTHETIC.items():
            envs.append(("–", name, make_env_for_spec(spec, max_steps=10_000)))
    return envs


def throughput_table(envs: list[tuple[str, str, ACDBEnv]], n_steps: int) -> str:
    rows = []
    for ladder_name, level_name, env in envs:
        spec = env.level.spec
        step, first = step_timing(env, n_steps, seed=0)
        floor = floor_timing(env, n_steps)
        rows.append(
            [
                ladder_name,
                level_name,
                spec.d,
                spec.n_int,
                env.max_interventions,
                step.cell(),
                f"{1.0 / step.median:,.0f}",
                floor.cell(),
                ratio(step, floor),
                f"{first.median * 1e6:.3g} µs (n={len(first.times)})",
                ratio(first, floor),
            ]
        )
    headers = [
        "ladder",
        "level",
        "d",
        "n_int",
        "slots",
        "env.step(intervene)",
        "steps/s",
        "numpy floor",
        "step / floor",
        "first step of an episode",
        "first / floor",
    ]
    return markdown_table(headers, rows)


def breakdown_table(envs: list[tuple[str, str, ACDBEnv]], repeats: int) -> str:
    rows = []
    fast_check = getattr(actions, "is_well_formed_intervene", None)
    for ladder_name, level_name, env in envs:
        env.reset(seed=1)
        d, n_int = env.n_nodes, env.level.spec.n_int
        action = actions.intervene(0, 1.0)
        scm = env.hidden_instance().scm
        rng = np.random.default_rng(0)

        def fresh_mixing(s: Any = scm) -> None:
            s._mixing.pop(1, None)
            s._mixing_matrix(1)

        parts: dict[str, Any] = {
            "Gymnasium contains": lambda a=action, e=env: e.action_space.contains(a),
            "fast check": (
                (lambda a=action, n=d: fast_check(a, n)) if fast_check is not None else None
            ),
            "decode": lambda a=action, n=d: actions.decode(a, n_nodes=n),
            "sample_do (cached mixing)": lambda s=scm, n=n_int, r=rng: s.sample_do(0, 1.0, n, r),
            "mixing inverse (new target)": fresh_mixing,
            "_observation()": env._observation,
            "_info()": env._info,
        }
        timings = {
            name: measure(call, repeats=repeats) if call is not None else None
            for name, call in parts.items()
        }
        step, _ = step_timing(env, repeats, seed=1)
        used = [
            t
            for name, t in timings.items()
            if t is not None and not (name == "Gymnasium contains" and fast_check is not None)
        ]
        rest = step.median - sum(t.median for t in used)
        cells = [f"{t.median * 1e6:.3g} µs" if t is not None else "–" for t in timings.values()]
        label = level_name if ladder_name == "–" else f"{ladder_name} {level_name}"
        rows.append([label, step.cell(), *cells, f"{rest * 1e6:.3g} µs"])
    headers = ["level", "step", *(f"{name} (median)" for name in parts), "rest"]
    return markdown_table(headers, rows)


def main() -> None:
    parser = base_parser(__doc__)
    args = parser.parse_args()
    n_steps = args.repeats or (20 if args.smoke else 200)
    warnings.filterwarnings("ignore", message=".*A Box .* space .* infinity")
    envs = _levels(args.smoke)

    print_header(
        "Intervene step throughput vs the numpy floor",
        "Median wall time per call (IQR, fastest run, runs); ratio = step median / floor "
        "median (and the ratio of the fastest runs).",
    )
    print(throughput_table(envs, n_steps))
    print("\nWhere one intervene step goes (each part timed alone; medians):\n")
    chosen = [envs[0], envs[-1]] if args.smoke else [e for e in envs if e[1] in ("L3", "L5")]
    if not args.smoke:
        chosen = [chosen[0], chosen[-1], *envs[-2:]]
    print(breakdown_table(chosen, n_steps))


if __name__ == "__main__":
    main()
