"""SimGrid as an external reference for the fluid model.

No module of this package is named ``simgrid``: the runner scripts beside them import SimGrid's own
``simgrid`` module, and a script's folder comes first on its import path.

The schedule's network is exported as a SimGrid platform (:mod:`.platform_file`), its
pieces become host-to-host communications started by the same policy, and SimGrid's CM02 model
(max-min sharing, no TCP window bound, no cross traffic) gives their finish times.

CM02 weights each flow by its route latency (a flow's share is inversely proportional to it, as
TCP's throughput is to the round-trip time); liquidsched's fluid model shares max-min fairly
without weights and lets each flow wait its route latency before sending. So the platform is run
with zero link latencies, and each flow waits its route latency before its communication starts:
the same flows, under the same semantics, in an independent max-min solver and event loop. SimGrid
runs in its own Python process (:mod:`.install`).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BackendError, InputError
from .install import INSTALL_HINT, simgrid_python
from .platform_file import CM02_CONFIG, platform_xml

if TYPE_CHECKING:
    from ..schedule import Schedule

RUNNER = Path(__file__).with_name("simulation_runner.py")
#: The start policies the runner follows (the gated window and steps policies are the core's).
SIMGRID_POLICIES = ("all-at-once", "frames", "per-sender")


def simgrid_job(schedule: Schedule, flows: Any, policy: str, overhead_s: float, platform: str) -> dict[str, Any]:
    """The runner's job: ``flows`` (the simulator's, :func:`liquidsched.simulate.flows_of`) as
    ``[src, dst, bytes, delay_s]`` in their order (the delay is the route latency), frames of flow
    indices, and each sender's flows in order."""
    traffic = schedule.traffic
    ends = [traffic[traffic.index[p.transfer]] for frame in schedule.frames for p in frame]
    rows = []
    for t, size, delay in zip(ends, flows.sizes, flows.latencies):
        if not float(size).is_integer():
            raise InputError(f"transfer {t.src}->{t.dst}: SimGrid sends whole bytes, got a piece of {size!r}")
        rows.append([t.src, t.dst, int(size), delay])
    per_sender: dict[int, list[int]] = {}
    for i, who in enumerate(flows.senders):
        per_sender.setdefault(who, []).append(i)
    return {"platform": platform, "config": CM02_CONFIG, "flows": rows, "frames": flows.frames,
            "per_sender": list(per_sender.values()), "policy": policy, "overhead_s": float(overhead_s)}


def run_simgrid(schedule: Schedule, flows: Any, policy: str, overhead_s: float = 0.0,
                timeout_s: float = 3600.0) -> dict:
    """Run the schedule's pieces in SimGrid; the runner's result (``start_s``, ``finish_s``,
    ``run_s`` the engine's run time, ``load_s`` its platform loading time).

    Raises
    ------
    BackendError
        if SimGrid is not installed, or the run fails (with SimGrid's last message).
    """
    python = simgrid_python()
    if python is None:
        raise BackendError(f"the SimGrid back end needs the simgrid Python module: {INSTALL_HINT}, "
                           "or set LIQUIDSCHED_SIMGRID_PYTHON to a Python that has it")
    with tempfile.TemporaryDirectory(prefix="liquidsched-simgrid-") as tmp:
        platform = Path(tmp) / "platform.xml"
        platform.write_text(platform_xml(schedule.network, latencies=False), encoding="utf-8")
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps(simgrid_job(schedule, flows, policy, overhead_s, str(platform))), encoding="utf-8")
        try:
            done = subprocess.run([python, str(RUNNER), str(job)], capture_output=True, text=True,
                                  timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise BackendError(f"SimGrid did not finish within {timeout_s:g} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise BackendError(f"SimGrid failed (exit {done.returncode}): {last}")
    return json.loads(done.stdout)
