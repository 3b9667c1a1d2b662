"""The intervention-design env (the RL view of ACDB): choose targets, a fixed estimator builds
the graph.

- :mod:`~acdb_gym.envs.design.env`: :class:`InterventionDesignEnv` and its estimator state;
- :mod:`~acdb_gym.envs.design.graph_obs`: the size-free ``observation="graph"`` features;
- :mod:`~acdb_gym.envs.design.cache`: per-instance starting graphs and summaries, computed once;
- :mod:`~acdb_gym.envs.design.observation`: the flat observation as a value, below both users.
"""

from acdb_gym.envs.design.env import DesignState, Estimator, InterventionDesignEnv, ObservationMode
from acdb_gym.envs.design.observation import DesignObservation, observation_size

__all__ = [
    "DesignObservation",
    "DesignState",
    "Estimator",
    "InterventionDesignEnv",
    "ObservationMode",
    "observation_size",
]
