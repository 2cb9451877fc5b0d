"""What both readers of SimGrid platforms read alike: SimGrid's bandwidths and durations with
their units, liquidsched's ``slots`` property, the capacity of a link that never limits, and
fresh names."""

from __future__ import annotations

import re

from ..errors import TopologyError
from ..network import MAX_SLOTS

E = TopologyError
#: The most slots liquidsched gives a link that never limits: the largest power of two that
#: :data:`liquidsched.network.MAX_SLOTS` admits.
MAX_FREE_SLOTS = 2 ** (MAX_SLOTS.bit_length() - 1)

_PREFIXES = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
             "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "m": 60.0, "h": 3600.0, "d": 86400.0,
         "w": 604800.0}
_VALUE = re.compile(r"^\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def _parse_with_unit(text: str | None, units: dict[str, float], what: str, where: str) -> float:
    match = _VALUE.match(text or "")
    if not match:
        raise E(f"{where}: expected {what}, got {text!r}")
    number, unit = float(match.group(1)), match.group(2)
    if unit not in units:
        raise E(f"{where}: unknown unit {unit!r} in {text!r} (expected {what})")
    return number * units[unit]


_BANDWIDTH = {p + u: f / (8 if u == "bps" else 1) for p, f in _PREFIXES.items() for u in ("Bps", "bps")}
_BANDWIDTH[""] = 1.0


def parse_bandwidth(text: str | None, where: str = "bandwidth") -> float:
    """A SimGrid bandwidth in bytes/s (``"125MBps"``, ``"1Gbps"``, ``"1GiBps"``; bare: bytes/s).

    Examples
    --------
    >>> parse_bandwidth("1Gbps")
    125000000.0
    """
    return _parse_with_unit(text, _BANDWIDTH, "a bandwidth such as 125MBps or 1Gbps", where)


def parse_latency(text: str | None, where: str = "latency") -> float:
    """A SimGrid duration in seconds (``"50us"``, ``"1.5ms"``; bare: seconds).

    Examples
    --------
    >>> parse_latency("1.5ms")
    0.0015
    """
    return _parse_with_unit(text, _TIME | {"": 1.0}, "a duration such as 50us or 1ms", where)


def free_capacity(rate_Bps: float, uses: int) -> tuple[float, int]:
    """Capacity and slots of a resource that never limits ``uses`` concurrent transfers yet runs
    each at ``rate_Bps`` at most: ``k`` slots, ``uses`` rounded up to a power of two so that the
    capacity ``rate_Bps · k`` is exact and the slot rate is ``rate_Bps`` exactly.

    Examples
    --------
    >>> free_capacity(1.25e8, 5)
    (1000000000.0, 8)
    """
    slots = min(MAX_FREE_SLOTS, 1 << max(0, uses - 1).bit_length())
    return rate_Bps * slots, slots


def _fresh(base: str, taken: set[str]) -> str:
    """``base``, or ``base#2``, ``base#3``... whichever is not taken yet; now taken."""
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}#{k}"
    taken.add(name)
    return name


def _slots_property(props: dict[str, str], where: str) -> int | None:
    """The ``slots`` property of a link (liquidsched's own), or None."""
    text = props.get("slots")
    if text is None:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise E(f"{where}: property slots: expected a whole number of at least 1, got {text!r}")
    return int(text)


def _role(sends: bool, receives: bool) -> str:
    return "both" if sends == receives else ("sender" if sends else "receiver")
