"""Parsing of rates and durations written with units, as users write them in topology files."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

# Case matters: "B" is a byte and "b" a bit, as in "MB/s" against "Mb/s".
_RATE_UNITS = {
    "B/s": 1, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
    "KiB/s": 2**10, "MiB/s": 2**20, "GiB/s": 2**30, "TiB/s": 2**40,
    "bit/s": 1 / 8, "kbit/s": 1e3 / 8, "Kbit/s": 1e3 / 8, "Mbit/s": 1e6 / 8,
    "Gbit/s": 1e9 / 8, "Tbit/s": 1e12 / 8,
    "b/s": 1 / 8, "kb/s": 1e3 / 8, "Mb/s": 1e6 / 8, "Gb/s": 1e9 / 8, "Tb/s": 1e12 / 8,
    "bps": 1 / 8, "kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_NUMBER_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/]*)\s*$")


def _number_and_scale(text: str, units: dict[str, Any], what: str) -> tuple[str, Any]:
    """Split ``"1.5MB"`` into the number's text and the unit's scale (1 without a unit)."""
    match = _NUMBER_UNIT.match(text)
    if not match:
        raise ValueError(f"expected {what}, got {text!r}")
    unit = match.group(2)
    if unit and unit not in units:
        raise ValueError(f"unknown unit {unit!r} in {text!r} (known: {', '.join(units)})")
    return match.group(1), units[unit] if unit else 1


def _parse(value: object, units: dict[str, float], what: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"expected {what}, got {value!r}")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        digits, scale = _number_and_scale(value, units, what)
        number = float(digits) * scale
    else:
        raise ValueError(f"expected {what}, got {type(value).__name__} {value!r}")
    if not math.isfinite(number):
        raise ValueError(f"expected {what}, finite, got {value!r}")
    return number


def parse_rate(value: object) -> float:
    """Parse a rate in bytes/s: a number, or a string such as ``"86MB/s"`` or ``"10Gbit/s"``.

    Examples
    --------
    >>> parse_rate("100MB/s")
    100000000.0
    >>> parse_rate("8Gbit/s")
    1000000000.0
    """
    return _parse(value, _RATE_UNITS, "a rate in bytes/s")


def parse_duration(value: object) -> float:
    """Parse a duration in seconds: a number, or a string such as ``"5us"``.

    Examples
    --------
    >>> parse_duration("5ms")
    0.005
    """
    return _parse(value, _TIME_UNITS, "a duration in seconds")


_SPEED_UNITS = {"flop/s": 1, "kflop/s": 1e3, "Mflop/s": 1e6, "Gflop/s": 1e9, "Tflop/s": 1e12,
                "flops": 1, "kflops": 1e3, "Mflops": 1e6, "Gflops": 1e9, "Tflops": 1e12, "f": 1}


def parse_speed(value: object) -> float:
    """Parse a compute speed in flop/s: a number, or a string such as ``"100Mflop/s"`` (SimGrid
    writes ``"100Mf"``, read here with the ``f`` unit only unprefixed).

    Examples
    --------
    >>> parse_speed("100Mflop/s"), parse_speed(5e8)
    (100000000.0, 500000000.0)
    """
    return _parse(value, _SPEED_UNITS, "a speed in flop/s")


_SIZE_UNITS = {"B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}

#: The largest size liquidsched accepts: 2**53 bytes (8 PiB), below which every size is exact in
#: the simulator's floating point and in the core's integers.
MAX_SIZE_BYTES = 2**53


def parse_size(value: object) -> int:
    """Parse a size in bytes, exactly: a whole number, or a string such as ``"1MB"``,
    ``"64KiB"``, ``"1.5MB"`` or ``"1e6"`` that denotes a whole number of bytes.

    Sizes are exact integers: ``"1.5B"`` or ``0.5`` is refused rather than rounded, and so is
    anything above :data:`MAX_SIZE_BYTES` rather than silently becoming another number.

    Examples
    --------
    >>> parse_size("64KiB"), parse_size("1.5MB"), parse_size("1e6"), parse_size(4096)
    (65536, 1500000, 1000000, 4096)
    >>> parse_size("1.5")
    Traceback (most recent call last):
    ...
    ValueError: expected a positive whole number of bytes, got '1.5'
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a size in bytes, got {value!r}")
    if isinstance(value, int):
        exact = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"expected a size in bytes, finite, got {value!r}")
        exact = Decimal(value)
    elif isinstance(value, str):
        digits, scale = _number_and_scale(value, _SIZE_UNITS, "a size in bytes such as 4096, 1MB or 64KiB")
        try:
            exact = Decimal(digits) * scale
        except InvalidOperation:
            raise ValueError(f"expected a size in bytes, got {value!r}") from None
    else:
        raise ValueError(f"expected a size in bytes, got {type(value).__name__} {value!r}")
    if exact <= 0 or exact != exact.to_integral_value():
        raise ValueError(f"expected a positive whole number of bytes, got {value!r}")
    if exact > MAX_SIZE_BYTES:
        raise ValueError(f"{value!r} bytes is more than liquidsched accepts ({MAX_SIZE_BYTES:,} bytes, 8 PiB)")
    return int(exact)
