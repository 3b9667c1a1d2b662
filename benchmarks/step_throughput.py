"""Throughput of ``intervene`` steps in ACDBEnv against drawing the same samples with numpy.

For one ladder level (default: v0 L1, ``d = 6``, ``n_int = 50``) it measures, in one run, the cost
of one intervention at each layer of the stack:

1. numpy alone: ``rng.standard_normal((n_int, d)) * noise_std @ mixing`` (the arithmetic of one
   experiment, with ``mixing = (I - W)^{-1}`` precomputed);
2. ``LinearGaussianSCM.sample_do`` (the SCM's reference path: it makes the target's
   do-matrix on every call);
3. ``Session.intervene`` (checks, budget bookkeeping, a read-only copy; the draw goes through
   the session's private sampler, which keeps every target's matrix per SCM);
4. ``Session.intervene(..., out=buffer)`` (no copy: the samples are drawn into a caller's
   buffer, as the env draws them into its observation block);
5. ``ACDBEnv.step(intervene)`` on the bare env (action-space check, decoding, observation);
6. the same step through ``gym.make``'s wrappers.

The env's budget (``|I*| + slack`` <= ``d - 1 + slack``) ends after a few interventions, so the
env and session loops reset whenever it is spent: to the same injected instance (warm caches:
the pure per-step cost), or, in the last row, to a fresh world drawn by ``reset`` (whose new
session also makes the new SCM's per-target intervention matrices; the first steps after
generating a world run with cold caches). Only the intervene calls are timed,
each with ``time.perf_counter``; each repeat times ``--steps`` interventions with the garbage
collector off. The table shows the median over ``--repeats`` repeats of the mean time per
intervention (and, last column, the median single call, which preemption on a busy machine
does not inflate).

Run: ``.venv/bin/python benchmarks/step_throughput.py [--level L1] [--steps 2000] [--repeats 7]``
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import acdb_gym
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.session import Session
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv

StepTimer = Callable[[int], list[float]]
"""Runs ``n`` interventions and returns the seconds of each timed call."""


def numpy_timer(mixing: np.ndarray, noise_std: np.ndarray, n_int: int, seed: int) -> StepTimer:
    rng = np.random.default_rng(seed)
    d = mixing.shape[0]

    def run(n: int) -> list[float]:
        times = []
        for _ in range(n):
            start = time.perf_counter()
            rng.standard_normal((n_int, d)) * noise_std @ mixing
            times.append(time.perf_counter() - start)
        return times

    return run


def scm_timer(instance: Instance, seed: int) -> StepTimer:
    scm = instance.scm
    rng = np.random.default_rng(seed)
    n_int, d = instance.spec.n_int, instance.n_nodes

    def run(n: int) -> list[float]:
        times = []
        for k in range(n):
            start = time.perf_counter()
            scm.sample_do(k % d, 1.5, n_int, rng)
            times.append(time.perf_counter() - start)
        return times

    return run


def session_timer(instance: Instance, *, into_buffer: bool = False) -> StepTimer:
    """``Session.intervene`` calls; with ``into_buffer``, each draws into a fresh slot of a
    zero-padded block (as the env does) instead of returning a copy."""
    d = instance.n_nodes
    shape = (instance.budget, instance.spec.n_int, d)

    def run(n: int) -> list[float]:
        session, times = Session(instance), []
        block = np.zeros(shape)
        for k in range(n):
            if session.budget_remaining == 0:
                session, block = Session(instance), np.zeros(shape)
            out = block[session.interventions_used] if into_buffer else None
            start = time.perf_counter()
            session.intervene(k % d, 1.5, out=out)
            times.append(time.perf_counter() - start)
        return times

    return run


def env_timer(env: gym.Env[Any, Any], seed: int, *, instance: Instance | None = None) -> StepTimer:
    """Steps of ``env``; after each spent budget it resets to ``instance`` (warm caches) or, when
    None, to a fresh world drawn from the env's seeded generator."""
    base = env.unwrapped
    assert isinstance(base, ACDBEnv)
    d = base.n_nodes
    plan = [actions.intervene(var, 1.5) for var in range(d)]
    options = None if instance is None else {"instance": instance}
    env.reset(seed=seed, options=options)

    def run(n: int) -> list[float]:
        times = []
        for k in range(n):
            if base.session.budget_remaining == 0:
                env.reset(options=options)
            action = plan[k % d]
            start = time.perf_counter()
            env.step(action)
            times.append(time.perf_counter() - start)
        return times

    return run


def measure(timer: StepTimer, steps: int, repeats: int) -> tuple[float, float]:
    """Microseconds per intervention: the median over ``repeats`` of each repeat's mean, and the
    median single call over all repeats (robust to preemption on a busy machine).

    The garbage collector is off while a repeat runs (as in ``timeit``): otherwise collections
    triggered by the untimed resets' allocations land in the timed steps.
    """
    timer(min(steps, 50))  # warm-up: caches, lazy imports
    means, calls = [], []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            times = timer(steps)
        finally:
            gc.enable()
        means.append(statistics.fmean(times) * 1e6)
        calls += times
    return statistics.median(means), statistics.median(calls) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="L1")
    parser.add_argument("--ladder", default="v0")
    parser.add_argument("--steps", type=int, default=2000, help="interventions per repeat")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    level = get_level(args.ladder, args.level)
    spec = level.spec
    instance = level.instance(0)
    mixing = np.linalg.inv(np.eye(spec.d) - instance.weights)
    big = 10**9  # no truncation: the budget, not the step limit, ends the episodes
    rows = [
        (
            "numpy: standard_normal((n_int, d)) * noise_std @ mixing",
            numpy_timer(mixing, np.asarray(instance.scm.noise_std), spec.n_int, args.seed),
        ),
        ("LinearGaussianSCM.sample_do", scm_timer(instance, args.seed)),
        ("Session.intervene", session_timer(instance)),
        ("Session.intervene(..., out=buffer)", session_timer(instance, into_buffer=True)),
        (
            "ACDBEnv.step(intervene), bare env, injected instance",
            env_timer(
                ACDBEnv(args.level, ladder=args.ladder, max_steps=big), args.seed, instance=instance
            ),
        ),
        (
            "gym.make(...).step(intervene), wrapped, injected instance",
            env_timer(gym.make(level.env_id, max_steps=big), args.seed, instance=instance),
        ),
        (
            "ACDBEnv.step(intervene), bare env, a fresh world every episode",
            env_timer(ACDBEnv(args.level, ladder=args.ladder, max_steps=big), args.seed),
        ),
    ]
    results = [(name, *measure(timer, args.steps, args.repeats)) for name, timer in rows]
    baseline = results[0][1]

    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"ACDB {args.ladder} {args.level} (d={spec.d}, n_int={spec.n_int}); median of "
        f"{args.repeats} repeats x {args.steps} interventions; acdb_gym {acdb_gym.__version__}, "
        f"numpy {np.__version__}, gymnasium {gym.__version__}; load average {load}\n"
    )
    print("| what | µs per intervention | interventions / s | × numpy | median call, µs |")
    print("|---|---:|---:|---:|---:|")
    for name, micros, call in results:
        print(
            f"| {name} | {micros:.1f} | {1e6 / micros:,.0f} | {micros / baseline:.1f} "
            f"| {call:.1f} |"
        )


if __name__ == "__main__":
    main()
