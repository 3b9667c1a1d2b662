"""Hostile model replies: non-finite numbers, wrong or extra fields, huge replies. Each is an
invalid step the model is told about, never a failed job, and never a poisoned cache entry."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.agents.llm import env_kwargs_for
from acdb_gym.agents.llm.records import Redactor, ResponseCache

PROVIDERS = ("openai", "anthropic")
NAN = float("nan")

# (case id, tool call arguments, text the model must be shown)
CASES: list[tuple[str, Any, str]] = [
    ("nan_value", {"variable": "X0", "value": NAN}, "NaN or infinity"),
    ("infinite_value", {"variable": "X0", "value": float("inf")}, "NaN or infinity"),
    ("nan_in_a_list", {"variable": "X0", "value": [NAN]}, "NaN or infinity"),
    ("extra_field", {"variable": "X0", "value": 1.0, "why": "curious"}, "why"),
    ("null_value", {"variable": "X0", "value": None}, "value must be a number"),
    ("boolean_value", {"variable": "X0", "value": True}, "value must be a number"),
    ("list_variable", {"variable": ["X0"], "value": 1.0}, "variable must be a variable name"),
    ("missing_everything", {}, "missing required argument"),
    # Valid JSON no float or int can hold: an invalid step, never an exception out of the parser.
    ("value_past_float", {"variable": "X0", "value": 10**400}, "finite number"),
    ("name_past_int_digits", {"variable": "X" + "9" * 5000, "value": 1.0}, "variable must be"),
    ("arabic_indic_digit", {"variable": "X\u0661", "value": 1.0}, "variable must be"),
    ("fullwidth_digit", {"variable": "X\uff11", "value": 1.0}, "variable must be"),
    ("padded_name", {"variable": " X0\n", "value": 1.0}, "variable must be"),
    ("leading_zero", {"variable": "X00", "value": 1.0}, "variable must be"),
]


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("case", "arguments", "shown"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_tool_call_is_an_invalid_step(
    fake: SimpleNamespace, provider: str, case: str, arguments: Any, shown: str
) -> None:
    bad = fake.Reply((fake.Call("intervene", arguments),))
    server = fake.serve(fake.Script([bad, fake.submit_reply([(0, 1)])]))
    env = gym.make("ACDB-L0-v0", **env_kwargs_for("llm_raw"))

    result = run_episode(env, fake.agent(server, provider), manifest_index=0)

    assert result.steps == 2 and result.invalid_actions == 1 and result.interventions == 0
    assert result.extra["invalid_tool_calls"] == 1
    (text, is_error, _), *_ = server.requests[1].last_results
    assert is_error and shown in text, text
    # The history sent back is strict JSON, so the next request could be encoded at all.
    assert "NaN" not in server.requests[1].raw_text or case.startswith(("nan", "inf"))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_name_past_the_int_digit_limit_in_an_edge_is_an_invalid_step(
    fake: SimpleNamespace, provider: str
) -> None:
    edge = [["X0", "X" + "9" * 5000]]
    bad = fake.Reply((fake.Call("submit_graph", {"directed_edges": edge, "undirected_edges": []}),))
    server = fake.serve(fake.Script([bad, fake.submit_reply([(0, 1)])]))
    env = gym.make("ACDB-L0-v0", **env_kwargs_for("llm_raw"))

    result = run_episode(env, fake.agent(server, provider), manifest_index=0)

    assert (result.steps, result.invalid_actions) == (2, 1)
    (text, is_error, _), *_ = server.requests[1].last_results
    assert is_error and "each endpoint in directed_edges" in text and len(text) < 1_000


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cached_overflowing_reply_replays_as_an_invalid_step(
    fake: SimpleNamespace, provider: str, tmp_path: Path
) -> None:
    """The overflowing reply is strict JSON, so it is cached; a rerun against a healthy server
    replays it as the same invalid step and finishes, instead of failing with no request sent."""
    cache = tmp_path / "cache"
    bad = fake.Reply((fake.Call("intervene", {"variable": "X0", "value": 10**400}),))
    first = fake.serve(fake.Script([bad, fake.submit_reply([(0, 1)])]))
    env = gym.make("ACDB-L0-v0", **env_kwargs_for("llm_raw"))
    run_episode(env, fake.agent(first, provider, cache_dir=cache), manifest_index=0)

    healthy = fake.serve(fake.Script([fake.submit_reply([(0, 1)])]))
    result = run_episode(env, fake.agent(healthy, provider, cache_dir=cache), manifest_index=0)
    assert (result.steps, result.invalid_actions) == (2, 1)
    assert result.extra["cache_hits"] == 2 and len(healthy.requests) == 0


def _strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_cache_holds_strict_json_only(
    fake: SimpleNamespace, provider: str, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    bad = fake.Reply((fake.Call("intervene", {"variable": "X0", "value": NAN}),))
    server = fake.serve(fake.Script([bad, fake.submit_reply([(0, 1)])]))
    env = gym.make("ACDB-L0-v0", **env_kwargs_for("llm_raw"))
    run_episode(env, fake.agent(server, provider, cache_dir=cache), manifest_index=0)
    stored = list(cache.rglob("*.json"))
    # OpenAI sends arguments as a JSON string, so its reply is valid JSON and is cached; an
    # Anthropic input holding NaN is not JSON and is not.
    assert len(stored) == (2 if provider == "openai" else 1)
    for path in stored:
        _strict_json(path.read_text())


def test_a_poisoned_anthropic_reply_is_asked_for_again_not_replayed(
    fake: SimpleNamespace, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    bad = fake.Reply((fake.Call("intervene", {"variable": "X0", "value": NAN}),))
    first = fake.serve(fake.Script([bad, fake.submit_reply([(0, 1)])]))
    env = gym.make("ACDB-L0-v0", **env_kwargs_for("llm_raw"))
    run_episode(env, fake.agent(first, "anthropic", cache_dir=cache), manifest_index=0)

    second = fake.serve(fake.Script([fake.submit_reply([(0, 1)])]))
    result = run_episode(env, fake.agent(second, "anthropic", cache_dir=cache), manifest_index=0)
    assert len(second.requests) == 1 and result.steps == 1 and result.invalid_actions == 0


def test_a_poisoned_entry_left_by_an_older_version_is_a_cache_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, Redactor([]))
    key = ResponseCache.key("anthropic", {"model": "m"})
    assert cache.put(key, {"response": {"content": []}})
    path = next(tmp_path.rglob("*.json"))
    path.write_text('{"response": {"content": [{"type": "tool_use", "input": {"v": NaN}}]}}')
    assert cache.get(key) is None
    assert not cache.put(key, {"response": {"v": NAN}})


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
def test_huge_replies_do_not_grow_transcripts_and_cache(
    fake: SimpleNamespace, provider: str, tmp_path: Path
) -> None:
    megabyte = "causal " * 150_000
    server = fake.serve(lambda request: fake.Reply(text=megabyte))
    transcript = tmp_path / "episode.jsonl"
    agent = fake.agent(server, provider, cache_dir=tmp_path / "cache")
    agent.transcript_path = transcript

    result = run_episode(
        gym.make("ACDB-L0-v0", **env_kwargs_for("llm_raw")), agent, manifest_index=0
    )

    assert result.truncated and result.steps == 16 and len(server.requests) == 16
    # Without caps: about 150 MB of transcript and 130 MB of cache for this episode.
    assert transcript.stat().st_size < 8_000_000
    assert sum(p.stat().st_size for p in (tmp_path / "cache").rglob("*")) < 1_000_000
    assert all(len(r.raw_text) < 400_000 for r in server.requests)
