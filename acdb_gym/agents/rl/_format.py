"""What a saved policy file is made of, shared by the policy agent and the size-free network.

The name of the metadata member inside a policy ``.zip``, the bounds a file's declared sizes must
keep, and the error for a file that could only be loaded by unpickling it. Both :mod:`acdb_gym.agents.rl.agent` and
:mod:`acdb_gym.agents.rl.graph_policy` read policy files, so these sit below both.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["MAX_POLICY_PARAMETERS", "MAX_WEIGHTS_BYTES", "METADATA_MEMBER", "UntrustedPolicyError"]

METADATA_MEMBER = "acdb_gym.json"
"""Name of the metadata member added to a saved policy's ``.zip``."""

MAX_POLICY_PARAMETERS = 1 << 24
"""The most parameters a policy rebuilt from a file may have (16.8 million, 64 MB of float32;
the shipped ones have under 250,000): counted from its declared sizes before any is built."""

MAX_WEIGHTS_BYTES = 256 << 20
"""The largest weights member read, as declared in the archive and as inflated."""


class UntrustedPolicyError(ValueError):
    """A saved policy that can only be loaded by unpickling it (which can run its code)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(
            f"refusing to load {path}: {reason}. Loading it would unpickle data from the file, "
            "which runs any code the file names; if you trust its author, pass trust=True "
            "(acdb sweep --trust-model)"
        )
