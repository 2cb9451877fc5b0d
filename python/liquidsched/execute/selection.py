"""Choose, per message size, the way of running an exchange that was measured fastest.

What wins when run is measured, not assumed: ``liquidsched tune`` runs every candidate — the
MPI library's own algorithms and liquidsched's modes — at each size on a network and writes a
**selection table**; ``run --selection TABLE``, the mpi4py API and the interposition library
read it and pick, for a communicator of the table's size, the mode measured fastest at the
nearest measured size (below the smallest, the library's own).

The rule (:func:`best_mode`): the lowest median time wins, except that the library's own
collective is kept unless a liquidsched mode beats the best library mode by more than
:data:`MARGIN` of its median (a schedule costs planning and carries risk; a tie is no reason to
take it). So the choice is never slower than the library by more than the measurement's own
noise.

A table says what it was measured on (:func:`measured_on`): the network (its name and a
fingerprint of its nodes, links and routes), the ranks, the MPI library, where the ranks ran
(emulated, declared) and the emulation's buffers and time scale. A table measured on another
network, another number of ranks or another MPI library is refused with a message saying
which (:meth:`SelectionTable.check`), since its ranking says nothing about this one.

Table format (JSON), ``format`` :data:`FORMAT`::

    {"format": "liquidsched-selection/1",
     "measured_on": {"topology": ..., "fingerprint": ..., "ranks": 8, "hosts": [...],
                     "mpi_library": ..., "network": "emulated", "buffers": "deep", "time_scale": 1,
                     "pace_headroom": 0.02},
     "margin": 0.01,
     "sizes": [{"size_bytes": 1024, "best": "alltoallv",
                "modes": {"alltoallv": {"median_s": ..., "min_s": ..., "max_s": ..., "times_s": [...]}, ...}},
               ...]}
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..fingerprint import network_fingerprint
from ..network import Network
from .plan import library_mode_env

FORMAT = "liquidsched-selection/1"
#: How much faster than the best library mode a liquidsched mode must be to be chosen.
MARGIN = 0.01
#: The environment variable that names a selection table for the mpi4py API and the
#: interposition library.
SELECTION_VARIABLE = "LIQUIDSCHED_SELECTION"


def measured_on(net: Network, hosts: Sequence[str], mpi_library: str, network: str,
                buffers: str | None = None, time_scale: float = 1.0, traffic: str = "",
                pace_headroom: float | None = None) -> dict[str, Any]:
    """The ``measured_on`` block of a table (``pace_headroom``: the paced mode's, to run it with)."""
    return {"topology": net.name, "fingerprint": network_fingerprint(net), "ranks": len(hosts),
            "hosts": list(hosts), "mpi_library": mpi_library, "network": network, "buffers": buffers,
            "time_scale": time_scale, "traffic": traffic, "pace_headroom": pace_headroom}


def best_mode(medians: Mapping[str, float], margin: float = MARGIN) -> str:
    """The mode to run given each candidate's median time: the fastest, unless the best of the
    library's own modes is within ``margin`` of it (then that one).

    Examples
    --------
    >>> best_mode({"alltoallv": 1.00, "paced": 0.995, "frames": 1.2})
    'alltoallv'
    >>> best_mode({"alltoallv": 1.00, "paced": 0.90})
    'paced'
    >>> best_mode({"paced": 0.9, "frames": 0.8})
    'frames'
    """
    if not medians:
        raise InputError("no mode was measured")
    fastest = min(medians, key=lambda m: (medians[m], m))
    own = fastest_library_mode(medians)
    if own is not None and medians[own] <= medians[fastest] * (1 + margin):
        return own
    return fastest


def fastest_library_mode(medians: Mapping[str, float]) -> str | None:
    """The MPI library's own mode of least median time (by name on a tie), None if none was
    measured.

    >>> fastest_library_mode({"alltoallv": 2.0, "alltoall-brucks": 1.5, "paced": 1.0})
    'alltoall-brucks'
    """
    library = [m for m in medians if library_mode_env(m) is not None]
    return min(library, key=lambda m: (medians[m], m)) if library else None


@dataclass(frozen=True)
class Choice:
    """A mode chosen for a size, and why."""

    mode: str
    #: the measured size the choice comes from
    measured_size_bytes: int | None
    reason: str


@dataclass
class SelectionTable:
    """Measured times per size and mode, and the mode chosen at each size."""

    measured_on: dict[str, Any]
    sizes: list[dict[str, Any]] = field(default_factory=list)
    margin: float = MARGIN

    @classmethod
    def from_sweep(cls, sweep: dict[str, Any], about: dict[str, Any], margin: float = MARGIN) -> SelectionTable:
        """A table from a sizes sweep's document (:meth:`~liquidsched.execute.sizes.SizesResult.to_dict`):
        at each size, every verified mode's statistics and the best."""
        rows = []
        for point in sweep["sizes"]:
            modes = {m["mode"]: {k: m[k] for k in ("median_s", "min_s", "max_s", "mean_s", "std_s", "times_s",
                                                    "ratio_to_bound")}
                     for m in point["modes"] if m.get("verified") is not False}
            if modes:
                rows.append({"size_bytes": point["size_bytes"], "modes": modes,
                             "best": best_mode({m: v["median_s"] for m, v in modes.items()}, margin)})
        return cls(about, rows, margin)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "measured_on": self.measured_on, "margin": self.margin, "sizes": self.sizes}

    @classmethod
    def load(cls, path: str | os.PathLike) -> SelectionTable:
        """Read a table, refusing one that is not (a line naming the file and what is wrong)."""
        from ..io.files import read_document

        where = str(path)
        # A table is JSON whatever its name; duplicate keys refused as in every document.
        return cls.from_dict(read_document(path, InputError, json_only=True), where)

    @classmethod
    def from_dict(cls, doc: Any, where: str = "selection table") -> SelectionTable:
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise InputError(f"{where}: not a selection table (expected \"format\": \"{FORMAT}\"; "
                             "liquidsched tune writes one)")
        about, rows, margin = doc.get("measured_on"), doc.get("sizes"), doc.get("margin", MARGIN)
        if not isinstance(about, dict) or not isinstance(about.get("ranks"), int):
            raise InputError(f"{where}: measured_on must say the ranks it was measured with")
        if not isinstance(rows, list) or not rows:
            raise InputError(f"{where}: sizes must be a non-empty list")
        for k, row in enumerate(rows):
            size, modes, best = (row.get(key) if isinstance(row, dict) else None for key in ("size_bytes", "modes", "best"))
            if (not isinstance(size, int) or isinstance(size, bool) or size < 0 or not isinstance(modes, dict)
                    or not isinstance(best, str) or best not in modes):
                raise InputError(f"{where}: sizes[{k}] needs size_bytes (bytes), modes and a best among them")
        if not isinstance(margin, (int, float)) or not (0 <= margin < 1):
            raise InputError(f"{where}: margin must be a fraction in [0, 1)")
        return cls(about, sorted(rows, key=lambda r: r["size_bytes"]), float(margin))

    def check(self, ranks: int, fingerprint: str | None = None, mpi_library: str | None = None) -> None:
        """Refuse the table where it does not apply: another number of ranks, another network (by
        fingerprint) or another MPI library (by its first line)."""
        about = self.measured_on
        if about["ranks"] != ranks:
            raise InputError(f"the selection table was measured with {about['ranks']} ranks, not {ranks}: "
                             "liquidsched tune measures one for this communicator")
        if fingerprint is not None and about.get("fingerprint") not in (None, fingerprint):
            raise InputError(f"the selection table was measured on another network ({about.get('topology')}, "
                             f"fingerprint {about.get('fingerprint')}, not {fingerprint}): its ranking says nothing "
                             "about this one")
        if mpi_library is not None and about.get("mpi_library") and \
                about["mpi_library"].splitlines()[0].strip() != mpi_library.splitlines()[0].strip():
            raise InputError(f"the selection table was measured with {about['mpi_library']!r}, not "
                             f"{mpi_library.splitlines()[0].strip()!r}")

    def choose(self, size_bytes: float) -> Choice:
        """The mode for messages of ``size_bytes`` (mean bytes per message): the best of the
        measured size nearest on a logarithmic scale. Halfway between two measured sizes, the
        MPI library's own collective is kept if either size chose it, as the interposition
        library does (``crates/capi/src/selection.rs``); else the smaller size decides. Below
        the smallest measured size, the library's own: the fastest of its modes measured there
        (a schedule's fixed costs weigh more the smaller the messages, so its win at the
        smallest size says nothing below it).

        Examples
        --------
        >>> rows = [{"size_bytes": 1024, "best": "alltoallv"}, {"size_bytes": 4096, "best": "paced"}]
        >>> t = SelectionTable({}, rows)
        >>> t.choose(2048).mode, t.choose(3000).mode
        ('alltoallv', 'paced')
        >>> SelectionTable({}, [dict(rows[0], best="frames"), rows[1]]).choose(2048).mode
        'frames'
        >>> paced_first = SelectionTable({}, [{"size_bytes": 1024, "best": "paced",
        ...                                    "modes": {"paced": {"median_s": 1.0}, "alltoallv": {"median_s": 2.0}}}])
        >>> paced_first.choose(1024).mode, paced_first.choose(100).mode
        ('paced', 'alltoallv')
        """
        smallest = min(self.sizes, key=lambda r: r["size_bytes"])
        if size_bytes < smallest["size_bytes"]:
            own = library_choice_below(smallest)
            if own is not None:
                return own
        target = math.log(max(float(size_bytes), 1.0))

        def distance(r: dict) -> float:
            return abs(math.log(max(r["size_bytes"], 1)) - target)

        nearest = min(distance(r) for r in self.sizes)
        tied = [r for r in self.sizes if distance(r) <= nearest + 1e-9]
        row = min(tied, key=lambda r: (library_mode_env(r["best"]) is None, r["size_bytes"]))
        exact = row["size_bytes"] == size_bytes
        reason = (f"measured fastest at {row['size_bytes']} bytes" if exact else
                  f"measured fastest at {row['size_bytes']} bytes, the nearest measured size")
        return Choice(row["best"], row["size_bytes"], reason)


def library_choice_below(smallest: dict[str, Any]) -> Choice | None:
    """The choice below the table's smallest measured size: its best mode if that is one of
    the MPI library's, else the fastest library mode measured there; None when it measured none
    (then nothing better is known than the row itself)."""
    mode = smallest["best"]
    if library_mode_env(mode) is None:
        mode = fastest_library_mode({m: v["median_s"] for m, v in smallest.get("modes", {}).items()})
        if mode is None:
            return None
    return Choice(mode, smallest["size_bytes"], f"below the smallest measured size ({smallest['size_bytes']} bytes): "
                                                 "the MPI library's own collective, its fastest mode measured there")


def selection_from_environment(environ: Mapping[str, str] | None = None) -> SelectionTable | None:
    """The table :data:`SELECTION_VARIABLE` names, or None when it is unset or empty."""
    path = (os.environ if environ is None else environ).get(SELECTION_VARIABLE, "")
    if not path.strip():
        return None
    return SelectionTable.load(path)


__all__ = ["FORMAT", "MARGIN", "SELECTION_VARIABLE", "Choice", "SelectionTable", "best_mode", "measured_on",
           "network_fingerprint", "selection_from_environment"]
