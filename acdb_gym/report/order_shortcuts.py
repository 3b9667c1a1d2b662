"""The order shortcuts of one instance, computed here or in worker processes: its marginal-order
audit (:func:`~acdb_gym.report.order_audit.instance_order_audit`) and the directed F1 of the
regressions in the hub order (DESIGN §7, "Shortcut gate").

Both depend on the instance's spec and seed only, so the numbers are the same wherever they are
computed. Each regenerates the instance's world, which on the frontier's nonlinear levels costs
most of a gate; :func:`prefetch_order_shortcuts` computes a run's instances in worker processes
first, and :func:`order_audit_of` and :func:`hub_order_f1` then return what it kept.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np

from acdb_gym.baselines.classical import hub_order
from acdb_gym.core.scoring import score
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery.sortnregress import regress_in_order
from acdb_gym.report.order_audit import (
    AUDIT_ALPHA,
    MAX_AUDIT_NODES,
    InstanceOrderAudit,
    instance_order_audit,
)

__all__ = ["hub_order_f1", "order_audit_of", "prefetch_order_shortcuts"]

_KEPT: dict[tuple[LevelSpec, int], tuple[InstanceOrderAudit, float]] = {}
"""Order audits and hub-order F1s computed in worker processes (:func:`prefetch_order_shortcuts`)."""


def hub_order_f1(spec: LevelSpec, seed: int) -> float:
    """Directed F1 of the regressions in the hub order (the order audit's regressions)."""
    kept = _KEPT.get((spec, seed))
    return kept[1] if kept is not None else _computed_hub_f1(spec, seed)


def order_audit_of(spec: LevelSpec, seed: int) -> InstanceOrderAudit:
    """:func:`~acdb_gym.report.order_audit.instance_order_audit`, or the audit
    :func:`prefetch_order_shortcuts` kept for the instance (the same numbers)."""
    kept = _KEPT.get((spec, seed))
    return kept[0] if kept is not None else instance_order_audit(spec, seed)


def prefetch_order_shortcuts(instances: Iterable[tuple[LevelSpec, int]], workers: int) -> int:
    """Compute the order audit and the hub order's F1 of every ``(spec, seed)`` in ``workers``
    processes (one BLAS thread each) and keep them for this process's later calls
    (:func:`order_audit_of`, :func:`hub_order_f1`, the gate): the same numbers as computing them
    here, since both depend on the instance's spec and seed only. Instances above
    :data:`~acdb_gym.report.order_audit.MAX_AUDIT_NODES` are left out, as the gate leaves them
    out. Returns how many instances were computed.

    Raises:
        ValueError: ``workers`` is below 1.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    todo = sorted(
        {(spec, seed) for spec, seed in instances if spec.d <= MAX_AUDIT_NODES} - set(_KEPT),
        key=lambda pair: (repr(pair[0]), pair[1]),
    )
    if not todo:
        return 0
    from concurrent.futures import ProcessPoolExecutor

    from acdb_gym.sweep.workers import one_blas_thread, worker_context

    with ProcessPoolExecutor(
        workers, mp_context=worker_context(), initializer=one_blas_thread
    ) as pool:
        for pair, kept in zip(todo, pool.map(_order_shortcuts, todo, chunksize=4), strict=True):
            _KEPT[pair] = kept
    return len(todo)


def _order_shortcuts(pair: tuple[LevelSpec, int]) -> tuple[InstanceOrderAudit, float]:
    return instance_order_audit(*pair), hub_order_f1(*pair)


@functools.lru_cache(maxsize=4096)
def _computed_hub_f1(spec: LevelSpec, seed: int) -> float:
    instance = generate_instance(spec, seed)
    data = np.asarray(instance.d_obs)
    graph = regress_in_order(data, hub_order(data), alpha=AUDIT_ALPHA)
    return float(score(instance, graph).directed_f1)
