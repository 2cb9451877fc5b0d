"""Emulated networks for the commands that run MPI (``run``, ``calibrate``): one built for the
command, or one already up."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from ..errors import InputError
from ..network import Network
from .common import err


@contextlib.contextmanager
def emulated_hosts(network: Network, emulate: bool, prefix: str | None) -> Iterator[dict[str, str] | None]:
    """Host namespaces for the run: a network built for it (``emulate``), one already up
    (``prefix``), or None to run the ranks here."""
    from .. import emulate as em

    if emulate:
        with em.Emulation(network, prefix or em.DEFAULT_PREFIX) as plan:
            report_single_flow(plan)
            yield plan.namespace
    elif prefix:
        plan = em.load_state(prefix)
        if plan.network != network:
            raise InputError(f"the emulated network {prefix!r} is {plan.network.name}, "
                             f"not the network {network.name}")
        yield plan.namespace
    else:
        yield None


def report_single_flow(plan: Any) -> None:
    """Check that one TCP flow between the first sender and the last other receiver reaches
    its narrowest link's rate; warn when the machine, not the emulated links, is the limit."""
    from .. import emulate as em

    net = plan.network
    src = net.senders()[0]
    dst = [h for h in net.receivers() if h != src][-1]
    check = em.single_flow_check(plan, src, dst, seconds=0.5)
    err.print(f"single flow {src} → {dst}: {check['ratio']:.1%} of its narrowest link")
    if check["ratio"] < 0.9:
        err.print("warning: below 90 %: the machine, not the emulated links, limits this flow")
