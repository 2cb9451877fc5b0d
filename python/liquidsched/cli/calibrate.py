"""``liquidsched calibrate``: paper 002's cost parameters measured by ping-pong between two hosts
of a network (here, emulated, or on a cluster), and the complete-exchange times they predict
(eqs. 1, 2 and 6) beside the fluid simulator's for the shuffle and pairwise schedules."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from .common import command_help, count_arg, host_list_arg, err, out, print_json, size_arg
from .emulation import add_launch_options, emulated_hosts, launcher_args, launcher_of

#: The packet of the calibration unless given: the shuffle scheduler's default.
DEFAULT_PACKET = "64KiB"
#: How long the ping-pong may take unless told (seconds).
CALIBRATE_TIMEOUT_S = 300.0
#: Where the two ranks ran, by :func:`~liquidsched.execute.network_kind` (nothing is declared
#: here: a calibration measures whatever network it runs on).
WHERE = {"emulated": "emulated network", "undeclared": "the launcher's placement",
         "local": "this machine (shared memory)"}


def calibration_hosts(net, text: str | None) -> list[str]:
    """``--hosts A,B``, or the first and the last host of the network (behind different
    switches on the built-in hierarchies)."""
    hosts = net.hosts()
    chosen = text.split(",") if text else [hosts[0], hosts[-1]]
    unknown = [h for h in chosen if h not in hosts]
    if unknown:
        raise InputError(f"--hosts: {unknown[0]!r} is not a host of {net.name}")
    if len(chosen) != 2 or chosen[0] == chosen[1]:
        raise InputError(f"--hosts: expected two distinct hosts A,B, got {text!r}")
    return chosen


def exchange_predictions(net, params, message_bytes: int) -> list[dict[str, Any]]:
    """For an all-to-all of ``message_bytes`` among every host: eq. 2 and eq. 6 from the
    measured parameters, and the fluid simulator's shuffle (window policy) and pairwise (steps
    policy) on the modelled network; times and per-node bandwidths."""
    from ..cost_model import pairwise_exchange_s, per_node_bandwidth_Bps, shuffle_exchange_s
    from ..execute import predict_mode
    from ..schedulers import plan
    from ..schedulers.shuffle import remap_shape
    from ..traffic import all_to_all

    p = len(net.hosts())
    traffic = all_to_all(net, size_bytes=message_bytes)
    remap = remap_shape(net) is not None
    shuffle = plan(net, traffic, "shuffle", remap=remap, packet_bytes=params.packet_bytes)
    pairwise = plan(net, traffic, "pairwise", remap=remap)
    window = shuffle.info.parameters.get("window")
    rows = [("shuffle", "eq. 2 (no contention)", shuffle_exchange_s(params, p, message_bytes)),
            ("shuffle", f"fluid, window {window}" if window else "fluid, no window",
             predict_mode(shuffle, "shuffle").makespan_s),
            ("pairwise", "eq. 6 (no contention)", pairwise_exchange_s(params, p, message_bytes)),
            ("pairwise", "fluid, one step at a time", predict_mode(pairwise, "pairwise").makespan_s)]
    return [{"algorithm": a, "model": m, "time_s": t, "per_node_Bps": per_node_bandwidth_Bps(p, message_bytes, t)}
            for a, m, t in rows]


def cmd_calibrate(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ..execute import calibrate, network_kind
    from ..topologies import resolve_topology

    net = resolve_topology(args.topology)
    hosts = calibration_hosts(net, args.hosts)
    if args.repeats < 2:
        raise InputError(f"--repeats: at least 2, got {args.repeats}")
    launcher, mpiexec_args = launcher_of(args), launcher_args(args)
    with emulated_hosts(net, args.emulate, args.prefix) as namespace:
        where = WHERE[network_kind(namespace, False, mpiexec_args, launcher)]
        err.print(f"ping-pong {hosts[0]} ↔ {hosts[1]} on {where}: {args.packet_bytes:,}-byte packets, "
                  f"{args.repeats} repeats")
        params, raw = calibrate(hosts, args.packet_bytes, args.repeats, namespace, mpiexec_args, args.timeout,
                                launcher)
    report: dict[str, Any] = {"network": net.name, "hosts": hosts, "where": where, "parameters": params.to_dict(),
                              "round_trip_s": raw["round_trip_s"], "mpi_library": raw["mpi_library"]}
    if args.size is not None:
        report["all_to_all"] = {"message_bytes": args.size, "hosts": len(net.hosts()),
                                "predictions": exchange_predictions(net, params, args.size)}
    if args.json:
        print_json(report)
        return 0
    table = Table("parameter", "value", title=f"{net.name}: {hosts[0]} ↔ {hosts[1]}, {where}")
    for label, key in [("O_s, send overhead", "send_overhead_s"), ("L, latency", "latency_s"), ("g, gap", "gap_s"),
                       ("O_r, receive overhead", "recv_overhead_s"), ("U_r, user receive", "user_recv_s")]:
        table.add_row(label, f"{report['parameters'][key] * 1e6:.2f} µs")
    table.add_row("b, packet", f"{params.packet_bytes:,} B")
    table.add_row("round trip", f"{raw['round_trip_s'] * 1e6:.2f} µs")
    out.print(table)
    if args.size is not None:
        a2a = report["all_to_all"]
        t = Table("algorithm", "prediction", "time", "per node",
                  title=f"all-to-all of {args.size:,} B among {a2a['hosts']} hosts")
        for row in a2a["predictions"]:
            t.add_row(row["algorithm"], row["model"], f"{row['time_s'] * 1e3:.3f} ms",
                      f"{row['per_node_Bps'] / 1e6:.2f} MB/s")
        out.print(t)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate", help=command_help("calibrate"))
    p.add_argument("--topology", required=True, metavar="NAME|FILE")
    p.add_argument("--hosts", type=host_list_arg, metavar="A,B", help="the two hosts (default: the network's first and last)")
    p.add_argument("--packet-bytes", type=size_arg, default=size_arg(DEFAULT_PACKET), metavar="SIZE",
                   help=f"the packet b (default {DEFAULT_PACKET})")
    p.add_argument("--repeats", type=count_arg, default=50, help="samples of each measurement (default 50)")
    p.add_argument("--size", type=size_arg, metavar="SIZE",
                   help="also predict an all-to-all of SIZE per destination among every host (eqs. 2 and 6, and "
                        "the fluid simulator)")
    p.add_argument("--emulate", action="store_true", help="measure on the topology built as an emulated network (root)")
    p.add_argument("--prefix", help="measure in the emulated network 'netem up' built with this prefix")
    add_launch_options(p, CALIBRATE_TIMEOUT_S)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_calibrate)
