"""Running a case: a zygote forks one child per case, a watcher holds it to its time and memory,
and the case's files are made and looked at before and after.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .cases import ROOT, Case

#: A command that needs more than this is a failure (the issue's cap).
MEMORY_CAP_BYTES = 1 << 30
#: Resident size at which a child is killed rather than let grow (a little over the cap, so that
#: a kill is always a failure and the machine, shared, is spared).
KILL_RSS_BYTES = MEMORY_CAP_BYTES + (64 << 20)
#: Exit status of a child the launch guard stopped.
LAUNCH_BLOCKED = 97


# --------------------------------------------------------------------------------------------
# Running: a zygote forks one child per case

@dataclass
class Outcome:
    """How one command ended, as the zygote saw it, and what it printed."""

    status: int | None = None  # exit status, None when killed by a signal
    signal: int | None = None
    killed: str | None = None  # "timeout" or "memory" when the watcher killed it
    maxrss_bytes: int = 0
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def watch(pid: int, timeout: float) -> dict:
    """Wait for child ``pid``: its status, peak memory, and a kill of its process group when it
    outlives ``timeout`` or grows past :data:`KILL_RSS_BYTES`."""
    start = time.monotonic()
    killed, peak = None, 0
    while True:
        wpid, status, usage = os.wait4(pid, os.WNOHANG)
        if wpid:
            break
        peak = max(peak, _rss_bytes(pid))
        elapsed = time.monotonic() - start
        if killed is None and (peak > KILL_RSS_BYTES or elapsed > timeout):
            killed = "memory" if peak > KILL_RSS_BYTES else "timeout"
            _kill_group(pid)
        time.sleep(0.005 if elapsed < 0.5 else 0.02)
    _kill_group(pid)  # whatever it started
    return {"status": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "killed": killed, "maxrss_bytes": max(peak, usage.ru_maxrss * 1024),
            "seconds": time.monotonic() - start}


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        # Not (yet) a group of its own: the child alone.
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _forbid_launching() -> None:
    """Make any attempt to start a process end the child with :data:`LAUNCH_BLOCKED`, saying
    what it tried to start. By SystemExit, which no handler of an error takes, so that what
    the command made before (temporary files, directories) is cleaned up as it unwinds."""

    def blocked(*args, **kwargs):
        os.write(2, f"FUZZ: launch blocked: {args[:2]!r}\n".encode(errors="replace"))
        raise SystemExit(LAUNCH_BLOCKED)

    subprocess.Popen._execute_child = blocked  # type: ignore[method-assign]
    for name in ("system", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "execvpe", "fork", "forkpty"):
        if hasattr(os, name):
            setattr(os, name, blocked)


def _child(req: dict) -> None:
    """In the forked child: become a command run by the ``liquidsched`` script."""
    code = 1
    try:
        os.setpgid(0, 0)
        os.chdir(req["cwd"])
        for fd, path, flags in ((0, req["stdin"] or os.devnull, os.O_RDONLY),
                                (1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            new = os.open(path, flags, 0o644)
            os.dup2(new, fd)
            os.close(new)
        if req.get("closed_stdout"):
            reader, writer = os.pipe()
            os.dup2(writer, 1)
            os.close(writer)
            os.close(reader)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
                                      errors="backslashreplace", line_buffering=True)
        os.environ.update(req.get("env") or {})
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python sets it up
        if req["guard"]:
            _forbid_launching()
        from liquidsched.cli import main
        try:
            result = main(req["argv"])
        except SystemExit as e:
            result = e.code
        if result is None:
            code = 0
        elif isinstance(result, int):
            code = result & 0xFF
        else:
            print(result, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: B036 — what the interpreter would print for anything escaping
        import traceback
        try:
            traceback.print_exc()
        except BaseException:
            pass
        code = 1
    try:
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)


def zygote() -> None:
    """Serve requests (one JSON line each on standard input): fork a child per request, answer
    with its outcome (one JSON line)."""
    import importlib

    from liquidsched.cli.common import COMMANDS

    import pkgutil

    import liquidsched

    for module in dict.fromkeys(m for m, _ in COMMANDS.values()):
        importlib.import_module(f"liquidsched.cli.{module}")
    # Every other module too, so that a case costs its own work only; one that cannot be
    # imported here is imported (and fails) in the case that needs it.
    for info in pkgutil.walk_packages(liquidsched.__path__, "liquidsched."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except BaseException:  # noqa: B036
            pass
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    requests = os.fdopen(os.dup(0), "r")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    channel.write("ready\n")
    channel.flush()
    for line in requests:
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            requests.close()
            channel.close()
            _child(req)
        try:
            os.setpgid(pid, pid)  # also here, so that a kill never finds the group not yet made
        except OSError:
            pass
        channel.write(json.dumps(watch(pid, req["timeout"])) + "\n")
        channel.flush()


class Runner:
    """One zygote, started once; :meth:`run` forks a child of it per case."""

    def __init__(self) -> None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", COLUMNS="200", PYTHONHASHSEED="0")
        env.pop("LIQUIDSCHED_MAX_INPUT_BYTES", None)
        # The package's __main__ (tests/fuzz/__main__.py), imported as tests.fuzz from the
        # repository's root (its working directory).
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.fuzz", "--zygote"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     cwd=str(ROOT), start_new_session=True)
        ready = self.proc.stdout.readline()
        if ready.strip() != "ready":
            raise RuntimeError(f"the fuzz zygote did not start: {ready!r}")
        self.lock = threading.Lock()

    def run(self, argv: list[str], cwd: Path, stdin: str, timeout: float, guard: bool, env: dict,
            closed_stdout: bool = False) -> Outcome:
        out, err = cwd.parent / (cwd.name + ".stdout"), cwd.parent / (cwd.name + ".stderr")
        req = {"argv": argv, "cwd": str(cwd), "stdin": stdin, "stdout": str(out), "stderr": str(err),
               "timeout": timeout, "guard": guard, "env": env, "closed_stdout": closed_stdout}
        with self.lock:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            answer = json.loads(self.proc.stdout.readline())
        o = Outcome(**answer)
        o.stdout = out.read_bytes().decode("utf-8", "backslashreplace")
        o.stderr = err.read_bytes().decode("utf-8", "backslashreplace")
        out.unlink()
        err.unlink()
        return o

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# --------------------------------------------------------------------------------------------
# Making a case's files, and what the directory held before and after

def materialise(case: Case, d: Path) -> None:
    d.mkdir(parents=True)
    for name, kind, content in case.files:
        p = d / name
        if kind == "file":
            p.write_bytes(content)
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "dir":
            p.mkdir()
        elif kind == "link":
            os.symlink(content.decode().replace("{d}", str(d)), p)
        elif kind == "sparse":
            with open(p, "wb") as f:
                f.truncate(int(content))
        elif kind in ("null", "full"):
            os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3 if kind == "null" else 7))
        else:
            raise ValueError(kind)


def snapshot(d: Path) -> dict[str, tuple]:
    """Every entry under ``d`` (links not followed): kind, and for files size, mtime and digest;
    for links their target."""
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = Path(root) / name
            rel = str(p.relative_to(d))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                digest = ""
                if st.st_size <= 1 << 24:
                    digest = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                out[rel] = ("file", st.st_size, st.st_mtime_ns, digest)
            else:
                out[rel] = (stat.S_IFMT(st.st_mode), st.st_rdev)
    return out
