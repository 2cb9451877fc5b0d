"""Topology-unaware baselines: round-robin (paper 000 §2, paper 001 §1) and random order.

Both first decide *steps* — at each step every sender sends (at most) one transfer — and then
split every step whose transfers congest into congestion-free frames, first fit in sender order:
a transfer that meets a link with no free slot waits for the next frame, as it would on a
cut-through network.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Sequence

import numpy as np

from ..network import Network
from ..relay import Relay
from ..schedule import Piece, Schedule, ScheduleInfo
from ..traffic import Traffic
from ..transfer_routes import cached_transfer_routes


def split_steps_into_frames(net: Network, traffic: Traffic, steps: list[list[int]]) -> list[list[int]]:
    """Split each step (transfer indices) into frames in which no resource carries more
    transfers than its slots, first fit, keeping the steps in order (a frame never mixes two
    steps); a frame's transfers in step order.

    Examples
    --------
    >>> from liquidsched.topologies import crossbar
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> t = Traffic([Transfer("h1", "h2"), Transfer("h3", "h2"), Transfer("h2", "h1")])
    >>> split_steps_into_frames(crossbar(3), t, [[0, 1, 2]])     # the first two share h2's link
    [[0, 2], [1]]
    """
    return [frame for step in _step_frames(net, traffic, steps) for frame in step]


def frames_of_steps(net: Network, traffic: Traffic, order: np.ndarray, step_starts: np.ndarray) -> np.ndarray:
    """The frame of each entry of ``order`` (transfer indices, step ``s`` being
    ``order[step_starts[s]:step_starts[s + 1]]``), first fit within its step, in the core."""
    routes = cached_transfer_routes(net, traffic)
    frame_at = routes.core.first_fit_by_step(order.astype("<u4").tobytes(), step_starts.astype("<u8").tobytes(),
                                             net.resource_slots)
    return np.frombuffer(frame_at, dtype="<u4").astype(np.int64)


def _flattened(steps: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Steps as one array of their entries and where each step starts (and the last ends)."""
    order = np.fromiter((t for step in steps for t in step), dtype=np.int64)
    return order, np.concatenate([[0], np.cumsum([len(step) for step in steps], dtype=np.int64)])


def stepped_schedule(net: Network, traffic: Traffic, steps: list[list[tuple[int, int]]], info: ScheduleInfo,
                     relay: Relay | None = None) -> Schedule:
    """The schedule of ``steps`` of ``(transfer index, bytes)`` (one entry per transfer and step),
    each step split where it would put more transfers on a resource than its slots, recording the
    step of each frame (``info.stats["frame_steps"]``) where a step was split."""
    names = traffic.names
    frames, frame_steps = [], []
    for k, members_of_step in enumerate(_step_frames(net, traffic, [[t for t, _ in step] for step in steps])):
        size = dict(steps[k])
        for members in members_of_step:
            frames.append([Piece(names[t], size[t]) for t in members])
            frame_steps.append(k)
    if len(frame_steps) != len(steps):
        info.stats["frame_steps"] = frame_steps
    return Schedule(net, traffic, frames, info, relay)


def _step_frames(net: Network, traffic: Traffic, steps: list[list[int]]) -> list[list[list[int]]]:
    """Each step's frames (:func:`split_steps_into_frames`), step by step, each in the order it
    opened (that of its first transfer)."""
    order, starts = _flattened(steps)
    frame_at = frames_of_steps(net, traffic, order, starts).tolist()
    result = []
    for a, b in zip(starts.tolist(), starts[1:].tolist()):
        frames: dict[int, list[int]] = {}
        for t, f in zip(order[a:b].tolist(), frame_at[a:b]):
            frames.setdefault(f, []).append(t)
        result.append(list(frames.values()))
    return result


def _round_robin_order(net: Network, traffic: Traffic) -> tuple[np.ndarray, np.ndarray]:
    """Round-robin's steps as arrays: the transfers by step ``(receiver rank − sender rank) mod
    receivers`` (senders and receivers ranked in network order), in sender order then index
    within a step, and where each non-empty step starts."""
    hosts = traffic.host_table
    src, dst = traffic.src_index.astype(np.int64), traffic.dst_index.astype(np.int64)
    send_rank, receivers = _ranks_in_network_order(net, hosts, src)
    recv_rank, _ = _ranks_in_network_order(net, hosts, dst)
    sender = send_rank[src]
    step = (recv_rank[dst] - sender) % max(receivers, 1)
    order = np.lexsort((np.arange(len(traffic)), sender, step))
    counts = np.bincount(step, minlength=max(receivers, 1))
    starts = np.concatenate([[0], np.cumsum(counts[counts > 0])])
    return order, starts


def _ranks_in_network_order(net: Network, hosts: Sequence[str], used: np.ndarray) -> tuple[np.ndarray, int]:
    """The rank of each host of ``hosts`` among those ``used`` indexes, in network order (-1 for
    the others), and how many are used."""
    present = np.unique(used, return_counts=True)[0].tolist()
    ranked = sorted(present, key=lambda i: net.node_index(hosts[i]))
    rank = np.full(len(hosts), -1, dtype=np.int64)
    rank[ranked] = np.arange(len(ranked))
    return rank, len(ranked)


def round_robin_steps(net: Network, traffic: Traffic) -> list[list[int]]:
    """Step ``s`` holds the transfers from sender ``i`` to receiver ``(i + s) mod R`` (senders and
    receivers in network order), each step in sender order; empty steps are dropped."""
    order, starts = _round_robin_order(net, traffic)
    return [order[a:b].tolist() for a, b in zip(starts.tolist(), starts[1:].tolist())]


def random_steps(net: Network, traffic: Traffic, seed: int) -> list[list[int]]:
    """Every sender sends its transfers in a seeded random order; step ``s`` holds each sender's
    ``s``-th transfer, in sender order."""
    senders = {h: i for i, h in enumerate(sorted({t.src for t in traffic}, key=net.node_index))}
    rng = random.Random(seed)
    queues: dict[str, list[int]] = defaultdict(list)
    for k, t in enumerate(traffic):
        queues[t.src].append(k)
    order = sorted(queues, key=senders.__getitem__)
    for s in order:
        rng.shuffle(queues[s])
    depth = max(len(q) for q in queues.values())
    return [[queues[s][d] for s in order if d < len(queues[s])] for d in range(depth)]


def round_robin(net: Network, traffic: Traffic) -> Schedule:
    """Round-robin: at step s sender i sends to receiver i+s; congesting steps are split.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> round_robin(net, half_all_to_all(net)).length
    7
    """
    order, starts = _round_robin_order(net, traffic)
    frame_at = frames_of_steps(net, traffic, order, starts)
    # Frames in the order they opened, each in step order: a stable sort of the steps' order.
    by_frame = np.argsort(frame_at, kind="stable")
    frame_of = np.empty(len(traffic), dtype=np.int64)
    frame_of[order] = frame_at
    return Schedule.from_frame_of(net, traffic, frame_of, ScheduleInfo("round-robin", stats={"steps": len(starts) - 1}),
                                  order=order[by_frame])


def random_order(net: Network, traffic: Traffic, seed: int = 0) -> Schedule:
    """Random order: each sender in a seeded random order; congesting steps are split."""
    steps = random_steps(net, traffic, seed)
    frames = split_steps_into_frames(net, traffic, steps)
    return Schedule.from_indices(net, traffic, frames,
                                 ScheduleInfo("random", parameters={"seed": seed}, stats={"steps": len(steps)}))
