"""Reading a SimGrid platform file (:func:`read_platform`): by SimGrid itself where it is
installed (:mod:`.reading`), else by liquidsched's own parser (:mod:`.platform_file`); which one
read it is said. A lone ``<cluster>`` of :data:`LARGE_PLATFORM_HOSTS` hosts or more is read by
the own parser even where SimGrid is installed: it lays the cluster out without asking SimGrid
anything."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ..errors import BackendError, TopologyError
from ..network import Network
from .description import refuse_unmodelled
from .install import INSTALL_HINT, simgrid_python
from .platform_file import (MAX_CLUSTER_HOSTS, NEEDS_SIMGRID, _read_text, _xml_root, cluster_radicals, lone_cluster,
                            network_from_platform)
from .grouped import read_with_simgrid

E = TopologyError

#: The readers :func:`read_platform` chooses from: ``auto`` (SimGrid where
#: :func:`~liquidsched.simgrid.install.simgrid_python` finds it, else liquidsched's own
#: parser), ``simgrid`` or ``liquidsched``.
PLATFORM_READERS = ("auto", "simgrid", "liquidsched")
#: The environment variable that chooses the reader when no ``reader`` argument does.
READER_VARIABLE = "LIQUIDSCHED_PLATFORM_READER"
_OWN_PARSER = ("read by liquidsched's own parser ({why}): Full zones with explicit routes, and lone <cluster> "
               "crossbars and backbones")
#: From this many hosts on, ``auto`` reads a platform with liquidsched's own parser where that
#: parser reads it (a lone ``<cluster>``), even where SimGrid is installed: it lays the cluster
#: out as SimGrid does without asking SimGrid a route (a crossbar of 65,536 hosts in 2 s).
LARGE_PLATFORM_HOSTS = 256


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
    :mod:`liquidsched.simgrid.reading`; routes asked by cluster from 256 hosts on), else by
    liquidsched's own parser (one Full zone with explicit routes, or one ``<cluster>``, which it
    also reads from :data:`LARGE_PLATFORM_HOSTS` hosts on). ``reader`` (or the environment
    variable ``LIQUIDSCHED_PLATFORM_READER``) forces one: ``simgrid``, ``liquidsched`` or
    ``auto``. A platform whose routes join only some host pairs loads; a traffic that needs a
    missing route is refused naming the pair (:attr:`liquidsched.network.Network.missing_routes`).

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
    hosts = declared_hosts(root)
    if python is not None and choice == "auto" and hosts >= LARGE_PLATFORM_HOSTS and lone_cluster(root) is not None:
        why = f"{hosts:,} hosts in one <cluster>: it lays the cluster out without asking SimGrid every route"
        try:
            return PlatformRead(network_from_platform(text, where), _OWN_PARSER.format(why=why))
        except TopologyError as e:
            if NEEDS_SIMGRID not in str(e):
                raise
            # A cluster the own parser leaves to SimGrid's reader (a fat tree, a loopback...).
    if python is None:
        why = "as asked" if choice == "liquidsched" else "SimGrid not found"
        return PlatformRead(network_from_platform(text, where), _OWN_PARSER.format(why=why))
    net, links, version = read_with_simgrid(path, root, python, text)
    return PlatformRead(net, f"read by SimGrid {version}", links)


def declared_hosts(root: ET.Element) -> int:
    """How many hosts a parsed platform file declares: its ``<host>`` elements and the hosts of
    its clusters (by their ``radical``; a radical that cannot be read counts none here, the
    reader says what is wrong with it)."""
    count = 0
    for el in root.iter():
        if el.tag == "host":
            count += 1
        elif el.tag == "cluster":
            try:
                count += len(cluster_radicals(el.get("radical", ""), "radical"))
            except TopologyError as e:
                # Too many hosts counts as many; a radical that cannot be read, none.
                count += MAX_CLUSTER_HOSTS + 1 if "hosts; liquidsched reads" in str(e) else 0
    return count


def load_platform(path: str | os.PathLike, reader: str | None = None) -> Network:
    """Read a SimGrid platform file as a :class:`Network` (see :func:`read_platform`)."""
    return read_platform(path, reader).network
