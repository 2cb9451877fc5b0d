"""Execute a schedule with MPI: an alltoallv-like exchange of numpy buffers between ranks.

Ranks are the traffic's hosts in network order, one process each, started by a launcher
(:func:`launch_command`): ``mpiexec`` (the ``mpich`` wheel's locally; on a cluster, the site's),
Slurm's ``srun``, or another mpiexec-compatible one given by path. Modes:

* ``frames``: frame by frame, a barrier between frames;
* ``dependency-driven`` (formerly ``barrier-free``, still accepted): a piece starts once the
  pieces before it on each of its resources have been received, told by point-to-point
  notifications;
* ``paced``: every transfer sent from the start in chunks at the rate that ends it at Λ × (1 + h),
  h a small headroom (:mod:`.paced`), no barrier: the continuous form of a liquid schedule, for
  any sizes;
* ``all-at-once``: every send and receive posted together;
* ``alltoallv``, ``alltoallv-scattered-N``: ``MPI_Alltoallv`` itself, as the library orders it
  or with MPICH's scattered algorithm posting N messages at a time;
* ``shuffle``: paper 002's synchronous shuffle exchange (Alg. 2): every receive posted, each
  piece sent non-blocking in schedule order while fewer than W of the steps before it are not
  yet wholly received (the schedule's window, ``info.parameters["window"]``), no barrier; a
  waiting rank gives the processor up between polls;
* ``pairwise``: paper 002's pairwise exchange (Alg. 3): each rank one step at a time, waiting
  for its own sends and receives of a step before the next;
* ``alltoall``, ``alltoall-brucks``, ``alltoall-pairwise``, ``alltoall-scattered-N``:
  ``MPI_Alltoall`` with MPICH's own choice, or one of its algorithms forced through its control
  variables (the scattered one posting N sends and receives at a time), for an all-to-all of
  equal messages; each such mode is a launch of its own, since MPICH reads them at start.

The shuffle and pairwise modes are usually given their own schedules (``mode_schedules``: the
``shuffle`` and ``pairwise`` schedulers' for the same traffic); the others run the schedule
given, or ignore it (the MPI library's modes).

How a rank waits (``progress``, :mod:`.progress`): ``spin`` as MPI does, or ``sleep``, testing
its requests and sleeping in between, so that many ranks on few cores leave the processor to
the kernel that moves their bytes. The frames mode can post every receive before its first
frame (``prepost``). Every run can record a timeline (``timeline``): per rank, when each piece
was posted and seen complete and each synchronisation entered and left (:mod:`.timeline`).

Every run can check every received byte. Inside an emulated network
(:mod:`liquidsched.emulate`), each rank runs in its host's namespace and MPICH is told to use TCP
between them (``MPIR_CVAR_NOLOCAL=1``, ``MPIR_CVAR_CH4_NETMOD=ofi``, ``FI_PROVIDER=tcp``): without
that it would silently use shared memory.

Every result says on which network it was measured (:data:`NETWORKS`): the emulated network,
the modelled network as the user declares it (a cluster run with its host file), or somewhere
else (by default: this machine, where the ranks talk through shared memory). Only on the first
two is a ratio to the model's liquid throughput a measurement of the model; elsewhere the
ratio is left out.

A transfer from a host to itself is a local copy in execution, whatever the model says (on the
Swiss-T1 a host sends to itself through its switch). So the measured throughput counts only
the bytes that cross the network and is compared with the liquid throughput of those transfers
alone (:func:`network_schedule`); the result says how many self transfers were local copies.

Before launching, a run whose ranks all run here (:func:`network_kind`) is refused when their
buffers cannot fit in the available memory (:func:`check_memory_on`). A run that fails, or
outlives its timeout (the launcher and every rank are then ended), keeps the modes it measured
before (:class:`ExchangeFailedError`).
"""

from .calibration import calibrate
from .exchange import DEFAULT_TIMEOUT_S, run_exchange
from .launcher import (LAUNCHERS, NAMESPACE_ENV, SRUN_NAMESPACES, Launcher, failure_line, find_mpiexec, launch_command,
                       launch_job, resolve_launcher, run_launched)
from .memory import InsufficientMemoryError, MemoryEstimate, check_memory, memory_estimate
from .networks import COMPARABLE_NETWORKS, HERE_NETWORKS, NETWORKS, check_memory_on, network_kind
from .plan import (ALLTOALL_ALGORITHMS, DEFAULT_MODES, MODES, ExchangePlan, alltoall_mode_env, exchange_plan, is_mode,
                   library_mode_env, mode_names)
from .prediction import PREDICTION_OF_MODE, crossing_lambda_s, network_schedule, predict_mode, prediction_of_mode
from .progress import PROGRESS
from .results import ExchangeFailedError, ExchangeResult, ModeResult, scaled_back

__all__ = ["ALLTOALL_ALGORITHMS", "COMPARABLE_NETWORKS", "DEFAULT_MODES", "DEFAULT_TIMEOUT_S", "HERE_NETWORKS",
           "LAUNCHERS", "MODES", "NAMESPACE_ENV", "NETWORKS", "PREDICTION_OF_MODE", "PROGRESS", "SRUN_NAMESPACES",
           "ExchangeFailedError", "ExchangePlan", "ExchangeResult", "InsufficientMemoryError", "Launcher",
           "MemoryEstimate", "ModeResult", "alltoall_mode_env", "calibrate", "check_memory", "check_memory_on",
           "crossing_lambda_s", "exchange_plan", "failure_line", "find_mpiexec", "is_mode", "launch_command",
           "launch_job", "library_mode_env", "memory_estimate", "mode_names", "network_kind", "network_schedule",
           "predict_mode", "prediction_of_mode", "resolve_launcher", "run_exchange", "run_launched", "scaled_back"]
