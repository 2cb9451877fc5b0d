"""The networks of ML clusters: servers of accelerators joined inside by a fast fabric
(NVLink, xGMI) and between by a network of switches.

Every accelerator is a host ``s{i}.g{g}`` (accelerator ``g`` of server ``i``). Routing is a
next-hop table by destination, as switches forward (:class:`~liquidsched.routing.NextHop`),
and spreads traffic over the spines by destination server (D-mod-k), so that no spine carries
what another could.
"""

from __future__ import annotations

from ..errors import TopologyError
from ..network import Network
from ..routing import NextHop
from ._build import cable, hosts, switches

#: 400 Gbit/s: a ConnectX-7 port, one per accelerator on H100/H200 servers.
NIC_BPS = 50e9
#: 450 GB/s each way: NVLink 4 of an H100/H200 (900 GB/s both ways).
NVLINK_BPS = 450e9


def _check_shape(name: str, servers: int, gpus: int, oversubscription: float, spines: int) -> None:
    if servers < 1 or gpus < 1:
        raise TopologyError(f"{name}: servers and gpus must be at least 1, got {servers}, {gpus}")
    if oversubscription < 1:
        raise TopologyError(f"{name}: oversubscription must be at least 1, got {oversubscription}")
    if spines < 1:
        raise TopologyError(f"{name}: spines must be at least 1, got {spines}")


def rail_optimised(servers: int = 8, gpus: int = 4, nic_Bps: float = NIC_BPS, nvlink_Bps: float = NVLINK_BPS,
                   oversubscription: float = 2.0, spines: int = 2, pxn: bool = False) -> Network:
    """A rail-optimised cluster: the NIC of accelerator ``g`` of every server on the leaf switch
    of rail ``g``, the leaves under ``spines`` spine switches, each server's accelerators joined
    by an NVLink switch.

    Every accelerator has a port switch ``p{i}.{g}`` where its NVLink (``nvlink_Bps`` to the
    server's switch ``nv{i}``) and its NIC (``nic_Bps`` to leaf ``rail{g}``) meet; its own link
    to that port carries both (``nic_Bps + nvlink_Bps``). A leaf's uplinks carry
    ``1 / oversubscription`` of what its NICs can send, shared equally by the spines.

    Routes: inside a server over NVLink; between servers on one rail through that rail's leaf;
    across rails up the source's rail and down the destination's, through spine ``t mod
    spines`` for destination server ``t``. With ``pxn`` a message across rails takes NVLink to
    the accelerator of the destination's rail first and then that rail, as NCCL's PXN does, and
    never crosses a spine.

    Examples
    --------
    >>> net = rail_optimised(servers=2, gpus=2)
    >>> net.route("s0.g0", "s1.g0")
    ('s0.g0>p0.0', 'p0.0>rail0', 'rail0>p1.0', 'p1.0>s1.g0')
    >>> net.route("s0.g0", "s1.g1")[1:4]
    ('p0.0>rail0', 'rail0>spine1', 'spine1>rail1')
    >>> rail_optimised(servers=2, gpus=2, pxn=True).route("s0.g0", "s1.g1")[1:4]
    ('p0.0>nv0', 'nv0>p0.1', 'p0.1>rail1')
    """
    _check_shape("rail-optimised", servers, gpus, oversubscription, spines)
    port = lambda i, g: f"p{i}.{g}"  # noqa: E731
    rail = lambda g: f"rail{g}"  # noqa: E731
    spine = lambda x: f"spine{x}"  # noqa: E731
    uplink = servers * nic_Bps / (oversubscription * spines)
    names, links = [], []
    sw = [spine(x) for x in range(spines)] + [rail(g) for g in range(gpus)]
    for g in range(gpus):
        for x in range(spines):
            links += cable(rail(g), spine(x), uplink)
    for i in range(servers):
        sw.append(f"nv{i}")
        for g in range(gpus):
            sw.append(port(i, g))
            names.append(f"s{i}.g{g}")
            links += cable(names[-1], port(i, g), nic_Bps + nvlink_Bps)
            links += cable(port(i, g), f"nv{i}", nvlink_Bps)
            links += cable(port(i, g), rail(g), nic_Bps)
    table: dict[str, dict[str, str]] = {}
    for t in range(servers):
        for h in range(gpus):
            dst = port(t, h)
            table.setdefault(f"nv{t}", {})[dst] = dst
            table.setdefault(rail(h), {})[dst] = dst
            for x in range(spines):
                table.setdefault(spine(x), {})[dst] = rail(h)
            for g in range(gpus):
                if g != h:
                    table.setdefault(rail(g), {})[dst] = spine(t % spines)
                for i in range(servers):
                    if (i, g) == (t, h):
                        continue
                    if i == t or (pxn and g != h):
                        table.setdefault(port(i, g), {})[dst] = f"nv{i}"
                    else:
                        table.setdefault(port(i, g), {})[dst] = rail(g)
            for i in range(servers if pxn else 0):
                if i != t:
                    # Through NVLink to the destination's rail: that port sends it up its rail.
                    table.setdefault(f"nv{i}", {})[dst] = port(i, h)
    shape = "PXN across rails" if pxn else "across rails through the spines"
    return Network(switches(sw) + hosts(names), links, NextHop(table), name="rail-optimised",
                   description=f"{servers} servers × {gpus} accelerators, {gpus} rails, "
                               f"{oversubscription:g}:1 to {spines} spines, {shape}")


def two_tier(servers: int = 16, gpus: int = 4, servers_per_leaf: int = 4, nic_Bps: float = NIC_BPS,
             internal_Bps: float = NVLINK_BPS, oversubscription: float = 2.0, spines: int = 2) -> Network:
    """Servers with a fast internal crossbar, joined by an oversubscribed two-level fabric.

    Each server's accelerators hang on its crossbar ``x{i}`` (``internal_Bps`` each way); the
    server leaves through one link to its leaf that carries what its accelerators' NICs can
    (``gpus × nic_Bps``); ``servers_per_leaf`` servers share a leaf, whose uplinks carry
    ``1 / oversubscription`` of that, shared equally by the spines. Between leaves, traffic to
    server ``t`` goes through spine ``t mod spines``.

    Examples
    --------
    >>> net = two_tier(servers=4, gpus=2, servers_per_leaf=2)
    >>> net.route("s0.g0", "s0.g1")
    ('s0.g0>x0', 'x0>s0.g1')
    >>> net.route("s0.g0", "s3.g1")
    ('s0.g0>x0', 'x0>leaf0', 'leaf0>spine1', 'spine1>leaf1', 'leaf1>x3', 'x3>s3.g1')
    """
    _check_shape("two-tier", servers, gpus, oversubscription, spines)
    if servers_per_leaf < 1:
        raise TopologyError(f"two-tier: servers_per_leaf must be at least 1, got {servers_per_leaf}")
    leaves = -(-servers // servers_per_leaf)
    leaf_of = lambda i: f"leaf{i // servers_per_leaf}"  # noqa: E731
    spine = lambda x: f"spine{x}"  # noqa: E731
    # One leaf needs no spine.
    spine_count = spines if leaves > 1 else 0
    uplink = servers_per_leaf * gpus * nic_Bps / (oversubscription * spines)
    sw = [spine(x) for x in range(spine_count)] + [f"leaf{j}" for j in range(leaves)]
    names, links = [], []
    for j in range(leaves):
        for x in range(spine_count):
            links += cable(f"leaf{j}", spine(x), uplink)
    for i in range(servers):
        sw.append(f"x{i}")
        links += cable(f"x{i}", leaf_of(i), gpus * nic_Bps)
        for g in range(gpus):
            names.append(f"s{i}.g{g}")
            links += cable(names[-1], f"x{i}", internal_Bps)
    table: dict[str, dict[str, str]] = {}
    for t in range(servers):
        dst = f"x{t}"
        for j in range(leaves):
            leaf = f"leaf{j}"
            table.setdefault(leaf, {})[dst] = dst if leaf == leaf_of(t) else spine(t % spines)
        for x in range(spine_count):
            table.setdefault(spine(x), {})[dst] = leaf_of(t)
        for i in range(servers):
            if i != t:
                table.setdefault(f"x{i}", {})[dst] = leaf_of(i)
    return Network(switches(sw) + hosts(names), links, NextHop(table), name="two-tier",
                   description=f"{servers} servers × {gpus} accelerators, {servers_per_leaf} per leaf, "
                               f"{oversubscription:g}:1 to {spines} spines")
