"""Paper 002's cost model of a complete exchange, from per-packet parameters (§2.3).

A message of ``M`` bytes travels as ``k = ⌈M / b⌉`` packets of ``b`` bytes. A node spends
``O_s`` to send a packet, the network moves it in ``L``, the receiver spends ``O_r`` in the
kernel and ``U_r`` in user space, and consecutive packets leave or arrive no closer than the
gap ``g`` (:class:`CostParameters`). Then:

* eq. 1, one message between two nodes without contention:
  ``T_p2p = O_s + (k − 1)g + L + O_r + U_r``;
* eq. 2, the synchronous shuffle exchange of ``p`` nodes on a network without contention:
  ``T_sync = k(p − 1)g + T_w`` with ``T_w = O_s + L − g + O_r + U_r``;
* eq. 6, the generalised pairwise exchange: ``T_gpw = kg(p − 1) + (p − 1)T_w``: every round
  pays the pipeline's fill and drain again.

The paper writes ``k = M / b``; a last short packet still costs a whole gap here (the ceiling).
Eq. 6 counts the ``p − 1`` rounds of even ``p``; for odd ``p`` each node is idle in one of
Alg. 3's ``p`` rounds, so it works in ``p − 1`` of them too and the same formula is used.
:func:`liquidsched.execute.calibrate` measures the parameters by ping-pong.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from .errors import InputError


@dataclass(frozen=True)
class CostParameters:
    """The per-packet costs of paper 002's model, in seconds, for packets of ``packet_bytes``.

    Examples
    --------
    >>> c = CostParameters(send_overhead_s=5e-6, latency_s=100e-6, gap_s=50e-6, recv_overhead_s=5e-6,
    ...                    user_recv_s=1e-6, packet_bytes=1000)
    >>> round(c.pipeline_s * 1e6, 3)    # T_w = O_s + L - g + O_r + U_r
    61.0
    """

    send_overhead_s: float
    latency_s: float
    gap_s: float
    recv_overhead_s: float
    user_recv_s: float
    packet_bytes: int

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise InputError(f"cost parameter {name}: expected a non-negative number, got {value!r}")
        if self.packet_bytes < 1:
            raise InputError(f"cost parameter packet_bytes: expected at least 1, got {self.packet_bytes}")

    @property
    def pipeline_s(self) -> float:
        """T_w = O_s + L − g + O_r + U_r: what a pipeline of packets costs beyond its gaps."""
        return self.send_overhead_s + self.latency_s - self.gap_s + self.recv_overhead_s + self.user_recv_s

    def packets(self, message_bytes: int) -> int:
        """k: the packets of a message (at least one)."""
        if message_bytes < 0:
            raise InputError(f"a message has a non-negative size, got {message_bytes}")
        return max(1, math.ceil(message_bytes / self.packet_bytes))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def point_to_point_s(c: CostParameters, message_bytes: int) -> float:
    """Eq. 1: one message of ``message_bytes`` between two nodes, without contention.

    Examples
    --------
    >>> c = CostParameters(5e-6, 100e-6, 50e-6, 5e-6, 1e-6, 1000)
    >>> round(point_to_point_s(c, 10_000) * 1e6, 3)     # 5 + 9·50 + 100 + 5 + 1
    561.0
    """
    k = c.packets(message_bytes)
    return c.send_overhead_s + (k - 1) * c.gap_s + c.latency_s + c.recv_overhead_s + c.user_recv_s


def _check_nodes(nodes: int) -> None:
    if nodes < 2:
        raise InputError(f"an exchange needs at least two nodes, got {nodes}")


def shuffle_exchange_s(c: CostParameters, nodes: int, message_bytes: int) -> float:
    """Eq. 2: the synchronous shuffle exchange of ``message_bytes`` between every pair of
    ``nodes``, on a network without contention: k(p − 1)g + T_w.

    Examples
    --------
    >>> c = CostParameters(5e-6, 100e-6, 50e-6, 5e-6, 1e-6, 1000)
    >>> round(shuffle_exchange_s(c, 4, 10_000) * 1e3, 3)     # 30 packets in a row, one pipeline
    1.561
    """
    _check_nodes(nodes)
    return c.packets(message_bytes) * (nodes - 1) * c.gap_s + c.pipeline_s


def pairwise_exchange_s(c: CostParameters, nodes: int, message_bytes: int) -> float:
    """Eq. 6: the generalised pairwise exchange: kg(p − 1) + (p − 1)T_w.

    Examples
    --------
    >>> c = CostParameters(5e-6, 100e-6, 50e-6, 5e-6, 1e-6, 1000)
    >>> round(pairwise_exchange_s(c, 4, 10_000) * 1e3, 3)    # three pipelines
    1.683
    """
    _check_nodes(nodes)
    return c.packets(message_bytes) * c.gap_s * (nodes - 1) + (nodes - 1) * c.pipeline_s


def per_node_bandwidth_Bps(nodes: int, message_bytes: int, seconds: float) -> float:
    """What each node sends per second in an exchange of ``message_bytes`` to every other node
    that takes ``seconds``: the paper's per-node bandwidth (Figs. 7–10)."""
    _check_nodes(nodes)
    return (nodes - 1) * message_bytes / seconds


__all__ = ["CostParameters", "pairwise_exchange_s", "per_node_bandwidth_Bps", "point_to_point_s",
           "shuffle_exchange_s"]
