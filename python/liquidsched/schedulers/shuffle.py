"""The synchronous shuffle exchange and the generalised pairwise exchange (paper 002): complete
exchanges in node-contention-free orders, optionally with node ids remapped so that the nodes of
one switch do not converge on the same remote switch.

An order is a list of steps; at step ``j`` node ``x`` sends to ``steps[j][x]`` (or idles, -1),
and over the steps every node meets every other once (:func:`exchange_steps`, built in the core):

* ``shift``: ``x → (x + j) mod p``, ``p - 1`` steps;
* ``xor``: ``x ↔ x XOR j`` for ``j`` below the next power of two; a node idles when its partner
  does not exist, so ``p`` not a power of two costs idle slots;
* ``edge-colour``: a 1-factorisation of the complete graph by the circle method (rounds ``j``
  pair ``x`` with ``(j - x) mod m``, ``m = p`` for odd ``p``, ``m = p - 1`` and the round's fixed
  point paired with node ``p - 1`` for even ``p``): ``p - 1`` rounds for even ``p``, ``p`` for odd,
  as Alg. 3 counts them.

Nodes are the network's hosts switch by switch (:meth:`Network.host_groups`). With ``remap`` the
order is applied to the logical ids of eq. 5, ``⌊x / d1⌋ + (x mod d1)·d2`` (``d1`` hosts on each
of ``d2`` switches), and mapped back with its inverse ``(l mod d2)·d1 + ⌊l / d2⌋``: consecutive
logical ids lie on different switches.

``shuffle`` (Alg. 1) cuts every message into packets and sends packet ``r`` to every partner in
turn before packet ``r + 1``; ``pairwise`` (Alg. 3) sends whole messages, one partner per round.
Both give a :class:`Schedule` whose frames are the steps, a step split where it would put more
transfers on a resource than its slots (as round-robin is), so the validator, the simulator and
the executor take them unchanged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

from .. import _core
from ..errors import InputError
from ..network import Network
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic
from .baselines import stepped_schedule

#: The orders, by name.
PERMUTATIONS = ("shift", "xor", "edge-colour")

#: The packet of ``shuffle`` unless given: small enough that a megabyte message makes 16 rounds.
DEFAULT_PACKET_BYTES = 64 * 1024
#: The most packets a shuffle exchange may cut its traffic into: every packet is a piece of the
#: schedule, held in memory and written to its file, so more is refused before any is made.
MAX_PACKETS = 1_000_000


def check_packets(traffic: Traffic, packet_bytes: int) -> int:
    """The packets of ``packet_bytes`` that ``traffic`` is cut into, refused above
    :data:`MAX_PACKETS` with the packet size that would fit.

    Examples
    --------
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> check_packets(Traffic([Transfer("a", "b", 10), Transfer("a", "c", 3)]), 4)
    4
    """
    import numpy as np

    # Sizes fit int64 (at most 2**53); their sum may not, so it is taken in floating point.
    per_transfer = -(-traffic.sizes.astype(np.int64) // packet_bytes)
    packets = float(np.sum(per_transfer, dtype=np.float64))
    if packets <= MAX_PACKETS:
        return int(np.sum(per_transfer))
    if packets > MAX_PACKETS:
        least = -(-traffic.total_bytes // MAX_PACKETS)
        raise InputError(f"packet_bytes (--packet-bytes) {packet_bytes:,}: the traffic would be cut into "
                         f"{packets:,.0f} packets, more than the {MAX_PACKETS:,} a schedule may hold; give packets of "
                         f"at least {least:,} bytes")
    return int(packets)


#: The frame a switch buffer counts (``buffer_packets``): Ethernet's 1500-byte MTU.
BUFFER_FRAME_BYTES = 1500


def exchange_steps(p: int, permutation: str = "xor", remap: tuple[int, int] | None = None) -> list[list[int]]:
    """The steps of a complete exchange among ``p`` nodes: ``steps[j][x]`` is the node ``x`` sends
    to at step ``j``, -1 when it idles. ``remap=(d1, d2)`` applies eq. 5 (``p = d1·d2``).

    Examples
    --------
    >>> exchange_steps(4, "xor")
    [[1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]]
    >>> exchange_steps(3, "xor")          # p = 3: step 3 pairs 1 and 2, node 0 idles
    [[1, 0, -1], [2, -1, 0], [-1, 2, 1]]
    >>> exchange_steps(4, "xor", remap=(2, 2))   # hosts 0, 1 on one switch, 2, 3 on the other
    [[2, 3, 0, 1], [1, 0, 3, 2], [3, 2, 1, 0]]
    """
    return _core.exchange_steps(p, permutation, remap=remap)


def is_node_contention_free(steps: list[list[int]]) -> bool:
    """Every step sends at most one packet to each node and none to its sender."""
    for step in steps:
        targets = [y for y in step if y != -1]
        if len(set(targets)) != len(targets) or any(y == x for x, y in enumerate(step)):
            return False
    return True


def is_complete(steps: list[list[int]], p: int) -> bool:
    """Every node sends to every other node exactly once over the steps."""
    pairs = [(x, y) for step in steps for x, y in enumerate(step) if y != -1]
    return len(pairs) == p * (p - 1) and len(set(pairs)) == len(pairs) and all(0 <= y < p for _, y in pairs)


def is_switch_contention_free(steps: list[list[int]], d1: int) -> bool:
    """At every step the switches, too, are paired without contention: the hosts of one switch
    send to at most one remote switch, and each switch receives from at most one remote switch
    (hosts numbered switch by switch, ``d1`` per switch). Then each uplink carries the packets of
    one switch pair only, and no two switches converge on a third."""
    for step in steps:
        to: dict[int, set[int]] = defaultdict(set)
        came: dict[int, set[int]] = defaultdict(set)
        for x, y in enumerate(step):
            a, b = x // d1, y // d1
            if y != -1 and a != b:
                to[a].add(b)
                came[b].add(a)
        if any(len(v) > 1 for v in to.values()) or any(len(v) > 1 for v in came.values()):
            return False
    return True


def uplink_packets_per_step(d1: int, d2: int) -> Fraction:
    """ν of eq. 3: the packets one uplink carries per step on average in one direction,
    (p − d1)·d1 / (p − 1)."""
    p = d1 * d2
    return Fraction((p - d1) * d1, p - 1)


def global_window(d1: int, d2: int, buffer_packets: int, directions: int = 2) -> int:
    """W_g of eq. 4: the packets a node may have in flight so that the uplinks' share of them
    fits a buffer of ``buffer_packets``: ⌊B_L / (directions·ν)⌋, at least 1.

    The paper prints eq. 4 with a ceiling and ν alone, but its worked values use the floor
    (⌊30 / 3.2⌋ = 9 for 4 × 4) and, in the experiments, twice ν (⌊45 ÷ (8·8·2/15)⌋ = 5 for
    8 × 2, "with the control packets of the GBN reliable support"). The floor keeps W_g·ν
    within the buffer, which is the rule's aim, so ``directions=2`` and the floor reproduce
    8 × 2 → 5, 8 × 3 → 4 and 8 × 4 → 3 with B_L = 45; the paper's 5 for 6 × 4 is not
    reproduced (⌊4.79⌋ = 4; no single floor or ceiling rule with B_L = 45 gives all four).

    Examples
    --------
    >>> global_window(4, 4, 30, directions=1), global_window(8, 2, 45, directions=1)
    (9, 10)
    >>> [global_window(d1, d2, 45) for d1, d2 in [(8, 2), (8, 3), (6, 4), (8, 4)]]
    [5, 4, 4, 3]
    """
    if d1 < 1 or d2 < 2:
        raise InputError(f"a global window needs hosts behind at least two switches; got {d1} x {d2}")
    if buffer_packets < 1 or directions < 1:
        raise InputError(f"the buffer and the directions must be at least 1; got {buffer_packets} and {directions}")
    return max(1, math.floor(Fraction(buffer_packets) / (directions * uplink_packets_per_step(d1, d2))))


def remap_shape(net: Network) -> tuple[int, int] | None:
    """``(d1, d2)`` when the network's hosts sit ``d1`` on each of ``d2 >= 2`` switches, the
    shape eq. 5 remaps; None otherwise."""
    groups = list(net.host_groups().values())
    sizes = {len(g) for g in groups}
    return (sizes.pop(), len(groups)) if len(sizes) == 1 and len(groups) >= 2 else None


def host_order(net: Network, remap: bool) -> tuple[list[str], tuple[int, int] | None]:
    """The hosts switch by switch (the physical ids), and ``(d1, d2)`` when remapping."""
    groups = list(net.host_groups().values())
    hosts = [h for group in groups for h in group]
    if not remap:
        return hosts, None
    shape = remap_shape(net)
    if shape is None:
        sizes = sorted({len(g) for g in groups})
        raise InputError(f"the remapping needs the same number of hosts on each of at least two switches; "
                         f"{net.name} has {len(groups)} switch{'es' if len(groups) != 1 else ''} with "
                         f"{' or '.join(map(str, sizes))} hosts")
    return hosts, shape


def _order_steps(net: Network, traffic: Traffic, permutation: str, remap: bool) -> tuple[list[list[int]], list[str]]:
    """For each step of the order, the (sender, receiver) host index pairs, and the hosts."""
    if permutation not in PERMUTATIONS:
        raise InputError(f"unknown permutation {permutation!r} (available: {', '.join(PERMUTATIONS)})")
    hosts, shape = host_order(net, remap)
    return exchange_steps(len(hosts), permutation, remap=shape), hosts


def _messages(traffic: Traffic, hosts: list[str]) -> tuple[dict[tuple[int, int], list[int]], list[int]]:
    """The transfers of each (sender, receiver) pair in traffic order, and those to oneself."""
    index = {h: i for i, h in enumerate(hosts)}
    pairs: dict[tuple[int, int], list[int]] = defaultdict(list)
    selves = []
    for k, t in enumerate(traffic):
        if t.src == t.dst:
            selves.append(k)
        else:
            pairs[index[t.src], index[t.dst]].append(k)
    return pairs, selves


def packets_per_step(schedule: Schedule) -> list[Fraction | None]:
    """ν of each resource: the pieces crossing it per step on average, over the steps in which
    a piece crosses the network (a resource shared by both directions of a cable counts both);
    None for a resource no piece crosses."""
    net, traffic = schedule.network, schedule.traffic
    resource_sets = traffic.resource_sets(net)
    steps = schedule.frame_steps()
    crossing = [0] * len(net.resources)
    busy_steps = set()
    for frame, step in zip(schedule.frames, steps):
        for piece in frame:
            t = traffic.index[piece.transfer]
            if traffic[t].src != traffic[t].dst:
                busy_steps.add(step)
                for r in resource_sets[t]:
                    crossing[r] += 1
    return [Fraction(c, len(busy_steps)) if c else None for c in crossing]


def schedule_window(schedule: Schedule) -> int:
    """The global window W_g of a schedule on its network, in steps (a step of the shuffle
    exchange sends one packet to one partner): the least over the resources that declare a buffer B_L of ⌊B_L / (ν·f)⌋, at
    least 1, where ν is the pieces crossing the resource per step (:func:`packets_per_step`)
    and f the frames of :data:`BUFFER_FRAME_BYTES` its largest piece fills (a switch buffers
    frames: a piece of ``b`` bytes takes ⌈b / 1500⌉ of its places).

    On the paper's hierarchy, with packets of one frame, this is eq. 4 with the floor: with
    separate uplink directions ν is eq. 3's, with shared-duplex uplinks (one buffer for both
    directions) it is twice that, the 2ν of the paper's experiments (:func:`global_window`).

    Raises
    ------
    InputError
        when no resource the schedule uses declares a buffer (``buffer_packets``).

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> from liquidsched.traffic import all_to_all
    >>> net = build_topology("hierarchical:d1=8,d2=2,c2=103MB/s,shared_uplinks=true,buffer=45")
    >>> schedule_window(shuffle(net, all_to_all(net, size_bytes=6000), remap=True, packet_bytes=1500))
    5
    >>> schedule_window(shuffle(net, all_to_all(net, size_bytes=6000), remap=True, packet_bytes=3000))
    2
    """
    buffers = schedule.network.resource_buffer_packets
    frames = math.ceil(max((p.bytes for f in schedule.frames for p in f), default=1) / BUFFER_FRAME_BYTES)
    windows = [math.floor(Fraction(b) / (nu * frames)) for b, nu in zip(buffers, packets_per_step(schedule))
               if b is not None and nu is not None]
    if not windows:
        raise InputError("no link the exchange crosses declares a buffer (buffer_packets): "
                         "give the window as a number of steps")
    return max(1, min(windows))


def resolve_window(schedule: Schedule, window: int | str | None) -> int | None:
    """The window a shuffle exchange runs under: a whole number as given, ``"auto"`` from the
    network's buffers (:func:`schedule_window`), ``"none"`` for no window, and None for
    ``"auto"`` where the network declares a buffer and no window where it does not."""
    if window is None:
        return schedule_window(schedule) if any(b is not None for b in schedule.network.resource_buffer_packets) \
            else None
    if window == "none":
        return None
    if window == "auto":
        return schedule_window(schedule)
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise InputError(f"the window must be a whole number of steps >= 1, 'auto' or 'none'; got {window!r}")
    return window


def shuffle(net: Network, traffic: Traffic, permutation: str = "xor", remap: bool = False,
            packet_bytes: int = DEFAULT_PACKET_BYTES, window: int | str | None = None) -> Schedule:
    """The synchronous shuffle exchange (Alg. 1): each message cut into packets of
    ``packet_bytes``; in round ``r`` every node sends its ``r``-th packet to each partner of the
    order in turn. Several transfers between one pair are one message, in traffic order;
    transfers from a host to itself go last.

    ``window`` (Alg. 2's W_g, :func:`resolve_window`) is recorded in ``info.parameters`` for
    the simulator's window policy and the executor's shuffle mode: packets a node may have sent
    beyond those it has received, a whole number, ``"auto"`` (from the network's buffers),
    ``"none"``, or None (auto where the network declares a buffer).

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> from liquidsched.traffic import all_to_all
    >>> net = build_topology("hierarchical:d1=2,d2=2")
    >>> s = shuffle(net, all_to_all(net, size_bytes=100), packet_bytes=40)   # 3 rounds of 3 steps
    >>> s.length, [p.bytes for p in s.frames[-1]]
    (9, [20, 20, 20, 20])
    """
    if not (isinstance(packet_bytes, int) and packet_bytes >= 1):
        raise InputError(f"the packet size must be a whole number of bytes >= 1, got {packet_bytes!r}")
    check_packets(traffic, packet_bytes)
    order, hosts = _order_steps(net, traffic, permutation, remap)
    messages, selves = _messages(traffic, hosts)
    # A message's packets: (transfer, bytes), the transfers of one pair one after the other.
    packets = {pair: [(t, min(packet_bytes, traffic[t].size_bytes - start)) for t in ts
                      for start in range(0, traffic[t].size_bytes, packet_bytes)]
               for pair, ts in messages.items()}
    rounds = max((len(v) for v in packets.values()), default=0)
    steps = []
    for r in range(rounds):
        for step in order:
            sent = [packets[x, y][r] for x, y in enumerate(step) if y != -1 and r < len(packets.get((x, y), ()))]
            if sent:
                steps.append(sent)
    if selves:
        steps.append([(t, traffic[t].size_bytes) for t in selves])
    info = ScheduleInfo("shuffle", parameters={"permutation": permutation, "remap": remap, "packet_bytes": packet_bytes},
                        stats={"steps": len(steps), "rounds": rounds, "order_steps": len(order)})
    schedule = stepped_schedule(net, traffic, steps, info)
    info.parameters["window"] = resolve_window(schedule, window)
    return schedule


def pairwise(net: Network, traffic: Traffic, permutation: str = "edge-colour", remap: bool = False) -> Schedule:
    """The generalised pairwise exchange (Alg. 3): one round per step of the order, each node
    sending its whole message to its partner of the round. Transfers from a host to itself go
    last.

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> from liquidsched.traffic import all_to_all
    >>> net = build_topology("hierarchical:d1=3,d2=2")
    >>> pairwise(net, all_to_all(net)).info.stats["steps"]    # even p = 6: 5 rounds
    5
    """
    order, hosts = _order_steps(net, traffic, permutation, remap)
    messages, selves = _messages(traffic, hosts)
    steps = [[(t, traffic[t].size_bytes) for x, y in enumerate(step) if y != -1 for t in messages.get((x, y), ())]
             for step in order]
    steps = [s for s in steps if s]
    if selves:
        steps.append([(t, traffic[t].size_bytes) for t in selves])
    info = ScheduleInfo("pairwise", parameters={"permutation": permutation, "remap": remap},
                        stats={"steps": len(steps), "order_steps": len(order)})
    return stepped_schedule(net, traffic, steps, info)
