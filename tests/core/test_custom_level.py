"""Custom levels: spec text, names, and manifests preflighted alike in every process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acdb_gym.core.ladders.custom import (
    CUSTOM_LADDER,
    CUSTOM_PREFLIGHT_SECONDS,
    CUSTOM_SEED_BASE,
    MAX_CUSTOM_SEEDS,
    MAX_SKIPPED_SEEDS,
    CustomLevel,
    custom_manifest,
    default_level_name,
    format_level_spec,
    parse_custom_level,
    parse_level_spec,
    resolve_level,
)
from acdb_gym.core.ladders.shipped import ALL_LADDERS, Level, LevelSpec, get_level
from acdb_gym.core.worlds.instance import generate_instance

ROOT = Path(__file__).resolve().parents[2]
D40 = "d=40,k=60,n_obs=1000,n_int=100,slack=1,standardized=true"


def test_left_out_fields_take_the_defaults() -> None:
    spec = parse_level_spec(" d = 40 , k=60, n_obs=1000,n_int=100,slack=1 ")
    assert spec == LevelSpec(40, 60, 1000, 100, 1.0, 1)
    assert parse_level_spec(D40).standardized
    assert parse_level_spec(D40 + ",noise_var=2.5,family=nonlinear").noise_var == 2.5


@pytest.mark.parametrize(
    "level", [level for ladder in ALL_LADDERS.values() for level in ladder.values()]
)
def test_every_shipped_spec_reads_back_from_its_text(level: Level) -> None:
    spec = level.spec
    text = format_level_spec(spec)
    assert parse_level_spec(text) == spec
    assert format_level_spec(parse_level_spec(text)) == text


def test_the_canonical_text_names_only_what_differs_from_the_defaults() -> None:
    text = format_level_spec(
        parse_level_spec("slack=0,n_int=200,standardized=yes,k=60,n_obs=9,d=40")
    )
    assert text == "d=40,k=60,n_obs=9,n_int=200,noise_var=1.0,slack=0,standardized=true"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no fields given"),
        (D40 + ",dd=3", "unknown field 'dd'; fields: d, k, n_obs"),
        (D40 + ",k=5", "field 'k' is given twice"),
        (D40 + ",standardized", "expected field=value, got 'standardized'"),
        (D40.replace("d=40", "d=4.5"), "d must be an integer, got '4.5'"),
        (D40.replace("true", "maybe"), "standardized must be true or false, got 'maybe'"),
        (D40 + ",noise_var=fast", "noise_var must be a number, got 'fast'"),
        (D40 + ",noise_var=nan", "noise_var must be a finite number"),
        ("d=40,k=60", "missing required fields n_obs, n_int, slack"),
        (D40.replace("k=60", "k=900"), "k must be in [0, 780] for d=40, got 900"),
        (D40 + ",family=quadratic", "family must be one of"),
    ],
)
def test_a_bad_spec_is_refused_with_the_reason_and_the_spec(text: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_level_spec(text)
    assert message in str(error.value)
    assert f"custom level {text!r}" in str(error.value)


def test_a_name_prefix_names_the_level_and_the_default_name_is_a_digest() -> None:
    named = parse_custom_level("D40:" + D40)
    assert named == CustomLevel("D40", parse_level_spec(D40))
    unnamed = parse_custom_level(D40)
    assert unnamed.name == default_level_name(unnamed.spec)
    assert unnamed.name.startswith("d40-") and len(unnamed.name) == 12
    # The same spec written differently is the same level; another spec is another one.
    assert parse_custom_level(D40.replace(",", ", ")).name == unnamed.name
    assert parse_custom_level(D40.replace("slack=1", "slack=0")).name != unnamed.name


@pytest.mark.parametrize("name", ["", "two words", "a/b", "-x", "x" * 41])
def test_a_bad_name_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="custom level name must be 1-40"):
        parse_custom_level(f"{name}:{D40}")


def test_the_manifest_is_the_first_seeds_that_generate_with_their_digests() -> None:
    spec = parse_level_spec(D40)
    five = custom_manifest(spec, 5)
    assert custom_manifest(spec, 3) == five[:3]
    assert five[0].seed == CUSTOM_SEED_BASE
    assert [entry.seed for entry in five] == sorted({entry.seed for entry in five})
    assert all(generate_instance(spec, e.seed).digest() == e.digest for e in five)
    level = CustomLevel("D40", spec).level(5)
    assert (level.ladder, level.name, level.manifest, level.env_id) == (
        CUSTOM_LADDER,
        "D40",
        five,
        "ACDB-custom-D40",
    )
    for seeds in (0, MAX_CUSTOM_SEEDS + 1):
        with pytest.raises(ValueError, match=f"seeds must be in \\[1, {MAX_CUSTOM_SEEDS}\\]"):
            custom_manifest(spec, seeds)


@pytest.mark.slow
def test_another_process_preflights_the_same_seeds_and_digests() -> None:
    code = (
        "import json; from acdb_gym.core.ladders.custom import *; "
        f"m = custom_manifest(parse_level_spec({D40!r}), 4); "
        "print(json.dumps([[e.seed, e.digest] for e in m]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout
    here = custom_manifest(parse_level_spec(D40), 4)
    assert json.loads(out) == [[e.seed, e.digest] for e in here]


def test_resolve_level_rebuilds_custom_levels_and_looks_up_shipped_ones() -> None:
    assert resolve_level("v0", "L1", "", 1) is get_level("v0", "L1")
    level = resolve_level(CUSTOM_LADDER, "D40", format_level_spec(parse_level_spec(D40)), 2)
    assert level.spec == parse_level_spec(D40) and len(level.manifest) == 2
    with pytest.raises(ValueError, match="a level spec belongs to ladder 'custom', got 'v1'"):
        resolve_level("v1", "L1", D40, 1)


SMALL = "d=8,k=10,n_obs=200,n_int=50,slack=1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("d=100000,k=10,n_obs=200,n_int=50,slack=1", "d must be in [2, 2000], got 100000"),
        ("d=5000,k=10,n_obs=200,n_int=50,slack=1", "d must be in [2, 2000], got 5000"),
        ("d=8,k=10,n_obs=1000000000,n_int=50,slack=1", "n_obs must be in [4, 100000]"),
        ("d=8,k=10,n_obs=200,n_int=1000000,slack=1", "n_int must be in [3, 100000]"),
        ("d=500,k=10,n_obs=100000,n_int=50,slack=1", "n_obs x d must be at most 10000000"),
        ("d=500,k=10,n_obs=200,n_int=5000,slack=1", "n_int x d must be at most 1000000"),
        ("d=8,k=10,n_obs=200,n_int=50,slack=100000", "slack must be in [0, 1000]"),
        (SMALL + ",noise_var=1e-320", "noise_var must be in [1e-06, 1e+06], got 1e-320"),
        (SMALL + ",family=nonlinear,noise_var=1e300", "noise_var must be in [1e-06, 1e+06]"),
        (SMALL + ",faithfulness_eps=0.99", "faithfulness_eps must be in [0, 0.5], got 0.99"),
        (SMALL + ",weight_high=1e200", "weight_high must be in [0.001, 1000]"),
        ("d=8,k=10,n_obs=" + "9" * 5000 + ",n_int=50,slack=1", "n_obs must be an integer"),
    ],
)
def test_sizes_and_ranges_are_bounded_before_anything_is_allocated(text: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_level_spec(text)
    assert message in str(error.value), str(error.value)
    assert len(str(error.value)) < 1_000


@pytest.mark.slow
def test_a_level_that_cannot_be_generated_fails_naming_the_fields_to_change() -> None:
    """Every draw of this spec fails the faithfulness check (about 4 s per seed); preflight
    gives up at its time bound (45 s by default, 2 s here) and says which fields to change."""
    spec = parse_level_spec("d=8,k=28,n_obs=200,n_int=50,slack=1,faithfulness_eps=0.5")
    start = time.monotonic()
    with pytest.raises(ValueError) as error:
        custom_manifest(spec, 3, seconds=2.0)
    assert time.monotonic() - start < 10
    text = str(error.value)
    assert "found 0 of 3 seeds" in text and "ran out of its 2 s" in text, text
    assert "faithfulness_eps (now 0.5)" in text and "k (now 28 of 28 pairs)" in text, text
    assert "faithfulness_rule=redraw_edges (now reject_world)" in text, text
    assert CUSTOM_PREFLIGHT_SECONDS + 15 <= 60


def test_preflight_skips_at_most_a_bounded_number_of_seeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A spec whose seeds keep failing gives up after MAX_SKIPPED_SEEDS, not never."""
    monkeypatch.setattr("acdb_gym.core.worlds.kinds.linear.MAX_ATTEMPTS", 1)
    spec = parse_level_spec("d=8,k=28,n_obs=200,n_int=51,slack=1,faithfulness_eps=0.5")
    with pytest.raises(ValueError, match=f"{MAX_SKIPPED_SEEDS} seeds had no instance"):
        custom_manifest(spec, 2)


def test_an_episode_s_total_memory_is_bounded_before_anything_is_allocated() -> None:
    """The sizes inside their ranges can still ask for gigabytes together: the observational
    sample plus one sample of ``n_int`` per experiment the budget allows (``|I*| <= d - 1``, plus
    the slack), ``(n_obs + (d - 1 + slack) x n_int) x d`` float64 values, is checked whole."""
    from acdb_gym.core.ladders.custom import MAX_EPISODE_VALUES, episode_values
    from acdb_gym.core.ladders.shipped import ALL_LADDERS

    text = "d=100,k=100,n_obs=100000,n_int=10000,slack=1000"
    with pytest.raises(ValueError, match="an episode holds up to 1109000000 values"):
        parse_custom_level(text)
    assert episode_values(parse_level_spec(SMALL)) == (200 + 8 * 50) * 8
    for ladder in ALL_LADDERS.values():  # every shipped level lies inside the bound
        for level in ladder.values():
            assert episode_values(level.spec) <= MAX_EPISODE_VALUES, level
