"""The one numeric rule: every rate, size, time, speed, amount of work and count that liquidsched
reads — a command-line option, a field of a spec such as ``complete:bandwidth_Bps=100MB/s``, a
field of a file, an argument of the Python API — is parsed by one function of this module.

Each kind takes a number or a string with a unit, and must be finite and within the bounds below,
chosen so that whatever liquidsched computes from them (a transfer's time, a makespan, a period)
stays a finite, printable number:

=========  ============================  ==========================================================
kind       units                         bounds
=========  ============================  ==========================================================
size       B, kB … PB, KiB … PiB         a whole number of bytes, 1 to :data:`MAX_SIZE_BYTES`
rate       B/s, MB/s, Gbit/s, Mbps …     :data:`MIN_RATE_BPS` (1 bit/s) to :data:`MAX_RATE_BPS`
duration   s, ms, us, µs, ns, min, h     0 to :data:`MAX_DURATION_S` (plain numbers are seconds)
speed      flop/s, Mflop/s, Gf …         :data:`MIN_SPEED_FLOPS` to :data:`MAX_SPEED_FLOPS`
work       flop, Mflop, Gflop …          :data:`MIN_WORK_FLOP` to :data:`MAX_WORK_FLOP`
count      none                          a whole number, bounds given by the caller
=========  ============================  ==========================================================

A value that is not one of these raises :class:`NumberError`, an :class:`~liquidsched.errors.InputError`
(so the command line prints it as one line) that is also a :class:`ValueError` (so a reader that
catches ``ValueError`` to add its file and line keeps doing so). Its message starts with ``where``
the value was given, an option (``--overhead``) or a field (``topology spec complete: bandwidth_Bps``).
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from .errors import InputError


class NumberError(InputError, ValueError):
    """A number liquidsched does not accept: malformed, with an unknown unit, not finite, or out
    of its bounds. The message names where it was given."""


def _at(where: str, message: str) -> str:
    return f"{where}: {message}" if where else message


# Case matters: "B" is a byte and "b" a bit, as in "MB/s" against "Mb/s".
_RATE_UNITS = {
    "B/s": 1, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
    "KiB/s": 2**10, "MiB/s": 2**20, "GiB/s": 2**30, "TiB/s": 2**40,
    "bit/s": 1 / 8, "kbit/s": 1e3 / 8, "Kbit/s": 1e3 / 8, "Mbit/s": 1e6 / 8,
    "Gbit/s": 1e9 / 8, "Tbit/s": 1e12 / 8,
    "b/s": 1 / 8, "kb/s": 1e3 / 8, "Mb/s": 1e6 / 8, "Gb/s": 1e9 / 8, "Tb/s": 1e12 / 8,
    "bps": 1 / 8, "kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0}
_SPEED_UNITS = {"flop/s": 1, "kflop/s": 1e3, "Mflop/s": 1e6, "Gflop/s": 1e9, "Tflop/s": 1e12,
                "flops": 1, "kflops": 1e3, "Mflops": 1e6, "Gflops": 1e9, "Tflops": 1e12, "f": 1}
_WORK_UNITS = {"flop": 1, "kflop": 1e3, "Mflop": 1e6, "Gflop": 1e9, "Tflop": 1e12, "Pflop": 1e15}
_SIZE_UNITS = {"B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}
_NUMBER_UNIT = re.compile(r"^\s*([+-]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/]*)\s*$")

#: The largest size liquidsched accepts: 2**53 bytes (8 PiB), below which every size is exact in
#: the simulator's floating point and in the core's integers.
MAX_SIZE_BYTES = 2**53
#: Rates: from 1 bit/s, so that the largest size still takes a finite, printable time (under
#: 2.3 billion years), to 1 PB/s.
MIN_RATE_BPS = 1 / 8
MAX_RATE_BPS = 1e15
#: Durations (latencies, overheads, periods, time limits, timeouts): 0 to a million seconds
#: (11.6 days), far above any step or run and far below where sums of them lose their digits.
MAX_DURATION_S = 1e6
#: Compute speeds: 1 flop/s to 10^18 flop/s (an exaflop machine in one node).
MIN_SPEED_FLOPS = 1.0
MAX_SPEED_FLOPS = 1e18
#: The work of one task: 1 flop to 10^18 flop.
MIN_WORK_FLOP = 1.0
MAX_WORK_FLOP = 1e18


def _number_and_scale(text: str, units: dict[str, Any], what: str, where: str) -> tuple[str, Any]:
    """Split ``"1.5MB"`` into the number's text and the unit's scale (1 without a unit)."""
    match = _NUMBER_UNIT.match(text)
    if not match:
        finite = ", a finite number" if text.strip().lstrip("+-").lower() in ("inf", "infinity", "nan") else ""
        raise NumberError(_at(where, f"expected {what}{finite}, got {text!r}"))
    unit = match.group(2)
    if unit and unit not in units:
        raise NumberError(_at(where, f"unknown unit {unit!r} in {text!r} (known: {', '.join(units)})"))
    return match.group(1), units[unit] if unit else 1


def _real(value: object, units: dict[str, Any], what: str, where: str) -> float:
    """``value`` as a finite float, a number or a string with one of ``units``."""
    if isinstance(value, bool):
        raise NumberError(_at(where, f"expected {what}, got {value!r}"))
    try:
        if isinstance(value, str):
            digits, scale = _number_and_scale(value, units, what, where)
            number = float(digits) * scale
        elif isinstance(value, (numbers.Real, Decimal)):  # int, float, Fraction, numpy scalars
            number = float(value)
        else:
            raise NumberError(_at(where, f"expected {what}, got {type(value).__name__} {_shown(value)}"))
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise NumberError(_at(where, f"expected {what}, a finite number, got {_shown(value)}"))
    return number


def _shown(value: object) -> str:
    """``value`` for a message, a 300-digit number cut to its magnitude."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 256:
        # str() of an int past 4,300 digits raises; its size is what the message needs.
        return f"a whole number of about {int(abs(value).bit_length() * 0.30103):,} digits"
    try:
        text = repr(value) if isinstance(value, str) else str(value)
    except ValueError:  # a Fraction of such integers
        return f"a {type(value).__name__} too long to show"
    if len(text) > 40:
        text = f"{text[:12]}… ({len(text)} characters)"
    return text


def _bounded(number: float, value: object, what: str, where: str, least: float, most: float,
             unit: str, above_least: bool = False) -> float:
    low_ok = number > least if above_least else number >= least
    if not (low_ok and number <= most):
        low = f"above {_bound(least)} and at most" if above_least else f"from {_bound(least)} to"
        raise NumberError(_at(where, f"expected {what} {low} {_bound(most)}{' ' if unit else ''}{unit}, "
                                     f"got {_shown(value)}"))
    return number


def _bound(x: float) -> str:
    """A bound for a message: ``1,000,000`` or ``1e+15``."""
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) < 1e9 else f"{x:g}"


def parse_number(value: object, where: str = "", *, least: float = -math.inf, most: float = math.inf,
                 above_least: bool = False, what: str = "a number") -> float:
    """A plain finite number without unit (a density, a ratio, a scale), in ``[least, most]``
    (``(least, most]`` with ``above_least``).

    Examples
    --------
    >>> parse_number("0.7", "density", least=0, most=1, above_least=True)
    0.7
    """
    number = _real(value, {}, what, where)
    return _bounded(number, value, what, where, least, most, "", above_least)


def parse_rate(value: object, where: str = "") -> float:
    """Parse a rate in bytes/s: a number, or a string such as ``"86MB/s"`` or ``"10Gbit/s"``,
    from :data:`MIN_RATE_BPS` to :data:`MAX_RATE_BPS`.

    Examples
    --------
    >>> parse_rate("100MB/s")
    100000000.0
    >>> parse_rate("8Gbit/s")
    1000000000.0
    >>> parse_rate("0B/s", "bandwidth_Bps")
    Traceback (most recent call last):
    ...
    liquidsched.units.NumberError: bandwidth_Bps: expected a rate from 0.125 to 1e+15 B/s, got '0B/s'
    """
    number = _real(value, _RATE_UNITS, "a rate in bytes/s", where)
    return _bounded(number, value, "a rate", where, MIN_RATE_BPS, MAX_RATE_BPS, "B/s")


def parse_duration(value: object, where: str = "", *, most: float = MAX_DURATION_S,
                   positive: bool = False) -> float:
    """Parse a duration in seconds: a number (seconds), or a string such as ``"5us"``, ``"1ms"``,
    ``"2s"`` or ``"1.5min"``, from 0 (above 0 when ``positive``) to ``most``
    (:data:`MAX_DURATION_S`).

    Examples
    --------
    >>> parse_duration("5ms"), parse_duration("1.5min"), parse_duration(2)
    (0.005, 90.0, 2.0)
    """
    number = _real(value, _TIME_UNITS, "a duration such as 2, 1ms or 250us", where)
    return _bounded(number, value, "a duration", where, 0.0, most, "s", positive)


def parse_exact_duration(value: object, where: str = "", *, positive: bool = True) -> Fraction:
    """A duration as an exact fraction of seconds, for the exact arithmetic of periods: ``"0.1"``
    is 1/10 s, not the binary double; also ``"3/4"`` (seconds) and units as in
    :func:`parse_duration` (``"250us"`` is 1/4000 s). Bounds as :func:`parse_duration`'s.

    Examples
    --------
    >>> parse_exact_duration("0.1"), parse_exact_duration("3/4"), parse_exact_duration("250us")
    (Fraction(1, 10), Fraction(3, 4), Fraction(1, 4000))
    """
    parse_duration(value if not (isinstance(value, str) and "/" in value) else _ratio(value, where), where,
                   positive=positive)
    if isinstance(value, str):
        if "/" in value:
            return _ratio(value, where)
        digits, _ = _number_and_scale(value, _TIME_UNITS, "a duration", where)
        unit = _NUMBER_UNIT.match(value).group(2)
        return Fraction(digits) * _EXACT_TIME_UNITS[unit or "s"]
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)  # type: ignore[arg-type]


_EXACT_TIME_UNITS = {"s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6),
                     "ns": Fraction(1, 10**9), "min": Fraction(60), "h": Fraction(3600)}


def _ratio(text: str, where: str) -> Fraction:
    """``"3/4"`` as a fraction, refused as a duration when it is not one."""
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise NumberError(_at(where, f"expected a duration such as 2, 1ms, 250us or 3/4, got {text!r}")) from None


def parse_speed(value: object, where: str = "") -> float:
    """Parse a compute speed in flop/s: a number, or a string such as ``"100Mflop/s"`` (SimGrid
    writes ``"100Mf"``, read here with the ``f`` unit only unprefixed), from
    :data:`MIN_SPEED_FLOPS` to :data:`MAX_SPEED_FLOPS`.

    Examples
    --------
    >>> parse_speed("100Mflop/s"), parse_speed(5e8)
    (100000000.0, 500000000.0)
    """
    number = _real(value, _SPEED_UNITS, "a speed in flop/s", where)
    return _bounded(number, value, "a speed", where, MIN_SPEED_FLOPS, MAX_SPEED_FLOPS, "flop/s")


def parse_work(value: object, where: str = "") -> float:
    """Parse an amount of work in flop: a number, or a string such as ``"10Mflop"``, from
    :data:`MIN_WORK_FLOP` to :data:`MAX_WORK_FLOP`.

    Examples
    --------
    >>> parse_work("10Mflop")
    10000000.0
    """
    number = _real(value, _WORK_UNITS, "an amount of work such as 10Mflop", where)
    return _bounded(number, value, "an amount of work", where, MIN_WORK_FLOP, MAX_WORK_FLOP, "flop")


def parse_count(value: object, where: str = "", *, least: int = 1, most: int = 10**9) -> int:
    """A whole number from ``least`` to ``most``: an int, or its decimal digits.

    Examples
    --------
    >>> parse_count("5", "--repeats")
    5
    >>> parse_count("0", "--repeats")
    Traceback (most recent call last):
    ...
    liquidsched.units.NumberError: --repeats: expected a whole number from 1 to 1,000,000,000, got '0'
    """
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?[0-9]{1,30}\s*", value):
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool) or hasattr(value, "dtype") and \
            getattr(value.dtype, "kind", "") in "iu":
        number = int(value)
    else:
        number = None
    if number is None or not least <= number <= most:
        raise NumberError(_at(where, f"expected a whole number from {_bound(least)} to {_bound(most)}, got {_shown(value)}"))
    return number


def parse_size(value: object, where: str = "") -> int:
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
    liquidsched.units.NumberError: expected a positive whole number of bytes, got '1.5'
    """
    if isinstance(value, bool):
        raise NumberError(_at(where, f"expected a size in bytes, got {value!r}"))
    if isinstance(value, int):
        exact = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise NumberError(_at(where, f"expected a size in bytes, finite, got {value!r}"))
        exact = Decimal(value)
    elif isinstance(value, str):
        if value.lstrip().startswith(("-", "+")):
            raise NumberError(_at(where, f"expected a size in bytes such as 4096, 1MB or 64KiB, got {value!r}"))
        digits, scale = _number_and_scale(value, _SIZE_UNITS, "a size in bytes such as 4096, 1MB or 64KiB", where)
        try:
            exact = Decimal(digits) * scale
        except InvalidOperation:
            raise NumberError(_at(where, f"expected a size in bytes, got {value!r}")) from None
    else:
        raise NumberError(_at(where, f"expected a size in bytes, got {type(value).__name__} {_shown(value)}"))
    if not exact.is_finite() or exact <= 0 or exact != exact.to_integral_value():
        raise NumberError(_at(where, f"expected a positive whole number of bytes, got {_shown(value)}"))
    if exact > MAX_SIZE_BYTES:
        raise NumberError(_at(where, f"{_shown(value)} bytes is more than liquidsched accepts "
                                     f"({MAX_SIZE_BYTES:,} bytes, 8 PiB)"))
    return int(exact)
