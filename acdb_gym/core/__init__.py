"""Core world model: graphs, SCMs, instances, ladders, statistics, session and scoring."""
