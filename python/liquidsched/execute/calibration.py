"""Paper 002's cost parameters between two hosts, measured by ping-pong under MPI."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..cost_model import CostParameters
from ..errors import InputError
from .launcher import Launcher, launch_job

def calibrate(hosts: Sequence[str], packet_bytes: int, repeats: int = 50,
              namespaces: Mapping[str, str] | None = None, mpiexec_args: Sequence[str] = (),
              timeout_s: float = 300.0,
              launcher: Launcher | str | None = None) -> tuple[CostParameters, dict[str, Any]]:
    """Paper 002's cost parameters between two hosts, measured by ping-pong
    (:mod:`.pingpong`), and the raw measurements (with the round trip and the MPI library),
    the two ranks started by ``launcher`` (:func:`resolve_launcher`).

    Raises
    ------
    InputError
        unless two distinct hosts are given, a packet of at least one byte and two repeats.
    ExchangeFailedError
        if the MPI run fails or outlives ``timeout_s``.
    """
    if len(hosts) != 2 or hosts[0] == hosts[1]:
        raise InputError(f"calibration runs between two distinct hosts, got {list(hosts)}")
    if packet_bytes < 1 or repeats < 2:
        raise InputError(f"need a packet of at least 1 byte and at least 2 repeats, got {packet_bytes}, {repeats}")
    ranks = None if namespaces is None else [namespaces[h] for h in hosts]
    raw = launch_job({"packet_bytes": packet_bytes, "repeats": repeats}, 2, "liquidsched.execute.pingpong",
                     "the calibration", ranks, launcher, mpiexec_args, timeout_s)
    params = CostParameters(raw["send_overhead_s"], raw["latency_s"], raw["gap_s"], raw["recv_overhead_s"],
                            raw["user_recv_s"], packet_bytes)
    return params, raw
