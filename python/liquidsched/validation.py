"""The independent schedule validator.

It shares no code with any scheduler: from the schedule's own network and traffic it recomputes
every path and checks the two rules of the liquid model —

* every transfer's bytes are delivered exactly once (no missing, duplicated or unknown transfer);
* no resource carries more pieces of one timeframe than it has slots (one slot: no resource is
  used twice) —

and reports every violation, naming the frame, the resource, its slots and the transfers on it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .errors import InputError, ScheduleInvalidError, at
from .schedule import Piece, Schedule
from .wording import plural


@dataclass(frozen=True)
class Violation:
    """One broken rule. ``kind`` is one of ``empty-frame``, ``unknown-transfer``, ``bad-bytes``,
    ``duplicated``, ``missing``, ``conflict``; ``frame`` is the frame it is in (from 1), None for
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
    """Refuse a schedule that does not deliver its traffic exactly, naming the first problem.

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
    violations = delivery_violations(schedule)
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
    delivery = delivery_violations(schedule)
    last = len(schedule.frames) + 1
    return sorted(delivery + violations, key=lambda v: (last if v.frame is None else v.frame,
                                                        v.kind in ("empty-frame", "conflict")))


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
