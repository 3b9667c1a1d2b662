"""The one check of an intervention's arguments, shared by every world kind's samplers
(``sample``, ``sample_do``, soft interventions) and the session: a sample size of at least 1,
a target node in range and a finite value, each refused with a message that names it.

>>> check_intervention(2, 1.5, d=3, n=10)
>>> check_intervention(3, 1.5, d=3)
Traceback (most recent call last):
...
ValueError: var must be in [0, 3), got 3
"""

from __future__ import annotations

import math

__all__ = ["check_intervention", "check_samples", "check_target", "check_value"]


def check_samples(n: int) -> None:
    """ValueError unless ``n`` (rows to draw) is at least 1."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")


def check_target(var: int, d: int) -> None:
    """ValueError unless ``var`` is a node in ``[0, d)``."""
    if not 0 <= var < d:
        raise ValueError(f"var must be in [0, {d}), got {var}")


def check_value(value: float) -> None:
    """ValueError unless ``value`` is finite."""
    if not math.isfinite(value):
        raise ValueError(f"value must be finite, got {value}")


def check_intervention(var: int, value: float, *, d: int, n: int = 1) -> None:
    """:func:`check_samples`, :func:`check_target` and :func:`check_value`, in that order.

    Raises:
        ValueError: naming the first bad argument and its value.
    """
    check_samples(n)
    check_target(var, d)
    check_value(value)
