"""SimGrid platform files (XML, version 4.1): export any network, read platforms of every style.

Export: the platform is one zone with ``routing="Full"``: a ``<host>`` per host, a ``<router>``
per switch, a ``<link>`` per resource and a ``<route>`` (``symmetrical="NO"``) for every
sender → receiver pair that the network routes, self routes included. Links map as follows:

* a shared-duplex pair (both directions on one capacity) is one ``SHARED`` link crossed both ways;
  a route out and back over a pair (a host's route to itself through a neighbour) lists it once,
  since it is one resource: liquidsched counts a resource once per route, SimGrid a link once per
  listing. A host's *loopback*, a pair that only the host's route to itself crosses, is written
  from the host out, with the latency of both directions, so that SimGrid's route has the
  model's latency and both readers read it back as the same loopback;
* two opposite links with the same capacity, latency and slots are one ``SPLITDUPLEX`` link, the
  first declared direction being ``UP``;
* any other directed link is a ``SHARED`` link crossed one way only.

Each link carries properties ``src`` and ``dst`` (the ends of its ``UP`` or only direction) and
``up``/``down`` (the liquidsched link ids of its directions), plus ``slots`` where the topology
sets them (SimGrid ignores it; liquidsched reads it back), and hosts that only send or only
receive carry a ``role`` property, so that reading the file gives back the same links,
capacities, latencies and routes. A ``<config>`` block selects the model liquidsched's fluid model
agrees with: CM02 (ideal max-min), without TCP window bound or cross traffic.

Reading (:func:`read_platform`, :func:`load_platform`) has two readers:

* **SimGrid itself**, wherever its Python module is installed (Debian's ``python3-simgrid``,
  found by :func:`liquidsched.simgrid.install.simgrid_python`): SimGrid loads the file
  and reports its links and the route of every host pair, so every style it routes over links
  reads, from Full, Floyd and Dijkstra zones to clusters, fat trees, tori, dragonflies and nested
  zones with zone and bypass routes. How each SimGrid construct becomes liquidsched resources is
  in :mod:`liquidsched.simgrid.reading`.
* **liquidsched's own parser**, kept for machines without SimGrid (and used for a lone
  ``<cluster>`` of thousands of hosts): a platform that is one ``<cluster>``, crossbar or with a
  backbone, laid out as SimGrid lays it (:func:`lone_cluster`; what it does not read is refused
  naming SimGrid's reader), or one zone with
  ``routing="Full"`` and explicit routes. Link ends are then inferred from the routes (a link's
  tail is where the previous link of a route ends) with the union-find both readers share;
  inferred nodes become switches named ``router-1``, ``router-2``, ...; host roles follow the
  routes; a host's route to itself through one link that no other route crosses is its
  loopback, as for SimGrid (:func:`find_loopbacks`, :func:`loopback_links`), one through a SHARED
  link that other routes cross goes out over it and back, one it does not list goes through its
  switch. A pair of hosts without a route loads as a missing route of the network; a route to or
  from a router (a gateway's) carries no host's traffic and only tells where its links end.

``read_platform`` says which reader read the file (``topology show`` prints it); the environment
variable ``LIQUIDSCHED_PLATFORM_READER`` (``auto``, ``simgrid`` or ``liquidsched``) forces one.
What liquidsched's model cannot represent is refused in one line naming the file, before either
reader runs: zones routed by coordinates (Vivaldi), wifi, the ns-3 model, a platform without
hosts.

Examples
--------
>>> from liquidsched.topologies import two_switch
>>> net = two_switch()
>>> back = network_from_platform(platform_xml(net))
>>> [back.route(s, d) == net.route(s, d) for s, d in [("t1", "r1"), ("t3", "r5")]]
[True, True]
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

from ..errors import MissingRouteError, TopologyError
from ..io.output import write_output
from ..network import HOST, SWITCH, Link, Network, Node
from ..routing import ExplicitPaths, ShortestPath
from .values import _fresh, _role, _slots_property, free_capacity, parse_bandwidth, parse_latency

E = TopologyError
SHARED, SPLITDUPLEX, FATPIPE = "SHARED", "SPLITDUPLEX", "FATPIPE"
UP, DOWN, NONE = "UP", "DOWN", "NONE"
#: The SimGrid configuration under which SimGrid's model is liquidsched's fluid model.
CM02_CONFIG = {"network/model": "CM02", "network/TCP-gamma": "0", "network/crosstraffic": "0"}



# -- export --------------------------------------------------------------------------------------


def _number(x: float) -> str:
    # repr round-trips a float exactly, and SimGrid reads it with strtod.
    return repr(float(x))


def _loopback_pairs(net: Network) -> dict[str, str]:
    """The loopbacks of ``net``, by the link back of each: the shared-duplex pairs that a host's
    route to itself crosses out and back (host → node → host) and that no other route crosses,
    each with its link out of the host. The readers make such a pair of a host's route to itself
    through one link that no other route crosses (:func:`find_loopbacks`)."""
    partner = {a: b for a, b in net.shared_duplex} | {b: a for a, b in net.shared_duplex}
    senders, receivers = net.senders(), net.receivers()
    missing = _unrouted(net)
    out_of: dict[str, str] = {}
    for h in set(senders) & set(receivers):
        if (h, h) in missing:
            continue
        route = net.route(h, h)
        if len(route) == 2 and partner.get(route[0]) == route[1]:
            out_of[route[1]] = route[0]
    if not out_of:
        return out_of
    loops = {h for h in set(senders) & set(receivers) if (h, h) not in missing and net.route(h, h)[-1] in out_of}
    crossed = {lid for s in senders for d in receivers if (s != d or s not in loops) and (s, d) not in missing
               for lid in net.route(s, d)}
    return {back: out for back, out in out_of.items() if back not in crossed and out not in crossed}


def _unrouted(net: Network) -> set[tuple[str, str]]:
    """The sender → receiver pairs that ``net`` does not route (a platform may route only some)."""
    missing = set()
    for s in net.senders():
        for d in net.receivers():
            try:
                net.route(s, d)
            except MissingRouteError:
                missing.add((s, d))
    return missing


def _simgrid_links(net: Network) -> tuple[list[dict], dict[str, tuple[str, str]]]:
    """The SimGrid links of ``net``, and for each liquidsched link the (SimGrid id, direction)
    that carries it."""
    partner = {a: b for a, b in net.shared_duplex} | {b: a for a, b in net.shared_duplex}
    out_of = _loopback_pairs(net)
    carried: dict[str, tuple[str, str]] = {}
    links: list[dict] = []
    for lid in net.links:
        # A loopback is written from its host out, so that its src property names the host.
        lid = out_of.get(lid, lid)
        if lid in carried:
            continue
        link = net.links[lid]
        down = partner.get(lid)
        # The self route crosses a loopback once for SimGrid: its latency is that of both ways.
        latency = link.latency_s + (net.links[down].latency_s if down in out_of else 0.0)
        policy = SHARED
        if down is None:
            opposite = net.link_between(link.dst, link.src)
            if (opposite is not None and opposite not in carried and opposite not in partner
                    and net.links[opposite].capacity_Bps == link.capacity_Bps
                    and net.links[opposite].latency_s == link.latency_s
                    and net.links[opposite].slots == link.slots):
                down, policy = opposite, SPLITDUPLEX
        sg_id = f"{lid}|{down}" if down is not None else lid
        carried[lid] = (sg_id, UP if policy == SPLITDUPLEX else NONE)
        if down is not None:
            carried[down] = (sg_id, DOWN if policy == SPLITDUPLEX else NONE)
        links.append({"id": sg_id, "policy": policy, "link": link, "latency": latency, "up": lid, "down": down})
    return links, carried


def platform_xml(net: Network, latencies: bool = True) -> str:
    """The SimGrid platform (XML, version 4.1) of ``net``; see the module doc for the mapping.
    With ``latencies=False`` every link is written with zero latency."""
    root = ET.Element("platform", version="4.1")
    config = ET.SubElement(root, "config")
    for key, value in CM02_CONFIG.items():
        ET.SubElement(config, "prop", id=key, value=value)
    zone = ET.SubElement(root, "zone", id=net.name, routing="Full")
    if net.description:
        ET.SubElement(zone, "prop", id="description", value=net.description)
    for node in net.nodes.values():
        if node.kind == HOST:
            host = ET.SubElement(zone, "host", id=node.id, speed="1f")
            if node.role != "both":
                ET.SubElement(host, "prop", id="role", value=node.role)
    for sw in net.switches():
        ET.SubElement(zone, "router", id=sw)
    links, carried = _simgrid_links(net)
    for item in links:
        link: Link = item["link"]
        el = ET.SubElement(zone, "link", id=item["id"], bandwidth=_number(link.capacity_Bps) + "Bps",
                           latency=_number(item["latency"] if latencies else 0.0) + "s", sharing_policy=item["policy"])
        props = {"src": link.src, "dst": link.dst, "up": item["up"]}
        if item["down"] is not None:
            props["down"] = item["down"]
        if link.slots is not None:
            props["slots"] = str(link.slots)
        for key, value in props.items():
            ET.SubElement(el, "prop", id=key, value=value)
    missing = _unrouted(net)
    for s in net.senders():
        for d in net.receivers():
            if (s, d) in missing:
                # A pair the network does not route is not routed in the platform either.
                continue
            route = ET.SubElement(zone, "route", src=s, dst=d, symmetrical="NO")
            hops = [carried[lid] for lid in net.route(s, d)]
            for k, (sg_id, direction) in enumerate(hops):
                if k and direction == NONE and hops[k - 1] == hops[k]:
                    # Out and back over a shared-duplex pair (a route to itself): one resource,
                    # which liquidsched counts once per route and SimGrid once per listing.
                    continue
                attrs = {"id": sg_id} | ({"direction": direction} if direction != NONE else {})
                ET.SubElement(route, "link_ctn", attrs)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return ("<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n' + body + "\n")


def save_platform(net: Network, path: str | os.PathLike) -> None:
    """Write ``net`` as a SimGrid platform file, atomically."""
    write_output(path, platform_xml(net))


# -- import --------------------------------------------------------------------------------------


def _children(el: ET.Element, where: str, allowed: tuple[str, ...], hint: str = "") -> Iterator[ET.Element]:
    for child in el:
        if child.tag not in allowed:
            ident = f" id={child.get('id')!r}" if child.get("id") else ""
            raise E(f"{where}: <{child.tag}{ident}> is not supported here (liquidsched reads "
                    f"{', '.join('<' + a + '>' for a in allowed)}){hint}")
        yield child


def _props(el: ET.Element, where: str) -> dict[str, str]:
    return {p.get("id", ""): p.get("value", "") for p in _children(el, where, ("prop",))}


def _required(el: ET.Element, attr: str, where: str) -> str:
    value = el.get(attr)
    if not value:
        raise E(f"{where}: missing attribute {attr!r}")
    return value


def network_from_platform(text: str, where: str = "platform") -> Network:
    """A :class:`Network` from the text of a SimGrid platform with one Full-routing zone.

    Raises
    ------
    TopologyError
        naming ``where`` (the file), the element and what is wrong.
    """
    return _build_from_platform(_xml_root(text, where), where)


def _xml_root(text: str, where: str) -> ET.Element:
    """The root element of an XML text, or a one-line error naming ``where``."""
    try:
        return ET.fromstring(text)
    except ET.ParseError as e:
        line, col = e.position
        raise E(f"{where}: not valid XML: {str(e).split(':')[0]} at line {line}, column {col + 1}") from None


def _build_from_platform(root: ET.Element, where: str) -> Network:
    if root.tag != "platform":
        raise E(f"{where}: expected a <platform> root element, got <{root.tag}>")
    version = root.get("version", "")
    if version != "4" and not version.startswith("4."):
        raise E(f"{where}: platform version {version!r} is not supported (liquidsched reads 4.x)")
    found = lone_cluster(root)
    if found is not None:
        cluster, zone = found
        return _cluster_network(cluster, zone, where)
    hint = "; " + NEEDS_SIMGRID
    zones = [c for c in _children(root, where, ("config", "zone", "AS"), hint) if c.tag != "config"]
    if len(zones) != 1:
        raise E(f"{where}: expected exactly one <zone>, found {len(zones)}{hint}")
    zone = zones[0]
    zwhere = f"{where}: zone {zone.get('id', '')!r}"
    if zone.get("routing") != "Full":
        raise E(f"{zwhere}: routing {zone.get('routing')!r} is not supported (liquidsched's own parser reads "
                f"routing=\"Full\", and a lone <cluster>){hint}")
    elements: dict[str, list[ET.Element]] = {t: [] for t in ("prop", "host", "router", "link", "route")}
    for child in _children(zone, zwhere, tuple(elements), hint):
        elements[child.tag].append(child)
    description = next((p.get("value", "") for p in elements["prop"] if p.get("id") == "description"), "")

    hosts: dict[str, str] = {}
    for el in elements["host"]:
        hid = _required(el, "id", f"{zwhere}: <host>")
        hwhere = f"{zwhere}: host {hid!r}"
        if hid in hosts:
            raise E(f"{hwhere}: declared twice")
        hosts[hid] = _props(el, hwhere).get("role", "")
    routers = [_required(el, "id", f"{zwhere}: <router>") for el in elements["router"]]
    links = {}
    for el in elements["link"]:
        lid = _required(el, "id", f"{zwhere}: <link>")
        lwhere = f"{zwhere}: link {lid!r}"
        if lid in links:
            raise E(f"{lwhere}: declared twice")
        policy = el.get("sharing_policy", SHARED)
        if policy not in (SHARED, SPLITDUPLEX):
            raise E(f"{lwhere}: sharing_policy {policy!r} is not supported (SHARED or SPLITDUPLEX)")
        capacity = parse_bandwidth(el.get("bandwidth"), f"{lwhere}: bandwidth")
        if capacity <= 0:
            raise E(f"{lwhere}: bandwidth must be positive, got {el.get('bandwidth')!r}")
        latency = parse_latency(el.get("latency", "0"), f"{lwhere}: latency")
        links[lid] = {"policy": policy, "capacity": capacity, "latency": latency, "props": _props(el, lwhere)}
    routes = _read_routes(elements["route"], links, hosts, zwhere, set(routers))
    return _assemble(zone.get("id") or "platform", description, hosts, routers, links, routes, zwhere)


# -- <cluster> -------------------------------------------------------------------------------------

#: The most hosts liquidsched reads in one cluster.
MAX_CLUSTER_HOSTS = 2**20
#: Where liquidsched's own parser sends a platform it cannot read.
NEEDS_SIMGRID = "SimGrid's reader reads it (apt-get install python3-simgrid)"


def lone_cluster(root: ET.Element) -> tuple[ET.Element, ET.Element | None] | None:
    """The ``<cluster>`` of a platform that is one cluster (alone in the platform, or alone in its
    one zone beside properties), with that zone; None for any other platform."""
    tops = [c for c in root if c.tag != "config"]
    if len(tops) == 1 and tops[0].tag == "cluster":
        return tops[0], None
    if len(tops) == 1 and tops[0].tag in ("zone", "AS"):
        inner = [c for c in tops[0] if c.tag != "prop"]
        if len(inner) == 1 and inner[0].tag == "cluster":
            return inner[0], tops[0]
    return None


def cluster_radicals(text: str, where: str) -> list[int]:
    """The numbers of a cluster's ``radical`` (``"0-65535"``, ``"1-3,7"``), in order.

    Examples
    --------
    >>> cluster_radicals("1-3,7", "p.xml")
    [1, 2, 3, 7]
    """
    ranges = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        try:
            first, last = int(low), int(high if dash else low)
        except ValueError:
            raise E(f"{where}: radical: expected numbers and ranges such as 0-63 or 1-3,7, got {text!r}") from None
        if first < 0 or last < first:
            raise E(f"{where}: radical: range {part.strip()!r} is empty or negative")
        ranges.append(range(first, last + 1))
    total = sum(len(r) for r in ranges)
    if total > MAX_CLUSTER_HOSTS:
        raise E(f"{where}: radical: {text!r} names {total:,} hosts; liquidsched reads up to {MAX_CLUSTER_HOSTS:,} "
                "in a cluster")
    numbers = [k for r in ranges for k in r]
    if len(set(numbers)) != len(numbers):
        raise E(f"{where}: radical: {text!r} names a host twice")
    return numbers


def _cluster_network(el: ET.Element, zone: ET.Element | None, where: str) -> Network:
    """The network of a ``<cluster>`` as SimGrid lays it out (names included, so both readers
    give the same links and routes): each host's private link, SPLITDUPLEX, is ``ID_link_K_UP``
    from the host and ``ID_link_K_DOWN`` to it (``K`` its radical); without a backbone (a
    crossbar) they meet at one switch, the cluster's router, and a route crosses the two private
    links; with one (``bb_bw``), every route, a host's to itself too, crosses ``ID_backbone``
    from the router to a second switch. Either way every host sends to one switch and receives
    from one, so routes are composed (O(hosts), :mod:`liquidsched.network`).

    Refused, naming the file and SimGrid's reader: private links that are not SPLITDUPLEX,
    loopbacks, limiters, and the fat-tree, torus and dragonfly topologies."""
    cid = _required(el, "id", f"{where}: <cluster>")
    cwhere = f"{where}: <cluster id={cid!r}>"
    for child in el:
        if child.tag != "prop":
            raise E(f"{cwhere}: <{child.tag}> inside a cluster is not read by liquidsched's own parser; "
                    + NEEDS_SIMGRID)
    topology = el.get("topology", "FLAT").upper()
    if topology != "FLAT":
        raise E(f"{cwhere}: topology {topology} is not read by liquidsched's own parser; " + NEEDS_SIMGRID)
    for attr in ("loopback_bw", "loopback_lat", "limiter_link"):
        if el.get(attr) is not None:
            raise E(f"{cwhere}: attribute {attr} is not read by liquidsched's own parser; " + NEEDS_SIMGRID)
    policy = el.get("sharing_policy", SPLITDUPLEX).upper()
    if policy != SPLITDUPLEX:
        raise E(f"{cwhere}: private links of sharing_policy {policy} are not read by liquidsched's own parser "
                "(SPLITDUPLEX, the default, is); " + NEEDS_SIMGRID)
    prefix, suffix = el.get("prefix", ""), el.get("suffix", "")
    radicals = cluster_radicals(_required(el, "radical", cwhere), cwhere)
    bandwidth = parse_bandwidth(_required(el, "bw", cwhere), f"{cwhere}: bw")
    latency = parse_latency(el.get("lat", "0"), f"{cwhere}: lat")
    if bandwidth <= 0:
        raise E(f"{cwhere}: bw must be positive, got {el.get('bw')!r}")
    hosts = [f"{prefix}{k}{suffix}" for k in radicals]
    if len(set(hosts)) != len(hosts):
        raise E(f"{cwhere}: two hosts would have the same name")
    taken = set(hosts)
    router = _fresh(el.get("router_id") or f"{prefix}{cid}_router{suffix}", taken)
    nodes = [Node(h, HOST, origin=f"{cwhere}: host {h!r}") for h in hosts] + [Node(router, SWITCH)]
    links: list[Link] = []
    exit_node = router
    if el.get("bb_bw") is not None:
        exit_node = _fresh(f"{router}:backbone", taken)
        nodes.append(Node(exit_node, SWITCH))
        links.append(_backbone_link(el, cid, router, exit_node, len(hosts), cwhere))
    origin = f"{cwhere}: private link"
    for k, h in zip(radicals, hosts):
        links.append(Link(f"{cid}_link_{k}_UP", h, router, bandwidth, latency, origin=origin))
        links.append(Link(f"{cid}_link_{k}_DOWN", exit_node, h, bandwidth, latency, origin=origin))
    name = (zone.get("id") if zone is not None else None) or cid
    description = next((p.get("value", "") for p in (zone if zone is not None else ()) if p.tag == "prop"
                        and p.get("id") == "description"), "")
    # Every host sends to the router and receives from the backbone's far end (the router
    # itself in a crossbar): shortest paths compose, O(hosts) whatever the cluster's size.
    return Network(nodes, links, ShortestPath(), name=name, description=description)


def _backbone_link(el: ET.Element, cid: str, tail: str, head: str, hosts: int, cwhere: str) -> Link:
    """A cluster's backbone, crossed from ``tail`` to ``head`` by the routes of every host pair:
    SHARED (the default), one resource of its bandwidth; FATPIPE, a resource that never limits
    (:func:`liquidsched.simgrid.values.free_capacity`, as SimGrid's reader lays it)."""

    bandwidth = parse_bandwidth(el.get("bb_bw"), f"{cwhere}: bb_bw")
    if bandwidth <= 0:
        raise E(f"{cwhere}: bb_bw must be positive, got {el.get('bb_bw')!r}")
    latency = parse_latency(el.get("bb_lat", "0"), f"{cwhere}: bb_lat")
    policy = el.get("bb_sharing_policy", SHARED).upper()
    slots = None
    if policy == FATPIPE:
        bandwidth, slots = free_capacity(bandwidth, hosts * hosts)
    elif policy != SHARED:
        raise E(f"{cwhere}: a backbone of bb_sharing_policy {policy} is not read by liquidsched's own parser "
                "(SHARED and FATPIPE are); " + NEEDS_SIMGRID)
    return Link(f"{cid}_backbone", tail, head, bandwidth, latency, slots, origin=f"{cwhere}: backbone")


def _read_routes(elements: list[ET.Element], links: dict, hosts: dict, zwhere: str, routers: set[str] = frozenset()
                 ) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Every route as its (SimGrid link, direction) list, the reverse of symmetrical ones added."""
    routes: dict[tuple[str, str], list[tuple[str, str]]] = {}
    flip = {UP: DOWN, DOWN: UP, NONE: NONE}

    def add(src: str, dst: str, hops: list[tuple[str, str]], rwhere: str) -> None:
        if (src, dst) in routes:
            raise E(f"{rwhere}: a second route from {src} to {dst}")
        routes[(src, dst)] = hops

    for el in elements:
        src, dst = _required(el, "src", f"{zwhere}: <route>"), _required(el, "dst", f"{zwhere}: <route>")
        rwhere = f"{zwhere}: route {src} → {dst}"
        for end in (src, dst):
            if end not in hosts and end not in routers:
                raise E(f"{rwhere}: {end!r} is not a host or a router of the zone (routes join them)")
        hops = []
        for ctn in _children(el, rwhere, ("link_ctn",)):
            lid = _required(ctn, "id", f"{rwhere}: <link_ctn>")
            if lid not in links:
                raise E(f"{rwhere}: unknown link {lid!r}")
            direction = ctn.get("direction", NONE)
            split = links[lid]["policy"] == SPLITDUPLEX
            if split and direction not in (UP, DOWN):
                raise E(f"{rwhere}: link {lid!r} is SPLITDUPLEX: its direction must be UP or DOWN")
            hops.append((lid, direction if split else NONE))
        if not hops:
            raise E(f"{rwhere}: the route crosses no link")
        add(src, dst, hops, rwhere)
        if el.get("symmetrical", "YES").upper() == "YES" and src != dst:
            add(dst, src, [(lid, flip[d]) for lid, d in reversed(hops)], rwhere + " (symmetrical)")
    return routes


class _Ends:
    """Union-find over the ends of links: a named node (host or router) is a string, an unnamed
    end is ``(link, 0)`` (tail of the ``UP`` direction) or ``(link, 1)``."""

    def __init__(self, zwhere: str) -> None:
        self.parent: dict[object, object] = {}
        self.zwhere = zwhere

    def find(self, x: object) -> object:
        parent = self.parent
        up = parent.setdefault(x, x)
        if up == x or parent[up] == up:
            # A root or a child of one: most calls, once paths are compressed.
            return up
        root = up
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def same(self, a: object, b: object) -> bool:
        return self.find(a) == self.find(b)

    def union(self, a: object, b: object, why: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if isinstance(ra, str) and isinstance(rb, str):
            raise E(f"{self.zwhere}: {why}: nodes {ra!r} and {rb!r} would be the same node")
        self._join(ra, rb)

    def _join(self, ra: object, rb: object) -> object:
        """Put root ``ra``'s class under root ``rb`` or the other way round; return the root kept.
        A named node stays the root, so a class is named by the node it contains."""
        if isinstance(ra, str):
            ra, rb = rb, ra
        self.parent[ra] = rb
        return rb


def _walk_routes(ends: _Ends, links: dict, routes: dict) -> tuple[dict, dict]:
    """Join link ends along every route. Returns the ends crossed by each route (the node after
    each hop) and the directions of each link that some route uses."""
    crossed: dict[tuple[str, str], list[object]] = {}
    used: dict[str, set[str]] = {lid: set() for lid in links}
    for (src, dst), hops in routes.items():
        cur: object = src
        after = []
        for lid, direction in hops:
            if direction == NONE:
                # A SHARED link goes away from the end the route is at; a link first met
                # from an unknown end is oriented by that first route.
                direction = DOWN if ends.same(cur, (lid, 1)) and not ends.same(cur, (lid, 0)) else UP
            tail, head = ((lid, 0), (lid, 1)) if direction == UP else ((lid, 1), (lid, 0))
            ends.union(cur, tail, f"route {src} → {dst}, link {lid!r}")
            used[lid].add(direction)
            cur = head
            after.append(head)
        ends.union(cur, dst, f"route {src} → {dst} ends at {dst}")
        crossed[(src, dst)] = after
    return crossed, used


def _assemble(name: str, description: str, hosts: dict[str, str], routers: list[str], links: dict,
              routes: dict, zwhere: str) -> Network:
    ends = _Ends(zwhere)
    for node in list(hosts) + routers:
        ends.find(node)
    for lid, info in links.items():
        props = info["props"]
        for k, key in ((0, "src"), (1, "dst")):
            if key in props:
                if props[key] not in hosts and props[key] not in routers:
                    raise E(f"{zwhere}: link {lid!r}: property {key} names an unknown node {props[key]!r}")
                ends.union((lid, k), props[key], f"link {lid!r}, property {key}")
    # By the names SimGrid gives links, so that both readers find the same loopbacks.
    # A route to or from a router (a gateway's, as SimGrid's dogbone.xml gives) carries no host's
    # traffic in a Full zone; it only tells where its links end.
    to_routers = {key: hops for key, hops in routes.items() if key[0] not in hosts or key[1] not in hosts}
    routes = {key: hops for key, hops in routes.items() if key not in to_routers}
    sg_routes = {key: [_simgrid_name(lid, direction) for lid, direction in hops] for key, hops in routes.items()}
    loopbacks = find_loopbacks(sg_routes, {}, zwhere)
    crossed, used = _walk_routes(ends, links, _routes_to_walk(routes, loopbacks, zwhere) | to_routers)
    crossed = {key: after for key, after in crossed.items() if key not in to_routers}

    names: dict[object, str] = {}
    taken = set(hosts) | set(routers)

    def node_of(x: object) -> str:
        root = ends.find(x)
        if isinstance(root, str):
            return root
        if root not in names:
            k = len(names) + 1
            while f"router-{k}" in taken:
                k += 1
            names[root] = f"router-{k}"
            taken.add(names[root])
        return names[root]

    out_links: list[Link] = []
    shared: list[list[str]] = []
    paths: dict[tuple[str, str], tuple[str, ...]] = {}
    looping = set(loopbacks.values())
    for lid, info in links.items():
        props = info["props"]
        split = info["policy"] == SPLITDUPLEX
        given = {UP: props.get("up"), DOWN: props.get("down")}
        # A loopback is laid below, not here: as a link it would go from its host to itself.
        dirs = [d for d in (UP, DOWN) if (d in used[lid] or given[d] is not None)
                and _simgrid_name(lid, d if split else NONE) not in looping]
        ids = {}
        for d in dirs:
            ids[d] = given[d] or (lid if len(dirs) == 1 else f"{lid}_{d}")
            tail, head = ((lid, 0), (lid, 1)) if d == UP else ((lid, 1), (lid, 0))
            out_links.append(Link(ids[d], node_of(tail), node_of(head), info["capacity"], info["latency"],
                                  _slots_property(props, f"{zwhere}: link {lid!r}"),
                                  origin=f"{zwhere}: link {lid!r} ({d})"))
        if len(dirs) == 2 and info["policy"] == SHARED:
            shared.append([ids[UP], ids[DOWN]])
    # A host's route to itself through one link: the host and a node of its own joined by two
    # links that are one resource, as the SimGrid reader lays it (:func:`loopback_links`).
    loop_links = {name: _loopback_link(lid, direction, links[lid], zwhere)
                  for (s, d), hops in routes.items() if s in loopbacks and s == d
                  for lid, direction in hops for name in [_simgrid_name(lid, direction)]}
    taken_links = {l.id for l in out_links}
    used_nodes = set(hosts) | {n for l in out_links for n in (l.src, l.dst)}
    for host, (node, up, down) in loopback_links(loopbacks, loop_links, routers, used_nodes, taken, taken_links,
                                                 zwhere).items():
        out_links += [up, down]
        shared.append([up.id, down.id])
        paths[(host, host)] = (host, node, host)
    senders = {s for s, _ in routes}
    receivers = {d for _, d in routes}
    nodes = [Node(h, HOST, role or _role(h in senders, h in receivers), origin=f"{zwhere}: host {h!r}")
             for h, role in hosts.items()]
    hosts_linked = {n for l in out_links for n in (l.src, l.dst)} - set(hosts)
    switches = list(dict.fromkeys(routers + [n for l in out_links for n in (l.src, l.dst) if n in hosts_linked]))
    nodes += [Node(s, SWITCH) for s in switches]
    paths |= {key: (key[0], *(node_of(x) for x in after)) for key, after in crossed.items()}
    return Network(nodes, out_links, ExplicitPaths(paths), shared, name=name, description=description)


# -- loopbacks, the same for both readers -------------------------------------------------------------


def find_loopbacks(routes: Mapping[tuple[str, str], Sequence[str]], policies: Mapping[str, str],
                   where: str) -> dict[str, str]:
    """The loopbacks of a platform: each host whose route to itself is one link that no other
    host pair's route crosses, and that link.

    Parameters
    ----------
    routes
        The links of the route of every sender to every receiver, as SimGrid names them (a
        SPLITDUPLEX link's directions being ``NAME_UP`` and ``NAME_DOWN``).
    policies
        The sharing policy of each link (``SHARED`` where not given).
    where
        The file, for errors.

    Raises
    ------
    TopologyError
        when a link that is not FATPIPE is the route to itself of several hosts: their
        transfers to themselves would contend on it, and a loopback of each host cannot say so.
        A FATPIPE link never limits anything but each flow's own rate, so such a link is a
        loopback of each host (the readers lay a copy per host).

    Examples
    --------
    >>> find_loopbacks({("a", "a"): ["lo"], ("a", "b"): ["l"], ("b", "b"): ["l"]}, {}, "p.xml")
    {'a': 'lo'}
    """
    singles = {s: links[0] for (s, d), links in routes.items() if s == d and len(links) == 1}
    elsewhere = {name for (s, d), links in routes.items() if s != d or s not in singles for name in links}
    loopbacks = {h: name for h, name in singles.items() if name not in elsewhere}
    owners: dict[str, list[str]] = {}
    for h, name in loopbacks.items():
        owners.setdefault(name, []).append(h)
    for name, hosts in owners.items():
        if len(hosts) > 1 and policies.get(name, SHARED) != FATPIPE:
            listed = ", ".join(hosts[:3]) + (", ..." if len(hosts) > 3 else "")
            raise E(f"{where}: link {name!r} is the route to itself of {len(hosts)} hosts ({listed}); a loopback "
                    "shared by several hosts is modelled only when FATPIPE")
    return loopbacks


@dataclass(frozen=True)
class LoopbackLink:
    """What a reader knows of a link that is a loopback: its bandwidth and latency, the slots the
    file gives it (liquidsched's ``slots`` property), and from liquidsched's properties the
    nodes its forward direction joins (``src``, ``dst``) and the ids of its two directions
    (``up``, ``down``)."""

    bandwidth_Bps: float
    latency_s: float
    slots: int | None = None
    ends: tuple[str, str] | None = None
    ids: tuple[str | None, str | None] = (None, None)


def loopback_links(loopbacks: Mapping[str, str], links: Mapping[str, LoopbackLink], routers: Iterable[str],
                   used_nodes: Iterable[str], taken_nodes: set[str], taken_links: set[str],
                   where: str) -> dict[str, tuple[str, Link, Link]]:
    """The node and links of each host's loopback: the host and a node of its own joined by two
    links that are one resource (a shared-duplex pair, the caller's to declare), with the
    link's bandwidth and the slots the file gives it (one otherwise: one route crosses it, and
    slots derived from the port rate would run the host's transfers to itself at that rate),
    the link's latency on the way out.

    The node is the router the link's ``src``/``dst`` properties join the host to, as
    liquidsched's export writes them, where no link already ends at that router (``used_nodes``);
    otherwise a fresh ``loopback@HOST``. The links keep the ids of the ``up``/``down``
    properties; otherwise they are ``NAME_UP`` and ``NAME_DOWN`` (``NAME@HOST_UP``... for a
    FATPIPE loopback several hosts share). Every name is fresh: ``taken_nodes`` and
    ``taken_links`` hold the names already given, and get these.

    Returns
    -------
    dict
        host -> (node, link out, link back).
    """
    copies: dict[str, int] = {}
    for name in loopbacks.values():
        copies[name] = copies.get(name, 0) + 1
    routers, used = set(routers), set(used_nodes)
    out = {}
    for host, name in loopbacks.items():
        link, own = links[name], copies[name] == 1
        ends = link.ends
        if own and ends is not None and ends[0] == host and ends[1] in routers and ends[1] not in used:
            node = ends[1]
            taken_nodes.add(node)
        else:
            node = _fresh(f"loopback@{host}", taken_nodes)
        used.add(node)
        base = name if own else f"{name}@{host}"
        given = link.ids if own else (None, None)
        up = _fresh(given[0] or f"{base}_UP", taken_links)
        down = _fresh(given[1] or f"{base}_DOWN", taken_links)
        slots, origin = link.slots or 1, f"{where}: link {name!r}"
        out[host] = (node, Link(up, host, node, link.bandwidth_Bps, link.latency_s, slots, origin=origin),
                     Link(down, node, host, link.bandwidth_Bps, 0.0, slots, origin=origin))
    return out


def _simgrid_name(lid: str, direction: str) -> str:
    """The name SimGrid gives link ``lid`` crossed in ``direction``: a SPLITDUPLEX link's
    directions are two links, ``NAME_UP`` and ``NAME_DOWN``."""
    return lid if direction == NONE else f"{lid}_{direction}"


def _loopback_link(lid: str, direction: str, info: dict, zwhere: str) -> LoopbackLink:
    """What the own parser knows of link ``lid`` (crossed in ``direction``) as a loopback: the
    same as the SimGrid reader (:class:`PlatformHints` of :mod:`liquidsched.simgrid.reading`)."""
    props = info["props"]
    ends = (props["src"], props["dst"]) if "src" in props and "dst" in props else None
    ids: tuple[str | None, str | None] = (props.get("up"), props.get("down"))
    if direction == DOWN:
        # A SPLITDUPLEX link's DOWN direction goes from its dst to its src, under id ``down``.
        ends, ids = (ends[::-1] if ends else None), (props.get("down"), None)
    elif direction == UP:
        ids = (props.get("up"), None)
    return LoopbackLink(info["capacity"], info["latency"], _slots_property(props, f"{zwhere}: link {lid!r}"),
                        ends, ids)


def _routes_to_walk(routes: dict, loopbacks: dict[str, str], zwhere: str) -> dict:
    """The routes the own parser lays out link end by link end: all but the loopbacks'.

    A host's route to itself through one SHARED link that other routes cross too goes out over
    the link and back: what liquidsched's export means by it (a route out and back over a
    shared-duplex pair, one resource that SimGrid must count once, lists it once).

    Raises
    ------
    TopologyError
        for such a route over one direction of a SPLITDUPLEX link, which goes one way only.
    """
    walked = {}
    for (src, dst), hops in routes.items():
        if src == dst and src in loopbacks:
            continue
        if src == dst and len(hops) == 1:
            lid, direction = hops[0]
            if direction != NONE:
                raise E(f"{zwhere}: route {src} → {src} is direction {direction} of SPLITDUPLEX link {lid!r} alone, "
                        "which other routes cross too: liquidsched's own parser cannot lay it out (it would be a "
                        f"link from {src} to itself; SimGrid's reader can)")
            hops = hops * 2
        walked[(src, dst)] = hops
    return walked


def _read_text(path: str | os.PathLike) -> str:
    from ..io.files import read_text

    return read_text(path, E)
