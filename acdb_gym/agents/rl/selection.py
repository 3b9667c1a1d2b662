"""The train / validation / test protocol of targeting policies, and the selection record.

Policies train on generated seeds only (``>= 2**32``, :data:`~acdb_gym.agents.rl.train.
TRAIN_SEED_LOW`), a checkpoint is chosen on the **validation** range of manifest indices
(:data:`VALIDATION_INDICES`, 0-99 of every level) and the chosen file is evaluated once on the
**test** split (:data:`TEST_INDICES`, 100-199, the range every claim of the project comes from).

The selection step writes a record beside the chosen file (``model.zip`` ->
``model.selection.json``, :func:`record_path`): the indices it was chosen on, every candidate's
validation score, and the SHA-256 of the chosen file's bytes. The policy file itself is left
untouched (its hash is part of a sweep job's identity). :func:`check_selected` refuses a file
without a record, with a record whose digest does not match (the file changed after selection)
or whose indices touch the test split; ``experiments/eval_design_policy.py`` calls it before any
test evaluation.

A policy is trained, selected and tested on the levels of one ladder choice
(:func:`protocol_levels`): ``"paper"``, every level of v0 and v1 (the size-free policy), or one
ladder of :data:`~acdb_gym.core.ladders.shipped.ALL_LADDERS`, e.g. the few-sample ``v1-n3``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acdb_gym.core.ladders.shipped import ALL_LADDERS, PAPER_LADDERS, Level
from acdb_gym.core.untrusted import loads, read_file

__all__ = [
    "PAPER",
    "TEST_INDICES",
    "VALIDATION_INDICES",
    "UnselectedPolicyError",
    "check_selected",
    "file_digest",
    "protocol_levels",
    "record_path",
    "write_selection",
]

VALIDATION_INDICES = range(0, 100)
"""Manifest indices checkpoints are selected on (every level of the policy's ladder choice)."""
TEST_INDICES = range(100, 200)
"""Manifest indices of the test split: evaluated once, for a selected file only."""


PAPER = "paper"
"""The ladder choice of every level of v0 and v1 (:data:`~acdb_gym.core.ladders.shipped.
PAPER_LADDERS`)."""


def protocol_levels(ladder: str) -> list[Level]:
    """The levels a policy of ``ladder`` trains, is selected and is tested on: every level of
    v0 and v1 for :data:`PAPER`, else every level of that ladder.

    Raises:
        ValueError: ``ladder`` is neither :data:`PAPER` nor a shipped ladder.
    """
    if ladder != PAPER and ladder not in ALL_LADDERS:
        raise ValueError(
            f"ladder must be {PAPER!r} or one of {sorted(ALL_LADDERS)}, got {ladder!r}"
        )
    names = PAPER_LADDERS if ladder == PAPER else (ladder,)
    return [level for name in names for level in ALL_LADDERS[name].values()]


class UnselectedPolicyError(ValueError):
    """A policy file lacks a valid selection record, so test numbers must not be reported."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(
            f"{path}: {reason}; select it on the validation range first "
            "(python experiments/select_design_policy.py, see models/README.md)"
        )


def record_path(path: str | Path) -> Path:
    """Where the selection record of a policy file lives: ``model.zip`` ->
    ``model.selection.json``."""
    path = Path(path)
    return path.with_name(path.stem + ".selection.json")


def file_digest(path: str | Path) -> str:
    """SHA-256 of the file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_selection(
    path: str | Path,
    *,
    indices: Sequence[int],
    scores: Mapping[str, float],
    chosen: str,
    details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the selection record of the chosen file (replacing an older record).

    Args:
        path: the chosen policy file.
        indices: the manifest indices it was selected on (inside :data:`VALIDATION_INDICES`).
        scores: every candidate's validation score, by name.
        chosen: the name of the chosen candidate (a key of ``scores``).
        details: anything else worth keeping (the metric, levels, estimators).

    Raises:
        ValueError: indices outside the validation range, or ``chosen`` not among ``scores``.
    """
    outside = sorted(set(indices) - set(VALIDATION_INDICES))
    if not indices or outside:
        raise ValueError(
            f"selection indices must be a non-empty subset of the validation manifest indices "
            f"{VALIDATION_INDICES.start}-{VALIDATION_INDICES.stop - 1}, got {outside or 'none'}"
        )
    if chosen not in scores:
        raise ValueError(f"chosen must be one of {sorted(scores)}, got {chosen!r}")
    record = {
        "split": "validation",
        "indices": [min(indices), max(indices)],
        "n_indices": len(set(indices)),
        "scores": {name: float(value) for name, value in scores.items()},
        "chosen": chosen,
        "file": Path(path).name,
        "sha256": file_digest(path),
        **dict(details or {}),
    }
    record_path(path).write_text(json.dumps(record, indent=2) + "\n")
    return record


def check_selected(path: str | Path) -> dict[str, Any]:
    """The selection record of ``path``, checked before a test evaluation.

    Raises:
        FileNotFoundError: no policy file at ``path``.
        UnselectedPolicyError: no record, a malformed one, one made on indices that touch the
            test split, or a digest that does not match the file's bytes.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no policy file at {path}")
    record_file = record_path(path)
    if not record_file.exists():
        raise UnselectedPolicyError(path, f"it has no selection record ({record_file.name})")
    try:
        record = loads(read_file(record_file, max_bytes=1 << 20), max_bytes=1 << 20)
    except ValueError as error:
        raise UnselectedPolicyError(path, f"unreadable selection record ({error})") from None
    if not isinstance(record, dict) or record.get("split") != "validation":
        raise UnselectedPolicyError(path, "its selection record is not a validation record")
    bounds = record.get("indices")
    if (
        not isinstance(bounds, list)
        or len(bounds) != 2
        or not all(isinstance(b, int) for b in bounds)
        or bounds[0] < VALIDATION_INDICES.start
        or bounds[1] >= TEST_INDICES.start
    ):
        raise UnselectedPolicyError(
            path, f"it was selected on indices {bounds!r}, not inside the validation range"
        )
    if record.get("sha256") != file_digest(path):
        raise UnselectedPolicyError(path, "the file changed after selection (digest differs)")
    return record
