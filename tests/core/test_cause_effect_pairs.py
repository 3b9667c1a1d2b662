"""The Tübingen cause-effect pairs (DESIGN §3.6): the shipped pairs, their mapping to the
original database and its weights, and the two-variable worlds drawn from them."""

from __future__ import annotations

import csv
import gzip
import io

import numpy as np
import pytest

from acdb_gym.core.graphs import data_file
from acdb_gym.core.ladders.shipped import TUEBINGEN_LADDER
from acdb_gym.core.session import Session
from acdb_gym.core.worlds.cause_effect_pairs import (
    MAX_PAIR_ROWS,
    MIN_PAIR_ROWS,
    CauseEffectPair,
    _raw_pairs,
    pair_data,
    pair_for_seed,
    pair_table,
    pairs_with_rows,
)
from acdb_gym.core.worlds.spec import LevelSpec

MULTIVARIATE = {52, 53, 54, 55, 71}
"""The original pairs of 1-104 with more than one variable per side (weight 0 in pairmeta)."""


def test_the_file_holds_99_bivariate_pairs_each_labelled_a_causes_b() -> None:
    targets = list(csv.DictReader(io.StringIO(data_file("tuebingen_targets.csv").read_text())))
    assert len(targets) == 99 and {row["Target"] for row in targets} == {"1.0"}
    text = gzip.decompress(data_file("tuebingen_pairs.csv.gz").read_bytes()).decode()
    assert text.startswith("SampleID,A,B\r\n")
    table = pair_table()
    assert [info.name for info in table] == [row["SampleID"] for row in targets]
    assert [info.rows for info in table] == [pair.shape[0] for pair in _raw_pairs()]
    assert min(info.rows for info in table) == MIN_PAIR_ROWS
    assert max(info.rows for info in table) == MAX_PAIR_ROWS


def test_the_pairs_are_the_originals_1_to_104_without_the_multivariate_ones() -> None:
    originals = [info.original for info in pair_table()]
    assert originals == sorted(set(range(1, 105)) - MULTIVARIATE)
    assert all(0 < info.weight <= 1 for info in pair_table())


def test_pairs_sharing_a_measured_variable_share_their_dataset_weight() -> None:
    # The mapping to the original numbers is inferred; pairs of one dataset measure some
    # variable on the same units (equal columns), and pairmeta gives a dataset's pairs equal
    # weights, so a shifted mapping would pair unequal weights here.
    pairs, table = _raw_pairs(), pair_table()
    columns: dict[bytes, list[int]] = {}
    for index, pair in enumerate(pairs):
        for column in pair.T:
            columns.setdefault(column.tobytes(), []).append(index)
    groups = [sorted(set(group)) for group in columns.values() if len(set(group)) > 1]
    assert len(groups) >= 8
    for group in groups:
        weights = {round(table[i].weight, 2) for i in group}
        assert len(weights) == 1, [(table[i].name, table[i].weight) for i in group]


def test_levels_play_the_pairs_with_enough_rows_one_per_manifest_index() -> None:
    assert len(pairs_with_rows(MIN_PAIR_ROWS)) == 99 and len(pairs_with_rows(1000)) == 36
    for name, level in TUEBINGEN_LADDER.items():
        usable = pairs_with_rows(level.spec.n_obs)
        assert len(level.manifest) == len(usable), name
        played = [pair_for_seed(entry.seed, level.spec.n_obs) for entry in level.manifest]
        assert played == list(usable)
    with pytest.raises(ValueError, match="no pair has 20000 rows"):
        pair_for_seed(0, 20000)


def test_a_pair_world_is_its_rows_under_a_drawn_labelling() -> None:
    level = TUEBINGEN_LADDER["Pairs"]
    orders = set()
    for index in (0, 46, 98):
        instance = level.instance(index)
        world = instance.scm
        assert isinstance(world, CauseEffectPair) and world.index == index
        cause, effect = (int(v) for v in world.order)
        assert instance.dag.edges() == [(cause, effect)]
        assert instance.budget == 0 and instance.i_star == frozenset()
        assert instance.intervention_targets == frozenset()
        rows = pair_data(index)[:, np.argsort(world.order)]
        sample = np.asarray(instance.d_obs)
        found = [np.flatnonzero(np.all(np.isclose(rows, row), axis=1)) for row in sample]
        assert all(f.size >= 1 for f in found) and sample.shape == (94, 2)
        orders.add((cause, effect))
        assert instance.digest() == level.manifest[index].digest
    assert orders == {(0, 1), (1, 0)}


def test_a_pair_refuses_every_experiment() -> None:
    instance = TUEBINGEN_LADDER["Pairs"].instance(3)
    with pytest.raises(ValueError, match="no intervention is possible on this level"):
        Session(instance).intervene(0, 1.0)
    with pytest.raises(ValueError, match="observational only"):
        instance.scm.sample_do(0, 1.0, 5, np.random.default_rng(0))


def test_the_spec_refuses_what_a_pair_cannot_be() -> None:
    with pytest.raises(ValueError, match="world 'cause-effect-pairs' needs d=2"):
        LevelSpec(3, 1, 94, 3, 1.0, 0, world="cause-effect-pairs", targets="none")
    with pytest.raises(ValueError, match="largest pair has 16382 rows"):
        LevelSpec(2, 1, 20000, 3, 1.0, 0, world="cause-effect-pairs", targets="none")
    with pytest.raises(ValueError, match="targets='none'"):
        LevelSpec(2, 1, 94, 3, 1.0, 0, world="cause-effect-pairs")
