"""Run an LLM agent against a local model server: the real ``openai`` SDK, speaking HTTP to a
small OpenAI-compatible server started here on 127.0.0.1, plays one ACDB episode.

The server stands in for vLLM, Ollama or llama.cpp (any server of the Chat Completions API):
it reads the session prompt the agent sends, intervenes once on X0, then submits the graph its
rule finds (an edge between each pair whose observational correlation exceeds 0.5, oriented from
the lower index). Point ``--base-url`` at a real server instead to play a real model.

Run: ``python docs/examples/llm_local_server.py [--level L1] [--seed-index 0]``
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import gymnasium as gym

import acdb_gym  # noqa: F401  (registers the ids)
from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import LLMAgent, env_kwargs_for


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """The model's next tool call: intervene on X0 first, then submit."""
    turns = [m for m in body["messages"] if m["role"] == "assistant"]
    if not turns:
        call = {"name": "intervene", "arguments": {"variable": "X0", "value": 3.0}}
    else:
        prompt = "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")
        call = {"name": "submit_graph", "arguments": _guess(prompt)}
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{len(turns)}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
        ],
    }
    return {
        "id": f"chatcmpl-{len(turns)}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }


def _guess(prompt: str) -> dict[str, Any]:
    """Edges where the observational sample's rows (in the prompt) correlate above 0.5."""
    import numpy as np

    rows = [
        [float(v) for v in line.split(",")]
        for line in prompt.splitlines()
        if re.fullmatch(r"-?\d[\d.e+-]*(,-?\d[\d.e+-]*)+", line.strip())
    ]
    data = np.array(rows)
    d = data.shape[1]
    corr = np.corrcoef(data, rowvar=False)
    edges = [[f"X{i}", f"X{j}"] for i in range(d) for j in range(i + 1, d) if abs(corr[i, j]) > 0.5]
    return {"directed_edges": edges, "undirected_edges": []}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        data = json.dumps(_reply(body)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:  # quiet
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="L1", help="a level of the paper's ladder v0")
    parser.add_argument(
        "--seed-index", type=int, default=0, help="manifest index (0-99: development)"
    )
    parser.add_argument("--base-url", default=None, help="a real server instead of the local one")
    parser.add_argument("--model", default="local-model")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = args.base_url or f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        agent = LLMAgent(
            "llm_raw", provider="openai", model=args.model, base_url=base_url, api_key="local"
        )
        env = gym.make(f"ACDB-{args.level}-v0", **env_kwargs_for("llm_raw"))
        result = run_episode(env, agent, manifest_index=args.seed_index)
        agent.close()
    finally:
        server.shutdown()
    print(
        f"{args.level} seed index {args.seed_index}: {result.steps} steps, "
        f"{result.interventions} intervention(s), directed F1 {result.score.directed_f1:.3f}, "
        f"tokens in/out {result.extra['tokens_in']}/{result.extra['tokens_out']}"
    )


if __name__ == "__main__":
    main()
