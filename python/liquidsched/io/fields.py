"""Small, strict readers for fields of parsed YAML/JSON documents.

Each reader takes the value and its location (``file: links[3].capacity_Bps``) and either
returns the converted value or raises the given error class with a one-line message naming the
location and what was expected.
"""

from __future__ import annotations

import math
from typing import Any, Callable, TypeVar

from ..units import parse_duration, parse_rate, parse_size, parse_speed

T = TypeVar("T")
_MISSING = object()


class Fields:
    """The fields of one mapping in a document, read strictly.

    Parameters
    ----------
    value
        The parsed value that must be a mapping.
    where
        Its location, used in every message.
    error
        The exception class to raise.
    allowed
        Every key the mapping may have; any other key is an error (it is usually a typo).
    """

    def __init__(self, value: Any, where: str, error: type[Exception], allowed: tuple[str, ...]) -> None:
        place = f"{where}: " if where else ""
        if not isinstance(value, dict):
            raise error(f"{place}expected a mapping, got {_describe(value)}")
        unknown = [k for k in value if k not in allowed]
        if unknown:
            raise error(f"{place}unknown field {unknown[0]!r} (expected one of: {', '.join(allowed)})")
        self.value, self.where, self.error = value, where, error

    def at(self, key: str) -> str:
        return field_path(self.where, key)

    def get(self, key: str, read: Callable[[Any, str, type[Exception]], T], default: Any = _MISSING) -> T:
        """Read field ``key`` with ``read``; a missing field is an error unless a default is given."""
        if key not in self.value:
            if default is _MISSING:
                raise self.error(f"{self.where}: missing field {key!r}" if self.where else f"missing field {key!r}")
            return default
        return read(self.value[key], self.at(key), self.error)

    def has(self, key: str) -> bool:
        return key in self.value


_DOCUMENT_SUFFIXES = (".yaml", ".yml", ".json", ".csv", ".xml")


def field_path(where: str, key: str) -> str:
    """The location of field ``key`` inside ``where``: ``links[3].capacity_Bps`` under a field,
    ``net.yaml: links`` under a file's root.

    Examples
    --------
    >>> field_path("net.yaml", "links"), field_path("s.json: traffic", "transfers"), field_path("", "frames")
    ('net.yaml: links', 's.json: traffic.transfers', 'frames')
    """
    if not where:
        return key
    if where.lower().endswith(_DOCUMENT_SUFFIXES):
        return f"{where}: {key}"
    return f"{where}.{key}"


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}" if value is not None else "nothing"


def read_id(value: Any, where: str, error: type[Exception]) -> str:
    """A name: a non-empty string (an integer such as a switch number is taken as its text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise error(f"{where}: expected a name, got {_describe(value)}")
    return str(value)


def read_str(value: Any, where: str, error: type[Exception]) -> str:
    if not isinstance(value, str):
        raise error(f"{where}: expected a string, got {_describe(value)}")
    return value


def read_bool(value: Any, where: str, error: type[Exception]) -> bool:
    if not isinstance(value, bool):
        raise error(f"{where}: expected true or false, got {_describe(value)}")
    return value


def read_list(value: Any, where: str, error: type[Exception]) -> list:
    if not isinstance(value, list):
        raise error(f"{where}: expected a list, got {_describe(value)}")
    return value


def read_mapping(value: Any, where: str, error: type[Exception]) -> dict:
    if not isinstance(value, dict):
        raise error(f"{where}: expected a mapping, got {_describe(value)}")
    return value


def _read_positive(parse, what: str, value: Any, where: str, error: type[Exception]) -> float:
    """``parse(value)``, positive; errors name ``where`` and ``what`` was expected."""
    try:
        number = parse(value)
    except ValueError as e:
        raise error(f"{where}: {e}") from None
    if number <= 0:
        raise error(f"{where}: expected a positive {what}, got {value!r}")
    return number


def read_speed(value: Any, where: str, error: type[Exception]) -> float:
    """A positive compute speed in flop/s (a number or a string such as ``"100Mflop/s"``)."""
    return _read_positive(parse_speed, "speed in flop/s", value, where, error)


def read_rate(value: Any, where: str, error: type[Exception]) -> float:
    """A positive rate in bytes/s (a number or a string with a unit such as ``"86MB/s"``)."""
    return _read_positive(parse_rate, "rate in bytes/s", value, where, error)


def read_latency(value: Any, where: str, error: type[Exception]) -> float:
    """A non-negative duration in seconds (a number or a string such as ``"2us"``)."""
    try:
        seconds = parse_duration(value)
    except ValueError as e:
        raise error(f"{where}: {e}") from None
    if seconds < 0:
        raise error(f"{where}: expected a non-negative duration in seconds, got {value!r}")
    return seconds


def read_size(value: Any, where: str, error: type[Exception]) -> int:
    """A positive whole number of bytes, exactly: a number or a string with a unit (``"1MB"``),
    as :func:`liquidsched.units.parse_size` reads it."""
    try:
        return parse_size(value)
    except ValueError as e:
        raise error(f"{where}: {e}") from None


def read_count(value: Any, where: str, error: type[Exception]) -> int:
    """A non-negative whole number."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise error(f"{where}: expected a non-negative whole number, got {_describe(value)}")
    return value


def read_number(value: Any, where: str, error: type[Exception]) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise error(f"{where}: expected a number, got {_describe(value)}")
    return float(value)


def list_of(read: Callable[[Any, str, type[Exception]], T]) -> Callable[[Any, str, type[Exception]], list[T]]:
    """A reader of a list whose items are read by ``read``."""

    def read_items(value: Any, where: str, error: type[Exception]) -> list[T]:
        return [read(v, f"{where}[{i}]", error) for i, v in enumerate(read_list(value, where, error))]

    return read_items
