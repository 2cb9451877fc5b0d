"""Ctrl-C during an external solver: HiGHS and CP-SAT stopped within a few milliseconds.

Python runs signal handlers on the main thread, between bytecodes; a solver that keeps the main
thread inside its C++ code delays the ``KeyboardInterrupt`` until it returns, which may be
minutes. So each solve runs on a worker thread while the main thread waits in short, signal-
interruptible steps; when a handler raises (``KeyboardInterrupt``, or ``SystemExit`` from a
SIGTERM handler), the solver is told to stop through its own cancellation (an interrupt callback
for HiGHS, ``stop_search`` for CP-SAT), given a moment to do so, and the exception goes on.

The Rust core does the same for its own loops (see ``liquidsched._core``): every long
computation of the package answers Ctrl-C in well under half a second.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

#: How long the main thread sleeps between two looks at a solver: the delay a signal may add.
POLL_S = 0.05

#: How long a cancelled solver is waited for before the exception goes on without it (it is a
#: daemon thread: the process may exit under it).
GRACE_S = 2.0


def _wait_through_signals(wait: Callable[[float], Any], seconds: float) -> None:
    """``wait(seconds)`` for a cancelled solver to stop, through any further Ctrl-C: the first
    one is already on its way up, and leaving now would end the process under the solver's
    thread (OR-Tools then aborts it)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            wait(left)
            return
        except KeyboardInterrupt:
            continue


def call_interruptibly(work: Callable[[], Any], cancel: Callable[[], None], name: str = "solver",
                       stop: Callable[[], bool] | None = None) -> Any:
    """``work()`` on a worker thread, with the main thread free to take signals.

    Parameters
    ----------
    work
        The blocking call (a solver's ``solve``); its result is returned, its exception raised.
    cancel
        Asks ``work`` to return early; called (from the main thread) when a signal handler
        raises while ``work`` runs.
    name
        The worker thread's name.
    stop
        Asked every :data:`POLL_S` on the main thread while ``work`` runs; once it answers
        True, ``cancel`` is called and ``work``'s result (a solver's best answer) is awaited
        and returned as usual.

    Returns
    -------
    object
        What ``work()`` returned.

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C, once ``work`` stopped or :data:`GRACE_S` passed (any other exception a signal
        handler raises likewise).
    """
    outcome: dict[str, Any] = {}
    # An event rather than Thread.join: a join that a signal interrupted may report the thread
    # finished while it still runs (Python 3.11), and the process would exit under the solver.
    done = threading.Event()

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as e:  # handed to the main thread, which raises it
            outcome["error"] = e
        finally:
            done.set()

    threading.Thread(target=target, name=name, daemon=True).start()
    stopping = stop is None
    try:
        while not done.wait(POLL_S):
            if not stopping and stop():
                stopping = True
                cancel()
    except BaseException:
        cancel()
        _wait_through_signals(done.wait, GRACE_S)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def run_highs(highs: Any) -> Any:
    """``highs.run()`` (a ``highspy.Highs``), stopped within milliseconds by Ctrl-C.

    The solve runs on highspy's own solver thread (``startSolve``); the main thread waits on it
    in steps of :data:`POLL_S`, and on a signal's exception calls ``cancelSolve``, which the
    interrupt callbacks (simplex, interior point, MIP) that ``HandleUserInterrupt`` installs turn
    into a stop at the solver's next iteration. highspy's own keyboard-interrupt handling is not
    used: it prints, and exits the process at the fifth Ctrl-C.

    Returns
    -------
    highspy.HighsStatus
        What ``run`` returned.
    """
    if not highs.HandleUserInterrupt:
        highs.HandleUserInterrupt = True
    highs.startSolve()
    try:
        while True:
            done, status = highs.wait(POLL_S)
            if done:
                return status
    except BaseException:
        highs.cancelSolve()
        _wait_through_signals(highs.wait, GRACE_S)
        raise


def solve_cpsat(solver: Any, model: Any, callback: Any = None, stop: Callable[[], bool] | None = None) -> Any:
    """``solver.solve(model)`` (OR-Tools CP-SAT), stopped within milliseconds by Ctrl-C.

    CP-SAT's own SIGINT handler is switched off (``catch_sigint_signal``): it would take the
    signal from Python's handler, and end the search as if its time limit had passed, with a
    result rather than the interruption. The search runs on a worker thread and the main thread
    calls ``stop_search`` on a signal's exception. CP-SAT honours it at once while it searches
    (a few tenths of a second, its response included) but only between the steps of its presolve,
    some of which take tenths of a second each on a large model: up to about 1.3 s was measured
    on ``fat-tree:k=6`` all-to-all (``benchmarks/interrupt_latency.py``). The process cannot
    leave sooner: OR-Tools aborts a process that exits under a running solve. ``callback`` (a
    ``CpSolverSolutionCallback``) sees each solution; once ``stop()`` answers True the search is
    stopped and its best solution kept, as when its time limit passes.

    Returns
    -------
    int
        The CP-SAT status ``solve`` returned.
    """
    solver.parameters.catch_sigint_signal = False
    return call_interruptibly(lambda: solver.solve(model, callback), solver.stop_search, name="cp-sat", stop=stop)
