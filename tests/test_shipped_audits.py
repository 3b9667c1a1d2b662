"""The order audits the package ships (acdb_gym/report/data/order_audits.json, written by
experiments/ship_order_audits.py) are what the code computes, and a report of the default
seeds of v0 reads them instead of computing them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.report import order_audit
from acdb_gym.report.aggregation import prepare
from acdb_gym.report.audit_cache import (
    AUDIT_CACHE_FILE,
    SHIPPED_AUDITS,
    SHIPPED_INDICES,
    SHIPPED_LADDERS,
    shipped_name,
)
from tests.test_report import make_row


def _shipped() -> dict[str, object]:
    return json.loads(SHIPPED_AUDITS.read_text(encoding="utf-8"))


def _same(shipped: object, computed: object) -> bool:
    """Equal, NaN equal to NaN (the file holds Python's repr of every float: exact)."""
    if isinstance(shipped, float) and isinstance(computed, float):
        return shipped == computed or (math.isnan(shipped) and math.isnan(computed))
    if isinstance(shipped, dict) and isinstance(computed, dict):
        return shipped.keys() == computed.keys() and all(
            _same(shipped[k], computed[k]) for k in shipped
        )
    if isinstance(shipped, list) and isinstance(computed, list):
        return len(shipped) == len(computed) and all(
            _same(a, b) for a, b in zip(shipped, computed, strict=True)
        )
    return shipped == computed


def _check_ladder(ladder: str) -> None:
    payload = _shipped()
    assert payload["key"] == order_audit.shipped_audit_key(), (
        "the audit's constants changed: run experiments/ship_order_audits.py"
    )
    entries = payload["instances"]
    assert isinstance(entries, dict)
    with threadpool_limits(limits=1, user_api="blas"):
        for name, level in ALL_LADDERS[ladder].items():
            for index in SHIPPED_INDICES:
                seed = level.manifest_seed(index)
                computed = order_audit.audit_entry(
                    order_audit.instance_order_audit(level.spec, seed)
                )
                assert _same(entries[shipped_name(ladder, name, seed)], computed), (
                    f"{ladder} {name} seed {seed}: the shipped audit is not what the code "
                    "computes; run experiments/ship_order_audits.py"
                )


def test_the_file_holds_exactly_the_default_seeds_of_the_shipped_ladders() -> None:
    expected = {
        shipped_name(ladder, name, level.manifest_seed(index))
        for ladder in SHIPPED_LADDERS
        for name, level in ALL_LADDERS[ladder].items()
        for index in SHIPPED_INDICES
    }
    assert set(_shipped()["instances"]) == expected  # type: ignore[call-overload]


def test_the_shipped_v0_audits_are_what_the_code_computes() -> None:
    _check_ladder("v0")


@pytest.mark.slow
def test_the_shipped_v1_audits_are_what_the_code_computes() -> None:
    _check_ladder("v1")


def test_a_report_of_the_default_seeds_reads_them_and_keeps_them_in_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [make_row("pc", level=level, index=index) for level in ("L0", "L4") for index in (0, 7)]
    prepared = prepare(rows)
    truth = order_audit.order_audit_rows(prepared)  # from the shipped file

    def refuse(*args: object) -> None:
        raise AssertionError("a shipped instance's audit was computed")

    monkeypatch.setattr(order_audit, "instance_order_audit", refuse)
    cache = tmp_path / AUDIT_CACHE_FILE
    assert order_audit.order_audit_rows(prepared, cache=cache) == truth
    kept = json.loads(cache.read_text())["instances"]
    assert len(kept) == 4  # the run directory's cache holds every audit its report used
    monkeypatch.undo()
    order_audit.instance_order_audit.cache_clear()
    computed = {
        key: order_audit.instance_order_audit(key[2], key[3])
        for key in order_audit.known_instances(prepared)
    }
    assert all(
        _same(kept[f"{key[2]!r}|{key[3]}"], order_audit.audit_entry(audit))
        for key, audit in computed.items()
    )


def test_a_custom_level_with_a_shipped_levels_name_is_not_read_from_the_file() -> None:
    assert not order_audit._is_shipped_level(("custom", "L0", ALL_LADDERS["v0"]["L0"].spec, 1))
    assert not order_audit._is_shipped_level(("v0", "L0", ALL_LADDERS["v0"]["L1"].spec, 1))
    assert order_audit._is_shipped_level(("v0", "L0", ALL_LADDERS["v0"]["L0"].spec, 1))
