"""Parsing of rates and durations written with units, as users write them in topology files."""

from __future__ import annotations

import math
import re

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


def _parse(value: object, units: dict[str, float], what: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"expected {what}, got {value!r}")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        match = _NUMBER_UNIT.match(value)
        if not match:
            raise ValueError(f"expected {what}, got {value!r}")
        unit = match.group(2)
        if unit and unit not in units:
            known = ", ".join(units)
            raise ValueError(f"unknown unit {unit!r} in {value!r} (known: {known})")
        scale = units[unit] if unit else 1.0
        number = float(match.group(1)) * scale
    else:
        raise ValueError(f"expected {what}, got {type(value).__name__} {value!r}")
    if not math.isfinite(number):
        raise ValueError(f"expected a finite {what}, got {value!r}")
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


_SIZE_UNITS = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def parse_size(value: object) -> int:
    """Parse a size in bytes: a whole number, or a string such as ``"1MB"`` or ``"64KiB"``.

    Examples
    --------
    >>> parse_size("64KiB")
    65536
    """
    number = _parse(value, _SIZE_UNITS, "a size in bytes")
    if number <= 0 or not float(number).is_integer():
        raise ValueError(f"expected a positive whole number of bytes, got {value!r}")
    return int(number)
