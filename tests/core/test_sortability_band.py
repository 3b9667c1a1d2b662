"""The R²-sortability band (``LevelSpec.r2_sortability_band``, DESIGN §3): a seed has an instance
only if its observational sample's R²-sortability lies within 0.5 ± b."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from acdb_gym.core.ladders.custom import (
    CUSTOM_SEED_BASE,
    custom_manifest,
    format_level_spec,
    parse_custom_level,
    parse_level_spec,
)
from acdb_gym.core.ladders.shipped import FRONTIER_LADDER
from acdb_gym.core.worlds.instance import (
    InstanceGenerationError,
    OutOfBandError,
    generate_instance,
)
from acdb_gym.core.worlds.sortability import r2_sortability_of
from acdb_gym.discovery.sortability import r2_sortability
from acdb_gym.envs.episode_rules import choose_instance, fresh_instances

PLAIN = "d=8,k=10,n_obs=200,n_int=20,slack=1,standardized=true"
BANDED = f"{PLAIN},r2_sortability_band=0.1"


def _sortabilities(spec_text: str, seeds: range) -> dict[int, float]:
    spec = parse_level_spec(spec_text)
    found = {}
    for seed in seeds:
        instance = generate_instance(spec, seed)
        found[seed] = r2_sortability(instance.d_obs, instance.dag.adjacency)
    return found


def test_the_band_keeps_exactly_the_seeds_whose_sample_lies_in_it() -> None:
    plain = _sortabilities(PLAIN, range(40))
    banded = parse_level_spec(BANDED)
    inside = [seed for seed, value in plain.items() if abs(value - 0.5) <= 0.1]
    assert 0 < len(inside) < len(plain)  # the band both keeps and refuses seeds here
    for seed, value in plain.items():
        if seed in inside:
            instance = generate_instance(banded, seed)
            # Same world and sample as without the band: the rule only accepts or refuses.
            assert np.array_equal(
                instance.d_obs, generate_instance(parse_level_spec(PLAIN), seed).d_obs
            )
            assert r2_sortability_of(instance.d_obs, instance.dag.adjacency) == pytest.approx(value)
        else:
            with pytest.raises(OutOfBandError, match=f"seed {seed}: the R²-sortability"):
                generate_instance(banded, seed)


def test_out_of_band_is_a_generation_error_and_names_the_field() -> None:
    banded = parse_level_spec(BANDED)
    plain = _sortabilities(PLAIN, range(40))
    outside = next(seed for seed, value in plain.items() if abs(value - 0.5) > 0.1)
    with pytest.raises(InstanceGenerationError, match="r2_sortability_band"):
        generate_instance(banded, outside)


def test_a_generator_draw_takes_seeds_until_one_is_in_the_band_and_is_repeatable() -> None:
    banded = parse_level_spec(BANDED)
    first = generate_instance(banded, np.random.default_rng(7))
    again = generate_instance(banded, np.random.default_rng(7))
    assert first.digest() == again.digest()
    assert abs(r2_sortability_of(first.d_obs, first.dag.adjacency) - 0.5) <= 0.1
    # Over several draws some generator must have skipped a seed (about half are refused).
    skipped = 0
    for seed in range(8):
        rng, probe = np.random.default_rng(seed), np.random.default_rng(seed)
        instance = generate_instance(banded, rng)
        skipped += instance.seed != int(probe.integers(2**63 - 1))
    assert skipped > 0


def test_fresh_draws_of_a_banded_level_match_one_at_a_time() -> None:
    level = parse_custom_level(f"band:{BANDED}").level(3)
    together = fresh_instances(level, [np.random.default_rng(s) for s in (1, 2, 3)])
    alone = [choose_instance(level, None, np.random.default_rng(s)) for s in (1, 2, 3)]
    assert [i.digest() for i in together] == [i.digest() for i in alone]


def test_custom_manifests_skip_out_of_band_seeds() -> None:
    plain = _sortabilities(PLAIN, range(CUSTOM_SEED_BASE, CUSTOM_SEED_BASE + 40))
    inside = [seed for seed, value in plain.items() if abs(value - 0.5) <= 0.1]
    manifest = custom_manifest(parse_level_spec(BANDED), 3)
    assert [entry.seed for entry in manifest] == inside[:3]


def test_a_band_that_accepts_almost_nothing_gives_up_naming_the_field() -> None:
    narrow = parse_level_spec(f"{PLAIN},r2_sortability_band=0.000001")
    with pytest.raises(ValueError, match="widen r2_sortability_band"):
        custom_manifest(narrow, 5, seconds=120)


def test_worlds_from_a_base_seed_give_up_after_a_run_of_seeds_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from acdb_gym.core.worlds import instance as instance_module

    monkeypatch.setattr(instance_module, "MAX_BAND_SEEDS", 5)
    narrow = parse_level_spec(f"{PLAIN},r2_sortability_band=0.000001")
    with pytest.raises(InstanceGenerationError, match="r2_sortability_band"):
        instance_module.instances_from(narrow, 0, 2)
    plain = instance_module.instances_from(parse_level_spec(PLAIN), 7, 3)
    assert [instance.seed for instance in plain] == [7, 8, 9]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("r2_sortability_band=0.5", r"\[0, 0.5\)"),
        ("r2_sortability_band=-0.1", r"\[0, 0.5\)"),
    ],
)
def test_bad_bands_are_refused(extra: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_level_spec(f"{PLAIN},{extra}")


def test_a_band_needs_edges() -> None:
    with pytest.raises(ValueError, match="k >= 1"):
        parse_level_spec("d=4,k=0,n_obs=50,n_int=5,slack=0,r2_sortability_band=0.1")


def test_the_field_is_part_of_the_canonical_text_and_repr_only_when_set() -> None:
    plain, banded = parse_level_spec(PLAIN), parse_level_spec(BANDED)
    assert "r2_sortability_band" not in format_level_spec(plain) + repr(plain)
    assert format_level_spec(banded).endswith(",r2_sortability_band=0.1")
    assert parse_level_spec(format_level_spec(banded)) == banded


def test_the_frontier_nl20_level_is_banded_and_its_manifest_in_the_band() -> None:
    level = FRONTIER_LADDER["NL20"]
    assert level.spec.r2_sortability_band == 0.1
    for index in (0, 100, 199):
        instance = level.instance(index)
        assert abs(r2_sortability_of(instance.d_obs, instance.dag.adjacency) - 0.5) <= 0.1


def test_a_bank_of_a_banded_level_leaves_out_the_seeds_without_a_world(tmp_path: Path) -> None:
    from acdb_gym.envs.design.bank import BankError, build_bank, load_bank

    spec = FRONTIER_LADDER["NL20"].spec
    seeds = range(5_000_000, 5_000_008)
    kept = []
    for seed in seeds:
        try:
            generate_instance(spec, seed)
        except OutOfBandError:
            continue
        kept.append(seed)
    assert 0 < len(kept) < len(seeds)
    bank = build_bank(tmp_path / "b", ladder="frontier", level="NL20", seeds=seeds)
    assert list(bank.seeds) == kept
    assert load_bank(tmp_path / "b", sha256=bank.sha256).seeds == bank.seeds
    outside = [seed for seed in seeds if seed not in kept]
    with pytest.raises(BankError, match=r"none of the \d+ seeds has a world"):
        build_bank(tmp_path / "c", ladder="frontier", level="NL20", seeds=outside)
