"""Starting ranks: the launcher (``mpiexec``, Slurm's ``srun`` or another by path), the command
line that places one rank per host (in its network namespace when emulated), running it so that
every process it started ends with it, and one line saying why a run failed."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import BackendError, InputError
from .results import ExchangeFailedError

#: Environment that makes MPICH ranks in different network namespaces talk over TCP.
NAMESPACE_ENV = {"MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"}


#: The launchers ``--launcher`` names; anything else is the path (or the name on PATH) of an
#: mpiexec-compatible launcher.
LAUNCHERS = ("mpiexec", "srun")

#: Why a run in network namespaces cannot be launched by Slurm.
SRUN_NAMESPACES = ("srun starts ranks on the allocation's nodes, not in this machine's network namespaces: "
                   "an emulated network runs under mpiexec (--launcher mpiexec or PATH)")


@dataclass(frozen=True)
class Launcher:
    """What starts the ranks, and how it passes them their environment.

    ``kind`` is ``mpiexec`` (MPICH's Hydra, the mpich wheel's or the site's: ``-genv`` for every
    rank, ``-env`` for one MPMD block), ``srun`` (Slurm: ``--export=ALL,K=V``; no network
    namespaces, the ranks run on the allocation's nodes) or ``path`` (another mpiexec-compatible
    launcher, e.g. Open MPI's ``mpirun``: ``-n`` and MPMD ``:`` blocks only, the environment set
    by ``env K=V`` in front of the program, which every launcher passes through unchanged).
    ``program`` is the executable.
    """

    kind: str
    program: str

    def to_dict(self) -> dict[str, str]:
        """The launcher as a run's metadata records it.

        Returns
        -------
        dict
            ``kind`` (``mpiexec``, ``srun`` or ``path``) and ``program`` (the executable's path).

        Examples
        --------
        >>> Launcher("srun", "/usr/bin/srun").to_dict()
        {'kind': 'srun', 'program': '/usr/bin/srun'}
        """
        return {"kind": self.kind, "program": self.program}


def find_mpiexec() -> str:
    """The ``mpiexec`` beside this Python (the mpich wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        raise BackendError("mpiexec not found: pip install mpich mpi4py (or load the site's MPI)")
    return found


def resolve_launcher(name: str | None = None) -> Launcher:
    """The launcher ``name`` denotes: ``mpiexec`` (the default: :func:`find_mpiexec`), ``srun``
    (found on PATH), or the path of an mpiexec-compatible launcher (a bare name is looked up on
    PATH).

    Raises
    ------
    InputError
        when a launcher given by path does not exist or is not executable.
    BackendError
        when ``mpiexec`` or ``srun`` is not found.
    """
    if name is None or name == "mpiexec":
        return Launcher("mpiexec", find_mpiexec())
    if name == "srun":
        found = shutil.which("srun")
        if found is None:
            raise BackendError("srun not found on PATH: --launcher srun runs where Slurm is installed")
        return Launcher("srun", found)
    path = Path(name).expanduser() if "/" in name else Path(shutil.which(name) or name)
    if not path.is_file():
        what = ("a directory" if path.is_dir() else "not a regular file" if path.exists() else "no such file"
                if "/" in name else "not found on PATH nor in this directory")
        raise InputError(f"launcher {name}: {what} (expected mpiexec, srun or the path of an "
                         "mpiexec-compatible launcher)")
    if not os.access(path, os.X_OK):
        raise InputError(f"launcher {name}: not executable")
    return Launcher("path", str(path))


def launch_command(ranks: int, job: str | None, namespaces: Sequence[str] | None = None,
                   launcher: Launcher | str | None = None, extra_args: Sequence[str] = (),
                   env: Mapping[str, str] | None = None,
                   program: str = "liquidsched.execute.worker", argv: Sequence[str] | None = None) -> list[str]:
    """The command that starts one ``program`` (a module run with ``python -m``, given the job
    file) per rank under ``launcher`` (a :class:`Launcher`, or a name for
    :func:`resolve_launcher`); or, given ``argv``, that command line itself (an application).

    With ``namespaces``, rank ``r`` runs inside network namespace ``namespaces[r]`` (MPMD form,
    one ``-n 1`` block per rank, each told to talk TCP: :data:`NAMESPACE_ENV`); srun refuses
    them. ``extra_args`` go to the launcher before the ranks (a host file on a cluster, srun's
    ``--distribution=arbitrary``); ``env`` is set for every rank.

    Raises
    ------
    InputError
        namespaces with srun, a namespace count other than ``ranks``, or an environment value
        srun cannot pass (a comma).
    """
    if not isinstance(launcher, Launcher):
        launcher = resolve_launcher(launcher)
    env = dict(env or {})
    if namespaces is not None and len(namespaces) != ranks:
        raise InputError(f"{ranks} ranks but {len(namespaces)} namespaces")
    worker = list(argv) if argv is not None else [sys.executable, "-m", program, str(job)]
    if launcher.kind == "srun":
        return [launcher.program, "-n", str(ranks), *extra_args, *_srun_export(env, namespaces), *worker]
    if launcher.kind == "mpiexec":
        head = [launcher.program, *extra_args, *(a for k, v in env.items() for a in ("-genv", k, v))]
        if namespaces is None:
            return [*head, "-n", str(ranks), *worker]
        block_env = [a for k, v in NAMESPACE_ENV.items() for a in ("-env", k, v)]
        return head + _mpmd_blocks([[*block_env, "ip", "netns", "exec", ns, *worker] for ns in namespaces])
    if namespaces is None:
        return [launcher.program, *extra_args, "-n", str(ranks), *env_prefix(env), *worker]
    return [launcher.program, *extra_args] + _mpmd_blocks(
        [["ip", "netns", "exec", ns, *env_prefix(env | NAMESPACE_ENV), *worker] for ns in namespaces])


def _mpmd_blocks(blocks: Sequence[list[str]]) -> list[str]:
    """One ``-n 1`` block per rank, separated by ``:``."""
    cmd: list[str] = []
    for r, block in enumerate(blocks):
        cmd += [*([":"] if r else []), "-n", "1", *block]
    return cmd


def env_prefix(env: Mapping[str, str]) -> list[str]:
    """``env K=V … `` in front of a program: the one way to set a rank's environment that every
    launcher passes through."""
    return ["env", *(f"{k}={v}" for k, v in env.items())] if env else []


def _srun_export(env: Mapping[str, str], namespaces: Sequence[str] | None) -> list[str]:
    """srun's ``--export=ALL,K=V,…`` (none when there is nothing to add to the environment)."""
    if namespaces is not None:
        raise InputError(SRUN_NAMESPACES)
    commas = [k for k, v in env.items() if "," in v]
    if commas:
        raise InputError(f"srun cannot pass {commas[0]}={env[commas[0]]!r} to the ranks: --export splits at commas")
    return [f"--export={','.join(['ALL', *(f'{k}={v}' for k, v in env.items())])}"] if env else []


def run_launched(cmd: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess:
    """Run a launch command to its end and return what it printed.

    The launcher runs in a session of its own so that, when it outlives ``timeout_s`` or this
    process is interrupted, every process it started (its proxies, the ranks) is ended with it,
    not only the launcher; its standard input is closed, as nothing reads it.

    Raises
    ------
    subprocess.TimeoutExpired
        when the command did not finish within ``timeout_s`` (it has been ended).
    """
    proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except BaseException:
        _end_session(proc)
        raise
    return subprocess.CompletedProcess(list(cmd), proc.returncode, stdout, stderr)


def _end_session(proc: subprocess.Popen) -> None:
    """End ``proc``'s process group: SIGTERM, then SIGKILL to what is left a few seconds later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.communicate(timeout=3.0)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    proc.wait()


def launch_job(job: dict[str, Any], ranks: int, program: str, what: str, namespaces: Sequence[str] | None = None,
               launcher: Launcher | str | None = None, extra_args: Sequence[str] = (),
               timeout_s: float = 600.0) -> dict[str, Any]:
    """Run ``program`` (a module run with ``python -m``) on ``ranks`` ranks with ``job`` as its job
    file, and return the results it wrote to the job's ``output``.

    Parameters
    ----------
    namespaces, launcher, extra_args
        As :func:`launch_command` takes them.
    what
        The run's name in messages ("the calibration").

    Raises
    ------
    ExchangeFailedError
        when the run fails (one line saying why), writes no results, or outlives ``timeout_s``.
    """
    with tempfile.TemporaryDirectory(prefix="liquidsched-job-") as tmp:
        os.chmod(tmp, 0o755)
        job_file, result = Path(tmp) / "job.json", Path(tmp) / "out.json"
        job_file.write_text(json.dumps(job | {"output": str(result)}), encoding="utf-8")
        cmd = launch_command(ranks, str(job_file), namespaces, launcher, extra_args, program=program)
        try:
            done = run_launched(cmd, timeout_s)
        except subprocess.TimeoutExpired:
            raise ExchangeFailedError(f"{what} did not finish within {timeout_s:g} s") from None
        if done.returncode != 0 or not result.exists():
            raise ExchangeFailedError(f"{what} failed: " + failure_line(done.stderr + done.stdout, done.returncode))
        return json.loads(result.read_text(encoding="utf-8"))


#: What MPICH and the ranks print when a run fails, most telling first: a fatal MPI error, a
#: Python exception in a rank, a rank killed by a signal.
_FAILURE_PATTERNS = (
    (re.compile(r"(Fatal error in \S+: [^,\n]*)"), "{0}"),
    (re.compile(r"^(\w+(?:Error|Exception)(?:: .*)?)$", re.M), "a rank raised {0}"),
    (re.compile(r"KILLED BY SIGNAL: (9) \((\w+)\)"), "a rank was killed by signal {0} ({1}; out of memory?)"),
    (re.compile(r"KILLED BY SIGNAL: (\d+) \(([^)]*)\)"), "a rank was killed by signal {0} ({1})"),
    (re.compile(r"liquidsched worker: (.*)"), "{0}"),
)


def failure_line(output: str, returncode: int) -> str:
    """One line naming why an MPI run failed, from what its ranks and ``mpiexec`` printed.

    Examples
    --------
    >>> failure_line("=   RANK 2 PID 77 RUNNING AT x\\n=   KILLED BY SIGNAL: 9 (Killed)\\nsee the FAQ page", 9)
    'a rank was killed by signal 9 (Killed; out of memory?) (exit 9)'
    """
    for pattern, form in _FAILURE_PATTERNS:
        found = pattern.search(output)
        if found:
            return f"{form.format(*(g.strip() for g in found.groups()))} (exit {returncode})"
    lines = [line.strip(" =") for line in output.splitlines() if line.strip(" =")]
    return f"{lines[-1] if lines else '(no message)'} (exit {returncode})"
