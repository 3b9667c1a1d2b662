"""causal-learn's PC output on every shipped manifest instance, recorded once as digests.

Running causal-learn's (pure Python) PC on the 3,600 manifest instances costs about 13 CPU
minutes, three quarters of the test suite, and its output on a fixed instance never changes.
``reference/pc_causallearn.tsv`` records, per instance, the digest of causal-learn's own mark
matrix and separating sets; the tests compare the batched PC's output on every instance to it,
and rerun causal-learn itself on a spread of instances of every level (which checks the
record). A recorded ladder must be recorded in full (a regenerated manifest is recorded again);
a ladder not yet in the record is checked live on that spread only.

    python tests/discovery/_pc_reference.py   # record what is missing, drop what is gone
"""

from __future__ import annotations

import hashlib
import itertools
import sys
from pathlib import Path
from typing import Any

import numpy as np

RECORD = Path(__file__).with_name("reference") / "pc_causallearn.tsv"
ALPHA = 0.05

Key = tuple[str, str, int, str]
"""(ladder, level, manifest index, instance digest)."""


def output_digest(
    skeleton: np.ndarray,
    directed: np.ndarray,
    undirected: np.ndarray,
    sepsets: dict[tuple[int, int], tuple[frozenset[int], ...]],
) -> str:
    """One digest of a PC output: the three boolean matrices and every pair's separating sets."""
    sha = hashlib.sha256()
    for matrix in (skeleton, directed, undirected):
        sha.update(np.ascontiguousarray(matrix, dtype=np.bool_).tobytes())
    for pair in sorted(sepsets):
        sets = ";".join(",".join(map(str, sorted(s))) for s in sepsets[pair])
        sha.update(f"{pair[0]}-{pair[1]}:{sets}|".encode())
    return sha.hexdigest()[:32]


def causallearn_sepsets(cg: Any) -> dict[tuple[int, int], tuple[frozenset[int], ...]]:
    """causal-learn's separating sets of each pair ``a < b`` (both halves of its matrix agree)."""
    n_nodes = cg.sepset.shape[0]
    sepsets = {}
    for a, b in itertools.combinations(range(n_nodes), 2):
        if cg.sepset[a, b] is not None:
            sets = tuple(frozenset(int(v) for v in s) for s in cg.sepset[a, b])
            assert sets == tuple(frozenset(int(v) for v in s) for s in cg.sepset[b, a])
            sepsets[(a, b)] = sets
    return sepsets


def causallearn_digest(data: np.ndarray, alpha: float = ALPHA) -> str:
    """The digest of causal-learn's PC output on ``data`` (its own marks, not decoded by us)."""
    from causallearn.search.ConstraintBased.PC import pc

    cg = pc(np.ascontiguousarray(data), alpha, "fisherz", show_progress=False)
    marks = cg.G.graph
    return output_digest(
        marks != 0,
        (marks == -1) & (marks.T == 1),
        (marks == -1) & (marks.T == -1),
        causallearn_sepsets(cg),
    )


def read_record(path: Path = RECORD) -> dict[Key, str]:
    """The recorded digests (an empty record when the file does not exist)."""
    record: dict[Key, str] = {}
    if not path.exists():
        return record
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        ladder, level, index, instance, output = line.split("\t")
        record[(ladder, level, int(index), instance)] = output
    return record


def manifest_keys() -> list[tuple[Key, Any]]:
    """Every shipped manifest instance's key and its level."""
    from acdb_gym.core.ladders.shipped import LADDERS

    keys = []
    for ladder_name, ladder in LADDERS.items():
        for level_name, level in ladder.items():
            for index, entry in enumerate(level.manifest):
                keys.append(((ladder_name, level_name, index, entry.digest), level))
    return keys


def main() -> None:
    old = read_record()
    wanted = manifest_keys()
    new: dict[Key, str] = {}
    missing = [(key, level) for key, level in wanted if key not in old]
    for key, _ in wanted:
        if key in old:
            new[key] = old[key]
    for number, (key, level) in enumerate(missing, 1):
        new[key] = causallearn_digest(level.instance(key[2]).d_obs)
        if number % 100 == 0 or number == len(missing):
            print(f"recorded {number}/{len(missing)}", file=sys.stderr, flush=True)
    lines = [
        "# causal-learn PC (fisherz, alpha 0.05) on each shipped manifest instance:",
        "# ladder, level, manifest index, instance digest, digest of causal-learn's output.",
        "# Regenerate with `python tests/discovery/_pc_reference.py`.",
    ]
    lines += ["\t".join((*map(str, key), new[key])) for key, _ in wanted]
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(new)} instances, {len(missing)} newly recorded -> {RECORD}", file=sys.stderr)


if __name__ == "__main__":
    main()
