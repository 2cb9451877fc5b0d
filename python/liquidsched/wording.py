"""How counts, ratios and times are written in every table and message.

One place for each rule, so that no table says "1 transfers" and no ratio printed beside its
numbers contradicts them.
"""

from __future__ import annotations

import math
from fractions import Fraction


def plural(count: int | float, noun: str, nouns: str | None = None) -> str:
    """``count`` and ``noun``, the noun in the plural unless the count is one.

    Parameters
    ----------
    nouns
        The plural when it is not ``noun + "s"``.

    Examples
    --------
    >>> plural(1, "transfer"), plural(2, "scatter"), plural(0, "step"), plural(1_000, "frame")
    ('1 transfer', '2 scatters', '0 steps', '1,000 frames')
    >>> plural(3, "more problem")
    '3 more problems'
    """
    shown = f"{count:,}" if isinstance(count, int) else f"{count:g}"
    return f"{shown} {noun if count == 1 else (nouns or noun + 's')}"


def percent(ratio: float | Fraction, exact_one: bool | None = None) -> str:
    """``ratio`` as a percentage with one decimal, or with as many more as it takes not to print
    ``100.0%`` for a ratio that is not exactly one (nor ``0.0%`` for one that is not zero).

    Parameters
    ----------
    exact_one
        Whether the ratio is exactly one, when the caller knows it better than a float does
        (from exact arithmetic); by default ``ratio == 1``.

    Examples
    --------
    >>> percent(0.5), percent(1.0), percent(0.9999991), percent(1.0000012), percent(0.0000004)
    ('50.0%', '100.0%', '99.9999%', '100.0001%', '0.00004%')
    >>> percent(1.0, exact_one=False)
    '≈ 100.0%'
    """
    r = float(ratio)
    one = r == 1 if exact_one is None else exact_one
    if not math.isfinite(r):
        return f"{r}"
    if one:
        return "100.0%"
    for digits in range(1, 10):
        shown = f"{r:.{digits}%}"
        if float(shown[:-1]) not in (100.0, 0.0) or (r == 0):
            return shown
    # Different from one in the exact numbers only: the float cannot tell.
    return "≈ " + f"{r:.1%}"


def milliseconds(seconds: float | Fraction, beside: float | Fraction | None = None) -> str:
    """``seconds`` in ms with three decimals; when ``beside`` (a time printed next to it) differs
    from it but would print the same, with as many more decimals as tell the two apart.

    Examples
    --------
    >>> milliseconds(0.15062312), milliseconds(0.15062312, beside=0.15062300)
    ('150.623 ms', '150.6231 ms')
    >>> milliseconds(0.1, beside=0.1)
    '100.000 ms'
    """
    ms, other = float(seconds) * 1e3, None if beside is None else float(beside) * 1e3
    if other is None or Fraction(seconds) == Fraction(beside):
        return f"{ms:.3f} ms"
    for digits in range(3, 16):
        if f"{ms:.{digits}f}" != f"{other:.{digits}f}":
            return f"{ms:.{digits}f} ms"
    return f"{ms!r} ms"


def short_time(seconds: float | Fraction) -> str:
    """A (small) time with three significant digits in the unit that suits it: a difference
    between two times, which ms with three decimals may not show.

    Examples
    --------
    >>> short_time(8e-08), short_time(0.0123456), short_time(2.5), short_time(0)
    ('80.0 ns', '12.3 ms', '2.50 s', '0 s')
    """
    value = float(seconds)
    if value == 0 or not math.isfinite(value):
        return f"{value:g} s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(value) >= scale:
            break
    shown = value / scale
    return f"{shown:.{max(0, 2 - int(math.floor(math.log10(abs(shown)))))}f} {unit}"


__all__ = ["milliseconds", "percent", "plural", "short_time"]
