"""The session API (DESIGN §5): budget, sealing, typed errors, no leaks."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acdb_gym.core import stats
from acdb_gym.core.graphs import PDAG, cpdag
from acdb_gym.core.ladders.shipped import LADDERS, LevelSpec
from acdb_gym.core.session import (
    BudgetExhaustedError,
    Session,
    SessionSealedError,
)
from acdb_gym.core.worlds.instance import generate_instance

INSTANCE = LADDERS["v0"]["L1"].instance(0)


def _session() -> Session:
    return Session(INSTANCE)


def test_observe_returns_a_read_only_copy() -> None:
    session = _session()
    data = session.observe()
    assert np.array_equal(data, INSTANCE.d_obs) and data is not INSTANCE.d_obs
    with pytest.raises(ValueError):
        data[0, 0] = 1.0


def test_intervene_fixes_the_target_and_spends_budget() -> None:
    session = _session()
    samples = session.intervene(3, -2.5)
    assert samples.shape == (INSTANCE.spec.n_int, INSTANCE.n_nodes)
    assert (samples[:, 3] == -2.5).all()
    assert session.budget_remaining == INSTANCE.budget - 1
    assert session.targets == (3,) and session.experiments[0].value == -2.5
    with pytest.raises(ValueError):
        samples[0, 0] = 0.0


def test_same_instance_same_requests_same_data() -> None:
    a, b = _session(), _session()
    assert np.array_equal(a.intervene(1, 2.0), b.intervene(1, 2.0))
    assert np.array_equal(a.intervene(1, 2.0), b.intervene(1, 2.0))


def test_budget_can_never_be_exceeded() -> None:
    session = _session()
    for _ in range(session.budget):
        session.intervene(0, 1.0)
    for _ in range(3):
        with pytest.raises(BudgetExhaustedError, match=f"budget of {session.budget}"):
            session.intervene(0, 1.0)
    assert session.interventions_used == session.budget and session.budget_remaining == 0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-3, 9), st.one_of(st.floats(allow_nan=True), st.just(1.0))),
        max_size=12,
    )
)
def test_random_requests_never_overrun_and_invalid_ones_change_nothing(
    requests: list[tuple[int, float]],
) -> None:
    session = _session()
    for var, value in requests:
        before = (session.interventions_used, session.targets)
        try:
            session.intervene(var, value)
        except (ValueError, BudgetExhaustedError):
            assert (session.interventions_used, session.targets) == before
        assert 0 <= session.budget_remaining <= session.budget


@pytest.mark.parametrize(
    ("var", "value", "match"),
    [(-1, 1.0, "-1"), (6, 1.0, "6"), (2, float("nan"), "nan"), (2, float("inf"), "inf"),
     (2, "3", "'3'"), (True, 1.0, "True"), (1.5, 1.0, "1.5")],
)  # fmt: skip
def test_bad_interventions_name_the_value_and_consume_nothing(
    var: object, value: object, match: str
) -> None:
    session = _session()
    with pytest.raises(ValueError, match=match):
        session.intervene(var, value)  # type: ignore[arg-type]
    assert session.interventions_used == 0


def test_intervene_draws_into_out_the_samples_it_would_return() -> None:
    session, reference = _session(), _session()
    block = np.zeros((2, INSTANCE.spec.n_int, INSTANCE.n_nodes))
    first = block[0]
    assert session.intervene(2, 1.5, out=first) is first
    session.intervene(4, -0.5, out=block[1])
    np.testing.assert_array_equal(block[0], reference.intervene(2, 1.5))
    np.testing.assert_array_equal(block[1], reference.intervene(4, -0.5))
    experiment = session.experiments[1]
    assert (experiment.index, experiment.target, experiment.value) == (1, 4, -0.5)
    assert np.shares_memory(experiment.samples, block[1])
    with pytest.raises(ValueError, match="read-only"):
        experiment.samples[0, 0] = 0.0


def _read_only_zeros(n: int, d: int) -> np.ndarray:
    out = np.zeros((n, d))
    out.flags.writeable = False
    return out


@pytest.mark.parametrize(
    "make_out",
    [
        lambda n, d: np.zeros((n, d + 1)),
        lambda n, d: np.zeros((n, d), dtype=np.float32),
        lambda n, d: np.zeros((d, n)).T,  # not C-contiguous
        _read_only_zeros,
    ],
    ids=["shape", "dtype", "layout", "read-only"],
)
def test_a_bad_out_is_refused_before_anything_changes(
    make_out: Callable[[int, int], np.ndarray],
) -> None:
    session, reference = _session(), _session()
    out = make_out(INSTANCE.spec.n_int, INSTANCE.n_nodes)
    before = out.copy()
    with pytest.raises(ValueError, match="out must be"):
        session.intervene(1, 2.0, out=out)
    np.testing.assert_array_equal(out, before)
    assert session.interventions_used == 0
    # The random stream was not touched: the next draw is the reference's first.
    np.testing.assert_array_equal(session.intervene(1, 2.0), reference.intervene(1, 2.0))


def test_statistics_tools_agree_with_core_stats_on_each_regime() -> None:
    session = _session()
    samples = session.intervene(0, 3.0)
    assert session.correlation(1, 2) == stats.correlation(INSTANCE.d_obs, 1, 2)
    assert session.correlation(1, 2, regime=0) == stats.correlation(samples, 1, 2)
    assert session.partial_correlation(1, 2, [3], regime="observational") == (
        stats.partial_correlation(INSTANCE.d_obs, 1, 2, [3])
    )
    test = session.independence_test(1, 2, [4], regime=0)
    assert test == stats.fisher_z_test(samples, 1, 2, [4])
    assert session.tool_calls == 4


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: s.correlation(0, 9), "9"),
        (lambda s: s.correlation(0, 1, regime=0), "regime .* got 0"),
        (lambda s: s.correlation(0, 1, regime="interventional"), "interventional"),
        (lambda s: s.partial_correlation(0, 1, [7]), "7"),
        (lambda s: s.independence_test(0, 0), "0"),
        (lambda s: s.independence_test(0, 1, [1]), "1"),
    ],
)
def test_bad_tool_calls_name_the_value(call: object, match: str) -> None:
    session = _session()
    with pytest.raises(ValueError, match=match):
        call(session)  # type: ignore[operator]
    assert session.tool_calls == 0


def test_tool_on_the_constant_target_column_is_a_clear_error() -> None:
    session = _session()
    session.intervene(2, 1.0)
    with pytest.raises(ValueError, match="X2 is constant"):
        session.correlation(2, 3, regime=0)


def test_run_tool_calls_the_spec_on_the_chosen_regime() -> None:
    session = _session()
    samples = session.intervene(0, 3.0)
    result = session.run_tool("partial_correlation", {"i": 1, "j": 2, "cond": [3]}, regime=0)
    assert result == (
        stats.partial_correlation(samples, 1, 2, [3]),
        stats.fisher_z_test(samples, 1, 2, [3]).p_value,
    )
    observational = session.run_tool("correlation", {"j": 2, "i": np.int64(1)})
    assert observational.statistic == stats.correlation(INSTANCE.d_obs, 1, 2)
    assert session.tool_calls == 2


@pytest.mark.parametrize(
    ("name", "arguments", "regime", "match"),
    [
        ("covariance", {"i": 0, "j": 1}, None, "unknown statistics tool 'covariance'"),
        ("correlation", {"i": 0}, None, r"takes the arguments \['i', 'j'\], got \['i'\]"),
        ("correlation", {"i": 0, "j": 1, "cond": ()}, None, "got \\['cond', 'i', 'j'\\]"),
        ("correlation", [0, 1], None, r"got \[0, 1\]"),
        ("correlation", {"i": 0, "j": 9}, None, r"j must be in \[0, 6\), got 9"),
        ("correlation", {"i": True, "j": 1}, None, "i must be an integer node index, got True"),
        ("partial_correlation", {"i": 0, "j": 1, "cond": [7]}, None, "cond entry .* got 7"),
        ("independence_test", {"i": 0, "j": 1, "cond": [1]}, None, "must not contain i or j"),
        ("correlation", {"i": 0, "j": 1}, 0, "regime must be an experiment index .* got 0"),
    ],
)
def test_run_tool_errors_name_the_value(
    name: str, arguments: object, regime: int | None, match: str
) -> None:
    session = _session()
    with pytest.raises(ValueError, match=match):
        session.run_tool(name, arguments, regime=regime)  # type: ignore[arg-type]
    assert session.tool_calls == 0


def test_submit_scores_and_seals_for_good() -> None:
    session = _session()
    session.intervene(1, 1.0)
    report = session.submit_graph(INSTANCE.dag)
    assert report.directed_f1 == 1.0 and report.interventions_used == 1
    assert session.sealed and session.report == report
    for call in (
        session.observe,
        lambda: session.intervene(0, 1.0),
        lambda: session.correlation(0, 1),
        lambda: session.submit_graph(INSTANCE.dag),
    ):
        with pytest.raises(SessionSealedError):
            call()


def test_invalid_submissions_leave_the_session_open() -> None:
    session = _session()
    with pytest.raises(ValueError, match="3 nodes"):
        session.submit_graph(PDAG.empty(3))
    with pytest.raises(ValueError, match="PDAG or a DAG, got str"):
        session.submit_graph("X0 -> X1")  # type: ignore[arg-type]
    assert not session.sealed
    session.submit_graph(cpdag(INSTANCE.dag))
    assert session.sealed


def test_session_exposes_no_graph_or_weights() -> None:
    session = _session()
    public = [name for name in dir(session) if not name.startswith("_")]
    values = [getattr(session, name) for name in public if not callable(getattr(session, name))]
    for value in values:
        assert not isinstance(value, np.ndarray) or value.dtype != np.bool_
        assert "adjacency" not in repr(value)
    assert "weights" not in repr(session) and "dag" not in repr(session).lower()
    for name in public:
        assert name not in {"dag", "weights", "instance", "i_star", "scm"}


def test_two_node_world_known_answer() -> None:
    spec = LevelSpec(d=2, k=1, n_obs=500, n_int=500, noise_var=1.0, slack=0)
    inst = generate_instance(spec, 1)
    ((cause, effect),) = inst.dag.edges()
    assert inst.i_star and len(inst.i_star) == 1 and inst.budget == 1
    session = Session(inst)
    shifted = session.intervene(cause, 10.0)
    # |weight| >= 0.5, so do(cause = 10) moves the effect's mean by several units.
    assert abs(shifted[:, effect].mean() - inst.d_obs[:, effect].mean()) > 2.0
    report = session.submit_graph(PDAG.from_edges(2, directed=[(cause, effect)]))
    assert report.directed_f1 == 1.0 and report.efficiency == 1.0 and report.shd == 0
