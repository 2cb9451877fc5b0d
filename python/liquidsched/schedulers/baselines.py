"""Topology-unaware baselines: round-robin (paper 000 §2, paper 001 §1) and random order.

Both first decide *steps* — at each step every sender sends (at most) one transfer — and then
split every step whose transfers congest into congestion-free frames, first fit in sender order:
a transfer that meets a link with no free slot waits for the next frame, as it would on a
cut-through network.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import Sequence

from ..network import Network
from ..relay import Relay
from ..schedule import Piece, Schedule, ScheduleInfo
from ..traffic import Traffic


def split_steps_into_frames(steps: list[list[int]], resource_sets: list[frozenset[int]],
                            slots: Sequence[int] | None = None) -> list[list[int]]:
    """Split each step into frames in which no resource carries more transfers than its slots
    (one each when ``slots`` is None), first fit, keeping the steps in order (a frame never mixes
    two steps).

    Examples
    --------
    >>> split_steps_into_frames([[0, 1, 2]], [frozenset({0}), frozenset({0}), frozenset({0})], slots=[2])
    [[0, 1], [2]]
    """
    frames: list[list[int]] = []
    for step in steps:
        step_frames: list[tuple[list[int], Counter[int]]] = []
        for i in step:
            for members, used in step_frames:
                if all(used[r] < (1 if slots is None else slots[r]) for r in resource_sets[i]):
                    members.append(i)
                    used.update(resource_sets[i])
                    break
            else:
                step_frames.append(([i], Counter(resource_sets[i])))
        frames += [members for members, _ in step_frames]
    return frames


def stepped_schedule(net: Network, traffic: Traffic, steps: list[list[tuple[int, int]]], info: ScheduleInfo,
                     relay: Relay | None = None) -> Schedule:
    """The schedule of ``steps`` of ``(transfer index, bytes)`` (one entry per transfer and step),
    each step split where it would put more transfers on a resource than its slots, recording the
    step of each frame (``info.stats["frame_steps"]``) where a step was split."""
    names, resource_sets, slots = traffic.names, traffic.resource_sets(net), net.resource_slots
    frames, frame_steps = [], []
    for k, step in enumerate(steps):
        size = dict(step)
        for members in split_steps_into_frames([list(size)], resource_sets, slots):
            frames.append([Piece(names[t], size[t]) for t in members])
            frame_steps.append(k)
    if len(frame_steps) != len(steps):
        info.stats["frame_steps"] = frame_steps
    return Schedule(net, traffic, frames, info, relay)


def _endpoints_in_order(net: Network, traffic: Traffic) -> tuple[dict[str, int], dict[str, int]]:
    senders = sorted({t.src for t in traffic}, key=net.node_index)
    receivers = sorted({t.dst for t in traffic}, key=net.node_index)
    return {h: i for i, h in enumerate(senders)}, {h: j for j, h in enumerate(receivers)}


def round_robin_steps(net: Network, traffic: Traffic) -> list[list[int]]:
    """Step ``s`` holds the transfers from sender ``i`` to receiver ``(i + s) mod R`` (senders and
    receivers in network order), each step in sender order; empty steps are dropped."""
    senders, receivers = _endpoints_in_order(net, traffic)
    r = len(receivers)
    steps: dict[int, list[int]] = defaultdict(list)
    for k, t in enumerate(traffic):
        steps[(receivers[t.dst] - senders[t.src]) % r].append(k)
    return [sorted(steps[s], key=lambda k: (senders[traffic[k].src], k)) for s in sorted(steps)]


def random_steps(net: Network, traffic: Traffic, seed: int) -> list[list[int]]:
    """Every sender sends its transfers in a seeded random order; step ``s`` holds each sender's
    ``s``-th transfer, in sender order."""
    senders, _ = _endpoints_in_order(net, traffic)
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
    steps = round_robin_steps(net, traffic)
    frames = split_steps_into_frames(steps, traffic.resource_sets(net), net.resource_slots)
    return Schedule.from_indices(net, traffic, frames, ScheduleInfo("round-robin", stats={"steps": len(steps)}))


def random_order(net: Network, traffic: Traffic, seed: int = 0) -> Schedule:
    """Random order: each sender in a seeded random order; congesting steps are split."""
    steps = random_steps(net, traffic, seed)
    frames = split_steps_into_frames(steps, traffic.resource_sets(net), net.resource_slots)
    return Schedule.from_indices(net, traffic, frames,
                                 ScheduleInfo("random", parameters={"seed": seed}, stats={"steps": len(steps)}))
