"""ACDBEnv.step(actions.intervene(...)) throughput vs the numpy floor of drawing the samples.

The floor is what numpy alone needs for the same ``n_int x d`` samples of the same SCM:
``rng.standard_normal((n_int, d)) * noise_std @ mixing`` with the mixing matrix ``(I - W)^{-1}``
precomputed (untimed, at each reset). For every level of both ladders and two large synthetic
levels, episodes are reset (untimed) and every intervention the budget allows is timed as one
``env.step`` with a prebuilt action (targets cycle through the nodes; value 1.0). Each step is
paired with one floor draw for the same episode's SCM, timed right before or right after it
(alternating), so both see the same cache state: the first calls after a reset, which generates
a new world, run with cold caches and are several times slower than calls in a tight loop, for
numpy alone as much as for the env. "step / floor" is the ratio of the paired medians.

Two episode streams: "fresh worlds" draws a new instance at every reset (as RL training does);
"manifest worlds" cycles through the level's 8 preflighted instances (as a sweep does: the
instance cache makes those resets light). The last column times the floor alone in a tight
loop (warm caches), for reference. Every step returns fresh copies of all observation arrays
(the env contract), including the zero-padded block of every experiment so far.

A second table splits one step into its parts, each timed alone on the same env: the action
space membership check (Gymnasium's ``OneOf``/``Dict`` ``contains``, which the env skips for an
``intervene`` action as ``actions.intervene`` builds it), the step's own recognition of such an
action, the draw (the session's private sampler: noise, the intervened column, one product with
the target's precomputed matrix), making every target's matrix (done once per instance, when
its first session starts), building the observation and the info dict. "rest" is the step's
median minus the parts it uses: the session's checks and bookkeeping, Python call overhead.

The parts are private internals, found by name; a revision that has a part under another name
(the previous one, run as a baseline) is measured through that name, and a part it lacks shows
as "–".

Run: ``python benchmarks/intervene_throughput.py [--smoke] [--repeats N]``
"""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass
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

from acdb_gym.core.ladders.shipped import LADDERS, LevelSpec
from acdb_gym.envs import acdb_env, actions
from acdb_gym.envs.acdb_env import ACDBEnv

try:
    from acdb_gym.core.worlds import sampler as _sampler
except ImportError:  # the previous revision kept the matrices on the SCM
    _sampler = None

SYNTHETIC = {
    "wide (synthetic)": LevelSpec(d=100, k=150, n_obs=1000, n_int=1000, noise_var=1.0, slack=1),
    "tall (synthetic)": LevelSpec(d=20, k=30, n_obs=1000, n_int=10_000, noise_var=1.0, slack=1),
}


class _Floor:
    """The numpy floor for the current instance of ``env``: mixing precomputed, untimed."""

    def __init__(self, env: ACDBEnv, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.n_int = env.level.spec.n_int
        self.instance: Any = None

    def prepare(self, env: ACDBEnv) -> None:
        instance = env.hidden_instance()
        if instance is not self.instance:
            scm = instance.scm
            self.instance = instance
            self.noise_std = np.asarray(scm.noise_std)
            self.mixing = np.linalg.inv(np.eye(scm.n_nodes) - scm.weights)
            self.shape = (self.n_int, scm.n_nodes)

    def draw(self) -> None:
        self.rng.standard_normal(self.shape) * self.noise_std @ self.mixing


@dataclass
class Paired:
    step: Timing
    floor: Timing
    first_step: Timing
    first_floor: Timing


def paired_timing(env: ACDBEnv, n_steps: int, seed: int, *, manifest: bool) -> Paired:
    """``n_steps`` valid intervene steps, each paired with one floor draw; resets (untimed)
    whenever the budget is spent, to a fresh world or to the next manifest instance."""
    d = env.n_nodes
    floor = _Floor(env, seed)
    plan = [actions.intervene(var, 1.0) for var in range(d)]
    steps: list[float] = []
    floors: list[float] = []
    first_steps: list[float] = []
    first_floors: list[float] = []
    episode = 0
    size = len(env.level.manifest)

    def reset() -> None:
        if manifest and size:
            env.reset(seed=seed, options={"manifest_index": episode % size})
        else:
            env.reset(seed=seed if episode == 0 else None)
        floor.prepare(env)

    reset()
    target = 0
    while len(steps) < n_steps or not first_steps:
        if env.session.budget_remaining == 0:
            episode += 1
            reset()
            continue
        opening = env.session.interventions_used == 0
        action = plan[target % d]
        floor_first = (episode + target) % 2 == 0
        target += 1
        if floor_first:
            start = time.perf_counter()
            floor.draw()
            floor_time = time.perf_counter() - start
        start = time.perf_counter()
        env.step(action)
        step_time = time.perf_counter() - start
        if not floor_first:
            start = time.perf_counter()
            floor.draw()
            floor_time = time.perf_counter() - start
        steps.append(step_time)
        floors.append(floor_time)
        if opening:
            first_steps.append(step_time)
            first_floors.append(floor_time)
    return Paired(
        Timing(tuple(steps)),
        Timing(tuple(floors)),
        Timing(tuple(first_steps)),
        Timing(tuple(first_floors)),
    )


def tight_floor(env: ACDBEnv, repeats: int) -> Timing:
    """The floor alone in a tight loop on the current instance (warm caches)."""
    floor = _Floor(env, 0)
    floor.prepare(env)
    return measure(floor.draw, repeats=repeats)


def _levels(smoke: bool) -> list[tuple[str, str, ACDBEnv]]:
    envs: list[tuple[str, str, ACDBEnv]] = []
    for ladder_name in ("v0", "v1"):  # the family ladders: family_reset.py
        levels = LADDERS[ladder_name]
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
        fresh = paired_timing(env, n_steps, seed=0, manifest=False)
        cached = paired_timing(env, n_steps, seed=0, manifest=True)
        tight = tight_floor(env, n_steps)
        rows.append(
            [
                ladder_name,
                level_name,
                spec.d,
                spec.n_int,
                env.max_interventions,
                fresh.step.cell(),
                f"{1.0 / fresh.step.median:,.0f}",
                fresh.floor.cell(),
                ratio(fresh.step, fresh.floor),
                ratio(fresh.first_step, fresh.first_floor),
                f"{cached.step.median * 1e6:.3g} µs / {cached.floor.median * 1e6:.3g} µs",
                ratio(cached.step, cached.floor),
                tight.cell(),
            ]
        )
    headers = [
        "ladder",
        "level",
        "d",
        "n_int",
        "slots",
        "env.step(intervene), fresh worlds",
        "steps/s",
        "paired numpy floor",
        "step / floor",
        "first step of an episode / its floor",
        "manifest worlds: step / floor (medians)",
        "step / floor",
        "floor, tight loop",
    ]
    return markdown_table(headers, rows)


def _step_parts(env: ACDBEnv) -> dict[str, Any]:
    """The callables of one step's parts on ``env``'s current episode (None where missing)."""
    d, n_int = env.n_nodes, env.level.spec.n_int
    action = actions.intervene(0, 1.0)
    scm = env.hidden_instance().scm
    rng = np.random.default_rng(0)
    out = np.empty((n_int, d))
    recognise = getattr(acdb_env, "_intervene_request", None) or getattr(
        actions, "intervene_request", None
    )
    make_matrices: Any = None
    draw: Any = None
    if _sampler is not None:
        sampler = _sampler.sampler_for(scm)
        draw = sampler.draw

        def make_matrices(s: Any = scm) -> None:  # every target's for small d, target 0's above
            if s.n_nodes <= _sampler.BLOCK_MAX_D:
                _sampler.InterventionSampler(s)
            else:
                s.do_matrix(0)

    elif hasattr(scm, "_do_matrices"):  # the previous revision kept them on the SCM
        draw = scm._draw_do

        def make_matrices(s: Any = scm) -> None:
            s._do_matrices.clear()
            s._do_matrix(0)

    return {
        "Gymnasium contains (skipped)": lambda a=action, e=env: e.action_space.contains(a),
        "recognise intervene": (
            None if recognise is None else (lambda a=action, n=d: recognise(a, n))
        ),
        "draw": None if draw is None else (lambda n=n_int, o=out: draw(0, 1.0, n, rng, o)),
        "matrices (once per instance)": make_matrices,
        "_observation()": env._observation,
        "_info()": env._info,
    }


def breakdown_table(envs: list[tuple[str, str, ACDBEnv]], repeats: int) -> str:
    """The parts of one step. A part the measured version of the package does not have shows
    as "–" and is left out of "rest"."""
    rows = []
    for ladder_name, level_name, env in envs:
        env.reset(seed=1)
        parts = _step_parts(env)
        timings = {
            name: None if call is None else measure(call, repeats=repeats)
            for name, call in parts.items()
        }
        step = paired_timing(env, repeats, seed=1, manifest=True).step
        used = [
            timings[name] for name in ("recognise intervene", "draw", "_observation()", "_info()")
        ]
        rest = step.median - sum(t.median for t in used if t is not None)
        cells = [f"{t.median * 1e6:.3g} µs" if t is not None else "–" for t in timings.values()]
        label = level_name if ladder_name == "–" else f"{ladder_name} {level_name}"
        rows.append([label, step.cell(), *cells, f"{rest * 1e6:.3g} µs"])
    headers = ["level", "step (manifest worlds)", *(f"{name} (median)" for name in parts), "rest"]
    return markdown_table(headers, rows)


def main() -> None:
    parser = base_parser(__doc__)
    args = parser.parse_args()
    n_steps = args.repeats or (20 if args.smoke else 1000)
    warnings.filterwarnings("ignore", message=".*A Box .* space .* infinity")
    envs = _levels(args.smoke)

    print_header(
        "Intervene step throughput vs the numpy floor",
        "Median wall time per call (IQR, fastest run, runs); ratio = step median / paired "
        "floor median (and the ratio of the fastest runs).",
    )
    print(throughput_table(envs, n_steps))
    print("\nWhere one intervene step goes (each part timed alone; medians):\n")
    chosen = [envs[0], envs[-1]] if args.smoke else [e for e in envs if e[1] in ("L3", "L5")]
    if not args.smoke:
        chosen = [chosen[0], chosen[-1], *envs[-2:]]
    print(breakdown_table(chosen, n_steps))


if __name__ == "__main__":
    main()
