"""An instance bank: pre-generated, digested design worlds on disk, reused across runs.

An RL run resets the design env hundreds of thousands of times. A fresh reset pays instance
generation (rejection sampling of a faithful world) and PC on the observational sample; a
bank pays both once, when it is built, and a training run loads it in a second.

A bank is a directory keyed by ``(level, seeds)``:

| file | content |
|------|---------|
| ``bank.json`` | format, ladder, level, ``repr`` of its spec, the seeds, each world's :meth:`~acdb_gym.core.worlds.instance.Instance.digest`, dependence measure and variable names, the SHA-256 of ``worlds.npz`` |

Its **digest** (:func:`bank_digest`, :attr:`InstanceBank.sha256`) is the SHA-256 of
``bank.json``, which pins ``worlds.npz`` and every world. The digests inside a bank only show
that its files agree with each other (anyone who edits a bank can recompute them), so
:func:`load_bank` loads a bank only against a digest held outside it, ``sha256=``, the one
printed when the bank was built, or with ``trust=True`` for a bank built on the same machine.
Either way every file is read as hostile input (:mod:`acdb_gym.envs.design.bank_files`: sizes
checked before allocation, values against their ranges, each failure a :class:`BankError`).
| ``worlds.npz`` | per world: DAG, the SCM's parameters (:mod:`~acdb_gym.envs.design.bank_scms`), observational sample, ``I*``, budget, acceptance covariates, and PC's CPDAG of the sample (the ``"pc"`` estimator's start) |

:func:`build_bank` writes it atomically (a temporary sibling renamed into place, so a reader
never sees half a bank); :func:`load_bank` checks the bank's digest, the arrays file's hash,
that the ladder still defines the level with the same spec, and that every rebuilt world has
its recorded digest, before anything is used. Worlds are those of :func:`~acdb_gym.core.worlds.instance.generate_instance`
for the same ``(spec, seed)``, bit for bit (a test compares them).

Banks hold worlds of every family the design env takes: linear-Gaussian, linear non-Gaussian,
nonlinear (their mechanisms and normal-score maps stored number for number, so loading costs no
generation: about 0.5 ms a world of v1-n3 Nonlinear-L2, against 3.6 ms to regenerate it from its
seed) and the fitted Sachs worlds; levels with hidden confounders are refused with a clear error.

Build one from the command line::

    python -m acdb_gym.envs.design.bank --ladder v0 --level L1 --seeds 1000000:1001000 --out banks/v0-L1

and keep the ``sha256`` it prints: ``load_bank("banks/v0-L1", sha256=...)``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.ladders.shipped import Level, get_level
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.core.types import readonly
from acdb_gym.core.worlds.acceptance import PARTIAL_CORRELATION
from acdb_gym.core.worlds.instance import (
    Instance,
    OutOfBandError,
    allowed_targets,
    generate_instance,
)
from acdb_gym.discovery import pc_cpdag
from acdb_gym.envs.design.bank_files import (
    ARRAYS_FILE as _ARRAYS,
)
from acdb_gym.envs.design.bank_files import (
    BANK_FORMAT,
    MAX_BANK_BYTES,
    BankError,
    check_values,
    file_hash,
    index_level,
    parse_index,
    read_arrays,
    read_index_bytes,
)
from acdb_gym.envs.design.bank_files import (
    INDEX_FILE as _INDEX,
)
from acdb_gym.envs.design.bank_scms import scm_arrays, scms_of

__all__ = [
    "BANK_FORMAT",
    "MAX_BANK_BYTES",
    "BankError",
    "InstanceBank",
    "bank_digest",
    "build_bank",
    "load_bank",
    "read_arrays",
]


@dataclass(frozen=True, eq=False)
class InstanceBank:
    """Worlds of one level, loaded and verified (see :func:`load_bank`).

    Attributes:
        level: the level the worlds were drawn for.
        instances: the worlds, in seed order.
        starts: PC's CPDAG of each world's observational sample.
        path: the directory it was loaded from.
        sha256: the bank's digest (:func:`bank_digest`): keep it, and give it to
            :func:`load_bank` to load this bank again.
    """

    level: Level
    instances: tuple[Instance, ...]
    starts: tuple[PDAG, ...]
    path: Path
    sha256: str = ""

    def __len__(self) -> int:
        return len(self.instances)

    @property
    def seeds(self) -> tuple[int, ...]:
        """The worlds' seeds."""
        return tuple(instance.seed for instance in self.instances)


def _check_level(level: Level) -> None:
    if level.spec.latent:
        raise BankError(
            f"a bank holds worlds without hidden confounders; level {level.name} of ladder "
            f"{level.ladder} has latent={level.spec.latent}"
        )
    if level.spec.world != "scm":
        raise BankError(
            f"a bank holds SCM worlds; level {level.name} of ladder {level.ladder} is measured "
            f"data ({level.spec.world}), which regenerates from its seed alone"
        )


def build_bank(
    path: str | os.PathLike[str],
    *,
    ladder: str,
    level: str,
    seeds: Iterable[int],
    overwrite: bool = False,
) -> InstanceBank:
    """Generate the worlds of ``(ladder, level)`` for ``seeds``, run PC on each, and write
    them to ``path`` atomically.

    Args:
        path: the bank directory (must not exist unless ``overwrite``).
        ladder, level: a shipped level, e.g. ``"v0"``, ``"L1"``.
        seeds: non-negative, distinct instance seeds (use generated seeds, not the manifest's
            evaluation indices, for training). On a level with an R²-sortability band, a
            seed whose sample lies outside it has no world and is left out (the bank's
            ``seeds`` say which were kept).
        overwrite: replace an existing bank at ``path``.

    Returns:
        The bank, as :func:`load_bank` would return it.

    Raises:
        BankError: an unsupported level, no seeds, repeated or negative seeds, no seed with a
            world, or ``path`` exists and ``overwrite`` is False.
    """
    target = Path(path)
    chosen = get_level(ladder, level)
    _check_level(chosen)
    seed_list = [int(seed) for seed in seeds]
    if not seed_list:
        raise BankError("seeds must name at least one world")
    if len(set(seed_list)) != len(seed_list) or min(seed_list) < 0:
        raise BankError("seeds must be distinct non-negative integers")
    if target.exists() and not overwrite:
        raise BankError(f"{target} exists; pass overwrite=True to replace it")
    instances = _worlds_of(chosen, seed_list)
    seed_list = [instance.seed for instance in instances]
    starts = [pc_cpdag(instance.d_obs) for instance in instances]
    arrays = _arrays(instances, starts)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with open(staging / _ARRAYS, "wb") as handle:
            np.savez(handle, **arrays)  # type: ignore[arg-type]
        index = {
            "format": BANK_FORMAT,
            "ladder": ladder,
            "level": level,
            "spec": repr(chosen.spec),
            "seeds": seed_list,
            "digests": [instance.digest() for instance in instances],
            "dependence_measures": [instance.dependence_measure for instance in instances],
            "variable_names": [instance.variable_names for instance in instances],
            "sha256": file_hash(staging / _ARRAYS),
        }
        text = json.dumps(index, indent=1) + "\n"
        (staging / _INDEX).write_text(text, encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return InstanceBank(chosen, tuple(instances), tuple(starts), target, digest)


def _worlds_of(level: Level, seeds: Sequence[int]) -> list[Instance]:
    """The worlds of ``seeds``, passing over those whose sample lies outside the level's
    R²-sortability band (they have no world)."""
    instances = []
    for seed in seeds:
        try:
            instances.append(generate_instance(level.spec, seed))
        except OutOfBandError:
            continue
    if not instances:
        raise BankError(
            f"none of the {len(seeds)} seeds has a world of level {level.name} of ladder "
            f"{level.ladder}: every sample lies outside its R²-sortability band"
        )
    return instances


def bank_digest(path: str | os.PathLike[str]) -> str:
    """The digest of the bank at ``path``: the SHA-256 of its ``bank.json``, which records the
    SHA-256 of ``worlds.npz`` and every world's digest. Compute it when you build a bank (it is
    :attr:`InstanceBank.sha256` and printed by the command line) and keep it apart from the
    bank: a digest read from a bank proves nothing about a bank someone else handed you.

    Raises:
        BankError: no readable ``bank.json`` at ``path``.
    """
    return hashlib.sha256(read_index_bytes(Path(path))).hexdigest()


def load_bank(
    path: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    trust: bool = False,
    max_bytes: int = MAX_BANK_BYTES,
) -> InstanceBank:
    """Load and verify the bank at ``path`` (a bank is hostile input until it matches
    ``sha256``).

    Args:
        path: the bank directory.
        sha256: the bank's digest as you recorded it when it was built
            (:attr:`InstanceBank.sha256`, :func:`bank_digest`); the bank is refused unless its
            ``bank.json`` has it. The digests inside the bank only check that its files agree
            with each other: anyone who edits a bank can recompute them.
        trust: load without ``sha256`` (a bank built on this machine that no one else can
            write); its files are still checked against each other and every value against
            its range.
        max_bytes: the most bytes of arrays ``worlds.npz`` may declare (checked before any is
            read).

    Raises:
        BankError: no bank there, no ``sha256`` and no ``trust``, a digest that differs, a
            malformed or oversized file (sizes are checked as declared, before allocation),
            another format, a level whose spec changed since the bank was built, a value out
            of its range, or a world whose rebuilt digest differs from the recorded one (each
            message names which).
    """
    source = Path(path)
    if not (source / _INDEX).is_file() or not (source / _ARRAYS).is_file():
        raise BankError(f"no bank at {source} (expected {_INDEX} and {_ARRAYS})")
    raw = read_index_bytes(source)
    found = hashlib.sha256(raw).hexdigest()
    if sha256 is None and not trust:
        raise BankError(
            f"load_bank needs the digest of the bank at {source}: sha256=... as printed when it "
            "was built (InstanceBank.sha256, bank_digest(path) right after you build one), or "
            "trust=True for a bank built on this machine that no one else can write"
        )
    if sha256 is not None and found != sha256:
        raise BankError(
            f"the bank at {source} does not match the digest given (its {_INDEX} has sha256 "
            f"{found[:16]}..., expected {str(sha256)[:16]}...): it is not the bank you built"
        )
    index = parse_index(raw)
    level = index_level(index)
    if file_hash(source / _ARRAYS) != index["sha256"]:
        raise BankError(f"{source / _ARRAYS} does not match the SHA-256 recorded in {_INDEX}")
    arrays = read_arrays(source / _ARRAYS, level.spec, len(index["seeds"]), max_bytes=max_bytes)
    try:
        check_values(level, arrays)
        instances = _instances(level, index, arrays)
        starts = tuple(
            PDAG(directed, undirected)
            for directed, undirected in zip(
                arrays["start_directed"], arrays["start_undirected"], strict=True
            )
        )
    except BankError:
        raise
    except (KeyError, ValueError, TypeError, IndexError) as error:
        raise BankError(f"the worlds at {source} cannot be read back: {error}") from error
    for instance, digest in zip(instances, index["digests"], strict=True):
        if instance.digest() != digest:
            raise BankError(
                f"world of seed {instance.seed} has digest {instance.digest()}, "
                f"the bank recorded {digest}"
            )
    return InstanceBank(level, tuple(instances), starts, source, found)


def _arrays(instances: Sequence[Instance], starts: Sequence[PDAG]) -> dict[str, np.ndarray]:
    d = instances[0].n_nodes
    i_star = np.zeros((len(instances), d), dtype=bool)
    for row, instance in zip(i_star, instances, strict=True):
        row[sorted(instance.i_star)] = True
    return {
        "seeds": np.array([instance.seed for instance in instances], dtype=np.int64),
        "adjacency": np.stack([instance.dag.adjacency for instance in instances]),
        "d_obs": np.stack([instance.d_obs for instance in instances]),
        "i_star": i_star,
        "budget": np.array([instance.budget for instance in instances], dtype=np.int64),
        "min_relevant_abs_rho": np.array([i.min_relevant_abs_rho for i in instances]),
        "attempts": np.array([i.attempts for i in instances], dtype=np.int64),
        "weak_edges": np.array([i.weak_edges for i in instances], dtype=np.int64),
        "start_directed": np.stack([start.directed for start in starts]),
        "start_undirected": np.stack([start.undirected for start in starts]),
        **scm_arrays([instance.scm for instance in instances]),
    }


def _instances(
    level: Level, index: dict[str, Any], arrays: dict[str, np.ndarray]
) -> list[Instance]:
    seeds = index["seeds"]
    if arrays["seeds"].tolist() != list(seeds):
        raise BankError("the seeds of worlds.npz differ from those of bank.json")
    names = index.get("variable_names") or [None] * len(seeds)
    measures = index.get("dependence_measures") or [PARTIAL_CORRELATION] * len(seeds)
    dags = [DAG(adjacency) for adjacency in arrays["adjacency"]]
    scms = scms_of(level.spec, dags, arrays)
    instances = []
    for k, seed in enumerate(seeds):
        instances.append(
            Instance(
                spec=level.spec,
                seed=int(seed),
                dag=dags[k],
                scm=scms[k],
                d_obs=readonly(np.ascontiguousarray(arrays["d_obs"][k])),
                i_star=frozenset(int(v) for v in np.flatnonzero(arrays["i_star"][k])),
                budget=int(arrays["budget"][k]),
                measured_dependence=float(arrays["min_relevant_abs_rho"][k]),
                attempts=int(arrays["attempts"][k]),
                weak_edges=int(arrays["weak_edges"][k]),
                dependence_measure=measures[k],
                variable_names=None if names[k] is None else tuple(names[k]),
                intervention_targets=allowed_targets(
                    level.spec, None if names[k] is None else tuple(names[k])
                ),
            )
        )
    return instances


def _seed_range(text: str) -> range:
    start, _, stop = text.partition(":")
    if not stop:
        raise argparse.ArgumentTypeError(f"seeds must be START:STOP, got {text!r}")
    return range(int(start), int(stop))


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: build a bank (see the module docstring)."""
    parser = OneLineParser(description="Build an instance bank of design worlds.")
    parser.add_argument("--ladder", default="v0", help="a shipped ladder (default v0)")
    parser.add_argument("--level", default="L1", help="a level of that ladder (default L1)")
    parser.add_argument("--seeds", type=_seed_range, required=True, help="START:STOP")
    parser.add_argument("--out", type=Path, required=True, help="the bank directory")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing bank")
    args = parser.parse_args(argv)
    bank = build_bank(
        args.out, ladder=args.ladder, level=args.level, seeds=args.seeds, overwrite=args.overwrite
    )
    print(f"wrote {len(bank)} worlds of {args.ladder} {args.level} to {bank.path}")
    print(f"sha256 {bank.sha256} (keep it apart from the bank: load_bank(path, sha256=...))")


if __name__ == "__main__":
    run_script(main, prog="python -m acdb_gym.envs.design.bank")
