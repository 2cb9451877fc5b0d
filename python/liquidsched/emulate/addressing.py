"""What an emulated network is made of, before anything is created: one namespace and one
address per node, one veth cable per pair of connected nodes (with an ``ifb`` shaper for a
shared-duplex one), and the routes of every node (:mod:`.routes`).

Every node has one address, ``10.213.I/250.I%250+1`` for node index ``I``: a host on its cable
(where MPI looks for it), a switch on its loopback interface. Names carry the prefix, so that
several emulated networks (a test's, a benchmark's, a user's) live side by side.

Both directions of a shared-duplex cable ``vK`` pass through one ``ifb`` device ``PREFIX-vK``
(:func:`~liquidsched.emulate.shaping.shared_duplex_commands`) in the namespace of one end: the
host's when the other end is a switch (its TCP then holds back its own packets, as on every
host link), else the cable's first end.

A plan also says how the network is modelled: its switches' buffer regime (``deep`` or
``shallow``, or every queue set directly), its time scale (every link ``time_scale`` times slower,
every latency that many times longer) and its hosts' TCP (``tuned`` or ``default``); see
:mod:`.shaping` and :mod:`.namespaces`. The state file records them with the network.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..errors import InputError
from ..io.topology import topology_to_dict
from ..network import Network
from .shaping import base_round_trip_s

DEFAULT_PREFIX = "lsq"
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,7}$")
#: The hosts' TCP settings an emulation offers (:func:`~liquidsched.emulate.namespaces.host_sysctls`).
TCP_SETTINGS = ("tuned", "default")


class Namespaces(dict):
    """Node → namespace name (a plain ``dict`` to its users), carrying the ``time_scale`` of the
    emulated network the namespaces belong to: times measured in them, divided by it, are times
    of the modelled network.

    Examples
    --------
    >>> ns = Namespaces({"h1": "lsq-n0"}, time_scale=3.0)
    >>> ns["h1"], ns.time_scale, time_scale_of(ns), time_scale_of({"h1": "x"}), time_scale_of(None)
    ('lsq-n0', 3.0, 3.0, 1.0, 1.0)
    """

    def __init__(self, mapping: dict[str, str] | None = None, time_scale: float = 1.0) -> None:
        super().__init__(mapping or {})
        self.time_scale = time_scale


def time_scale_of(namespaces: dict[str, str] | None) -> float:
    """The time scale of the emulated network whose ``namespaces`` these are: 1 for None (ranks
    run here) and for a mapping that does not say (a plain ``dict``)."""
    return float(getattr(namespaces, "time_scale", 1.0)) if namespaces else 1.0


@dataclass
class Cable:
    """One veth pair between nodes ``a`` and ``b`` (interface ``name`` on both sides), with the
    model's link for each direction (None: unshaped). A shared-duplex cable is shaped by the
    ``ifb`` device ``ifb`` in the namespace of node ``ifb_at`` (None for the others)."""

    name: str
    a: str
    b: str
    a_to_b: str | None
    b_to_a: str | None
    ifb: str | None = None
    ifb_at: str | None = None


@dataclass
class EmulationPlan:
    """What :func:`~liquidsched.emulate.up` creates for a network: namespaces, addresses,
    cables and routes."""

    prefix: str
    network: Network
    namespace: dict[str, str]
    address: dict[str, str]
    cables: list[Cable]
    #: per node: destination address → (cable name, next node)
    routes: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    #: the switches' buffer regime (:data:`~liquidsched.emulate.shaping.SWITCH_CLASSES`)
    buffers: str = "deep"
    #: every link runs this many times slower, every latency is this many times longer
    time_scale: float = 1.0
    #: the hosts' TCP settings (:data:`TCP_SETTINGS`)
    tcp: str = "tuned"
    #: every link's queue, in bytes or in full-size frames, when set (over the regime and the links' buffers)
    queue_bytes: int | None = None
    queue_packets: int | None = None

    def hosts(self) -> list[str]:
        return self.network.hosts()

    def egress(self, link_id: str) -> tuple[str, str]:
        """The namespace and interface whose egress carries link ``link_id``."""
        link = self.network.links[link_id]
        for c in self.cables:
            if link_id in (c.a_to_b, c.b_to_a):
                return self.namespace[link.src], c.name
        raise KeyError(link_id)

    def shaper(self, link_id: str) -> tuple[str, str]:
        """The namespace and device whose root qdisc shapes link ``link_id``: its egress
        interface, or the ``ifb`` device of its shared-duplex cable."""
        for c in self.cables:
            if link_id in (c.a_to_b, c.b_to_a):
                if c.ifb is not None:
                    return self.namespace[c.ifb_at], c.ifb
                return self.egress(link_id)
        raise KeyError(link_id)

    def ingress(self, link_id: str) -> tuple[str, str]:
        """The namespace and interface where link ``link_id``'s traffic arrives."""
        link = self.network.links[link_id]
        return self.namespace[link.dst], self.egress(link_id)[1]

    def emulated_capacity_Bps(self, link_id: str) -> float:
        """The rate link ``link_id`` is shaped to: its capacity over the time scale."""
        return self.network.links[link_id].capacity_Bps / self.time_scale

    def emulated_latency_s(self, link_id: str) -> float:
        """The delay link ``link_id`` is given: its latency times the time scale."""
        return self.network.links[link_id].latency_s * self.time_scale

    @cached_property
    def base_rtt_s(self) -> float:
        """The emulated network's round trip without queues, in emulated seconds
        (:func:`~liquidsched.emulate.shaping.base_round_trip_s`)."""
        return base_round_trip_s(self.network, self.time_scale)

    def settings(self) -> dict[str, Any]:
        """What the plan models beyond the network: ``buffers``, ``time_scale``, ``tcp``,
        ``queue_bytes`` and ``queue_packets`` (the keywords of :func:`plan_emulation`)."""
        return {"buffers": self.buffers, "time_scale": self.time_scale, "tcp": self.tcp,
                "queue_bytes": self.queue_bytes, "queue_packets": self.queue_packets}

    def to_dict(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "network": topology_to_dict(self.network), "namespace": dict(self.namespace),
                "address": self.address, **self.settings()}


def check_prefix(prefix: str) -> str:
    """``prefix`` when it can name namespaces (``PREFIX-nI`` within the kernel's limits)."""
    if not _PREFIX_RE.match(prefix):
        raise InputError(f"prefix {prefix!r}: expected 1 to 8 lowercase letters and digits, starting with a letter")
    return prefix


def check_time_scale(time_scale: Any) -> float:
    """``time_scale`` as a float, when it is a finite number of at least 1.

    Examples
    --------
    >>> check_time_scale(2), check_time_scale("2.5")
    (2.0, 2.5)
    >>> check_time_scale(0.5)
    Traceback (most recent call last):
    ...
    liquidsched.errors.InputError: time scale 0.5: expected a number of at least 1 (every link runs that many times slower)
    """
    try:
        value = float(time_scale)
    except (TypeError, ValueError):
        value = math.nan
    if not (value >= 1 and math.isfinite(value)):
        raise InputError(f"time scale {time_scale!r}: expected a number of at least 1 "
                         "(every link runs that many times slower)")
    return value
