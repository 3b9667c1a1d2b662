"""causal-learn's FCI gives the same PAG in every process, whatever Python's string-hash salt
(``stable_causallearn_hashes``): without it, v1-latent L5's instance 100 gets another PAG under
``PYTHONHASHSEED=2`` than under 1 or 3."""

from __future__ import annotations

import os
import subprocess
import sys

from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.discovery.fci import fci_pag

PROGRAM = """
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.discovery.fci import fci_pag
instance = ALL_LADDERS["v1-latent"]["L5"].instance(100)
print(sorted(fci_pag(instance.d_obs).edge_strings()))
"""


def _pag_in_a_process(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_fci_is_the_same_under_every_string_hash_salt() -> None:
    here = str(sorted(fci_pag(ALL_LADDERS["v1-latent"]["L5"].instance(100).d_obs).edge_strings()))
    assert {_pag_in_a_process(seed) for seed in ("1", "2", "3")} == {here}


def test_causal_learns_hashes_are_restored_after_the_call() -> None:
    from causallearn.graph.GraphNode import GraphNode

    before = GraphNode.__hash__
    fci_pag(ALL_LADDERS["v1-latent"]["L1"].instance(100).d_obs)
    assert GraphNode.__hash__ is before
