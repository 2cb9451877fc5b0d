"""Helpers shared by the builders: hosts on a switch, cables."""

from __future__ import annotations

from ..network import HOST, SWITCH, Link, Node


def cable(a: str, b: str, capacity_Bps: float, latency_s: float = 0.0,
          buffer_packets: int | None = None) -> list[Link]:
    """Two opposite directed links ``a>b`` and ``b>a``."""
    return [Link(f"{a}>{b}", a, b, capacity_Bps, latency_s, buffer_packets=buffer_packets),
            Link(f"{b}>{a}", b, a, capacity_Bps, latency_s, buffer_packets=buffer_packets)]


def switches(names: list[str]) -> list[Node]:
    return [Node(n, SWITCH) for n in names]


def hosts(names: list[str], role: str = "both") -> list[Node]:
    return [Node(n, HOST, role) for n in names]


# Aliases for builders whose parameters are named ``switches`` and ``hosts``.
switch_nodes = switches
host_nodes = hosts
