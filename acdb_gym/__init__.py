"""acdb_gym: the Active Causal Discovery Benchmark as Gymnasium environments.

Importing the package registers every env id with Gymnasium: ``ACDB-[<view>-]<ladder
tag>-<level>-v<world version>`` (DESIGN §8, "Env ids"), e.g. the paper's ``ACDB-L2-v0``,
``ACDB-Calibrated-L2-v1``, ``ACDB-Nonlinear-L2-v2``, ``ACDB-Large-L4-v0``,
``ACDB-Real-Sachs-v2``, ``ACDB-FewSample-L1-v0``, their flat views ``ACDB-Flat-...`` and the
design views ``ACDB-Design-...``; the ids of the earlier scheme are deprecated aliases for one
release (``acdb_gym.envs.registration.DEPRECATED_IDS``).
"""

from acdb_gym.envs.registration import register_envs

__version__ = "0.1.0"

register_envs()

__all__ = ["__version__", "register_envs"]
