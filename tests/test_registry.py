"""The agent registry: every entry resolves, builds, and says what it needs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from acdb_gym.agents.base import Agent
from acdb_gym.registry import AGENTS, OFFLINE_AGENTS, AgentEntry, agent_help, get_agent

OFFLINE = [name for name, entry in AGENTS.items() if not entry.extras]
BOUND = {"msort": "msort:variance:asc", "cap": "cap:pc_active"}
"""A bound spelling of each parametrized entry."""


def test_the_offline_sweep_is_the_readme_one() -> None:
    assert OFFLINE_AGENTS == ("random", "pc", "pc_greedy", "oracle", "sortnregress")


@pytest.mark.parametrize("name", OFFLINE)
def test_every_offline_agent_builds(name: str) -> None:
    agent = get_agent(BOUND.get(name, name)).build(12345, {})
    assert isinstance(agent, Agent)


@pytest.mark.parametrize("name", list(AGENTS))
def test_every_constructor_names_a_class(name: str) -> None:
    entry = AGENTS[name]
    if "llm" in entry.extras and importlib.util.find_spec("openai") is None:
        pytest.skip("needs the [llm] extra")
    cls = entry.load_class()
    assert isinstance(cls, type)
    # What the table says about privileged access is what the class says.
    assert entry.privileged == getattr(cls, "privileged", False)


def test_seeded_agents_get_the_job_seed() -> None:
    seeded = [entry for entry in AGENTS.values() if entry.construction == "seeded"]
    assert {entry.name for entry in seeded} == {"random", "randregress"}
    for entry in seeded:
        a, b = entry.build(7, {}), entry.build(7, {})
        assert a._rng.integers(10**9) == b._rng.integers(10**9)


def test_oracle_is_the_only_privileged_agent() -> None:
    assert [name for name, entry in AGENTS.items() if entry.privileged] == ["oracle"]


def test_gies_active_is_an_alias_of_bic_active() -> None:
    alias, target = AGENTS["gies_active"], AGENTS["bic_active"]
    assert alias.alias_of == "bic_active" and alias.summary == "alias of bic_active"
    assert (alias.constructor, alias.panels, alias.tools, alias.draws) == (
        target.constructor,
        target.panels,
        target.tools,
        target.draws,
    )
    assert type(alias.build(0, {})) is type(target.build(0, {}))


def test_llm_entries_need_a_provider_and_a_model() -> None:
    for name in ("llm_raw", "llm_stats", "llm_corr_obs"):
        entry = get_agent(name)
        assert entry.extras == ("llm",) and "model" in entry.options
        with pytest.raises(ValueError, match=f"{name} needs --provider and --model"):
            entry.build(0, {"provider": "openai"})


def test_unknown_agent_lists_the_known_names() -> None:
    with pytest.raises(ValueError, match="unknown agent 'nonsense'") as caught:
        get_agent("nonsense")
    for entry in AGENTS.values():
        assert entry.usage in str(caught.value)
    assert "rl:PATH" in str(caught.value)
    with pytest.raises(ValueError, match="unknown agent 'pc:x'"):
        get_agent("pc:x")


def test_a_policy_needs_a_path_to_a_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a saved model: rl:PATH"):
        get_agent("rl")
    with pytest.raises(ValueError, match="no saved policy"):
        get_agent(f"rl:{tmp_path / 'missing.zip'}")
    policy = tmp_path / "model.zip"
    policy.write_bytes(b"")
    bound = get_agent(f"rl:{policy}")
    assert bound.name == f"rl:{policy}" and bound.panels == ("active",)


def test_help_lists_every_agent_with_its_summary_and_needs() -> None:
    text = agent_help()
    for entry in AGENTS.values():
        assert f"  {entry.usage}  " in text or f"  {entry.usage} " in text
        assert entry.summary in text
    assert "pip install 'acdb_gym[llm]'" in text and "privileged" in text


def test_an_entry_is_data() -> None:
    entry = AgentEntry("x", "acdb_gym.baselines.classical:PCAgent", "PC again")
    assert entry.panels == ("observational",) and entry.construction == "plain"
    assert type(entry.build(0, {})).__name__ == "PCAgent"


def test_llm_transport_options_reach_the_agent_but_not_the_job_id() -> None:
    pytest.importorskip("openai")
    from acdb_gym.sweep.run import SweepConfig, plan_jobs

    options = {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"}
    agent = get_agent("llm_raw").build(0, {**options, "timeout": 5.0, "max_retries": 1})
    assert (agent.timeout, agent.max_retries) == (5.0, 1)

    def ids(extra: dict[str, object]) -> list[str]:
        config = SweepConfig(
            out=Path("unused"), agents=("llm_raw",), agent_options={**options, **extra}
        )
        return [job.job_id for job in plan_jobs(config)]

    assert ids({"timeout": 5.0, "max_retries": 1}) == ids({})


def test_msort_binds_its_feature_and_direction() -> None:
    entry = get_agent("msort:kurtosis:desc")
    assert entry.name == "msort:kurtosis:desc" and entry.parameters == ()
    assert dict(entry.arguments) == {"feature": "kurtosis", "direction": "desc"}
    agent = entry.build(0, {})
    assert (agent.name, agent.feature, agent.direction) == (
        "msort:kurtosis:desc",
        "kurtosis",
        "desc",
    )
    assert AGENTS["msort"].usage == "msort:FEATURE:DIRECTION"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("msort", r"msort is spelled msort:FEATURE:DIRECTION, got 'msort'"),
        ("msort:kurtosis", r"spelled msort:FEATURE:DIRECTION, got 'msort:kurtosis'"),
        ("msort:kurtosis:desc:x", r"got 'msort:kurtosis:desc:x'"),
        ("msort:skew:desc", r"FEATURE of agent msort must be one of \['variance', .*got 'skew'"),
        (
            "msort:range:down",
            r"DIRECTION of agent msort must be one of \['asc', 'desc'\], got 'down'",
        ),
    ],
)
def test_msort_refuses_a_bad_spelling(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_agent(name)
