"""The independent schedule validator.

It shares no code with any scheduler: from the schedule's own network and traffic it recomputes
every path and checks the two rules of the liquid model —

* every transfer's bytes are delivered exactly once (no missing, duplicated or unknown transfer);
* no resource carries more pieces of one timeframe than it has slots (one slot: no resource is
  used twice) —

and, for a relayed schedule (:mod:`liquidsched.relay`), the rules of relaying: every leg carries
as many bytes as it says, a host forwards only bytes that an earlier step brought to it, and
every original transfer ends whole at its destination and nowhere else. It reports every
violation, naming the frame, the resource, its slots and the transfers on it, or the leg, the
host and the original transfer.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError, ScheduleInvalidError, at
from .schedule import Piece, Schedule
from .transfer_routes import cached_transfer_routes, routes_of
from .wording import plural


@dataclass(frozen=True)
class Violation:
    """One broken rule. ``kind`` is one of ``empty-frame``, ``unknown-transfer``, ``bad-bytes``,
    ``duplicated``, ``missing``, ``conflict``, and for a relayed schedule ``relay-content``,
    ``causality``, ``undelivered``; ``frame`` is the frame it is in (from 1), None for
    a rule about a whole transfer."""

    kind: str
    message: str
    frame: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return self.message


def piece_violation(frame: int, piece: Piece, index: dict[str, int]) -> Violation | None:
    """What makes a piece unusable by any model — a transfer the traffic does not have, or no
    bytes — or None."""
    if piece.transfer not in index:
        return Violation("unknown-transfer", f"frame {frame}: unknown transfer {piece.transfer!r}", frame)
    if piece.bytes <= 0:
        return Violation("bad-bytes", f"frame {frame}: transfer {piece.transfer} has {piece.bytes} bytes (expected > 0)",
                         frame)
    return None


def delivery_violations(schedule: Schedule) -> list[Violation]:
    """The violations of the first rule — every transfer's bytes delivered exactly once — without
    looking at a path: unusable pieces and a transfer twice in one frame, in frame order, then
    each transfer missing, short or delivered more than once, in traffic order.

    Every model and every back end needs this rule (a prediction or a run of other bytes than
    the traffic's is of another traffic), while the slot rule is the slot model's only: see
    :func:`require_exact_delivery`.
    """
    traffic = schedule.traffic
    index = traffic.index
    violations: list[Violation] = []
    delivered: dict[int, int] = defaultdict(int)
    frames_of: dict[int, list[int]] = defaultdict(list)
    for f, frame in enumerate(schedule.frames, start=1):
        in_frame: set[int] = set()
        for piece in frame:
            unusable = piece_violation(f, piece, index)
            if unusable is not None:
                violations.append(unusable)
                continue
            i = index[piece.transfer]
            delivered[i] += piece.bytes
            frames_of[i].append(f)
            if i in in_frame:
                violations.append(Violation("duplicated", f"frame {f}: transfer {piece.transfer} appears twice", f))
            in_frame.add(i)
    for i, t in enumerate(traffic):
        got, name = delivered.get(i, 0), traffic.names[i]
        if got == 0:
            violations.append(Violation("missing", f"transfer {name} is missing (never delivered)"))
        elif got < t.size_bytes:
            violations.append(Violation("missing", f"transfer {name} delivers {got} of {t.size_bytes} bytes"))
        elif got > t.size_bytes:
            frames = ", ".join(map(str, frames_of[i]))
            if len(frames_of[i]) == 1:
                violations.append(Violation("bad-bytes", f"transfer {name} delivers {got} of {t.size_bytes} bytes "
                                                         f"(more than its size, frame {frames})"))
            else:
                violations.append(Violation("duplicated", f"transfer {name} is delivered more than once "
                                                          f"({got} of {t.size_bytes} bytes, frames {frames})"))
    return violations


def require_exact_delivery(schedule: Schedule, where: str = "") -> None:
    """Refuse a schedule that does not deliver its traffic exactly, naming the first problem: for
    a relayed schedule, also one whose legs forward bytes before they hold them or leave them
    anywhere but at their destination (:func:`relay_violations`).

    The one check every model of :func:`liquidsched.simulate.simulate` (its SimGrid back end
    included) and every execution (:func:`liquidsched.execute.plan.exchange_plan`) calls, so
    that all refuse the same schedules with the same line.

    Parameters
    ----------
    where
        Where the schedule comes from (its file), put before the message.

    Raises
    ------
    InputError
        ``[where: ]the schedule does not deliver its traffic exactly: <first problem> (and N more ...)``.
    """
    violations = delivery_violations(schedule) + relay_violations(schedule)
    if violations:
        more = (f" (and {plural(len(violations) - 1, 'more problem')}: liquidsched check lists them)"
                if len(violations) > 1 else "")
        raise InputError(at(where, f"the schedule does not deliver its traffic exactly: {violations[0]}{more}"))


def validate(schedule: Schedule) -> list[Violation]:
    """Every violation of ``schedule``, in frame order; empty when it is valid.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> from liquidsched.schedule import Schedule, ScheduleInfo
    >>> net = two_switch()
    >>> t = Traffic([Transfer("t1", "r4"), Transfer("t2", "r5")])
    >>> s = Schedule.from_indices(net, t, [[0, 1]], ScheduleInfo("by hand"))
    >>> [str(v) for v in validate(s)]
    ['frame 1: resource l_ab has 1 slot but carries 2 transfers: t1->r4, t2->r5']
    """
    if schedule.frame_columns is not None:
        return _column_violations(schedule)
    net, traffic = schedule.network, schedule.traffic
    violations: list[Violation] = []
    for f, frame in enumerate(schedule.frames, start=1):
        if not frame:
            # An empty frame costs a barrier (and β) in execution and in every model but the
            # fluid one: a schedule that has one is not what its frame count says.
            violations.append(Violation("empty-frame", f"frame {f} is empty", f))
        users: dict[int, list[str]] = defaultdict(list)
        in_frame: set[int] = set()
        for piece in frame:
            # Unusable pieces and repeats are the delivery rule's (delivery_violations) to report.
            i = traffic.index.get(piece.transfer)
            if i is None or piece.bytes <= 0 or i in in_frame:
                continue
            in_frame.add(i)
            t = traffic[i]
            for r in net.path_resources(t.src, t.dst):
                users[r].append(piece.transfer)
        for r in sorted(users):
            slots = net.resource_slots[r]
            if len(users[r]) > slots:
                violations.append(Violation(
                    "conflict",
                    f"frame {f}: resource {net.resources[r]} has {plural(slots, 'slot')} but carries "
                    f"{len(users[r])} transfers: {', '.join(users[r])}", f))
    # Frame by frame, a frame's pieces before its conflicts, then the transfers (sorted is stable).
    delivery = delivery_violations(schedule) + relay_violations(schedule)
    last = len(schedule.frames) + 1
    return sorted(delivery + violations, key=lambda v: (last if v.frame is None else v.frame,
                                                        v.kind in ("empty-frame", "conflict")))


def _column_violations(schedule: Schedule) -> list[Violation]:
    """The violations of a schedule held as a column: empty frames, and resources that carry
    more transfers of a frame than their slots, in frame order."""
    net, traffic, columns = schedule.network, schedule.traffic, schedule.frame_columns
    routes = cached_transfer_routes(net, traffic)
    frame_of = columns.frame_of.astype("<u4").tobytes()
    overloaded = routes.core.overloads(frame_of, net.resource_slots)
    found: dict[int, list[Violation]] = {f: [Violation("empty-frame", f"frame {f + 1} is empty", f + 1)]
                                         for f in np.flatnonzero(np.diff(columns.starts) == 0).tolist()}
    for f, r, n in overloaded:
        members = columns.order[columns.starts[f]:columns.starts[f + 1]].tolist()
        names = [traffic.names[t] for t in members if r in routes_of(routes, t)]
        slots = net.resource_slots[r]
        found.setdefault(f, []).append(Violation(
            "conflict", f"frame {f + 1}: resource {net.resources[r]} has {plural(slots, 'slot')} but carries "
                        f"{n} transfers: {', '.join(names)}", f + 1))
    return [v for f in sorted(found) for v in found[f]]


def relay_violations(schedule: Schedule) -> list[Violation]:
    """The violations of the rules of relaying (none when the schedule is not relayed): a leg's
    parts that do not add up to its size or name no original transfer, bytes forwarded by a host
    that no earlier step brought to it (a leg's pieces carry its parts in frame order; what
    arrives in a step can leave in the next), and original bytes that end anywhere but whole
    at their destination.

    Examples
    --------
    >>> from liquidsched.topologies import crossbar
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> from liquidsched.schedule import Piece, Schedule, ScheduleInfo
    >>> from liquidsched.relay import Relay
    >>> original = Traffic([Transfer("h0", "h2", 10)])
    >>> legs = Traffic([Transfer("h0", "h1", 10), Transfer("h1", "h2", 10)])
    >>> frames = [[Piece("h0->h1", 10), Piece("h1->h2", 10)]]
    >>> s = Schedule(crossbar(3), legs, frames, ScheduleInfo("by hand"), Relay(original, [[(0, 10)], [(0, 10)]]))
    >>> [str(v) for v in relay_violations(s)]
    ['frame 1: leg h1->h2 forwards 10 bytes of h0->h2 that h1 does not hold (it holds 0)', '10 bytes of h0->h2 end at h1, not at its destination h2']
    """
    relay = schedule.relay
    if relay is None:
        return []
    legs, original = schedule.traffic, relay.original
    if len(relay.contents) != len(legs):
        return [Violation("relay-content", f"the relay describes {len(relay.contents)} legs, the schedule has "
                                           f"{len(legs)}")]
    violations = []
    for leg, parts in enumerate(relay.contents):
        name = legs.names[leg]
        if any(not 0 <= i < len(original) or b <= 0 for i, b in parts):
            violations.append(Violation("relay-content", f"leg {name}: a part names no original transfer or has "
                                                         f"no bytes"))
        elif sum(b for _, b in parts) != legs[leg].size_bytes:
            violations.append(Violation("relay-content", f"leg {name}: its parts carry {sum(b for _, b in parts)} "
                                                         f"bytes, the leg {legs[leg].size_bytes}"))
    return violations or _causality_violations(schedule)


def _causality_violations(schedule: Schedule) -> list[Violation]:
    """Walk the frames step by step, holding what each host has of each original transfer."""
    relay, legs = schedule.relay, schedule.traffic
    original = relay.original
    held: dict[tuple[str, int], int] = defaultdict(int)
    for c, t in enumerate(original):
        held[t.src, c] += t.size_bytes
    cursor = [[0, 0] for _ in legs]
    violations = []
    arriving: list[tuple[str, int, int]] = []
    steps = schedule.frame_steps()
    for f, (frame, step) in enumerate(zip(schedule.frames, steps), start=1):
        if f > 1 and step != steps[f - 2]:
            for host, c, b in arriving:
                held[host, c] += b
            arriving = []
        for piece in frame:
            leg = legs.index.get(piece.transfer)
            if leg is None or piece.bytes <= 0:
                continue
            src, dst = legs[leg].src, legs[leg].dst
            parts, at = relay.contents[leg], cursor[leg]
            amount = piece.bytes
            while amount > 0 and at[0] < len(parts):
                c, b = parts[at[0]]
                take = min(amount, b - at[1])
                if held[src, c] < take:
                    violations.append(Violation(
                        "causality", f"frame {f}: leg {piece.transfer} forwards {take} bytes of "
                                     f"{original.names[c]} that {src} does not hold (it holds {held[src, c]})", f))
                held[src, c] = max(0, held[src, c] - take)
                arriving.append((dst, c, take))
                amount -= take
                at[1] += take
                if at[1] == b:
                    at[0], at[1] = at[0] + 1, 0
    for host, c, b in arriving:
        held[host, c] += b
    for (host, c), b in sorted(held.items(), key=lambda item: (item[0][1], item[0][0])):
        t = original[c]
        if host != t.dst and b:
            violations.append(Violation("undelivered", f"{b} bytes of {original.names[c]} end at {host}, not at its "
                                                       f"destination {t.dst}"))
    for c, t in enumerate(original):
        if held.get((t.dst, c), 0) < t.size_bytes and t.src != t.dst:
            violations.append(Violation("undelivered", f"{original.names[c]} reaches its destination with "
                                                       f"{held.get((t.dst, c), 0)} of its {t.size_bytes} bytes"))
    return violations


def check(schedule: Schedule) -> Schedule:
    """Return ``schedule`` if it is valid.

    Raises
    ------
    ScheduleInvalidError
        with every violation.
    """
    violations = validate(schedule)
    if violations:
        raise ScheduleInvalidError(violations)
    return schedule
