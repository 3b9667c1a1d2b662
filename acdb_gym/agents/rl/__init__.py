"""RL policies as agents: the policy file and its safe loading
(:mod:`~acdb_gym.agents.rl.policy_file`), acting (:mod:`~acdb_gym.agents.rl.agent`), the size-free
message-passing network (:mod:`~acdb_gym.agents.rl.graph_policy`, needs torch), SB3-style
loading of the shipped policies (:func:`load_model`) and training
(:mod:`~acdb_gym.agents.rl.train`, needs the ``rl`` extra). What a policy file is made of sits
below all three (:mod:`~acdb_gym.agents.rl._format`).

Importing this package needs no torch: only loading or training a policy does.
"""

from acdb_gym.agents.rl._format import METADATA_MEMBER, UntrustedPolicyError
from acdb_gym.agents.rl.agent import (
    Algorithm,
    MissingExtraError,
    PolicyMetadata,
    RLAgent,
    SafePolicy,
    algorithm_class,
    load_policy,
    policy_digest,
    read_metadata,
    require_rl,
    save_policy,
)
from acdb_gym.agents.rl.model import PolicyModel, load_model

__all__ = [
    "METADATA_MEMBER",
    "Algorithm",
    "MissingExtraError",
    "PolicyMetadata",
    "PolicyModel",
    "RLAgent",
    "SafePolicy",
    "UntrustedPolicyError",
    "algorithm_class",
    "load_model",
    "load_policy",
    "policy_digest",
    "read_metadata",
    "require_rl",
    "save_policy",
]
