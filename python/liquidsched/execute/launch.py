"""A user's own MPI program on a network: one rank per host, here, in an emulated network, or
with the interposition library (``liquidsched launch``).

.. code-block:: python

    from liquidsched.topologies import resolve_topology
    from liquidsched.execute.launch import launch

    net = resolve_topology("crossbar:n=3,capacity_Bps=100Mbit/s")
    result = launch(["./pmpi/build/alltoall_bench", "-m", "1:4096"], net, emulate=True, prefix="lsb",
                    pmpi=True)
    result.returncode          # the application's exit status (128 + N after signal N, 124 on timeout)

Rank ``r`` runs on the ``r``-th host of the network in its order (:meth:`Network.hosts`, the order
``rank_hosts`` and ``hostfile`` use), or of the subset ``hosts`` names, still in network order.
In an emulated network (``emulate``: built for the launch and removed after it; or ``prefix``
alone: one ``netem up`` built) each rank runs in its host's namespace with MPICH forced onto
TCP (:data:`~liquidsched.execute.NAMESPACE_ENV`); otherwise the ranks run where the launcher
puts them (by default this machine, through its memory). ``pmpi`` preloads the interposition
library (``LD_PRELOAD``, built by ``make pmpi``) and writes the network's fabric to a temporary
file named by ``LIQUIDSCHED_FABRIC``; ``selection`` names a selection table
(``LIQUIDSCHED_SELECTION``, an absolute path), which the library and the mpi4py API read; it is
refused unless it is one, measured with as many ranks on the same network. Everything is
checked before anything is built.

The application's standard streams are its own (nothing is captured). The launcher runs in a
session of its own, so that a terminal's Ctrl-C reaches ``launch`` alone, which passes it on:
while it runs, :class:`SignalGuard` owns SIGINT, SIGTERM and SIGHUP. Before the launcher starts,
the first of them stops the launch (:class:`LaunchInterrupted`); while it runs, a signal is
forwarded to the launcher (which forwards it to the ranks) and, when they are not gone
``grace_s`` seconds later (or at a second signal), the launcher, its proxies and ranks are
killed; after it, signals are only noted, so that nothing interrupts the removal of the
emulated network. A timeout ends the application the same way. An emulated network built for
the launch is removed on every path: the application's end or failure, a timeout, a signal, an
exception while building. Signals can only be handled in the main thread: call :func:`launch`
from there (an emulated network needs it too).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, ContextManager, Iterator, Mapping, NamedTuple, Sequence

from ..errors import BackendError, InputError
from ..network import Network
from ..emulate.addressing import time_scale_of
from . import HERE_NETWORKS, NAMESPACE_ENV, SRUN_NAMESPACES, Launcher, network_kind, resolve_launcher
from .pmpi import application_command, built_file

#: The signals a launch owns while it runs.
GUARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: Launch's exit status when the application outlived its timeout (as ``timeout(1)``).
EXIT_TIMEOUT = 124

#: Seconds the launcher and its ranks are given to end after a forwarded signal, before they
#: are killed.
DEFAULT_GRACE_S = 3.0


class LaunchInterrupted(KeyboardInterrupt):
    """A signal stopped the launch before the application started; ``signum`` is the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def signal_name(signum: int) -> str:
    """``SIGINT`` for 2, and so on.

    Examples
    --------
    >>> signal_name(15)
    'SIGTERM'
    """
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class SignalGuard:
    """Owns SIGINT, SIGTERM and SIGHUP for the length of a launch (a context manager; the
    handlers found are restored on leaving it).

    Three phases: ``building`` (the first signal raises :class:`LaunchInterrupted`, later ones
    are noted), ``running`` (:meth:`watch`: signals are noted, and :func:`run_application`
    forwards them to the launcher) and ``ending`` (:meth:`release`: signals are only noted, so
    that the removal of an emulated network is not interrupted). ``signum`` is the first signal
    received, ``count`` how many. Another handler installed meanwhile (an :class:`Emulation`
    installs its own while it is up) is replaced again by :meth:`reclaim`.

    Outside the main thread, where Python cannot install handlers, the guard does nothing.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self.count = 0
        self.phase = "building"
        self._previous: dict[int, Any] = {}
        self._active = False

    def __enter__(self) -> SignalGuard:
        self._active = threading.current_thread() is threading.main_thread()
        if self._active:
            for sig in GUARDED_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        self._active = False

    def reclaim(self) -> None:
        """Install the guard's handlers again (after something else replaced them)."""
        if self._active:
            for sig in GUARDED_SIGNALS:
                signal.signal(sig, self._handle)

    def watch(self) -> None:
        """The launcher is running: signals are noted for :func:`run_application` to forward."""
        self.reclaim()
        self.phase = "running"

    def release(self) -> None:
        """The launcher is done: signals are only noted from now on."""
        self.reclaim()
        self.phase = "ending"

    def _handle(self, signum: int, frame: object) -> None:
        self.count += 1
        first = self.signum is None
        if first:
            self.signum = signum
        if self.phase == "building" and first:
            raise LaunchInterrupted(signum)


def application_hosts(network: Network, hosts: Sequence[str] | None = None) -> list[str]:
    """The host of each rank: every host of ``network`` in its order, or those ``hosts`` names,
    still in the network's order (one rank per host).

    Raises
    ------
    InputError
        for a host the network lacks, a host named twice, or none.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> application_hosts(build_topology("crossbar:n=4"), ["h3", "h1"])
    ['h1', 'h3']
    """
    order = network.hosts()
    if hosts is None:
        chosen = order
    else:
        unknown = [h for h in hosts if h not in order]
        if unknown:
            shown = ", ".join(order[:8]) + (f" and {len(order) - 8} more" if len(order) > 8 else "")
            raise InputError(f"--hosts: {unknown[0]!r} is not a host of {network.name} (hosts: {shown})")
        twice = sorted({h for h in hosts if list(hosts).count(h) > 1})
        if twice:
            raise InputError(f"--hosts: {twice[0]!r} is given twice (one rank per host)")
        wanted = set(hosts)
        chosen = [h for h in order if h in wanted]
    if not chosen:
        raise InputError(f"{network.name} has no host to run a rank on")
    return chosen


def pmpi_library() -> Path:
    """The interposition library ``make pmpi`` builds (:func:`~liquidsched.execute.pmpi.built_file`)."""
    return built_file("libliquidsched_pmpi.so", "the interposition library")


def selection_path(path: str | os.PathLike, network: Network | None = None, ranks: int | None = None) -> Path:
    """``path`` made absolute (the ranks open it wherever they start), once it is known to be a
    selection table (:class:`~liquidsched.execute.selection.SelectionTable`) that applies to
    ``ranks`` ranks on ``network`` when they are given.

    Raises
    ------
    InputError
        one line: the file cannot be read, is not a selection table, or was measured with
        another number of ranks or on another network.
    """
    from .selection import SelectionTable, network_fingerprint

    # Not resolved: a link loop is the reader's one-line refusal, not pathlib's RuntimeError.
    absolute = Path(os.path.abspath(Path(path).expanduser()))
    try:
        table = SelectionTable.load(absolute)
        if ranks is not None:
            table.check(ranks, network_fingerprint(network) if network is not None else None)
    except InputError as e:
        raise InputError(f"--selection {path}: {str(e).removeprefix(f'{absolute}: ')}") from None
    return absolute


def program_path(argv: Sequence[str]) -> str:
    """The application's program as the ranks will find it, checked here.

    Raises
    ------
    InputError
        when no program is given, or it is not an executable file (by path or on PATH).
    """
    if not argv:
        raise InputError("no application given: liquidsched launch [options] -- ./app [args]")
    found = shutil.which(argv[0])
    if found is None:
        where = "no such executable file" if "/" in argv[0] else "not found on PATH (give ./name for a file here)"
        raise InputError(f"the application {argv[0]}: {where}")
    return found


@dataclass
class LaunchResult:
    """How a launch ended.

    ``returncode`` is launch's exit status: the launcher's (the first rank that failed, as
    ``mpiexec`` reports it), ``128 + N`` after signal N to the launch, :data:`EXIT_TIMEOUT` after
    the timeout. ``launcher_returncode`` is what the launcher itself returned (negative: killed
    by that signal; None: not started).
    """

    returncode: int
    network: str
    hosts: list[str]
    command: list[str] = field(default_factory=list)
    launcher_returncode: int | None = None
    signum: int | None = None
    timed_out: bool = False
    elapsed_s: float = 0.0
    #: the launcher and its ranks had to be killed (they outlived the grace period)
    killed: bool = False
    #: the signal reached the application (it arrived while the application ran, not after)
    signal_forwarded: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"returncode": self.returncode, "network": self.network, "hosts": self.hosts,
                "command": self.command, "launcher_returncode": self.launcher_returncode,
                "signal": signal_name(self.signum) if self.signum else None, "timed_out": self.timed_out,
                "elapsed_s": self.elapsed_s, "killed": self.killed,
                "signal_forwarded": self.signal_forwarded}


def _start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/PID/stat`` (when the process started), None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[19]


def process_tree(pid: int) -> dict[int, str]:
    """``pid``'s descendants (Linux ``/proc``), each with its start time: Hydra starts its proxies
    and ranks in sessions of their own, out of reach of a signal to the launcher's group. Empty
    where ``/proc`` is not."""
    parent: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    for entry in entries:
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent[int(entry)] = int(text.rsplit(")", 1)[1].split()[1])
    children: dict[int, list[int]] = {}
    for child, ppid in parent.items():
        children.setdefault(ppid, []).append(child)
    tree: dict[int, str] = {}
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        started = _start_time(p)
        if started is not None:
            tree[p] = started
        todo.extend(children.get(p, []))
    return tree


def _kill_tree(tree: Mapping[int, str]) -> None:
    """SIGKILL to every process of ``tree`` that is still the one recorded."""
    for pid, started in tree.items():
        if _start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)


class RunOutcome(NamedTuple):
    """How :func:`run_application` ended."""

    returncode: int
    timed_out: bool
    killed: bool
    #: a signal to launch reached the launcher (it arrived while the application ran)
    forwarded: bool


def run_application(cmd: Sequence[str], guard: SignalGuard, timeout_s: float | None = None,
                    grace_s: float = DEFAULT_GRACE_S, poll_s: float = 0.05, stdout: IO | None = None,
                    stderr: IO | None = None) -> RunOutcome:
    """Run the launch command ``cmd`` to its end under ``guard``, its output passing through
    (or written to the files ``stdout`` and ``stderr`` when given).

    The launcher runs in a session of its own. A signal the guard receives is forwarded to it
    (Hydra's ``mpiexec`` passes it to every rank); past ``timeout_s`` it is sent SIGTERM. When
    the launcher has not ended ``grace_s`` seconds later, or at a second signal, the launcher's
    group and every process it started (proxies and ranks, in sessions of their own) are killed.
    An exception while waiting ends them the same way before it propagates.

    Returns
    -------
    RunOutcome
        The launcher's return code, whether the timeout ended it, whether it had to be killed,
        and whether a signal was forwarded to it.
    """
    guard.watch()
    if guard.signum is not None:
        guard.release()
        raise LaunchInterrupted(guard.signum)
    try:
        proc = subprocess.Popen(list(cmd), start_new_session=True, stdout=stdout, stderr=stderr)
    except OSError as e:
        guard.release()
        raise BackendError(f"cannot start {cmd[0]}: {e.strerror or e}") from None
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    ending_since: float | None = None
    forwarded = False
    timed_out = killed = False
    tree: dict[int, str] = {}

    def begin_end(signum: int) -> None:
        nonlocal ending_since
        tree.update(process_tree(proc.pid))
        _signal_group(proc, signum)
        if ending_since is None:
            ending_since = time.monotonic()

    def kill_all() -> None:
        nonlocal killed
        killed = True
        tree.update(process_tree(proc.pid))
        _signal_group(proc, signal.SIGKILL)
        _kill_tree(tree)

    try:
        while True:
            try:
                returncode = proc.wait(timeout=poll_s)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if guard.signum is not None and not forwarded:
                forwarded = True
                begin_end(guard.signum)
            elif deadline is not None and now >= deadline and not timed_out and ending_since is None:
                timed_out = True
                begin_end(signal.SIGTERM)
            if not killed and ending_since is not None and (guard.count > 1 or now - ending_since >= grace_s):
                kill_all()
    except BaseException:
        if proc.poll() is None:
            begin_end(signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                kill_all()
                proc.wait()
        raise
    finally:
        guard.release()
    if ending_since is not None:
        # Hydra's proxies and ranks live in sessions of their own: none may outlive the launch.
        _kill_tree(tree)
    return RunOutcome(returncode, timed_out, killed, forwarded)


#: What builds the namespaces of a launch: (network, emulate, prefix) → a context manager
#: yielding each host's namespace, or None.
EmulationFactory = Callable[[Network, bool, "str | None"], ContextManager["Mapping[str, str] | None"]]


def default_emulation(settings: Mapping[str, Any] | None = None) -> EmulationFactory:
    """What builds the namespaces of a launch without the command line: ``(network, emulate,
    prefix)`` → an emulated network built for the launch (``emulate``, with ``settings``: the
    keywords of :func:`~liquidsched.emulate.plan_emulation` such as ``buffers``, ``time_scale``,
    ``tcp``) and removed after it, one already up (``prefix``; a setting given must be the one it
    was built with), or None (the ranks run where the launcher puts them).

    Raises
    ------
    InputError
        when the network up under ``prefix`` is not ``network``, or was built otherwise.
    """
    given = dict(settings or {})

    @contextlib.contextmanager
    def emulation(network: Network, emulate: bool, prefix: str | None) -> Iterator[Mapping[str, str] | None]:
        from .. import emulate as em

        if emulate:
            with em.Emulation(network, prefix or em.DEFAULT_PREFIX, **given) as plan:
                yield plan.namespace
        elif prefix:
            plan = em.existing_emulation(network, prefix, given)
            yield plan.namespace
        else:
            yield None

    return emulation


def launch(argv: Sequence[str], network: Network, hosts: Sequence[str] | None = None, *, emulate: bool = False,
           prefix: str | None = None, pmpi: bool = False, selection: str | os.PathLike | None = None,
           launcher: Launcher | str | None = None, launcher_args: Sequence[str] = (),
           timeout_s: float | None = None, env: Mapping[str, str] | None = None,
           emulation_settings: Mapping[str, Any] | None = None, emulation: EmulationFactory | None = None,
           report: Callable[[str], None] | None = None,
           grace_s: float = DEFAULT_GRACE_S, stdout: IO | None = None, stderr: IO | None = None) -> LaunchResult:
    """Run the program ``argv`` with one rank per host of ``network`` (or of ``hosts``, in the
    network's order) and return how it ended (see the module's description).

    Parameters
    ----------
    emulate, prefix
        Build ``network`` as an emulated network for the launch (under ``prefix``), or, with
        ``prefix`` alone, run in the one ``netem up`` built; neither: no namespaces.
    pmpi
        Preload the interposition library with the network's fabric.
    selection
        A selection table (``liquidsched tune``) for the library and the mpi4py API.
    launcher, launcher_args
        What starts the ranks (:func:`~liquidsched.execute.resolve_launcher`) and its further
        arguments (placed before the ranks).
    timeout_s
        End the application after this many seconds (None: no limit).
    env
        Further environment of every rank.
    emulation_settings
        How an emulated network models the network: keywords of
        :func:`~liquidsched.emulate.plan_emulation` (``buffers``, ``time_scale``, ``tcp``, ...).
    emulation
        What builds the namespaces instead of :func:`default_emulation` (the command line passes
        its own, which takes the settings from its options and also times one flow).
    report
        Called with each line launch has to say (what runs where; a failure), None: silent.
    stdout, stderr
        Files that take the application's output (None: it passes through).

    Raises
    ------
    InputError, BackendError
        before anything is built: no program, an unknown host, a selection table that cannot be
        read or does not apply, the library not built, srun with namespaces, a bad timeout; or
        from building the emulated network (which is then removed).
    LaunchInterrupted
        when a signal arrived before the application started (anything built is removed).
    """
    say = report or (lambda line: None)
    if timeout_s is not None and not (timeout_s > 0 and timeout_s != float("inf")):
        raise InputError(f"the timeout must be a positive number of seconds, got {timeout_s}")
    if emulate and prefix is None:
        from ..emulate import DEFAULT_PREFIX

        prefix = DEFAULT_PREFIX
    ranks_hosts = application_hosts(network, hosts)
    launcher = launcher if isinstance(launcher, Launcher) else resolve_launcher(launcher)
    emulated = bool(emulate or prefix)
    if launcher.kind == "srun" and emulated:
        raise InputError(SRUN_NAMESPACES)
    where = network_kind(emulated, False, list(launcher_args), launcher)
    argv = list(argv)
    if not argv or where in HERE_NETWORKS:
        program_path(argv)  # elsewhere, the program is the other machines' to find
    settings = dict(env or {})
    table = selection_path(selection, network, len(ranks_hosts)) if selection is not None else None
    library = pmpi_library() if pmpi else None
    if emulate:
        from ..emulate import check_prefix

        check_prefix(prefix)  # type: ignore[arg-type]
    if emulation is not None and emulation_settings:
        raise InputError("give the emulation's settings to the emulation given, not beside it")
    build = emulation or default_emulation(emulation_settings)
    started = time.monotonic()
    with SignalGuard() as guard, contextlib.ExitStack() as stack:
        fabric = None
        if table is not None:
            settings["LIQUIDSCHED_SELECTION"] = str(table)
        try:
            namespace = stack.enter_context(build(network, emulate, prefix))
            guard.reclaim()
            if library is not None:
                from ..io.fabric import save_fabric

                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="liquidsched-launch-")))
                os.chmod(tmp, 0o755)
                fabric = tmp / f"{_file_name(network.name)}.fabric"
                # The links of a time-scaled emulation are slower than the network's: the paced
                # mode's rates and the cost model must be the links'.
                save_fabric(network, ranks_hosts, fabric, time_scale=time_scale_of(namespace))
            namespaces = None if namespace is None else [namespace[h] for h in ranks_hosts]
            cmd = application_command(argv, len(ranks_hosts), fabric, library, namespaces, settings, launcher,
                                      launcher_args)
            say(_placement(network, ranks_hosts, where, prefix, time_scale_of(namespace)))
            if library is not None:
                say(f"interposition library preloaded: {library}, fabric {fabric}"
                    + (f", selection {table}" if table is not None else ""))
            returncode, timed_out, killed, forwarded = run_application(cmd, guard, timeout_s, grace_s,
                                                                       stdout=stdout, stderr=stderr)
        except KeyboardInterrupt as e:
            # Nothing may interrupt the removal of what was built; an emulated network's own
            # handler (while it was being built) says which signal it was.
            guard.release()
            if isinstance(e, LaunchInterrupted):
                raise
            raise LaunchInterrupted(guard.signum or _signal_of(e)) from None
        except BaseException:
            guard.release()
            raise
        status = returncode if returncode >= 0 else 128 - returncode
        if guard.signum is not None:
            status = 128 + guard.signum
        elif timed_out:
            status = EXIT_TIMEOUT
        result = LaunchResult(status, where, ranks_hosts, cmd, returncode, guard.signum, timed_out,
                              time.monotonic() - started, killed, forwarded)
        if emulate:
            say(f"removing the emulated network {prefix}-n*")
    return result


def _signal_of(interrupt: KeyboardInterrupt) -> int:
    """The signal an interruption names (``signal 15``, as an emulated network raises it), else
    SIGINT (a Ctrl-C)."""
    words = str(interrupt).split()
    if len(words) == 2 and words[0] == "signal" and words[1].isdigit():
        return int(words[1])
    return int(signal.SIGINT)


def _file_name(name: str) -> str:
    """A network's name as a file name: ``crossbar_n_3``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "network"


def _placement(network: Network, hosts: list[str], where: str, prefix: str | None, time_scale: float = 1.0) -> str:
    """The line that says where the ranks run."""
    shown = ", ".join(hosts[:8]) + (f" … {hosts[-1]}" if len(hosts) > 8 else "")
    ranks = f"{len(hosts)} rank{'s' if len(hosts) != 1 else ''} on {network.name} ({shown})"
    if where == "emulated":
        env = " ".join(f"{k}={v}" for k, v in NAMESPACE_ENV.items())
        scaled = (f"; time scale {time_scale:g}: the application's times / {time_scale:g} are the modelled "
                  "network's") if time_scale != 1 else ""
        return f"launch: {ranks}, each in its host's namespace {prefix}-n*; MPICH over TCP ({env}){scaled}"
    if where == "local":
        return (f"launch: {ranks}, all on this machine: no emulated network (--emulate builds one), the ranks "
                "talk through its memory")
    return f"launch: {ranks}, where the launcher places them (its arguments decide)"


__all__ = ["DEFAULT_GRACE_S", "EXIT_TIMEOUT", "GUARDED_SIGNALS", "LaunchInterrupted", "LaunchResult", "RunOutcome",
           "SignalGuard", "application_hosts", "default_emulation", "launch", "pmpi_library", "process_tree",
           "program_path", "run_application", "selection_path", "signal_name"]
