"""What a run's report says it ran: enough to tell two result files apart a year later."""

from __future__ import annotations

import datetime
import shlex
import socket
from typing import Any, Sequence


def utc_now() -> str:
    """The time now in ISO 8601, UTC, to the second (``2024-05-01T12:00:00+00:00``)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_metadata(*, topology: str, traffic: str, algorithm: str, modes: Sequence[str], repeats: int, warmup: int,
                 mpi_library: str, launcher: Any, launcher_args: Sequence[str] = (), timeout_s: float | None = None,
                 sizes_bytes: Sequence[int] | None = None, started_utc: str | None = None,
                 command_line: Sequence[str] | None = None) -> dict[str, Any]:
    """The metadata block of a run's JSON.

    Parameters
    ----------
    topology, traffic, algorithm
        The network's, the traffic's and the schedule's names.
    mpi_library
        The first line of ``MPI_Get_library_version`` (name and version), as rank 0 printed it;
        its runs of blanks become one.
    launcher
        The :class:`~liquidsched.execute.Launcher` that started the ranks.
    sizes_bytes
        The sizes of a sweep (None for a single run).
    started_utc
        When the run started (:func:`utc_now`); now when not given.
    command_line
        The command's words, quoted back into one line as a shell would take it.
    """
    from .. import __version__

    block: dict[str, Any] = {
        "topology": topology, "traffic": traffic, "algorithm": algorithm, "modes": list(modes),
        "repeats": repeats, "warmup": warmup}
    if sizes_bytes is not None:
        block["sizes_bytes"] = list(sizes_bytes)
    block |= {"timeout_s": timeout_s, "mpi_library": " ".join(mpi_library.split()),
              "launcher": {**launcher.to_dict(), "args": list(launcher_args)},
              "host": socket.gethostname(), "liquidsched_version": __version__,
              "started_utc": started_utc or utc_now(),
              "command_line": shlex.join(command_line) if command_line is not None else None}
    return block


__all__ = ["run_metadata", "utc_now"]
