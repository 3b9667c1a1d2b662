"""acdb_gym: the Active Causal Discovery Benchmark as Gymnasium environments.

Importing the package registers ``ACDB-L{0..5}-v0``, ``ACDB-L{0..5}-v1``,
``ACDB-NonGaussian-L{0..5}-v2``, ``ACDB-Nonlinear-L{0..5}-v2``, ``ACDB-HiddenSlack-L{0..5}-v1``,
``ACDB-L{0..6}-large``, the latent ladder's ``ACDB-Latent-L{0..5}-v1``, the real ladder's
``ACDB-<level>-real``, the few-sample ladder's ``ACDB-<level>-v1-n3``, the design ids
``ACDB-Design-L{0..5}-v{0,1}`` and ``ACDB-Design-<level>-v1-n3``, and a flat variant
``ACDB-Flat-...`` of each full id with Gymnasium.
"""

import warnings

from acdb_gym.envs.registration import register_envs

__version__ = "0.1.0"

# The suffix of ACDB-L2-v0 / ACDB-L2-v1 names a ladder, not a newer release of one env, so
# Gymnasium's "v0 is out of date" notice would be wrong for ACDB ids. The filter matches ACDB
# ids only (DESIGN §8, "Gymnasium conventions").
warnings.filterwarnings(
    "ignore", message=r".*environment ACDB-.* is out of date", category=DeprecationWarning
)

register_envs()

__all__ = ["__version__", "register_envs"]
