"""Prompt caching on a full LLM episode: tokens billed with and without caching, per provider.

Plays one full ``llm_stats`` episode of ACDB-L3-v0 (manifest seed 1, active panel: d = 8,
budget 3) with
the real ``openai`` and ``anthropic`` SDKs against the project's local test model server
(``tests/agents/llm/conftest.py``), which reports prompt caching the way each provider does:
OpenAI's automatic ``prompt_tokens_details.cached_tokens`` (the longest prefix an earlier
request of the episode sent) and Anthropic's ``cache_read_input_tokens`` /
``cache_creation_input_tokens`` (prefixes ending at a ``cache_control`` marker). The scripted
model spends the whole intervention budget (one intervention per turn), asks for a few
correlations and partial correlations, then submits a graph; the episode is the same for both
providers and for Anthropic with and without the markers (``prompt_cache=False``).

"Billed at the input price" counts the prompt tokens that are neither read from nor written to
the cache. The costs use the illustrative price table ``benchmarks/llm_prices_example.toml``
(its ratios, not its levels, decide the saving: cached input at 0.1x the input price and cache
writes at 1.25x for the Anthropic-style entry, cached input at 0.5x for the OpenAI-style one);
pass your own with ``--prices``.

Run: ``python benchmarks/llm_prompt_caching.py [--prices FILE]``
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gymnasium as gym  # noqa: E402
from _common import base_parser, load_test_server, markdown_table, print_header  # noqa: E402

from acdb_gym.agents.base import run_episode  # noqa: E402
from acdb_gym.agents.llm import LLMAgent, env_kwargs_for  # noqa: E402
from acdb_gym.report.cost import job_costs, load_prices  # noqa: E402
from acdb_gym.report.load import as_rows  # noqa: E402
from acdb_gym.results import example_row  # noqa: E402

LEVEL, INDEX, VARIANT = "L3", 1, "llm_stats"
MODELS = {"openai": "openai-style-model", "anthropic": "anthropic-style-model"}
STATISTICS = 8
"""Correlation / partial-correlation calls after the interventions."""


def thorough(server: Any) -> Any:
    """A scripted model (one episode per server) that intervenes while budget remains, asks for
    :data:`STATISTICS` statistics, then submits a graph."""
    Call, Reply = server.Call, server.Reply
    asked = {"statistics": 0}

    def behave(request: Any) -> Any:
        shown = " ".join(text for text, _, _ in request.last_results)
        budget = re.search(r"Budget remaining: (\d+)", shown)
        if request.turn == 0 or (budget and int(budget.group(1)) > 0):
            return Reply((Call("intervene", {"variable": f"X{request.turn}", "value": 2.0}),))
        k = asked["statistics"]
        if k < STATISTICS:
            asked["statistics"] += 1
            i, j = f"X{k % 7}", f"X{k % 7 + 1}"
            if k % 2 == 0:
                return Reply((Call("correlation", {"i": i, "j": j}),))
            return Reply(
                (Call("partial_correlation", {"i": i, "j": j, "conditioning_set": ["X7"]}),)
            )
        return server.submit_reply([(0, 1), (1, 2)], [(3, 4)])

    return behave


def play(module: Any, provider: str, *, prompt_cache: bool) -> dict[str, Any]:
    """One episode; its row-like token counts."""
    server = module.FakeModelServer(thorough(module))
    try:
        agent = LLMAgent(
            VARIANT,
            provider=provider,  # type: ignore[arg-type]
            model=MODELS[provider],
            base_url=server.base_url(provider),
            api_key="EMPTY",
            prompt_cache=prompt_cache,
        )
        env = gym.make(f"ACDB-{LEVEL}-v0", panel="active", **env_kwargs_for(VARIANT))
        result = run_episode(env, agent, manifest_index=INDEX)
    finally:
        server.close()
    assert not server.failures, server.failures
    assert result.extra["invalid_tool_calls"] == 0, "the scripted calls must all be valid"
    return example_row(
        job_id=provider,
        agent=VARIANT,
        panel="active",
        agent_config={"model": MODELS[provider]},
        steps=result.steps,
        **{k: result.extra[k] for k in ("tokens_in", "tokens_out", "llm_calls")},
        **{k: result.extra[k] for k in ("tokens_cached_in", "tokens_cache_write")},
    )


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--prices", type=Path, default=HERE / "llm_prices_example.toml")
    args = parser.parse_args()
    module = load_test_server()
    prices = load_prices(args.prices)
    runs = [
        ("openai", "automatic", play(module, "openai", prompt_cache=True)),
        ("anthropic", "cache_control", play(module, "anthropic", prompt_cache=True)),
        ("anthropic", "none (prompt_cache=False)", play(module, "anthropic", prompt_cache=False)),
    ]
    print_header(
        f"Prompt caching on one full episode ({VARIANT}, ACDB-{LEVEL}-v0 seed {INDEX}, active)",
        "Local test server; token counts are the server's (characters / 4 per block).",
    )
    table = []
    for provider, caching, row in runs:
        (cost,) = job_costs(as_rows([row]), prices)
        plain = row["tokens_in"] - row["tokens_cached_in"] - row["tokens_cache_write"]
        table.append(
            [
                provider,
                caching,
                row["llm_calls"],
                row["tokens_in"],
                row["tokens_cached_in"],
                row["tokens_cache_write"],
                plain,
                f"{plain / row['tokens_in']:.1%}",
                f"{cost.cost:.4f}",
                f"{cost.cost_uncached:.4f}",
                f"{1 - cost.cost / cost.cost_uncached:.0%}",
            ]
        )
    print(
        markdown_table(
            [
                "provider",
                "caching",
                "requests",
                "prompt tokens",
                "cache reads",
                "cache writes",
                "billed at input price",
                "share",
                "cost (USD)",
                "cost without caching",
                "saving",
            ],
            table,
        )
    )


if __name__ == "__main__":
    main()
