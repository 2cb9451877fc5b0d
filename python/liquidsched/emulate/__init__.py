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
direction the model lacks (a host that only sends has no downlink) is left unshaped: it only
carries acknowledgements.

What the emulation models beyond the network is chosen when it is built and recorded with it
(:func:`plan_emulation`, :class:`Emulation`):

* ``buffers``: the queues of links leaving switches, ``deep`` (a Broadcom Jericho-class
  deep-buffer switch: 533 bandwidth-delay products per port) or ``shallow`` (a Broadcom Trident
  II-class commodity switch: 0.75 of one), each link getting that multiple of its own rate times
  the emulated network's round trip, never less than its ``tbf`` burst; a link's own switch
  buffer (``buffer_packets``) wins over the regime, and ``queue_bytes`` or ``queue_packets`` set
  every link's queue directly. Links leaving hosts keep 20 ms of traffic, a host's queue. The
  derivation and its numbers are in :mod:`.shaping`.
* ``time_scale`` N ≥ 1: every link runs at its capacity / N and its latency is N times longer,
  so that the machine's processors are never the limit; **times measured on the emulation,
  divided by N, are the modelled network's times**. ``plan.time_scale``,
  ``plan.namespace.time_scale`` (:class:`Namespaces`, :func:`time_scale_of`) and
  :attr:`Emulation.time_scale` carry it, and the state file records it for ``--prefix`` users.
* ``tcp``: the hosts' TCP, ``tuned`` as a tuned cluster sets it (no slow start after idle,
  socket buffers past the bandwidth-delay product) or the kernel's ``default``
  (:func:`~liquidsched.emulate.namespaces.host_sysctls`). Either way a host's TCP keeps less
  data queued below it than its link's queue holds (``tcp_limit_output_bytes``), as a host's
  network card pushes back instead of dropping.

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
:mod:`.shaping` (``tbf``, queues and buffer regimes, the time scale, shared-duplex shapers, the
hosts' queue share), :mod:`.namespaces` (creating and removing it all, the hosts' TCP settings)
and :mod:`.measure` (counters, queue drops, single flows, concurrent flows, packet arrivals,
TCP's round trip).
"""

from __future__ import annotations

from .addressing import (DEFAULT_PREFIX, TCP_SETTINGS, Cable, EmulationPlan, Namespaces, check_prefix,
                         check_time_scale, time_scale_of)
from .measure import (arrivals, concurrent_flows, fastest_window, link_counters, opposing_flows_check, queue_drops,
                      send_bytes, single_flow_check, tcp_min_rtt, wait_for)
from .namespaces import (STATE_DIR, Emulation, build_commands, congestion_control, down, existing,
                         existing_emulation, host_sysctls, load_state, shown_setting, up)
from .planning import plan_emulation
from .routes import host_path
from .shaping import (BUFFER_REGIMES, MACHINE_RTT_S, QUEUE_S, SWITCH_CLASSES, WIRE_BYTES_PER_PAYLOAD, SwitchClass,
                      base_round_trip_s, host_queue_bytes, host_queue_share, link_queue_bytes, qdisc_commands,
                      queue_limit, regime_queue_bytes, shared_duplex_commands, tbf_sizes)

__all__ = ["existing_emulation", "shown_setting", "BUFFER_REGIMES", "DEFAULT_PREFIX", "MACHINE_RTT_S", "QUEUE_S", "STATE_DIR", "SWITCH_CLASSES",
           "TCP_SETTINGS", "WIRE_BYTES_PER_PAYLOAD", "Cable", "Emulation", "EmulationPlan", "Namespaces",
           "SwitchClass", "arrivals", "base_round_trip_s", "build_commands", "check_prefix", "check_time_scale",
           "concurrent_flows", "congestion_control", "down", "existing", "fastest_window", "host_path",
           "host_queue_bytes", "host_queue_share", "host_sysctls", "link_counters", "link_queue_bytes", "load_state",
           "opposing_flows_check", "plan_emulation", "qdisc_commands", "queue_drops", "queue_limit", "regime_queue_bytes", "send_bytes",
           "shared_duplex_commands", "single_flow_check", "tbf_sizes", "tcp_min_rtt", "time_scale_of", "up", "wait_for"]
