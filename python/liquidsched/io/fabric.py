"""The fabric file: a network resolved for the MPI interposition library (``pmpi/``).

A C library inside an unmodified MPI application cannot read topology files, build named
topologies or route: it gets the result. The fabric file lists the network's resources (the
unit of contention: a directed link, or a shared-duplex pair) with their capacity and slots,
the hosts, the host of every rank of ``MPI_COMM_WORLD``, and the resources of the route between
every two distinct hosts those ranks run on. Its grammar is the one
``crates/capi/src/fabric.rs`` reads:

.. code-block:: text

    liquidsched-fabric 1
    network NAME
    fingerprint HEX               (optional: the network's fingerprint, to match selection tables)
    latency SECONDS               (optional: one-way latency between ranks, for the cost model)
    resources R
    CAPACITY_BPS SLOTS            (R lines, resource r on line r)
    hosts H
    NAME                          (H lines)
    ranks N
    HOST_INDEX                    (N lines: rank r runs on that host)
    routes K
    SRC DST : R1 R2 ...           (host indices, then the resources the route crosses)

Ranks that share a host exchange through its memory, not through the network: they need no
route.
"""

from __future__ import annotations

import math
import os
from typing import Sequence

from ..errors import InputError, TopologyError
from ..fingerprint import network_fingerprint
from ..network import Network
from .files import read_text
from .output import write_output

MAGIC = "liquidsched-fabric 1"


def fabric_text(net: Network, rank_hosts: Sequence[str], latency_s: float | None = None,
                time_scale: float = 1.0) -> str:
    """The fabric file of ``net`` with rank ``r`` on host ``rank_hosts[r]``.

    ``latency_s``: the one-way latency of a message between ranks (``liquidsched calibrate``
    measures it), which the interposition library's cost model charges per synchronisation.
    ``time_scale``: the links run that many times slower than ``net`` says (an emulation's
    ``--time-scale``), so the capacities written are divided by it; the fingerprint stays
    ``net``'s, as a selection table measured there records it.

    Raises
    ------
    InputError
        without ranks.
    TopologyError
        for a rank on a host ``net`` does not have, or a name with a space or ``#``.

    Examples
    --------
    >>> from liquidsched.topologies import crossbar
    >>> print(fabric_text(crossbar(2), ["h1", "h2"]))        # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    liquidsched-fabric 1
    network crossbar
    fingerprint ...
    resources 4
    1250000000.0 1
    1250000000.0 1
    1250000000.0 1
    1250000000.0 1
    hosts 2
    h1
    h2
    ranks 2
    0
    1
    routes 2
    0 1 : 0 3
    1 0 : 1 2
    <BLANKLINE>
    """
    if not rank_hosts:
        raise InputError("a fabric needs at least one rank")
    known = set(net.hosts())
    unknown = [h for h in rank_hosts if h not in known]
    if unknown:
        raise TopologyError(f"rank {list(rank_hosts).index(unknown[0])}: host {unknown[0]!r} is not a host of "
                            f"{net.name} (hosts: {', '.join(net.hosts()[:8])}{', ...' if len(known) > 8 else ''})")
    for name in [net.name, *set(rank_hosts)]:
        if not name or any(c.isspace() or c == "#" for c in name):
            raise TopologyError(f"{name!r}: a fabric file names hosts and networks by one word without '#' "
                                "(the C reader splits lines at spaces and comments)")
    if not (time_scale > 0 and math.isfinite(time_scale)):
        raise InputError(f"a fabric's time scale must be a positive number, got {time_scale}")
    if latency_s is not None and not (latency_s >= 0 and math.isfinite(latency_s)):
        raise InputError(f"a fabric's latency must be a number of seconds, at least 0, got {latency_s}")
    hosts = [h for h in net.hosts() if h in set(rank_hosts)]
    index = {h: i for i, h in enumerate(hosts)}
    lines = [MAGIC, f"network {net.name}", f"fingerprint {network_fingerprint(net)}"]
    lines += [f"latency {float(latency_s)!r}"] if latency_s is not None else []
    lines += [f"resources {len(net.resources)}"]
    lines += [f"{float(net.resource_capacity[r]) / time_scale!r} {net.resource_slots[r]}"
              for r in range(len(net.resources))]
    lines += [f"hosts {len(hosts)}", *hosts, f"ranks {len(rank_hosts)}", *(str(index[h]) for h in rank_hosts)]
    routes = [f"{index[a]} {index[b]} : {' '.join(map(str, sorted(net.path_resources(a, b))))}"
              for a in hosts for b in hosts if a != b and net.nodes[a].sends and net.nodes[b].receives]
    lines += [f"routes {len(routes)}", *routes]
    return "\n".join(lines) + "\n"


def save_fabric(net: Network, rank_hosts: Sequence[str], path: str | os.PathLike, latency_s: float | None = None,
                time_scale: float = 1.0) -> None:
    """Write :func:`fabric_text` to ``path`` (whole or not at all)."""
    write_output(path, fabric_text(net, rank_hosts, latency_s, time_scale))


#: The most ranks a host file may list (in all): more is refused before any list is built.
MAX_RANKS = 2**20


def read_host_list(path: str | os.PathLike) -> list[str]:
    """The host of every rank from a host file: one host per line, with an optional count of
    ranks (``host:N`` as MPICH's Hydra writes it, ``host slots=N`` as Open MPI's), ``#``
    comments and blank lines left out.

    Raises
    ------
    InputError
        when the file cannot be read, a line is none of these forms, or no host is listed.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
    ...     _ = f.write("a:2\\n# rack 2\\nb slots=1\\nc\\n")
    >>> read_host_list(f.name)
    ['a', 'a', 'b', 'c']
    >>> os.unlink(f.name)
    """
    text = read_text(path, InputError)
    hosts: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, count = _host_and_count(line)
        if count is None:
            raise InputError(f"{path}:{number}: expected 'host', 'host:N' or 'host slots=N', got {line!r}")
        # Checked before the list grows: 't1:99999999999' would otherwise fill the memory.
        if len(hosts) + count > MAX_RANKS:
            raise InputError(f"{path}:{number}: {len(hosts) + count:,} ranks in all, more than the {MAX_RANKS:,} "
                             "liquidsched plans for")
        hosts += [name] * count
    if not hosts:
        raise InputError(f"{path}: no host in the file")
    return hosts


def _host_and_count(line: str) -> tuple[str, int | None]:
    words = line.split()
    name, count = words[0], "1"
    if ":" in name:
        name, count = name.split(":", 1)
    if len(words) == 2 and words[1].startswith("slots="):
        count = words[1][len("slots="):]
    elif len(words) > 1:
        return name, None
    return name, int(count) if count.isdigit() and int(count) > 0 else None


__all__ = ["MAGIC", "MAX_RANKS", "fabric_text", "read_host_list", "save_fabric"]
