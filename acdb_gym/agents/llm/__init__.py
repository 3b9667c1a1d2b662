"""LLM agents: OpenAI, Anthropic and any OpenAI-compatible server as policies of
:class:`~acdb_gym.envs.acdb_env.ACDBEnv` (paper §4).

>>> import gymnasium as gym
>>> from acdb_gym.agents.llm import LLMAgent, env_kwargs_for
>>> env = gym.make("ACDB-L1-v0", panel="active", **env_kwargs_for("llm_raw"))  # doctest: +SKIP
>>> agent = LLMAgent("llm_raw", provider="anthropic", model="claude-sonnet-4-6")  # doctest: +SKIP
>>> agent.transcript_path = Path("runs/transcripts/L1-0.jsonl")  # doctest: +SKIP
>>> result = run_episode(env, agent, manifest_index=0)  # doctest: +SKIP
>>> result.extra["tokens_in"], result.extra["temperature_applied"]  # doctest: +SKIP
"""

from __future__ import annotations

from .agent import API_KEY_ENV, INVALID_ACTION, LLMAgent
from .errors import LLMProviderError
from .function_tools import VARIANTS, Variant, build_tools, env_kwargs_for
from .providers import PROVIDERS, Provider
from .ratelimit import RateLimiter

__all__ = [
    "API_KEY_ENV",
    "INVALID_ACTION",
    "PROVIDERS",
    "VARIANTS",
    "LLMAgent",
    "LLMProviderError",
    "Provider",
    "RateLimiter",
    "Variant",
    "build_tools",
    "env_kwargs_for",
]
