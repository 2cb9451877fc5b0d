"""SimGrid's reader on platforms of thousands of hosts: routes asked *by cluster* rather than
pair by pair (see :func:`network_from_grouped`), and which of the two ways a platform is read
(:func:`read_with_simgrid`)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from ..errors import TopologyError
from ..network import Link, Network
from ..routing import NextHop
from .description import (GroupedPlatform, PlatformHints, SimgridPlatform, describe_grouped, describe_platform,
                          platform_hints)
from .platform_file import FATPIPE, cluster_radicals
from .reading import _Assembly, _natural_key, network_from_simgrid
from .values import _fresh, free_capacity

E = TopologyError

#: From this many hosts on, SimGrid's reader asks routes by cluster (:func:`network_from_grouped`)
#: instead of pair by pair (hosts² routes: 7 s and 0.5 GB for 300 hosts, 70 s and 2.4 GB for 750).
GROUPED_FROM_HOSTS = 256
#: Where routes cannot be composed by cluster (hosts routed to themselves through a loopback,
#: routes that are not by cluster or not by destination), SimGrid's reader asks
#: them pair by pair after all, up to this many hosts (some two minutes and 4 GB at this size);
#: beyond, it says why it cannot read the platform.
PAIRWISE_FALLBACK_HOSTS = 1024


def read_with_simgrid(path: str | os.PathLike, root: ET.Element, python: str, text: str | None = None,
                      grouped: bool | None = None) -> tuple[Network, dict[str, str | None], str]:
    """Read the platform at ``path`` (parsed as ``root``; ``text`` as read, which SimGrid then
    loads) by SimGrid run with ``python``: the network, each liquidsched link's SimGrid link
    (None for a junction), SimGrid's version (followed by why routes were asked pair by pair
    where asking them by cluster was tried and could not compose them).

    Routes are asked pair by pair, or by cluster (``grouped``; by default where the platform has
    clusters and :data:`GROUPED_FROM_HOSTS` hosts or more, falling back to pair by pair up to
    :data:`PAIRWISE_FALLBACK_HOSTS` hosts where routes cannot be composed by cluster)."""
    where = str(path)
    groups = cluster_groups(root)
    hosts = sum(len(g) for g in groups) + sum(1 for el in root.iter() if el.tag == "host")
    by_default = grouped is None
    if grouped is None:
        grouped = bool(groups) and hosts >= GROUPED_FROM_HOSTS
    hints = platform_hints(root, where)
    note = ""
    if grouped:
        described = describe_grouped(path, python, groups, text=text)
        try:
            net, links = network_from_grouped(described, hints, where)
            return net, links, described.version
        except TopologyError as e:
            if not by_default:
                raise
            if hosts > PAIRWISE_FALLBACK_HOSTS:
                raise E(f"{e}; asking SimGrid every pair's route instead ({hosts ** 2:,} routes) is done up to "
                        f"{PAIRWISE_FALLBACK_HOSTS:,} hosts") from None
            # Slower, but what any platform SimGrid routes over links reads by.
            note = f" (routes asked pair by pair: {str(e).removeprefix(where + ': ')})"
    platform = describe_platform(path, python, text=text)
    net, links = network_from_simgrid(platform, hints, where)
    return net, links, platform.version + note


def cluster_groups(root: ET.Element) -> list[list[str]]:
    """The hosts of each ``<cluster>`` of a parsed platform (a radical that cannot be read gives
    none: SimGrid then says what is wrong)."""
    groups = []
    for el in root.iter("cluster"):
        try:
            numbers = cluster_radicals(el.get("radical", ""), "radical")
        except TopologyError:
            continue
        prefix, suffix = el.get("prefix", ""), el.get("suffix", "")
        groups.append([f"{prefix}{k}{suffix}" for k in numbers])
    return groups


# -- routes asked by cluster ----------------------------------------------------------------------------


def network_from_grouped(platform: GroupedPlatform, hints: PlatformHints,
                         where: str) -> tuple[Network, dict[str, str | None]]:
    """The :class:`Network` of a platform whose routes SimGrid gave by group of hosts (see
    :class:`~liquidsched.simgrid.description.GroupedPlatform`), for platforms of thousands of
    hosts.

    A network is laid out as :func:`network_from_simgrid` lays it, from SimGrid's routes between
    *representatives*, the first two hosts of each group; every other host of a group then gets
    links of its own (its SimGrid links) to the nodes its first representative's links join: its
    link up to the switch the representative sends to, its link down from the switch it receives
    from (one switch for a crossbar cluster; for a cluster with a backbone, the backbone's two
    ends, the middle of the group's routes to itself being the backbone). Routes are composed by
    a next-hop table between those switches (:class:`liquidsched.routing.NextHop`; a route is the
    link up, the switches' path, the link down): O(hosts) links and O(groups²) switch paths,
    instead of hosts² routes. Resources that never limit (FATPIPE links, junctions) get the slots
    of the host pairs crossing them, counted group pair by group pair.

    Raises
    ------
    TopologyError
        one line naming ``where`` when the routes are not by group (SimGrid's route between two
        hosts is not the first host's first link, a middle that depends on the hosts' groups
        alone, and the second host's last link), when a group's first host does not send to one
        switch and receive from one by its private links, its route to itself being its link
        up, its group's middle and its link down (a cluster with loopbacks), or when the routes
        between switches are not what a next-hop table gives.
    """
    if platform.broken is not None:
        src, dst, theirs, composed = platform.broken
        if not theirs:
            raise E(f"{where}: SimGrid has no route from {src} to {dst}; reading {len(platform.hosts):,} hosts by "
                    "cluster needs a route between every two clusters")
        raise E(f"{where}: routes are not by cluster: SimGrid's route {src} → {dst} crosses {', '.join(theirs)}, "
                f"not {', '.join(composed)} (its first link, its clusters' middle, its last link)")
    declared = {h: k for k, h in enumerate(hints.declared_hosts)}
    order = sorted(platform.hosts, key=lambda h: (declared.get(h, len(declared)), _natural_key(h)))
    reps = [h for group in platform.groups for h in group[:2]]
    group_of = {h: k for k, group in enumerate(platform.groups) for h in group}

    def composed(s: str, d: str) -> tuple[str, ...]:
        if s == d:
            return platform.self_routes[s]
        return (platform.up[s],) + platform.middles[(group_of[s], group_of[d])] + (platform.down[d],)

    def latency(links: tuple[str, ...]) -> float:
        return sum(platform.links[name].latency_s for name in links)

    reduced = SimgridPlatform(platform.version, tuple(reps), platform.links,
                              {(s, d): (composed(s, d), latency(composed(s, d))) for s in reps for d in reps})
    small, sg = _Assembly(reduced, hints, where).build()
    links: list[Link] = list(small.links.values())
    shared = [list(pair) for pair in small.shared_duplex]
    taken = set(small.links)
    nodes = {h: small.nodes[h] for h in reps}
    for k, group in enumerate(platform.groups):
        rep = group[0]
        # A crossbar cluster's hosts send to and receive from one switch; those of a cluster with
        # a backbone send to one end of it and receive from the other (the middle of their routes
        # to each other and to themselves is the backbone).
        up_sw, down_sw = small.switch_up(rep), small.switch_down(rep)
        first = platform.up[rep], platform.down[rep]
        self_route = platform.self_routes[rep]
        if up_sw is None or down_sw is None or len(self_route) < 2 or (self_route[0], self_route[-1]) != first or \
                (len(group) > 1 and platform.middles.get((k, k)) != self_route[1:-1]):
            raise E(f"{where}: host {rep} does not send to one switch and receive from one (SimGrid's route to itself "
                    f"crosses {', '.join(self_route)}); reading {len(platform.hosts):,} hosts by cluster composes "
                    "routes of hosts with one private link up and one down (a <cluster> with a backbone or without, "
                    "not one with a loopback)")
        up_id, down_id = small.link_between(rep, up_sw), small.link_between(down_sw, rep)
        if up_id is None or down_id is None or (sg.get(up_id), sg.get(down_id)) != first:
            raise E(f"{where}: host {rep}'s links to its switches are not its SimGrid links {first[0]} and "
                    f"{first[1]}; reading by cluster needs each host joined to its switches by its own links")
        pair = [up_id, down_id] in shared or [down_id, up_id] in shared
        for h in group:
            if h in nodes:
                continue
            if {platform.up[h], platform.down[h]} & set(first):
                raise E(f"{where}: hosts {rep} and {h} share link {platform.up[h]}; reading by cluster needs a link "
                        "of its own for each host")
            node = small.nodes[rep]
            nodes[h] = type(node)(h, node.kind, node.role, origin=f"{where}: host {h!r}")
            made = []
            for lid, sg_name, tail, head in ((up_id, platform.up[h], h, up_sw),
                                             (down_id, platform.down[h], down_sw, h)):
                model = small.links[lid]
                sg_link = platform.links[sg_name]
                new_id = _fresh(_renamed(lid, sg[lid], sg_name), taken)
                made.append(new_id)
                # A FATPIPE link's slots are set below, from its bandwidth (capacity / slots).
                capacity = sg_link.bandwidth_Bps * ((model.slots or 1) if sg_link.policy == FATPIPE else 1)
                links.append(Link(new_id, tail, head, capacity, sg_link.latency_s, model.slots,
                                  origin=f"{where}: link {sg_name!r}"))
                sg[new_id] = sg_name
            if pair:
                shared.append(made)
    uses = _crossings(platform, small)
    for i, link in enumerate(links):
        if sg.get(link.id) is None or platform.links[sg[link.id]].policy == FATPIPE:
            rate = link.capacity_Bps / link.slots
            capacity, slots = free_capacity(rate, uses.get(link.id, len(platform.hosts)))
            links[i] = Link(link.id, link.src, link.dst, capacity, link.latency_s, slots, origin=link.origin)
    table: dict[str, dict[str, str]] = {}
    for s in reps:
        for d in reps:
            # The switches of the route, from the source's switch up to the destination's switch
            # down (one switch: no entry; a backbone: its far end, next to its near end).
            path = small.routing.paths[(s, d)][1:-1]
            for u, v in zip(path, path[1:]):
                known = table.setdefault(u, {}).setdefault(path[-1], v)
                if known != v:
                    raise E(f"{where}: routes are not by destination: from {u} towards {path[-1]}, one route goes "
                            f"to {known}, another to {v}; reading by cluster needs routes a next-hop table gives")
    hosts = [nodes[h] for h in order]
    switches = [small.nodes[n] for n in small.nodes if not small.is_host(n)]
    try:
        net = Network(hosts + switches, links, NextHop(table), shared, name=small.name, description=small.description)
    except TopologyError as e:
        text = str(e)
        raise type(e)(text if text.startswith(where) else f"{where}: {text}") from None
    for s in reps:
        for d in reps:
            if net.route(s, d) != small.route(s, d):
                raise E(f"{where}: route {s} → {d} composed by cluster is {net.route(s, d)}, SimGrid's "
                        f"{small.route(s, d)}")
    return net, sg


def _crossings(platform: GroupedPlatform, small: Network) -> dict[str, int]:
    """How many host pairs' routes cross each link of ``small`` (the network of the groups'
    representatives) that joins no host, in the whole platform: the route between two groups'
    hosts crosses, between switches, what the route between their first hosts crosses. A link
    that joins a host is crossed by the routes from (or to) that host alone: as many as hosts."""
    uses: dict[str, int] = {}
    for a, ga in enumerate(platform.groups):
        for b, gb in enumerate(platform.groups):
            path = small.routing.paths[(ga[0], gb[0])][1:-1]
            for u, v in zip(path, path[1:]):
                lid = small.link_between(u, v)
                uses[lid] = uses.get(lid, 0) + len(ga) * len(gb)
    return uses


def _renamed(lid: str, sg_name: str | None, other: str) -> str:
    """The id of a link like ``lid`` (the liquidsched link of SimGrid link ``sg_name``) for SimGrid
    link ``other``: ``bob_link_0_UP`` for ``bob_link_7_UP`` is ``bob_link_7_UP``."""
    if sg_name and lid.startswith(sg_name):
        return other + lid[len(sg_name):]
    return other
