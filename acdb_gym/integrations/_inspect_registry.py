"""What inspect_ai registers from this package (its ``inspect_ai`` entry point): the ACDB task,
so ``inspect eval acdb_gym/acdb`` finds it, and the offline ``acdb/empty_graph`` model."""

from acdb_gym.integrations.inspect_model import acdb_model
from acdb_gym.integrations.inspect_task import acdb, acdb_agent, acdb_score

__all__ = ["acdb", "acdb_agent", "acdb_model", "acdb_score"]
