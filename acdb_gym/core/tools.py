"""The former path of :mod:`acdb_gym.core.statistic_tools` (the statistics tools), kept so code
importing it keeps working; every name is that module's."""

from __future__ import annotations

from acdb_gym.core.statistic_tools import *  # noqa: F403
from acdb_gym.core.statistic_tools import __all__ as __all__
