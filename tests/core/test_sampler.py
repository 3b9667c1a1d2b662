"""The session's intervention sampler: the same bits as ``sample_do``, matrices kept per SCM."""

from __future__ import annotations

import gc
import hashlib
import weakref
from dataclasses import fields

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import ALL_LADDERS, LADDERS
from acdb_gym.core.session import Session
from acdb_gym.core.worlds.linear import (
    DO_MATRIX_MAX_D,
    LinearGaussianSCM,
    rank_one_do,
    unit_scaled_mixing,
)
from acdb_gym.core.worlds.sampler import (
    BLOCK_MAX_D,
    InterventionSampler,
    do_matrix_block,
    sampler_for,
)


def _random_scm(d: int) -> LinearGaussianSCM:
    rng = np.random.default_rng(d)
    weights = np.triu(rng.uniform(0.5, 2.0, (d, d)) * rng.choice([-1, 1], (d, d)), k=1)
    weights *= rng.random((d, d)) < 0.3
    order = rng.permutation(d)
    return LinearGaussianSCM(weights[np.ix_(order, order)], rng.uniform(0.5, 2.0, d))


@pytest.mark.parametrize("d", [1, 2, 5, BLOCK_MAX_D])
def test_the_block_holds_every_targets_do_matrix_bit_for_bit(d: int) -> None:
    scm = _random_scm(d)
    block = do_matrix_block(scm)
    assert len(block) == d
    for var, matrix in enumerate(block):
        assert matrix is not None and not matrix.flags.writeable
        np.testing.assert_array_equal(matrix, scm.do_matrix(var))


@pytest.mark.parametrize("d", [1, 2, 6, BLOCK_MAX_D])
def test_blocks_of_many_scms_equal_each_block(d: int) -> None:
    from acdb_gym.core.worlds.sampler import do_matrix_blocks

    base = _random_scm(d)
    scms = [
        LinearGaussianSCM(base.weights * scale, base.noise_std[::step])
        for scale in (0.3, 1.0, -1.7)
        for step in (1, -1)
    ]
    blocks = do_matrix_blocks(scms)
    for scm, block in zip(scms, blocks, strict=True):
        assert block.tobytes() == np.stack(do_matrix_block(scm)).tobytes()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "d", [2, 5, 10, BLOCK_MAX_D, BLOCK_MAX_D + 1, DO_MATRIX_MAX_D, DO_MATRIX_MAX_D + 1, 120]
)
def test_draws_are_bit_identical_to_sample_do_for_every_target(d: int) -> None:
    """The all-at-once matrices (d <= 32), the one-at-a-time ones (d <= 40) and the rank-one
    update of one scaled mixing matrix (d > 40)."""
    scm = _random_scm(d)
    sampler = InterventionSampler(scm)
    for var in [*range(d), 0]:  # target 0 again: its kept matrix
        value = float(var) - 1.5
        drawn = sampler.draw(var, value, 7, np.random.default_rng(var), None)
        expected = scm.sample_do(var, value, 7, np.random.default_rng(var))
        assert drawn.tobytes() == expected.tobytes()


def test_draw_writes_into_out() -> None:
    scm = LinearGaussianSCM(np.array([[0.0, 1.5], [0.0, 0.0]]), np.ones(2))
    sampler = InterventionSampler(scm)
    out = np.empty((4, 2))
    result = sampler.draw(0, 2.0, 4, np.random.default_rng(0), out)
    assert result is out and (out[:, 0] == 2.0).all()
    np.testing.assert_array_equal(out, scm.sample_do(0, 2.0, 4, np.random.default_rng(0)))


@pytest.mark.slow
def test_one_sampler_per_scm_while_it_lives() -> None:
    scm = _random_scm(4)
    sampler = sampler_for(scm)
    assert sampler_for(scm) is sampler
    assert sampler_for(_random_scm(4)) is not sampler
    gone = weakref.ref(sampler)
    del scm, sampler
    gc.collect()
    assert gone() is None


def test_sessions_on_one_instance_share_its_sampler_and_the_scm_stays_a_plain_value() -> None:
    instance = LADDERS["v1"]["L5"].instance(0)
    first, second = Session(instance), Session(instance)
    first.intervene(3, 1.0)
    assert first._sampler is second._sampler is sampler_for(instance.scm)
    scm = instance.scm
    # Its fields and the mixing matrix it inverts on first use, nothing the sampler put there.
    assert set(vars(scm)) <= {field.name for field in fields(scm)} | {"_mixing"}
    assert not scm.mixing.flags.writeable
    np.testing.assert_array_equal(scm.mixing, np.linalg.inv(np.eye(scm.n_nodes) - scm.weights))


def _session_draws(ladder: str, level: str) -> tuple[Session, list[np.ndarray]]:
    """Instance 0's whole budget, targets stepping by 7, values 0.5, 1.5, ..."""
    instance = ALL_LADDERS[ladder][level].instance(0)
    session = Session(instance)
    draws = [
        session.intervene((7 * slot) % instance.n_nodes, 0.5 + slot)
        for slot in range(session.budget)
    ]
    return session, draws


# Made on the tree before the rank-one path existed: the samples rounded to 10 decimals (so a
# BLAS build's last bits do not matter), SHA-256, 16 hex digits.
SAMPLE_FIXTURES = {
    ("v0", "L3"): "adf10bb2a4b0460a",
    ("v1", "L5"): "dad571da026e1362",
    ("large", "L0"): "1f2fd6eba7916892",
    ("large", "L2"): "c926dcfb08641d78",
}


@pytest.mark.parametrize(("ladder", "level"), list(SAMPLE_FIXTURES))
def test_session_samples_equal_the_fixture_and_their_paths_arithmetic(
    ladder: str, level: str
) -> None:
    """Shipped levels with d <= 40 draw through the do-matrix bit for bit (their published rows
    depend on it); the d = 100 level draws through the rank-one update, equal to 10 decimals."""
    session, draws = _session_draws(ladder, level)
    sha = hashlib.sha256()
    for samples in draws:
        sha.update(np.round(samples, 10).tobytes())
    assert sha.hexdigest()[:16] == SAMPLE_FIXTURES[ladder, level]
    scm = ALL_LADDERS[ladder][level].instance(0).scm
    assert isinstance(scm, LinearGaussianSCM)
    rng = ALL_LADDERS[ladder][level].instance(0).intervention_rng()
    scaled = unit_scaled_mixing(scm.mixing, scm.noise_std)
    for slot, samples in enumerate(draws):
        var, value = (7 * slot) % scm.n_nodes, 0.5 + slot
        noise = rng.standard_normal(samples.shape)
        if scm.n_nodes <= DO_MATRIX_MAX_D:
            noise[:, var] = value
            expected = np.dot(noise, scm.do_matrix(var))
        else:
            expected = rank_one_do(scaled, scm.mixing, var, value, noise, None)
        assert samples.tobytes() == expected.tobytes()
    assert session.interventions_used == session.budget
