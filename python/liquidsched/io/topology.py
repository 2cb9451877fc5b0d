"""The topology file format (YAML or JSON), version 1.

.. code-block:: yaml

    format: liquidsched-topology
    version: 1
    name: two-racks
    defaults: {capacity_Bps: 1.25GB/s, latency_s: 1us}   # optional, for links and cables
    switches: [s1, s2]                                    # shorthand for nodes of kind switch
    hosts: [a, b]                                         # shorthand for hosts that send and receive
    nodes:                                                # the long form, with roles
      - {id: c, kind: host, role: sender, speed_flops: 100Mflop/s}   # speed: series of reduces
      - {id: r, forwards: true}                           # a host that forwards (direct connect)
    cables:                                               # a cable is two opposite links a>b, b>a
      - {a: a, b: s1}
      - {a: s1, b: s2, capacity_Bps: 10Gbit/s, shared_duplex: true, slots: 8, buffer_packets: 45}
    links:                                                # directed links (id defaults to "src>dst")
      - {src: c, dst: s2}
    shared_duplex: [["x", "y"], {links: ["u", "v"], slots: 4}]   # opposite links sharing one capacity
    routing: {policy: shortest-path}                      # or next-hop, forwarding, paths

``slots`` (on a link, a cable or a shared-duplex pair) is how many transfers the resource carries
at once; where it is not set it is derived from the capacities (:mod:`liquidsched.network`).
``buffer_packets`` (on a link or a cable) is the buffer of the switch port that feeds the link, in
packets: what the global window of the shuffle exchange is derived from, and the queue of the
link in an emulated network.

``routing`` is one of ``{policy: shortest-path}``, ``{policy: next-hop, table: {s: {t: next}}}``
(switch ``s`` forwards what is for switch ``t`` to ``next``; a missing entry means the direct
link), ``{policy: forwarding, table: {v: {d: next}}}`` (node ``v`` forwards what is for host
``d`` to ``next``, as a switch's forwarding table by destination does; a missing entry means the
direct link, or a host's one switch) or ``{policy: paths, paths: [{src, dst, via: [nodes]}]}``.
Forwarding tables that a builder made as one array (the D-mod-k tables of a fat tree: 14 million
entries at ``k=34``) are written as that array, ``{policy: forwarding, nodes: [v, ...],
destinations: [d, ...], next: [[...], ...]}``: ``next[i][j]`` is what node ``nodes[j]`` sends
towards host ``destinations[i]``, the index of a node in ``nodes``, ``-2`` for the host itself or
``-1`` for no entry; and read back as that array.
Hosts cabled to each other without a switch (rings, stars, meshes of hosts) load: a host with
``forwards: true`` passes on what is not for it, and a host with no switch has no route to
itself (its transfer to itself is a local copy, which a traffic leaves out).
Rates take units (``B/s``, ``MB/s``, ``GiB/s``, ``Gbit/s``, ...); a bare number is bytes/s.
:func:`save_topology` writes the long form (nodes and links only); loading it gives back an equal
network, and saving that again gives the same text.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Callable

from ..errors import TopologyError
import dataclasses

from ..network import HOST, MAX_BUFFER_PACKETS, MAX_SLOTS, SWITCH, Link, Network, Node
from ..routing import NO_ENTRY, TO_DESTINATION, ExplicitPaths, Forwarding, ForwardingMatrix, NextHop, ShortestPath
from .fields import (
    Fields,
    list_of,
    read_bool,
    read_count,
    read_id,
    read_latency,
    read_list,
    read_mapping,
    read_rate,
    read_speed,
    read_str,
)
from .files import read_document, write_document

FORMAT = "liquidsched-topology"
VERSION = 1
_TOP = ("format", "version", "name", "description", "defaults", "switches", "hosts", "nodes",
        "cables", "links", "shared_duplex", "routing")
E = TopologyError


def topology_from_dict(doc: Any, where: str = "") -> Network:
    """Build a :class:`Network` from a parsed topology document.

    Raises
    ------
    TopologyError
        one line naming ``where`` (the file), the field and what was expected.
    """
    try:
        return _build_network(doc)
    except TopologyError as e:
        raise type(e)(f"{where}: {e}" if where else str(e)) from None


def _build_network(doc: Any) -> Network:
    top = Fields(doc, "", E, _TOP)
    fmt = top.get("format", read_str, FORMAT)
    if fmt != FORMAT:
        raise E(f"{top.at('format')}: expected {FORMAT!r}, got {fmt!r}")
    version = top.get("version", read_count, VERSION)
    if version != VERSION:
        raise E(f"{top.at('version')}: unsupported version {version} (this liquidsched reads {VERSION})")
    defaults = Fields(top.get("defaults", read_mapping, {}), top.at("defaults"), E, ("capacity_Bps", "latency_s"))
    default_cap = defaults.get("capacity_Bps", read_rate, None)
    default_lat = defaults.get("latency_s", read_latency, 0.0)

    nodes = [Node(s, SWITCH, origin=f"{top.at('switches')}[{i}]")
             for i, s in enumerate(top.get("switches", list_of(read_id), []))]
    nodes += [Node(h, HOST, origin=f"{top.at('hosts')}[{i}]")
              for i, h in enumerate(top.get("hosts", list_of(read_id), []))]
    for i, item in enumerate(top.get("nodes", read_list, [])):
        f = Fields(item, f"{top.at('nodes')}[{i}]", E, ("id", "kind", "role", "speed_flops", "forwards"))
        nodes.append(Node(f.get("id", read_id), f.get("kind", read_str, HOST),
                          f.get("role", read_str, "both"), f.get("speed_flops", read_speed, None),
                          origin=f.where, forwards=f.get("forwards", read_bool, False)))

    def capacity(f: Fields) -> float:
        if default_cap is None:
            return f.get("capacity_Bps", read_rate)
        return f.get("capacity_Bps", read_rate, default_cap)

    links: list[Link] = []
    shared: list[list[str]] = []
    for i, item in enumerate(top.get("cables", read_list, [])):
        f = Fields(item, f"{top.at('cables')}[{i}]", E,
                   ("a", "b", "capacity_Bps", "latency_s", "shared_duplex", "slots", "buffer_packets"))
        a, b = f.get("a", read_id), f.get("b", read_id)
        cap, lat = capacity(f), f.get("latency_s", read_latency, default_lat)
        slots = f.get("slots", read_slots, None)
        buffer = f.get("buffer_packets", read_buffer, None)
        links += [Link(f"{a}>{b}", a, b, cap, lat, slots, buffer, origin=f.where),
                  Link(f"{b}>{a}", b, a, cap, lat, slots, buffer, origin=f.where)]
        if f.get("shared_duplex", read_bool, False):
            shared.append([f"{a}>{b}", f"{b}>{a}"])
    for i, item in enumerate(top.get("links", read_list, [])):
        f = Fields(item, f"{top.at('links')}[{i}]", E,
                   ("id", "src", "dst", "capacity_Bps", "latency_s", "slots", "buffer_packets"))
        src, dst = f.get("src", read_id), f.get("dst", read_id)
        links.append(Link(f.get("id", read_id, f"{src}>{dst}"), src, dst, capacity(f),
                          f.get("latency_s", read_latency, default_lat), f.get("slots", read_slots, None),
                          f.get("buffer_packets", read_buffer, None), origin=f.where))
    pair_slots: dict[str, tuple[int, str]] = {}
    for i, pair in enumerate(top.get("shared_duplex", read_list, [])):
        where = f"{top.at('shared_duplex')}[{i}]"
        if isinstance(pair, dict):
            f = Fields(pair, where, E, ("links", "slots"))
            ids = f.get("links", list_of(read_id))
            slots = f.get("slots", read_slots, None)
            if slots is not None:
                pair_slots.update({lid: (slots, f.at("slots")) for lid in ids})
        else:
            ids = list_of(read_id)(pair, where, E)
        shared.append(ids)
    links = [_with_pair_slots(link, pair_slots) for link in links]

    routing = _read_routing(top.get("routing", read_mapping, {"policy": "shortest-path"}), top.at("routing"))
    return Network(nodes, links, routing, shared, name=top.get("name", read_id, "network"),
                   description=top.get("description", read_str, ""))


def read_slots(value: object, where: str, error: type[Exception]) -> int:
    """A whole number of slots, at least 1."""
    slots = read_count(value, where, error)
    if not 1 <= slots <= MAX_SLOTS:
        raise error(f"{where}: expected a whole number of slots from 1 to {MAX_SLOTS:,}, got {slots}")
    return slots


def read_buffer(value: object, where: str, error: type[Exception]) -> int:
    """A switch buffer in whole packets, at least 1."""
    packets = read_count(value, where, error)
    if not 1 <= packets <= MAX_BUFFER_PACKETS:
        raise error(f"{where}: expected a buffer of 1 to {MAX_BUFFER_PACKETS:,} packets, got {packets}")
    return packets


def _with_pair_slots(link: Link, pair_slots: dict[str, tuple[int, str]]) -> Link:
    """``link`` with the slots its shared-duplex pair sets, if any."""
    if link.id not in pair_slots:
        return link
    slots, where = pair_slots[link.id]
    if link.slots is not None and link.slots != slots:
        raise E(f"{where}: {slots} slots, but link {link.id!r} sets {link.slots}")
    return dataclasses.replace(link, slots=slots)


def _read_routing(value: dict, where: str):
    policy = Fields(value, where, E, ("policy", "table", "paths", "nodes", "destinations", "next")).get("policy", read_str)
    if policy == "forwarding" and isinstance(value, dict) and "next" in value:
        return _read_forwarding_matrix(value, where)
    if policy == "shortest-path":
        Fields(value, where, E, ("policy",))
        return ShortestPath()
    if policy in ("next-hop", "forwarding"):
        f = Fields(value, where, E, ("policy", "table"))
        table = {}
        for s, row in f.get("table", read_mapping).items():
            s_id = read_id(s, f"{where}.table", E)
            row = read_mapping(row, f"{where}.table.{s_id}", E)
            table[s_id] = {read_id(t, f"{where}.table.{s_id}", E): read_id(n, f"{where}.table.{s_id}.{t}", E)
                           for t, n in row.items()}
        return NextHop(table) if policy == "next-hop" else Forwarding(table)
    if policy == "paths":
        f = Fields(value, where, E, ("policy", "paths"))
        paths = {}
        for i, item in enumerate(f.get("paths", read_list)):
            p = Fields(item, f"{where}.paths[{i}]", E, ("src", "dst", "via"))
            key = (p.get("src", read_id), p.get("dst", read_id))
            if key in paths:
                raise E(f"{p.where}: a second path from {key[0]} to {key[1]}")
            paths[key] = tuple(p.get("via", list_of(read_id)))
        return ExplicitPaths(paths)
    raise E(f"{where}.policy: expected 'shortest-path', 'next-hop', 'forwarding' or 'paths', got {policy!r}")


def _read_forwarding_matrix(value: dict, where: str) -> Forwarding:
    """Forwarding tables written as one array (see the module doc), checked entry by entry."""
    import numpy as np

    f = Fields(value, where, E, ("policy", "nodes", "destinations", "next"))
    nodes, targets = f.get("nodes", list_of(read_id)), f.get("destinations", list_of(read_id))
    for name, ids in (("nodes", nodes), ("destinations", targets)):
        if len(set(ids)) != len(ids):
            raise E(f"{where}.{name}: a node is listed twice")
    rows = f.get("next", read_list)
    if len(rows) != len(targets):
        raise E(f"{where}.next: {len(rows)} rows for {len(targets)} destinations (one row each)")
    try:
        table = np.array(rows, dtype=np.int64).reshape(len(targets), len(nodes))
    except (ValueError, TypeError, OverflowError):
        raise E(f"{where}.next: expected {len(targets)} rows of {len(nodes)} whole numbers (one per node)") from None
    bad = np.argwhere((table < TO_DESTINATION) | (table >= len(nodes)))
    if len(bad):
        i, j = bad[0].tolist()
        raise E(f"{where}.next[{i}][{j}]: {table[i, j]} is not a node's index (0 to {len(nodes) - 1}), "
                f"{TO_DESTINATION} (the destination) or {NO_ENTRY} (no entry)")
    return Forwarding.from_matrix(ForwardingMatrix(tuple(nodes), tuple(targets), table.astype(np.int32)))


def topology_to_dict(net: Network) -> dict[str, Any]:
    """The long-form document of a network (see the module doc)."""
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "name": net.name}
    if net.description:
        doc["description"] = net.description
    doc["nodes"] = [
        {"id": n.id, "kind": n.kind, **({"role": n.role} if n.kind == HOST else {}),
         **({"speed_flops": float(n.speed_flops)} if n.speed_flops is not None else {}),
         **({"forwards": True} if n.forwards else {})}
        for n in net.nodes.values()
    ]
    doc["links"] = [
        {"id": l.id, "src": l.src, "dst": l.dst, "capacity_Bps": float(l.capacity_Bps),
         "latency_s": float(l.latency_s), **({"slots": l.slots} if l.slots is not None else {}),
         **({"buffer_packets": l.buffer_packets} if l.buffer_packets is not None else {})}
        for l in net.links.values()
    ]
    if net.shared_duplex:
        doc["shared_duplex"] = [list(p) for p in net.shared_duplex]
    doc["routing"] = _routing_to_dict(net.routing)
    return doc


def _routing_to_dict(routing) -> dict[str, Any]:
    if isinstance(routing, Forwarding) and routing.matrix is not None:
        m = routing.matrix
        return {"policy": routing.policy, "nodes": list(m.nodes), "destinations": list(m.targets),
                "next": m.next_node.tolist()}
    if isinstance(routing, (NextHop, Forwarding)):
        return {"policy": routing.policy, "table": {s: dict(row) for s, row in routing.table.items()}}
    if isinstance(routing, ExplicitPaths):
        return {"policy": routing.policy,
                "paths": [{"src": s, "dst": d, "via": list(v)} for (s, d), v in routing.paths.items()]}
    return {"policy": routing.policy}


#: Topology file types besides YAML and JSON: suffix → (reader, writer), each ``module:function``,
#: the module imported when a file of that type is met (so that reading YAML never imports it).
FILE_TYPES: dict[str, tuple[str, str]] = {".xml": ("liquidsched.simgrid:load_platform",
                                                   "liquidsched.simgrid:save_platform")}


def register_file_type(suffix: str, reader: str, writer: str) -> None:
    """Read and write topology files ending in ``suffix`` with ``reader(path) -> Network`` and
    ``writer(net, path)``, each named ``module:function``."""
    FILE_TYPES[suffix.lower()] = (reader, writer)


def _file_type_function(path: str | os.PathLike, which: int) -> Callable | None:
    """The reader (0) or writer (1) registered for ``path``'s suffix, None for YAML and JSON."""
    named = FILE_TYPES.get(Path(path).suffix.lower())
    if named is None:
        return None
    module, function = named[which].split(":")
    return getattr(importlib.import_module(module), function)


def load_topology(path: str | os.PathLike) -> Network:
    """Read a topology file: YAML or JSON, or a type of :data:`FILE_TYPES` (a SimGrid platform,
    ``.xml``: :mod:`liquidsched.simgrid`)."""
    reader = _file_type_function(path, 0)
    if reader is not None:
        return reader(path)
    try:
        return topology_from_dict(read_document(path, E), str(path))
    except TopologyError:
        _refuse_fabric_description(path)
        raise


def _refuse_fabric_description(path: str | os.PathLike) -> None:
    """A Slurm or InfiniBand file read as a topology file fails as YAML; say how to read it."""
    from .files import read_text
    from .infiniband import looks_like_infiniband
    from .slurm import looks_like_topology_conf

    text = read_text(path, E)
    if looks_like_topology_conf(text):
        raise E(f"{path}: a Slurm topology.conf: read it as slurm:{path},hosts=RATE,switches=RATE") from None
    if looks_like_infiniband(text):
        raise E(f"{path}: InfiniBand diagnostics output: read it as infiniband:NETDISCOVER,LFTS") from None


def save_topology(net: Network, path: str | os.PathLike) -> None:
    """Write a topology file, atomically: JSON for ``.json``, a type of :data:`FILE_TYPES` by its
    writer (a SimGrid platform for ``.xml``), YAML otherwise."""
    writer = _file_type_function(path, 1)
    if writer is not None:
        writer(net, path)
    else:
        # Tables of millions of entries (a builder's array) are written compactly.
        large = isinstance(net.routing, Forwarding) and net.routing.matrix is not None
        write_document(topology_to_dict(net), path, compact=large)
