"""What the schedulers of ML clusters share: the servers of a network and the traffic between them.

An ML cluster's hosts are accelerators, ``G`` to a server, joined inside by a fast fabric (the
rail-optimised and two-tier builders name them ``s{i}.g{g}``). FAST and the hierarchical dispatch
of DeepEP plan for that shape: this module says which hosts make a server and sorts an exchange's
transfers into those inside a server and those between two.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from ..bounds import frame_lower_bound
from ..errors import InputError, TrafficError
from ..network import Network
from ..relay import LegBuilder
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic
from .baselines import stepped_schedule

#: What an accelerator holds for another server: ``[transfer index, bytes]`` entries, in the
#: order it sends them.
Holding = list[list[int]]

#: An accelerator's host name as the ML cluster builders give it: server, then ``.g`` and its index.
ACCELERATOR_NAME = re.compile(r"^(?P<server>.+)\.g(?P<gpu>\d+)$")


def server_groups(net: Network, gpus: int | None = None, algorithm: str = "this algorithm") -> list[list[str]]:
    """The servers of ``net``, each the list of its accelerators (hosts) by local index.

    With ``gpus`` the hosts in network order are cut into servers of ``gpus`` each; without, the
    host names say it (``s3.g1`` is accelerator 1 of server ``s3``). Every server must have the
    same number of accelerators.

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> server_groups(build_topology("two-tier:servers=2,gpus=2,servers_per_leaf=2"))
    [['s0.g0', 's0.g1'], ['s1.g0', 's1.g1']]
    >>> server_groups(build_topology("crossbar:n=4"), gpus=2)
    [['h1', 'h2'], ['h3', 'h4']]
    """
    hosts = list(net.hosts())
    if gpus is not None:
        if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1 or len(hosts) % gpus:
            raise InputError(f"{algorithm}: gpus must be a whole number of accelerators per server that divides the "
                             f"{len(hosts)} hosts, got {gpus!r}")
        return [hosts[i:i + gpus] for i in range(0, len(hosts), gpus)]
    by_server: dict[str, dict[int, str]] = defaultdict(dict)
    for h in hosts:
        m = ACCELERATOR_NAME.match(h)
        if m is None:
            raise InputError(f"{algorithm}: host {h!r} is not named as an accelerator of a server (server.gN); give "
                             "gpus=G to take every G consecutive hosts in network order as a server")
        by_server[m["server"]][int(m["gpu"])] = h
    sizes = {len(g) for g in by_server.values()}
    if len(sizes) != 1:
        raise InputError(f"{algorithm}: servers have different numbers of accelerators ({sorted(sizes)}); it plans "
                         "for servers of one size")
    return [[group[g] for g in sorted(group)] for group in by_server.values()]


@dataclass
class ServerTraffic:
    """An exchange sorted by servers.

    ``place`` gives each host's (server, local index); ``inside`` lists the transfers between two
    accelerators of one server, ``between[s, t]`` those from server ``s`` to server ``t`` by
    source accelerator (``between[s, t][g]``: indices of transfers from accelerator ``g``, by
    destination accelerator's local index, then as given). Transfers from a host to itself are in
    ``local``.
    """

    servers: list[list[str]]
    place: dict[str, tuple[int, int]]
    inside: list[int] = field(default_factory=list)
    local: list[int] = field(default_factory=list)
    between: dict[tuple[int, int], list[list[int]]] = field(default_factory=dict)

    @property
    def gpus(self) -> int:
        return len(self.servers[0])


def sort_by_servers(traffic: Traffic, servers: list[list[str]], algorithm: str = "this algorithm") -> ServerTraffic:
    """``traffic`` sorted into transfers inside a server and between two (:class:`ServerTraffic`).

    Examples
    --------
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> t = Traffic([Transfer("a", "b", 1), Transfer("a", "d", 2), Transfer("b", "c", 3)])
    >>> st = sort_by_servers(t, [["a", "b"], ["c", "d"]])
    >>> st.inside, st.between
    ([0], {(0, 1): [[1], [2]]})
    """
    place = {h: (s, g) for s, group in enumerate(servers) for g, h in enumerate(group)}
    out = ServerTraffic(servers, place)
    gpus = len(servers[0])
    keyed: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for i, t in enumerate(traffic):
        if t.src not in place or t.dst not in place:
            raise InputError(f"{algorithm}: transfer {traffic.names[i]} has a host in no server")
        (s, g), (u, j) = place[t.src], place[t.dst]
        if t.src == t.dst:
            out.local.append(i)
        elif s == u:
            out.inside.append(i)
        else:
            keyed[s, u].append((g * gpus + j, i))
    for pair, items in keyed.items():
        rows: list[list[int]] = [[] for _ in range(gpus)]
        for key, i in sorted(items):
            rows[key // gpus].append(i)
        out.between[pair] = rows
    return out


def servers_and_legs(net: Network, traffic: Traffic, gpus: int | None,
                     algorithm: str) -> tuple[ServerTraffic, LegBuilder]:
    """What every relaying scheduler starts from: ``traffic`` sorted by the servers of ``net``
    (:func:`server_groups`, :func:`sort_by_servers`) and an empty :class:`LegBuilder` for it."""
    return sort_by_servers(traffic, server_groups(net, gpus, algorithm), algorithm), LegBuilder(traffic)


def send_inside(legs: LegBuilder, traffic: Traffic, by_server: ServerTraffic, first: int, parts: int = 1) -> None:
    """Send every transfer inside a server (a host's own to itself too) straight to its
    destination, in ``parts`` equal parts from step ``first`` on."""
    for i in by_server.local + by_server.inside:
        t = traffic[i]
        for k, part in enumerate(equal_parts(t.size_bytes, parts)):
            legs.send(first + k, t.src, t.dst, [(i, part)])


def equal_parts(size: int, parts: int) -> list[int]:
    """``size`` bytes in ``parts`` parts as equal as whole bytes allow, the larger first (no
    empty part: fewer parts than ``parts`` when ``size`` is smaller).

    Examples
    --------
    >>> equal_parts(10, 4), equal_parts(2, 4)
    ([3, 3, 2, 2], [1, 1])
    """
    n = max(1, min(parts, size))
    q, r = divmod(size, n)
    return [q + 1] * r + [q] * (n - r)


def balance_servers(legs: LegBuilder, traffic: Traffic,
                    by_server: ServerTraffic) -> tuple[dict[tuple[int, int], list[Holding]], dict[tuple[int, int], int], int]:
    """FAST's balancing (step 0 of ``legs``): for every pair of servers ``(s, t)``, what each
    accelerator of ``s`` then holds for ``t`` (``[transfer, bytes]`` entries), the target
    ``⌈bytes from s to t / G⌉`` that none holds more than, and the bytes moved in all."""
    hold: dict[tuple[int, int], list[Holding]] = {}
    loads: dict[tuple[int, int], int] = {}
    moved = 0
    for (s, t), rows in by_server.between.items():
        holding = [[[i, traffic[i].size_bytes] for i in row] for row in rows]
        target = -(-sum(b for row in holding for _, b in row) // by_server.gpus)
        moved += _balance(legs, by_server.servers[s], holding, target)
        hold[s, t] = holding
        loads[s, t] = target
    return hold, loads, moved


def _balance(legs: LegBuilder, server: list[str], holding: list[Holding], target: int) -> int:
    """Move, first fit, what accelerators above ``target`` hold beyond it to those below it (step
    0); the bytes moved."""
    sums = [sum(b for _, b in row) for row in holding]
    moved = 0
    for big in range(len(holding)):
        for small in range(len(holding)):
            if sums[big] <= target:
                break
            room = target - sums[small]
            if room <= 0:
                continue
            parts = take_bytes(holding[big], min(sums[big] - target, room))
            legs.send(0, server[big], server[small], parts)
            holding[small].extend([i, b] for i, b in parts)
            n = sum(b for _, b in parts)
            sums[big] -= n
            sums[small] += n
            moved += n
    return moved


def take_bytes(held: Holding, amount: int) -> list[tuple[int, int]]:
    """Up to ``amount`` bytes from the front of ``held`` (``[transfer, bytes]`` entries, consumed)."""
    out = []
    while amount > 0 and held:
        i, b = held[0]
        n = min(amount, b)
        out.append((i, n))
        amount -= n
        if n == b:
            held.pop(0)
        else:
            held[0][1] = b - n
    return out


def relayed_schedule(net: Network, legs: LegBuilder, info: ScheduleInfo) -> Schedule:
    """The schedule of ``legs``, its steps cut into frames the slots allow, with the legs' frame
    bound (the relayed traffic's would count frames of other transfers)."""
    leg_traffic, steps, relay = legs.build()
    if len(leg_traffic):
        try:
            leg_traffic.check(net)
        except TrafficError as e:
            raise InputError(f"{info.algorithm}: a host it relays through cannot reach the next one ({e}); it needs "
                             "every accelerator of a server to reach the others and those of its rail") from None
    schedule = stepped_schedule(net, leg_traffic, steps, info, relay)
    info.lower_bound = frame_lower_bound(leg_traffic.resource_sets(net), net.resource_slots)
    return schedule
