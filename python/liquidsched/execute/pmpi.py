"""Unmodified MPI applications under the interposition library (``pmpi/``): building it, and
launching an application with or without it, here or in an emulated network.

The library replaces ``MPI_Alltoall`` and ``MPI_Alltoallv`` through ``LD_PRELOAD``; it reads the
fabric file that :func:`liquidsched.io.fabric.save_fabric` writes (``LIQUIDSCHED_FABRIC``). The
test application ``pmpi/tests/alltoall_check.c`` times both collectives and checks every byte;
:func:`parse_results` reads its report.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..errors import BackendError, InputError
from .launcher import Launcher, env_prefix, launch_command

#: The library's sources, in a checkout of the project (an installed wheel does not ship them).
PMPI_DIR = Path(__file__).resolve().parents[3] / "pmpi"


def built_file(name: str, what: str) -> Path:
    """``pmpi/build/<name>``, which ``make pmpi`` builds.

    Raises
    ------
    BackendError
        naming ``what`` and ``make pmpi`` when it is not built.
    """
    path = PMPI_DIR / "build" / name
    if not path.is_file():
        raise BackendError(f"{what} is not built ({path}): run make pmpi")
    return path


@dataclass(frozen=True)
class PmpiBuild:
    """What ``make -C pmpi`` built."""

    library: Path
    check_program: Path
    #: the OSU-like benchmark of MPI_Alltoall and MPI_Alltoallv (``pmpi/bench/alltoall_bench.c``)
    benchmark: Path


def find_mpicc() -> str | None:
    """The ``mpicc`` beside this Python (the mpich wheel's), else the first on PATH."""
    beside = Path(sys.executable).parent / "mpicc"
    return str(beside) if beside.exists() else shutil.which("mpicc")


def build_pmpi(mpicc: str | None = None, timeout_s: float = 900.0) -> PmpiBuild:
    """Build the library and the test application with ``make -C pmpi`` (cargo builds the
    core's C interface first).

    Raises
    ------
    BackendError
        without the sources, without ``mpicc`` or ``cargo``, or when the build fails (its last
        lines in the message).
    """
    if not (PMPI_DIR / "Makefile").exists():
        raise BackendError(f"the interposition library's sources are not here ({PMPI_DIR}): build it from a "
                           "checkout of liquidsched")
    mpicc = mpicc or find_mpicc()
    if mpicc is None:
        raise BackendError("no mpicc found: pip install mpich (or load the site's MPI)")
    if shutil.which("cargo") is None:
        raise BackendError("cargo is needed to build the library (the liquidsched core is in Rust)")
    done = subprocess.run(["make", "-C", str(PMPI_DIR), f"MPICC={mpicc}"], capture_output=True, text=True,
                          timeout=timeout_s)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise BackendError(f"building the interposition library failed:\n{tail}")
    build = PMPI_DIR / "build"
    return PmpiBuild(build / "libliquidsched_pmpi.so", build / "alltoall_check", build / "alltoall_bench")


def application_command(argv: Sequence[str], ranks: int, fabric: str | os.PathLike | None = None,
                        library: str | os.PathLike | None = None, namespaces: Sequence[str] | None = None,
                        env: Mapping[str, str] | None = None, launcher: Launcher | str | None = None,
                        extra_args: Sequence[str] = ()) -> list[str]:
    """The command that runs ``argv`` on ``ranks`` ranks (:func:`~liquidsched.execute.launch_command`),
    with the interposition ``library`` preloaded and ``fabric`` named when given (without them:
    the MPI library's own collectives), rank ``r`` in network namespace ``namespaces[r]`` when
    given.

    The preload is set inside each rank's command (``env LD_PRELOAD=…``, in front of what this
    process's ``LD_PRELOAD`` already names), never on the launcher or ``ip``, which are not MPI
    programs. ``extra_args`` go to the launcher.

    Examples
    --------
    >>> application_command(["./app"], 2, "f.fabric", "/lib/x.so", launcher=Launcher("mpiexec", "mpiexec"))
    ['mpiexec', '-n', '2', 'env', 'LD_PRELOAD=/lib/x.so', 'LIQUIDSCHED_FABRIC=f.fabric', './app']
    """
    if ranks < 1:
        raise InputError(f"an application needs at least one rank, got {ranks}")
    settings = dict(env or {})
    if library is not None:
        previous = os.environ.get("LD_PRELOAD")
        settings["LD_PRELOAD"] = f"{library}:{previous}" if previous else str(library)
    if fabric is not None:
        settings["LIQUIDSCHED_FABRIC"] = str(fabric)
    return launch_command(ranks, None, namespaces, launcher, extra_args=extra_args,
                          argv=[*env_prefix(settings), *argv])


def parse_results(stdout: str) -> list[dict[str, str | int | float]]:
    """The ``result key=value ...`` lines of the test application, numbers as numbers.

    Examples
    --------
    >>> parse_results("x\\nresult op=alltoall ranks=4 bytes=8 mean_s=0.5 exact=1\\n")
    [{'op': 'alltoall', 'ranks': 4, 'bytes': 8, 'mean_s': 0.5, 'exact': 1}]
    """
    rows = []
    for line in stdout.splitlines():
        if not line.startswith("result "):
            continue
        row: dict[str, str | int | float] = {}
        for item in line.split()[1:]:
            key, _, value = item.partition("=")
            row[key] = _number(value)
        rows.append(row)
    return rows


def _number(text: str) -> str | int | float:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


__all__ = ["PMPI_DIR", "PmpiBuild", "application_command", "build_pmpi", "built_file", "find_mpicc", "parse_results"]
