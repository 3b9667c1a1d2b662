"""Reference policies built on :mod:`acdb_gym.discovery`; each acts only through ``env.step``."""

from acdb_gym.baselines.active import BICActiveAgent, GIESActiveAgent, PCActiveAgent
from acdb_gym.baselines.classical import (
    MarginalSortRegressAgent,
    OracleAgent,
    PCAgent,
    PCGreedyAgent,
    R2SortnregressAgent,
    RandomDAGAgent,
    RandomOrderRegressAgent,
    SortnregressAgent,
)

__all__ = [
    "BICActiveAgent",
    "GIESActiveAgent",
    "MarginalSortRegressAgent",
    "OracleAgent",
    "PCActiveAgent",
    "PCAgent",
    "PCGreedyAgent",
    "R2SortnregressAgent",
    "RandomDAGAgent",
    "RandomOrderRegressAgent",
    "SortnregressAgent",
]
