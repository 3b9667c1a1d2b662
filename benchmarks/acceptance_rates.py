"""Instance acceptance rate per level of both ladders (DESIGN §7).

Acceptance rate = accepted instances / draws, where rejection sampling records how many draws
each accepted instance needed. Also prints the mean difficulty covariate (smallest population
|rho| over PC-relevant conditioning sets).

Usage: python benchmarks/acceptance_rates.py [--instances 200]
"""

from __future__ import annotations

import argparse

import numpy as np

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.worlds.instance import generate_instance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=200, help="instances per level")
    args = parser.parse_args()
    print("| ladder | level | d | k | acceptance rate | mean min-|rho| | random floor |")
    print("|---|---|---|---|---|---|---|")
    for ladder_name in ("v0", "v1"):  # the family ladders: family_reset.py
        levels = LADDERS[ladder_name]
        for level in levels.values():
            instances = [generate_instance(level.spec, 10**7 + s) for s in range(args.instances)]
            draws = sum(inst.attempts for inst in instances)
            rho = np.mean([inst.min_relevant_abs_rho for inst in instances])
            spec = level.spec
            print(
                f"| {ladder_name} | {level.name} | {spec.d} | {spec.k} | "
                f"{len(instances) / draws:.1%} | {rho:.3f} | {spec.random_floor:.1%} |"
            )


if __name__ == "__main__":
    main()
