"""Finding a Python that has SimGrid's module: Debian's ``python3-simgrid`` is built for the
system Python, not for the environment liquidsched is installed in. ``LIQUIDSCHED_SIMGRID_PYTHON``
chooses the interpreter; by default the current one and then ``/usr/bin/python3`` are tried."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

INSTALL_HINT = "install Debian's python3-simgrid (apt-get install python3-simgrid)"


def _has_simgrid(python: str) -> bool:
    try:
        done = subprocess.run([python, "-c", "import simgrid"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@functools.cache
def simgrid_python() -> str | None:
    """The Python interpreter that can import SimGrid, or None."""
    chosen = os.environ.get("LIQUIDSCHED_SIMGRID_PYTHON")
    candidates = [chosen] if chosen else [sys.executable, "/usr/bin/python3"]
    return next((p for p in candidates if p and _has_simgrid(p)), None)


def simgrid_available() -> bool:
    """Whether the SimGrid back end can run here."""
    return simgrid_python() is not None
