"""Hypothesis strategies: random small networks with hosts hanging off switches, and traffics."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from liquidsched.network import HOST, SWITCH, Link, Network, Node
from liquidsched.routing import ShortestPath
from liquidsched.traffic import Traffic, Transfer

#: Capacities 1 to 4 times the smallest (the port rate when a host link has it): links with more
#: than one slot.
CAPACITIES = [100.0, 200.0, 300.0, 400.0]


@st.composite
def networks(draw, max_switches: int = 4, max_hosts: int = 6, roles: bool = True, shared: bool = True,
             explicit_slots: bool = True) -> Network:
    """A connected switch graph (a random tree plus extra cables), hosts on random switches;
    capacities all equal or 1–4 times the smallest, some shared-duplex cables, and (with
    ``explicit_slots``) some cables whose slots are set rather than derived."""
    n_sw = draw(st.integers(1, max_switches))
    sws = [f"s{i}" for i in range(n_sw)]
    cables = {(draw(st.integers(0, i - 1)), i) for i in range(1, n_sw)}
    extra = draw(st.lists(st.tuples(st.integers(0, n_sw - 1), st.integers(0, n_sw - 1)), max_size=3))
    cables |= {(min(a, b), max(a, b)) for a, b in extra if a != b}
    uniform = draw(st.booleans())
    cap = lambda: 100.0 if uniform else draw(st.sampled_from(CAPACITIES))  # noqa: E731
    links, shared_pairs = [], []
    for a, b in sorted(cables):
        c = cap()
        k = draw(st.sampled_from([None, None, 1, 2, 3])) if explicit_slots else None
        links += [Link(f"s{a}>s{b}", f"s{a}", f"s{b}", c, slots=k), Link(f"s{b}>s{a}", f"s{b}", f"s{a}", c, slots=k)]
        if shared and draw(st.booleans()):
            shared_pairs.append((f"s{a}>s{b}", f"s{b}>s{a}"))
    n_hosts = draw(st.integers(2, max_hosts))
    nodes = [Node(s, SWITCH) for s in sws]
    for h in range(n_hosts):
        sw = draw(st.sampled_from(sws))
        role = draw(st.sampled_from(["both", "both", "sender", "receiver"])) if roles else "both"
        nodes.append(Node(f"h{h}", HOST, role))
        if role != "receiver":
            links.append(Link(f"h{h}>{sw}", f"h{h}", sw, cap()))
        if role != "sender":
            links.append(Link(f"{sw}>h{h}", sw, f"h{h}", cap()))
    return Network(nodes, links, ShortestPath(), shared_pairs, name="random")


@st.composite
def traffics(draw, net: Network, max_transfers: int = 12, uniform: bool | None = None) -> Traffic:
    pairs = [(s, d) for s in net.senders() for d in net.receivers()]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=max_transfers))
    same = draw(st.booleans()) if uniform is None else uniform
    sizes = [1000 if same else draw(st.integers(1, 5000)) for _ in chosen]
    return Traffic([Transfer(s, d, z) for (s, d), z in zip(chosen, sizes)])


@st.composite
def problems(draw, **kw) -> tuple[Network, Traffic]:
    net = draw(networks(**kw))
    assume(net.senders() and net.receivers())
    return net, draw(traffics(net))
