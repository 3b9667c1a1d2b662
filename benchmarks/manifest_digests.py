"""Regenerate every manifest world of the chosen ladders and compare its digest with the shipped
manifest: the check that a change to world generation kept every shipped world bit for bit.

The tests regenerate a fixed sample of each level's 200 worlds; this script regenerates all of
them (v1-nonlinear's 1,200 worlds take about 10 s on one core) and prints, per level, how many
matched and the time spent. It exits with status 1 when any digest differs.

The digests round floats (parameters to 12, data to 8 decimals). ``--record FILE`` writes, and
``--against FILE`` compares, an unrounded hash per world (every parameter, the data, the
acceptance covariate and the number of draws, bit for bit): run ``--record`` on the tree before
a change and ``--against`` after it to check that the change kept every bit.

Run: ``python benchmarks/manifest_digests.py [LADDER[:LEVEL+LEVEL] ...]``, e.g.
``python benchmarks/manifest_digests.py v1-nonlinear v1-nongaussian v1-latent
real:SF-Nonlinear-L3+Sachs-Nonlinear`` (the default set).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from acdb_gym.core.ladders.shipped import ALL_LADDERS, Level
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.core.worlds.linear import LinearGaussianSCM

DEFAULT = ("v1-nonlinear", "v1-nongaussian", "v1-latent", "real:SF-Nonlinear-L3+Sachs-Nonlinear")


def levels_of(selection: str) -> list[Level]:
    """The levels named by ``LADDER`` or ``LADDER:LEVEL+LEVEL``."""
    ladder, _, names = selection.partition(":")
    if ladder not in ALL_LADDERS:
        raise SystemExit(f"ladder must be one of {sorted(ALL_LADDERS)}, got {ladder!r}")
    chosen = names.split("+") if names else list(ALL_LADDERS[ladder])
    unknown = [name for name in chosen if name not in ALL_LADDERS[ladder]]
    if unknown:
        raise SystemExit(f"{ladder} has levels {list(ALL_LADDERS[ladder])}, got {unknown}")
    return [ALL_LADDERS[ladder][name] for name in chosen]


def exact_hash(instance: Instance) -> str:
    """A hash of every generated bit of ``instance`` (no rounding, unlike its digest)."""
    scm = instance.scm
    parameters = scm.weights if isinstance(scm, LinearGaussianSCM) else scm.parameters()
    sha = hashlib.sha256(np.ascontiguousarray(parameters).tobytes())
    sha.update(np.ascontiguousarray(instance.d_obs).tobytes())
    sha.update(repr((instance.measured_dependence, instance.attempts, instance.budget)).encode())
    return sha.hexdigest()[:16]


def check_level(level: Level, exact: dict[str, str], first: int | None = None) -> list[int]:
    """The manifest indices of ``level`` (its first ``first`` when given) whose regenerated
    digest differs from the manifest's; each world's :func:`exact_hash` goes into ``exact``."""
    drifted = []
    for index, entry in enumerate(level.manifest[:first]):
        instance = level.instance(index)
        exact[f"{level.ladder}:{level.name}:{index}"] = exact_hash(instance)
        if instance.digest() != entry.digest:
            drifted.append(index)
    return drifted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("selections", nargs="*", default=list(DEFAULT))
    parser.add_argument("--record", type=Path, help="write the unrounded hashes to this file")
    parser.add_argument("--against", type=Path, help="compare the unrounded hashes with a record")
    parser.add_argument("--first", type=int, help="only the first N worlds of each level")
    args = parser.parse_args()
    failed = 0
    exact: dict[str, str] = {}
    for selection in args.selections:
        for level in levels_of(selection):
            start = time.process_time()
            drifted = check_level(level, exact, args.first)
            seconds = time.process_time() - start
            checked = len(level.manifest[: args.first])
            print(
                f"{level.ladder:15} {level.name:20} {checked - len(drifted):4}/{checked} match "
                f"({seconds:.2f} s CPU)" + (f"  DRIFTED at {drifted[:10]}" if drifted else "")
            )
            failed += len(drifted)
    print("all digests match" if not failed else f"{failed} worlds drifted")
    if args.record:
        args.record.write_text(json.dumps(exact, indent=0, sort_keys=True), encoding="utf-8")
    if args.against:
        recorded = json.loads(args.against.read_text(encoding="utf-8"))
        differ = sorted(key for key, value in exact.items() if recorded.get(key) != value)
        print(f"{len(exact) - len(differ)}/{len(exact)} worlds equal the record bit for bit")
        if differ:
            print("differ:", ", ".join(differ[:20]))
            failed += len(differ)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
