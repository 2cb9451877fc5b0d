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
#: Where routes cannot be composed by cluster (a cluster with a backbone), SimGrid's reader asks
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
    links of its own (its SimGrid links) to the nodes its first representative's links join, and
    routes are composed by a next-hop table between the switches the hosts hang off
    (:class:`liquidsched.routing.NextHop`): O(hosts) links and O(groups²) switch paths, instead of
    hosts² routes. Resources that never limit (FATPIPE links, junctions) get the slots of every
    host pair crossing them at most.

    Raises
    ------
    TopologyError
        one line naming ``where`` when the routes are not by group (SimGrid's route between two
        hosts is not the first host's first link, a middle that depends on the hosts' groups
        alone, and the second host's last link), or when a group's hosts do not hang off one
        switch each (a cluster with a backbone: they send to one switch and receive from another,
        and liquidsched composes routes only for hosts on one switch).
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
    homes: dict[str, str] = {}
    for k, group in enumerate(platform.groups):
        rep = group[0]
        home = small.home_switch(rep)
        first = platform.up[rep], platform.down[rep]
        self_route = platform.self_routes[rep]
        if home is None or (len(group) > 1 and platform.middles.get((k, k)) != ()) or \
                self_route != (platform.up[rep], platform.down[rep]):
            raise E(f"{where}: host {rep} does not hang off one switch (SimGrid's route to itself crosses "
                    f"{', '.join(self_route)}); reading {len(platform.hosts):,} hosts by cluster composes routes of "
                    "hosts on one switch only (a crossbar <cluster>, not one with a backbone or a loopback)")
        up_id, down_id = small.link_between(rep, home), small.link_between(home, rep)
        if up_id is None or down_id is None or (sg.get(up_id), sg.get(down_id)) != first:
            raise E(f"{where}: host {rep}'s links to its switch are not its SimGrid links {first[0]} and {first[1]}; "
                    "reading by cluster needs each host joined to its switch by its own links")
        for h in group:
            homes[h] = home
            if h in nodes:
                continue
            if {platform.up[h], platform.down[h]} & set(first):
                raise E(f"{where}: hosts {rep} and {h} share link {platform.up[h]}; reading by cluster needs a link "
                        "of its own for each host")
            node = small.nodes[rep]
            nodes[h] = type(node)(h, node.kind, node.role, origin=f"{where}: host {h!r}")
            made = []
            for lid, sg_name, tail, head in ((up_id, platform.up[h], h, home), (down_id, platform.down[h], home, h)):
                model = small.links[lid]
                sg_link = platform.links[sg_name]
                new_id = _fresh(_renamed(lid, sg[lid], sg_name), taken)
                made.append(new_id)
                # A FATPIPE link's slots are set below, from its bandwidth (capacity / slots).
                capacity = sg_link.bandwidth_Bps * ((model.slots or 1) if sg_link.policy == FATPIPE else 1)
                links.append(Link(new_id, tail, head, capacity, sg_link.latency_s, model.slots,
                                  origin=f"{where}: link {sg_name!r}"))
                sg[new_id] = sg_name
            if [up_id, down_id] in shared or [down_id, up_id] in shared:
                shared.append(made)
    pairs = len(platform.hosts) ** 2
    for i, link in enumerate(links):
        if sg.get(link.id) is None or platform.links[sg[link.id]].policy == FATPIPE:
            rate = link.capacity_Bps / link.slots
            capacity, slots = free_capacity(rate, pairs)
            links[i] = Link(link.id, link.src, link.dst, capacity, link.latency_s, slots, origin=link.origin)
    table: dict[str, dict[str, str]] = {}
    for s in reps:
        for d in reps:
            if homes[s] == homes[d]:
                continue
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


def _renamed(lid: str, sg_name: str | None, other: str) -> str:
    """The id of a link like ``lid`` (the liquidsched link of SimGrid link ``sg_name``) for SimGrid
    link ``other``: ``bob_link_0_UP`` for ``bob_link_7_UP`` is ``bob_link_7_UP``."""
    if sg_name and lid.startswith(sg_name):
        return other + lid[len(sg_name):]
    return other
