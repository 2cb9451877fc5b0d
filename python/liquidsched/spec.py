"""The one reader of ``NAME:key=value,...`` specs: built-in topologies (``fat-tree:k=8``),
traffic generators (``random:seed=1,density=0.7``) and steady-state platforms
(``complete:n=4,bandwidth_Bps=100MB/s``). Every spec is strict alike: an item without ``=``, an
empty or unknown key, and a key given twice are refused, naming the spec; the values are then read
by the one numeric rule (:mod:`liquidsched.units`) with the field named.
"""

from __future__ import annotations

from typing import Iterable


def spec_fields(spec: str, what: str, keys: Iterable[str], error: type[Exception]) -> tuple[str, dict[str, str]]:
    """Split ``"NAME:key=value,..."`` into the name and its fields, as given (strings).

    Parameters
    ----------
    spec
        The spec.
    what
        What it names, for messages: ``"topology"``, ``"traffic"``, ``"platform"``.
    keys
        The keys the name takes.
    error
        The exception to raise (an :class:`~liquidsched.errors.InputError`).

    Examples
    --------
    >>> from liquidsched.errors import InputError
    >>> spec_fields("crossbar:n=4", "topology", ["n", "capacity_Bps"], InputError)
    ('crossbar', {'n': '4'})
    >>> spec_fields("crossbar:n=4,n=5", "topology", ["n"], InputError)
    Traceback (most recent call last):
    ...
    liquidsched.errors.InputError: topology spec crossbar: n given twice ('4', then '5')
    """
    name, _, params = spec.partition(":")
    keys = list(keys)
    where = f"{what} spec {name}"
    fields: dict[str, str] = {}
    for item in filter(None, params.split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise error(f"{where}: expected key=value, got {item!r}")
        if key not in keys:
            known = ", ".join(keys) if keys else "none"
            raise error(f"{where}: unknown parameter {key!r} (parameters: {known})")
        if not value.strip():
            # An empty value would otherwise mean the default: say so instead of guessing.
            raise error(f"{where}: {key} has no value (leave the key out for its default)")
        if key in fields:
            raise error(f"{where}: {key} given twice ({fields[key]!r}, then {value!r})")
        fields[key] = value
    return name, fields


def field_where(what: str, name: str, key: str) -> str:
    """Where a spec's field is, for messages: ``topology spec complete: bandwidth_Bps``."""
    return f"{what} spec {name}: {key}"


def parse_bool(text: str, where: str, error: type[Exception]) -> bool:
    """``true``/``false`` (also ``1``/``0``, ``yes``/``no``), any case."""
    lowered = text.strip().lower()
    if lowered not in ("true", "false", "1", "0", "yes", "no"):
        raise error(f"{where}: expected true or false, got {text!r}")
    return lowered in ("true", "1", "yes")
