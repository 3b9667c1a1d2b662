"""Agents: the protocol, the episode runner, LLM agents and the RL policy agent."""
