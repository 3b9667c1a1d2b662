"""The Sachs cells' conditions and the world of real experiments (DESIGN §3.5): the split of the
pooled file, where its means change, each condition's signature, and a world whose experiments
are the real perturbations, drawn without replacement."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from acdb_gym.core.graphs import SACHS_PROTEINS, topology
from acdb_gym.core.ladders.shipped import SACHS_EXPERIMENT_LADDER
from acdb_gym.core.session import Session
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.real_experiments import (
    BASELINE,
    EXPERIMENT_PROTEINS,
    SACHS_CONDITIONS,
    CellSampler,
    SachsCells,
    baseline_standardization,
    mean_change_points,
    sachs_log_cells,
    split_conditions,
)
from acdb_gym.core.worlds.spec import LevelSpec

CELLS = SACHS_EXPERIMENT_LADDER["Cells"]
PUBLISHED_SIZES = (853, 902, 911, 723, 810, 799, 848, 913, 707)
"""Cells per condition in Sachs et al. (2005), in the order of their data files 1-9."""


def _blocks() -> tuple[np.ndarray, ...]:
    return split_conditions(sachs_log_cells())


def test_the_file_splits_into_the_nine_published_conditions() -> None:
    blocks = _blocks()
    assert tuple(b.shape[0] for b in blocks) == PUBLISHED_SIZES
    assert tuple(c.cells for c in SACHS_CONDITIONS) == PUBLISHED_SIZES
    assert sum(PUBLISHED_SIZES) == sachs_log_cells().shape[0] == 7466
    assert np.shares_memory(blocks[3], sachs_log_cells())
    with pytest.raises(ValueError, match="7466 rows"):
        split_conditions(sachs_log_cells()[:-1])


def test_the_column_means_change_where_the_conditions_meet() -> None:
    boundaries = np.cumsum(PUBLISHED_SIZES)[:-1]
    found = np.array(mean_change_points(sachs_log_cells(), 8))
    # A least-squares segmentation blind to the sizes finds every boundary within 12 rows (1.7%
    # of the smallest condition), six of them exactly; condition 2 differs least from 1.
    assert np.abs(found - boundaries).max() <= 12
    assert int((found == boundaries).sum()) >= 6
    blocks = _blocks()
    for before, after in itertools.pairwise(blocks):
        p = stats.ttest_ind(before, after, equal_var=False).pvalue
        assert p.min() < 1e-6


def test_mean_change_points_finds_a_planted_change() -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(size=(300, 3))
    data[120:] += [3.0, -3.0, 1.5]
    assert mean_change_points(data, 1) == (120,)
    with pytest.raises(ValueError, match="count must be in"):
        mean_change_points(data, 0)


@pytest.mark.parametrize("condition", [c for c in SACHS_CONDITIONS if c.signature])
def test_each_condition_moves_the_proteins_its_signature_names(condition) -> None:  # type: ignore[no-untyped-def]
    blocks = _blocks()
    base, block = blocks[0], blocks[condition.number - 1]
    for protein, direction in condition.signature:
        j = SACHS_PROTEINS.index(protein)
        shift = block[:, j].mean() - base[:, j].mean()
        p = stats.ttest_ind(block[:, j], base[:, j], equal_var=False).pvalue
        assert np.sign(shift) == direction and p < 1e-4, (condition.name, protein, shift, p)


def test_the_conditions_without_a_signature_still_differ_from_the_baseline() -> None:
    blocks = _blocks()
    for condition in SACHS_CONDITIONS[1:3]:
        assert not condition.signature
        block = blocks[condition.number - 1]
        assert stats.ttest_ind(block, blocks[0], equal_var=False).pvalue.min() < 1e-6
    # The Akt inhibitor acts on Akt's activity: its own S473 readout does not fall.
    akt = SACHS_PROTEINS.index("pakts473")
    assert blocks[2][:, akt].mean() >= blocks[0][:, akt].mean()


def test_the_experiments_map_to_their_target_proteins() -> None:
    assert EXPERIMENT_PROTEINS == ("pmek", "PIP2", "PIP3", "pakts473", "PKA", "PKC")
    assert BASELINE is SACHS_CONDITIONS[0] and BASELINE.target is None
    pkc = [c for c in SACHS_CONDITIONS if c.target == "PKC"]
    assert sorted(c.action for c in pkc) == ["activator", "inhibitor"]
    world = SachsCells(np.arange(11))
    p = SACHS_PROTEINS.index
    assert world.condition_for(p("PKC"), -1.0).name == "anti-CD3/CD28 + G06976"
    assert world.condition_for(p("PKC"), 0.0).name == "PMA"
    assert world.condition_for(p("PIP2"), -5.0) is world.condition_for(p("PIP2"), 5.0)
    with pytest.raises(ValueError, match="X0 has no real experiment; experiments exist for X1"):
        world.condition_for(p("praf"), 1.0)


def test_the_truth_is_the_consensus_dag_in_the_seeds_labelling() -> None:
    instance = CELLS.instance(7)
    names = instance.variable_names
    assert names is not None and sorted(names) == sorted(SACHS_PROTEINS)
    source = topology("sachs")
    edges = {(names[i], names[j]) for i, j in instance.dag.edges()}
    assert edges == {(source.names[i], source.names[j]) for i, j in source.dag.edges()}
    assert instance.intervention_targets == frozenset(names.index(p) for p in EXPERIMENT_PROTEINS)
    assert len(instance.i_star) == 3 and instance.budget == 4
    assert instance.i_star <= instance.intervention_targets


def test_a_seed_draws_the_labelling_and_the_cells_reproducibly() -> None:
    a, b = generate_instance(CELLS.spec, 500_003), generate_instance(CELLS.spec, 500_003)
    assert a.digest() == b.digest() == CELLS.manifest[3].digest
    other = generate_instance(CELLS.spec, 500_004)
    assert a.variable_names != other.variable_names
    targets = sorted(a.intervention_targets or ())
    first = [Session(a).intervene(t, 1.0) for t in targets[:2]]
    again = [Session(b).intervene(t, 1.0) for t in targets[:2]]
    for x, y in zip(first, again, strict=True):
        assert np.array_equal(x, y)


def _rows_of(cells: np.ndarray, block: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The row of ``block`` (standardized, protein order) each relabelled cell is."""
    mean, sd = baseline_standardization()
    standardized = (block - mean) / sd
    proteins = cells[:, order]
    matches = [np.flatnonzero(np.all(np.isclose(standardized, row), axis=1)) for row in proteins]
    assert all(m.size == 1 for m in matches)
    return np.array([int(m[0]) for m in matches])


def test_the_observational_sample_is_distinct_baseline_cells() -> None:
    instance = CELLS.instance(0)
    order = np.asarray(instance.scm.order)
    rows = _rows_of(np.asarray(instance.d_obs), _blocks()[0], order)
    assert rows.size == 800 and np.unique(rows).size == 800
    assert np.abs(instance.d_obs.mean(axis=0)).max() < 0.05


def test_an_episode_never_sees_a_cell_twice() -> None:
    instance = CELLS.instance(2)
    session = Session(instance)
    pip2 = instance.variable_names.index("PIP2")  # type: ignore[union-attr]
    seen = [session.intervene(pip2, 0.0) for _ in range(instance.budget)]
    order = np.asarray(instance.scm.order)
    block = _blocks()[4]  # psitectorigenin
    rows = np.concatenate([_rows_of(np.asarray(s), block, order) for s in seen])
    assert rows.size == 4 * 150 and np.unique(rows).size == rows.size


def test_a_refused_experiment_changes_nothing() -> None:
    instance = CELLS.instance(1)
    session = Session(instance)
    none = [v for v in range(11) if v not in (instance.intervention_targets or ())]
    state = session._rng.bit_generator.state
    with pytest.raises(ValueError, match=f"X{none[0]} has no experiment on this level"):
        session.intervene(none[0], 1.0)
    with pytest.raises(ValueError, match="needs a model"):
        session.intervene(sorted(instance.intervention_targets or ())[0], 1.0, kind="shift")
    assert session.interventions_used == 0 and session._rng.bit_generator.state == state


def test_the_sampler_refuses_more_cells_than_are_left_before_drawing() -> None:
    world = SachsCells(np.arange(11))
    sampler, rng = CellSampler(world), np.random.default_rng(0)
    pka = SACHS_PROTEINS.index("PKA")  # beta2cAMP, 707 cells
    assert sampler.draw(pka, 1.0, 700, rng, None).shape == (700, 11)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="has 7 unseen cells left, 10 asked for"):
        sampler.draw(pka, 1.0, 10, rng, None)
    assert rng.bit_generator.state == state
    assert sampler.draw(pka, 1.0, 7, rng, None).shape == (7, 11)


def test_the_fitted_levels_share_the_cells_labelling_per_index() -> None:
    for name in ("Fitted", "Fitted-Spline"):
        level = SACHS_EXPERIMENT_LADDER[name]
        assert [e.seed for e in level.manifest] == [e.seed for e in CELLS.manifest]
        fitted, cells = level.instance(5), CELLS.instance(5)
        assert fitted.variable_names == cells.variable_names
        assert fitted.intervention_targets == cells.intervention_targets
        assert len(fitted.i_star) == 3 and fitted.budget == cells.budget


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"graph": "er"}, "world 'sachs-cells' needs graph='sachs'"),
        ({"targets": "all"}, "world 'sachs-cells' needs graph='sachs' and targets"),
        ({"n_obs": 900}, "853 baseline cells, got n_obs 900"),
        ({"fit": "linear"}, "real data: it takes no fit"),
        ({"world": "mars"}, "world must be one of"),
    ],
)
def test_the_spec_refuses_what_the_cells_cannot_be(fields: dict[str, object], message: str) -> None:
    base = {
        "d": 11,
        "k": 17,
        "n_obs": 800,
        "n_int": 150,
        "noise_var": 1.0,
        "slack": 1,
        "graph": "sachs",
        "world": "sachs-cells",
        "targets": "sachs-experiments",
    }
    with pytest.raises(ValueError, match=message):
        LevelSpec(**{**base, **fields})  # type: ignore[arg-type]


def test_an_experiment_size_the_smallest_condition_cannot_serve_is_refused() -> None:
    spec = LevelSpec(
        11, 17, 800, 200, 1.0, 1, graph="sachs", world="sachs-cells", targets="sachs-experiments"
    )
    with pytest.raises(ValueError, match="exceeds the 707 cells of the smallest experiment"):
        generate_instance(spec, 1)


def test_restricted_targets_need_the_sachs_wiring_and_none_needs_no_slack() -> None:
    with pytest.raises(ValueError, match="targets 'sachs-experiments' are proteins"):
        LevelSpec(6, 5, 100, 10, 1.0, 1, targets="sachs-experiments")
    with pytest.raises(ValueError, match="targets 'none' allows no experiment"):
        LevelSpec(6, 5, 100, 10, 1.0, 1, targets="none")
    observational = generate_instance(LevelSpec(6, 5, 100, 10, 1.0, 0, targets="none"), 3)
    assert observational.budget == 0 and observational.i_star == frozenset()
    assert observational.intervention_targets == frozenset()
