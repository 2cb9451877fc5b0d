"""Rates measured on a machine that may be busy.

A rate measured on the emulated network over a span long next to a scheduling delay can only be
lowered by load (the links are shaped; a busy CPU delays packets, it never speeds them up). So a
test asserts its upper bounds on every such measurement, and its lower bounds on the best of a
few: a loaded machine gets more tries, and the bound is one that a loaded machine still reaches.
Over a short span (10 ms), arrivals held back and then let through at once can look faster than
the link: such a rate is judged on one of several tries.
"""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")

#: Measurements a lower bound gets before the test fails.
ATTEMPTS = 3


def best_of(measure: Callable[[], T], reached: Callable[[T], bool], attempts: int = ATTEMPTS,
            always: Callable[[T], None] | None = None) -> T:
    """Measure up to ``attempts`` times and return the first measurement that ``reached`` its
    lower bounds, else the last one (for the caller's assertion to report).

    ``always`` asserts what holds on every measurement (the upper bounds) before it is judged.
    """
    value = measure()
    for _ in range(attempts - 1):
        if always is not None:
            always(value)
        if reached(value):
            return value
        value = measure()
    if always is not None:
        always(value)
    return value
