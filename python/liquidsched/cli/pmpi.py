"""``liquidsched pmpi-config``: the fabric file of the MPI interposition library.

An unmodified application whose ranks run with ``LD_PRELOAD=.../pmpi/build/libliquidsched_pmpi.so``
and ``LIQUIDSCHED_FABRIC=FILE`` in their environment has its ``MPI_Alltoall`` and ``MPI_Alltoallv`` planned by liquidsched
(see ``pmpi/liquidsched_pmpi.c``); this command writes that file for a topology and the host of
every rank (by default one rank per host, in the network's order, as ``run`` places them).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError
from .common import command_help, duration_arg, err, host_list_arg, out, print_json


def rank_hosts_of(args: argparse.Namespace, hosts: list[str]) -> list[str]:
    """The host of every rank: ``--hosts``, ``--hostfile``, else every host once in order."""
    from ..io.fabric import read_host_list

    if args.hosts and args.hostfile:
        raise InputError("give the ranks' hosts by --hosts or by --hostfile, not both")
    if args.hostfile:
        return read_host_list(args.hostfile)
    if args.hosts:
        return [h.strip() for h in args.hosts.split(",") if h.strip()]
    return hosts


def cmd_pmpi_config(args: argparse.Namespace) -> int:
    from ..io.fabric import fabric_text
    from ..io.output import write_output
    from ..topologies import resolve_topology

    net = resolve_topology(args.topology)
    ranks = rank_hosts_of(args, net.hosts())
    text = fabric_text(net, ranks, args.latency)
    write_output(args.output, text)
    summary = {"output": str(args.output), "network": net.name, "ranks": len(ranks), "hosts": len(set(ranks)),
               "resources": len(net.resources)}
    if args.json:
        print_json(summary)
        return 0
    console = err if args.output == "-" else out
    console.print(f"{net.name}: {len(ranks)} ranks on {len(set(ranks))} hosts, {len(net.resources)} resources; "
                  f"wrote {args.output}", markup=False)
    if args.output != "-":
        # Absolute paths, set in each rank's environment: ranks start elsewhere than here, and
        # the launcher itself is not an MPI program to preload.
        from ..execute.pmpi import PMPI_DIR

        library = PMPI_DIR / "build" / "libliquidsched_pmpi.so"
        console.print(f"run an application with: mpiexec -n {len(ranks)} env LD_PRELOAD={library} "
                      f"LIQUIDSCHED_FABRIC={Path(args.output).resolve()} ./app   (make pmpi builds the library)",
                      markup=False, soft_wrap=True)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pmpi-config", help=command_help("pmpi-config"))
    p.add_argument("--topology", required=True, metavar="NAME|FILE")
    p.add_argument("--hosts", type=host_list_arg, metavar="H1,H2,...", help="the host of each rank in order (a host may repeat)")
    p.add_argument("--hostfile", metavar="FILE", help="the host of each rank from a host file "
                                                       "('host', 'host:N' or 'host slots=N' per line)")
    p.add_argument("--output", required=True, metavar="FABRIC", help="the fabric file (- for standard output)")
    p.add_argument("--latency", type=duration_arg, metavar="TIME", help="one-way latency of a message between ranks, such as 30us "
                   "(liquidsched calibrate measures it: o + L), charged per synchronisation by the interposition "
                   "library's cost model when no selection table decides (default 50us)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_pmpi_config)
