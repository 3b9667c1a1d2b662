"""Write the order audits the package ships (``acdb_gym/report/data/order_audits.json``).

    python experiments/ship_order_audits.py  # long: 8 s at load 3

The report's marginal-order audit (DESIGN §10) regenerates every instance of a run and regresses
its sample in 16 orders; the package ships the audits of the instances the default sweeps of the
v0 and v1 ladders play (``SHIPPED_LADDERS``, manifest indices ``SHIPPED_INDICES`` of every level,
:mod:`acdb_gym.report.audit_cache`), so a first report of the README's main command computes
none. Rerun this script when the audit's code or constants change:
``tests/test_shipped_audits.py`` recomputes the file's entries and fails until it is rewritten.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from threadpoolctl import threadpool_limits

from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.report.audit_cache import (
    SHIPPED_AUDITS,
    SHIPPED_INDICES,
    SHIPPED_LADDERS,
    shipped_name,
)
from acdb_gym.report.order_audit import audit_entry, instance_order_audit, shipped_audit_key


def shipped_audits() -> dict[str, object]:
    """Every shipped instance's audit, by its entry name."""
    instances: dict[str, object] = {}
    with threadpool_limits(limits=1, user_api="blas"):  # as the report computes them
        for ladder in SHIPPED_LADDERS:
            for level_name, level in ALL_LADDERS[ladder].items():
                for index in SHIPPED_INDICES:
                    seed = level.manifest_seed(index)
                    audit = instance_order_audit(level.spec, seed)
                    instances[shipped_name(ladder, level_name, seed)] = audit_entry(audit)
    return instances


def main(argv: Sequence[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    start = time.perf_counter()
    instances = shipped_audits()
    lines = [
        f" {json.dumps(name)}: {json.dumps(entry, sort_keys=True)}"
        for name, entry in instances.items()
    ]
    head = f'{{"key": {json.dumps(shipped_audit_key())}, "instances": {{'
    SHIPPED_AUDITS.parent.mkdir(parents=True, exist_ok=True)
    # One instance a line: a changed audit is a readable diff.
    SHIPPED_AUDITS.write_text("\n".join([head, ",\n".join(lines), "}}"]) + "\n", encoding="utf-8")
    elapsed = time.perf_counter() - start
    print(f"{len(instances)} audits written to {SHIPPED_AUDITS} in {elapsed:.1f} s")


if __name__ == "__main__":
    run_script(main)
