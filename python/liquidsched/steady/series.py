"""The series of operations paper 003 optimises: scatters, personalized all-to-alls, reduces.

A *message type* names what one operation moves: for a scatter the target ``k`` of ``m_k``; for an
all-to-all the pair ``(k, l)`` of ``m_{k,l}``; for a reduce the interval ``(k, m)`` of the partial
result ``v_[k,m]`` over the participants in their given order (the operator is associative, not
commutative: ``v_[k,m] = v_k ⊕ … ⊕ v_m`` in that order). A *task* ``(k, l, m)`` of a reduce computes
``v_[k,m] = v_[k,l] ⊕ v_[l+1,m]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from ..errors import InputError
from .platform import Platform

SCATTER, ALL_TO_ALL, REDUCE = "scatter", "all-to-all", "reduce"
KINDS = (SCATTER, ALL_TO_ALL, REDUCE)

MessageType = str | tuple[str, str] | tuple[int, int]
Task = tuple[int, int, int]


@dataclass(frozen=True)
class Series:
    """A long series of one collective operation on a platform.

    Parameters
    ----------
    kind
        ``"scatter"``, ``"all-to-all"`` or ``"reduce"``.
    participants
        The targets of a scatter, the nodes of an all-to-all, the nodes holding the values of a
        reduce in the operator's order.
    root
        The source of a scatter, the target of a reduce; None for an all-to-all.
    message_bytes
        The size of every message (``δ``), or of each message type (a mapping from the type).
    task_flops
        The work of one reduction task (a reduce only).
    """

    kind: str
    participants: tuple[str, ...]
    root: str | None = None
    message_bytes: int | Mapping = 1
    task_flops: Fraction = Fraction(0)

    def __post_init__(self) -> None:
        from ..units import parse_work

        where = f"series of {self.kind}s"
        if isinstance(self.participants, str):
            raise InputError(f"{where}: participants: expected a list of node names, got the string "
                             f"{self.participants!r} (write [{self.participants!r}] for one node)")
        object.__setattr__(self, "participants", tuple(self.participants))
        if not (isinstance(self.task_flops, (int, Fraction)) and self.task_flops == 0):
            # The one numeric rule; kept exact as given (0.1 flop/s is 1/10, not a double).
            parse_work(self.task_flops, f"{where}: task_flops")
        object.__setattr__(self, "task_flops", Fraction(self.task_flops if not isinstance(self.task_flops, float)
                                                        else repr(self.task_flops)))

    def check(self, platform: Platform) -> None:
        """Refuse a series that does not fit ``platform``, naming what is wrong."""
        from ..units import parse_size

        where = f"series of {self.kind}s"
        if self.kind not in KINDS:
            raise InputError(f"{where}: unknown operation {self.kind!r} (one of {', '.join(KINDS)})")
        for p in self.participants + ((self.root,) if self.root is not None else ()):
            if p not in platform.nodes:
                raise InputError(f"{where}: {p!r} is not a node of platform {platform.name}")
        if len(set(self.participants)) != len(self.participants):
            raise InputError(f"{where}: a participant is listed twice")
        if self.kind == ALL_TO_ALL:
            if self.root is not None:
                raise InputError(f"{where}: an all-to-all has no source or target")
            if len(self.participants) < 2:
                raise InputError(f"{where}: needs at least 2 participants")
        else:
            if self.root is None:
                raise InputError(f"{where}: needs a {'source' if self.kind == SCATTER else 'target'}")
            if not self.participants:
                raise InputError(f"{where}: needs at least one participant")
        if self.kind == SCATTER and self.participants == (self.root,):
            raise InputError(f"{where}: the only target is the source")
        if self.kind == REDUCE:
            if not self.task_flops > 0:
                raise InputError(f"{where}: the work of a task must be positive, got {self.task_flops} flop")
            if not any(not platform.nodes[n].is_router for n in platform.names):
                raise InputError(f"{where}: platform {platform.name} has no processor to compute on")
        for t in self.message_types():
            size = self.size(t)
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise InputError(f"{where}: message {t!r}: expected a positive whole number of bytes, got {size!r}")
            parse_size(size, f"{where}: message {t!r}")

    def message_types(self) -> list:
        """The message types, in a fixed order."""
        if self.kind == SCATTER:
            return [k for k in self.participants if k != self.root]
        if self.kind == ALL_TO_ALL:
            return [(k, l) for k in self.participants for l in self.participants if k != l]
        n = len(self.participants)
        return [(k, m) for k in range(n) for m in range(k, n)]

    def tasks(self) -> list[Task]:
        """The reduction tasks ``(k, l, m)``, ``k ≤ l < m`` (none for other operations)."""
        if self.kind != REDUCE:
            return []
        n = len(self.participants)
        return [(k, l, m) for k in range(n) for m in range(k + 1, n) for l in range(k, m)]

    def size(self, t) -> int:
        """The bytes of one message of type ``t``."""
        if isinstance(self.message_bytes, Mapping):
            if t not in self.message_bytes:
                raise InputError(f"series of {self.kind}s: no size for message {t!r}")
            return self.message_bytes[t]
        return self.message_bytes

    def describe_type(self, t) -> str:
        """A type as people write it: ``m_P3``, ``m_P0,P2``, ``v[0,3]``."""
        if self.kind == SCATTER:
            return f"m_{t}"
        if self.kind == ALL_TO_ALL:
            return f"m_{t[0]},{t[1]}"
        return f"v[{t[0]},{t[1]}]"

    @property
    def operations_word(self) -> str:
        return {SCATTER: "scatters", ALL_TO_ALL: "all-to-alls", REDUCE: "reduces"}[self.kind]
