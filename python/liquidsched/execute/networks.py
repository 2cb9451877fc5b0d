"""Where the ranks of a run talk to each other (:data:`NETWORKS`), and what follows from it:
whether a ratio to the model's bound measures the model, and whether this machine's memory
must hold every rank's buffers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from .memory import MemoryEstimate, check_memory
from .plan import ExchangePlan

if TYPE_CHECKING:
    from .launcher import Launcher

#: Where the ranks of a run talk to each other, and what that means for the measurement.
NETWORKS = {
    "emulated": "the emulated network (namespaces, shaped veth links)",
    "declared": "the modelled network, as declared by the user",
    "local": "local, not the modelled network: the ranks talk through this machine's memory",
    "undeclared": "where mpiexec placed the ranks, not declared to be the modelled network",
}
#: The networks on which a ratio to the model's liquid throughput is a measurement of the model.
COMPARABLE_NETWORKS = ("emulated", "declared")


#: The networks (:data:`NETWORKS`) on which every rank runs on this machine: an emulated one
#: (its namespaces are this machine's) and the local one.
HERE_NETWORKS = ("emulated", "local")


def network_kind(emulated: Mapping[str, str] | bool | None, declared: bool, mpiexec_args: Sequence[str],
                 launcher: Launcher | None = None) -> str:
    """The key of :data:`NETWORKS` for a run: where its ranks run. The one place that rule is
    written: :func:`run_exchange`, the ``run``, ``calibrate`` and ``steady`` commands ask it.

    Parameters
    ----------
    emulated
        The hosts' network namespaces when the ranks run in an emulated network, or True when
        they will (before the namespaces are built); None or False when they do not.
    declared
        The user's declaration that the ranks run on the modelled network.
    mpiexec_args
        Further launcher arguments (a host file places the ranks elsewhere).
    launcher
        What starts the ranks: srun places them on a Slurm allocation's nodes.

    Returns
    -------
    str
        ``emulated`` with namespaces, ``declared`` when the user says the ranks run on the
        modelled network, ``undeclared`` when launcher arguments or srun place them without
        that declaration, ``local`` otherwise (every rank on this machine).

    Examples
    --------
    >>> network_kind(None, False, []), network_kind(True, False, []), network_kind(None, False, ["-f", "hosts"])
    ('local', 'emulated', 'undeclared')
    """
    if emulated is not None and emulated is not False:
        return "emulated"
    if declared:
        return "declared"
    elsewhere = mpiexec_args or (launcher is not None and launcher.kind == "srun")
    return "undeclared" if elsewhere else "local"


def check_memory_on(network: str, plan: ExchangePlan) -> MemoryEstimate | None:
    """Refuse ``plan`` when its ranks all run on this machine (``network`` in
    :data:`HERE_NETWORKS`, as :func:`network_kind` tells) and their buffers cannot fit in the
    available memory; elsewhere this machine's memory says nothing.

    Parameters
    ----------
    network
        A key of :data:`NETWORKS`.
    plan
        The run's :func:`exchange_plan`.

    Returns
    -------
    MemoryEstimate or None
        The estimate when the ranks run here, None otherwise.

    Raises
    ------
    InsufficientMemoryError
        when the ranks run here and do not fit (:func:`check_memory`).
    """
    return check_memory(plan) if network in HERE_NETWORKS else None
