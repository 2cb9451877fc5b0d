"""Reading a SimGrid platform file (:func:`read_platform`): by SimGrid itself where it is
installed (:mod:`.reading`), else by liquidsched's own parser (:mod:`.platform_file`); which one
read it is said."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import BackendError, TopologyError
from ..network import Network
from .description import refuse_unmodelled
from .install import INSTALL_HINT, simgrid_python
from .platform_file import _read_text, _xml_root, network_from_platform
from .reading import read_with_simgrid

E = TopologyError

#: The readers :func:`read_platform` chooses from: ``auto`` (SimGrid where
#: :func:`~liquidsched.simgrid.install.simgrid_python` finds it, else liquidsched's own
#: parser), ``simgrid`` or ``liquidsched``.
PLATFORM_READERS = ("auto", "simgrid", "liquidsched")
#: The environment variable that chooses the reader when no ``reader`` argument does.
READER_VARIABLE = "LIQUIDSCHED_PLATFORM_READER"
_OWN_PARSER = "read by liquidsched's own parser ({why}): Full zones with explicit routes only"


@dataclass(frozen=True)
class PlatformRead:
    """A platform file as read: the network, which reader read it (``"read by SimGrid 3.32.0"``
    or liquidsched's own parser, and why), and, when SimGrid read it, the SimGrid link each
    liquidsched link stands for (None for a junction liquidsched added)."""

    network: Network
    read_by: str
    simgrid_links: dict[str, str | None] = field(default_factory=dict)


def read_platform(path: str | os.PathLike, reader: str | None = None) -> PlatformRead:
    """Read a SimGrid platform file: by SimGrid itself where it is installed (every common style,
    :mod:`liquidsched.simgrid.reading`), else by liquidsched's own parser (one Full zone with
    explicit routes). ``reader`` (or the environment variable ``LIQUIDSCHED_PLATFORM_READER``)
    forces one: ``simgrid``, ``liquidsched`` or ``auto``.

    Raises
    ------
    TopologyError
        one line naming the file and what is wrong or not modelled.
    BackendError
        if ``simgrid`` is asked for and SimGrid is not installed.
    """
    where = str(path)
    text = _read_text(path)
    root = _xml_root(text, where)
    refuse_unmodelled(root, where)
    choice = reader or os.environ.get(READER_VARIABLE) or "auto"
    if choice not in PLATFORM_READERS:
        raise E(f"platform reader: expected one of {', '.join(PLATFORM_READERS)}, got {choice!r}")
    python = simgrid_python() if choice != "liquidsched" else None
    if python is None and choice == "simgrid":
        raise BackendError(f"{where}: reading a platform with SimGrid needs its Python module: {INSTALL_HINT}")
    if python is None:
        why = "as asked" if choice == "liquidsched" else "SimGrid not found"
        return PlatformRead(network_from_platform(text, where), _OWN_PARSER.format(why=why))
    net, links, version = read_with_simgrid(path, root, python, text)
    return PlatformRead(net, f"read by SimGrid {version}", links)


def load_platform(path: str | os.PathLike, reader: str | None = None) -> Network:
    """Read a SimGrid platform file as a :class:`Network` (see :func:`read_platform`)."""
    return read_platform(path, reader).network
