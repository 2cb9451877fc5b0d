"""Relayed exchanges: bytes that reach their destination through other hosts.

The peers built for the all-to-allv of mixture-of-experts layers do not send every byte
straight to its destination. FAST first evens out, over the fast links inside a server, what
each accelerator sends to each other server, then sends between servers on one rail, and
forwards inside the destination server last; DeepEP's hierarchical dispatch crosses the network
on the sender's rail and forwards over NVLink at the destination. A hop of such an exchange is a
*leg*: bytes from one host to another, carrying parts of several of the exchange's transfers.

A relayed schedule is an ordinary :class:`~liquidsched.schedule.Schedule` of its legs (its
``traffic`` holds one transfer per leg, so every validator, model and executor takes it), and a
:class:`Relay` saying what each leg carries: the exchange's own traffic (``original``) and, per
leg, the parts of the original transfers it carries, in the order it sends them (a leg's pieces
carry its bytes in frame order). :func:`liquidsched.validation.validate` then checks, beside the
rules of every schedule, that no host forwards bytes before a frame before has brought them to it
and that every original transfer ends whole at its destination and nowhere else.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from .errors import ScheduleFormatError
from .io.fields import Fields, read_count, read_list, read_mapping
from .traffic import Traffic, Transfer

E = ScheduleFormatError


@dataclass
class Relay:
    """What the legs of a relayed schedule carry.

    Parameters
    ----------
    original
        The exchange's own traffic.
    contents
        For each leg (each transfer of the schedule's traffic, in order), the parts of original
        transfers it carries, as ``(original transfer index, bytes)`` in the order it sends them.
    """

    original: Traffic
    contents: list[list[tuple[int, int]]]

    def to_dict(self, legs: Traffic) -> dict[str, Any]:
        names = self.original.names
        return {"traffic": self.original.to_dict(),
                "contents": {leg: [[names[i], b] for i, b in parts] for leg, parts in zip(legs.names, self.contents)}}

    @classmethod
    def from_dict(cls, doc: Any, legs: Traffic, where: str = "relay") -> Relay:
        """Read the ``relay`` field of a schedule file whose legs are ``legs``. Only the format is
        checked here (names that exist, whole byte counts); whether the legs carry what they say
        is the validator's."""
        f = Fields(doc, where, E, ("traffic", "contents"))
        original = Traffic.from_dict(f.get("traffic", read_mapping), f"{where}.traffic")
        index = original.index
        given = f.get("contents", read_mapping)
        unknown = [leg for leg in given if leg not in legs.index]
        if unknown:
            raise E(f"{where}.contents: {unknown[0]!r} is not a leg of the schedule's traffic")
        contents: list[list[tuple[int, int]]] = []
        for leg in legs.names:
            parts = []
            for k, part in enumerate(read_list(given.get(leg, []), f"{where}.contents.{leg}", E)):
                at = f"{where}.contents.{leg}[{k}]"
                if not isinstance(part, list) or len(part) != 2:
                    raise E(f"{at}: expected [original transfer, bytes], got {part!r}")
                name, b = part
                if name not in index:
                    raise E(f"{at}: {name!r} is not a transfer of the relayed traffic")
                parts.append((index[name], read_count(b, at, E)))
            contents.append(parts)
        return cls(original, contents)


class LegBuilder:
    """Collects the legs of a relayed exchange step by step, and gives the legs' traffic, the
    pieces of each step and the :class:`Relay`.

    A leg is one ordered pair of hosts: everything one host sends another, whatever original
    transfers it carries, so that a step never has two pieces between the same two hosts (they
    would share every resource of the path). Within a step the parts sent between two hosts are
    one piece.

    Examples
    --------
    >>> t = Traffic([Transfer("a", "c", 10), Transfer("b", "c", 4)])
    >>> legs = LegBuilder(t)
    >>> legs.send(0, "a", "b", [(0, 6)]); legs.send(0, "a", "c", [(0, 4)])
    >>> legs.send(1, "b", "c", [(0, 6), (1, 4)])
    >>> traffic, steps, relay = legs.build()
    >>> traffic.names, steps, relay.contents
    (['a->b', 'a->c', 'b->c'], [[(0, 6), (1, 4)], [(2, 10)]], [[(0, 6)], [(0, 4)], [(0, 6), (1, 4)]])
    """

    def __init__(self, original: Traffic) -> None:
        self.original = original
        self._leg: dict[tuple[str, str], int] = {}
        self._ends: list[tuple[str, str]] = []
        #: per step, per leg, the parts it sends then (a leg's content is its steps' in step order)
        self._steps: dict[int, dict[int, list[tuple[int, int]]]] = defaultdict(dict)

    def send(self, step: int, src: str, dst: str, parts: Iterable[tuple[int, int]]) -> None:
        """Send ``parts`` (``(original transfer index, bytes)``; parts without bytes are left
        out) from ``src`` to ``dst`` in ``step``: after what the leg sends in earlier steps, and
        after what it was given for this step before."""
        parts = [(i, b) for i, b in parts if b > 0]
        if not parts:
            return
        leg = self._leg.get((src, dst))
        if leg is None:
            leg = self._leg[src, dst] = len(self._ends)
            self._ends.append((src, dst))
        self._steps[step].setdefault(leg, []).extend(parts)

    def build(self) -> tuple[Traffic, list[list[tuple[int, int]]], Relay]:
        """The legs as a traffic (one transfer per leg, in the order first sent), the pieces
        ``(leg, bytes)`` of every step in step order (steps without a piece left out), and the
        relay."""
        contents: list[list[tuple[int, int]]] = [[] for _ in self._ends]
        steps = []
        for k in sorted(self._steps):
            pieces = []
            for leg, parts in sorted(self._steps[k].items()):
                content = contents[leg]
                for i, b in parts:
                    if content and content[-1][0] == i:
                        content[-1] = (i, content[-1][1] + b)
                    else:
                        content.append((i, b))
                pieces.append((leg, sum(b for _, b in parts)))
            steps.append(pieces)
        sizes = [sum(b for _, b in content) for content in contents]
        traffic = Traffic([Transfer(s, d, z) for (s, d), z in zip(self._ends, sizes)],
                          name=f"{self.original.name} (legs)")
        return traffic, steps, Relay(self.original, contents)
