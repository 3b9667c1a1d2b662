"""The former path of :mod:`acdb_gym.agents.llm.function_tools` (the LLM variants and their
function tools), kept so code importing it keeps working; every name is that module's."""

from __future__ import annotations

from acdb_gym.agents.llm.function_tools import *  # noqa: F403
from acdb_gym.agents.llm.function_tools import __all__ as __all__
