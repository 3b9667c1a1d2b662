"""Front ends that let other harnesses play ACDB with the LLM agents' tools and protocol.

- :mod:`acdb_gym.integrations.episode`: :class:`ToolEpisode`, one episode driven one tool
  call at a time (the LLM agents' tools, step limits, budgets and result texts), and the result
  row it becomes. Needs no extra.
- :mod:`acdb_gym.integrations.inspect_task`: an inspect_ai task (``pip install
  'acdb_gym[inspect]'``); :mod:`acdb_gym.integrations.inspect_log` converts its logs into a
  results file; :mod:`acdb_gym.integrations.inspect_model` is an offline model for smoke runs
  (``--model acdb/empty_graph``).
- :mod:`acdb_gym.integrations.mcp_server`: an MCP server over stdio (``pip install
  'acdb_gym[mcp]'``), the ``acdb mcp`` command.

Nothing here is imported by ``import acdb_gym``; the layers below never import it.
"""
