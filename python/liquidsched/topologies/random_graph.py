"""Seeded random switched networks, for comparing schedules and simulators on many topologies."""

from __future__ import annotations

import random

from ..errors import TopologyError
from ..network import Link, Network
from ..routing import ShortestPath
from ._build import cable, host_nodes, switch_nodes


def random_network(switches: int = 4, hosts: int = 8, extra_cables: int = 2, seed: int = 0,
                   capacity_Bps: float = 12.5e6, heterogeneous: bool = True, shared: bool = True) -> Network:
    """A random tree of ``switches`` switches plus ``extra_cables`` more cables, and ``hosts``
    hosts on random switches, routed by shortest path.

    With ``heterogeneous``, capacities are ``capacity_Bps`` times 1, 2 or 4, latencies 0, 10 µs
    or 100 µs, and some hosts have a slower uplink than downlink. With ``shared``, about half of
    the switch-to-switch cables (at least one, when there is a cable) are shared-duplex: both
    directions on one capacity. So the network mixes shared-duplex cables, cables with two
    independent directions, and lone directed links.

    Examples
    --------
    >>> net = random_network(3, 5, seed=1)
    >>> len(net.hosts()), len(net.switches())
    (5, 3)
    """
    if switches < 1 or hosts < 1 or extra_cables < 0:
        raise TopologyError(f"random: need switches >= 1, hosts >= 1, extra_cables >= 0, got "
                            f"{switches}, {hosts}, {extra_cables}")
    if not capacity_Bps > 0:
        raise TopologyError(f"random: capacity_Bps must be positive, got {capacity_Bps!r}")
    rng = random.Random(seed)

    def capacity() -> float:
        return capacity_Bps * (rng.choice((1, 2, 4)) if heterogeneous else 1)

    def latency() -> float:
        return rng.choice((0.0, 1e-5, 1e-4)) if heterogeneous else 0.0

    sws = [f"s{i}" for i in range(switches)]
    pairs = {(rng.randrange(i), i) for i in range(1, switches)}
    possible = [(a, b) for a in range(switches) for b in range(a + 1, switches) if (a, b) not in pairs]
    pairs |= set(rng.sample(possible, min(extra_cables, len(possible))))
    links: list[Link] = []
    shared_pairs: list[tuple[str, str]] = []
    for k, (a, b) in enumerate(sorted(pairs)):
        links += cable(sws[a], sws[b], capacity(), latency())
        if shared and (k == 0 or rng.random() < 0.5):
            shared_pairs.append((f"{sws[a]}>{sws[b]}", f"{sws[b]}>{sws[a]}"))
    names = [f"h{i}" for i in range(hosts)]
    for h in names:
        sw = rng.choice(sws)
        up = down = capacity()
        if heterogeneous and rng.random() < 0.3:
            up = down / 2
        delay = latency()
        links += [Link(f"{h}>{sw}", h, sw, up, delay), Link(f"{sw}>{h}", sw, h, down, delay)]
    return Network(switch_nodes(sws) + host_nodes(names), links, ShortestPath(), shared_pairs, name=f"random-{seed}",
                   description=f"random: {switches} switches, {hosts} hosts, seed {seed}")
