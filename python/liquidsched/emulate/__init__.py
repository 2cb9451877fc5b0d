"""An emulated network on one Linux machine: network namespaces, veth cables, ``tc`` rate limits.

Every node of a :class:`~liquidsched.network.Network` becomes a network namespace named
``PREFIX-nI`` (I its index): hosts run processes there, switches forward. Every pair of
connected nodes gets one veth pair ``vK`` (one interface in each namespace); each directed link
of the model shapes the egress of its end with ``tbf`` at its capacity (under a ``netem`` delay
when it has a latency), with a burst of 0.4 ms of traffic, so that a link never runs more than
about 4 % above its rate over any 10 ms, and a GSO size per cable that the burst passes whole
(:mod:`.shaping`). Capacities are rates of message bytes, as everywhere in liquidsched, and
``tbf`` counts frames with their headers, so the shaped rate is the capacity times
:data:`WIRE_BYTES_PER_PAYLOAD`: a full-size TCP segment carries the capacity in payload. A
link's queue is its switch buffer (``buffer_packets``) in full-size frames where the model
declares one, so that congestion drops packets where the switch would, else 20 ms of traffic.
A host's TCP keeps less data queued below it than its link's queue holds
(``tcp_limit_output_bytes``), as a host's network card pushes back instead of dropping. A
direction the model lacks (a host that only sends has no downlink) is left unshaped: it only
carries acknowledgements.

Both directions of a shared-duplex cable draw on one rate, and ``tc`` on a veth shapes one
direction: at one end of the cable, everything leaving and arriving is redirected through one
``ifb`` device ``PREFIX-vK`` that holds the pair's ``tbf`` and hands each packet back on its
way. A pair whose two directions have different latencies is refused (one shaper delays both).

Every node has one address (a host on its cable, a switch on its loopback interface); static
``/32`` routes, hop by hop, reproduce the model's route of every host pair. A pair without a
route in the model (a receiver answering a sender) goes back the way it came. The emulation
routes by destination, so routes whose next hop depends on the source are refused.

Everything created carries the prefix (the ``ifb`` devices live in the namespaces and go with
them) and is removed by :func:`down`, which also stops the processes left in the namespaces. A
state file in ``/run/liquidsched`` records what ``up`` built, for ``status``, ``run`` and
``down``. Root is required.

The modules: :mod:`.addressing` (namespaces, addresses and cables of a plan), :mod:`.routes`,
:mod:`.shaping` (``tbf``, queues, shared-duplex shapers, the hosts' queue share),
:mod:`.namespaces` (creating and removing it all) and :mod:`.measure` (counters, queue drops,
single flows, concurrent flows, packet arrivals).
"""

from __future__ import annotations

from .addressing import DEFAULT_PREFIX, Cable, EmulationPlan, check_prefix, plan_emulation
from .measure import (arrivals, concurrent_flows, fastest_window, link_counters, queue_drops, send_bytes,
                      single_flow_check, wait_for)
from .namespaces import STATE_DIR, Emulation, build_commands, down, existing, load_state, up
from .routes import host_path
from .shaping import (QUEUE_S, WIRE_BYTES_PER_PAYLOAD, host_queue_share, qdisc_commands, queue_limit,
                      shared_duplex_commands, tbf_sizes)

__all__ = ["DEFAULT_PREFIX", "QUEUE_S", "STATE_DIR", "WIRE_BYTES_PER_PAYLOAD", "Cable", "Emulation",
           "EmulationPlan", "arrivals", "build_commands", "check_prefix", "concurrent_flows", "down", "existing",
           "fastest_window", "host_path", "host_queue_share", "link_counters", "load_state", "plan_emulation",
           "qdisc_commands", "queue_drops", "queue_limit", "send_bytes", "shared_duplex_commands", "single_flow_check",
           "tbf_sizes", "up", "wait_for"]
