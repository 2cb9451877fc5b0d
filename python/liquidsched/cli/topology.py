"""``liquidsched topology list|show|export``."""

from __future__ import annotations

import argparse

from ..errors import LiquidschedError
from .common import command_help, mbps, out, print_json, slot_summary


def cmd_topology_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ..topologies import BUILDERS

    if args.json:
        print_json([{"name": b.name, "summary": b.summary, "parameters": dict(b.parameters())}
                    for b in BUILDERS.values()])
        return 0
    table = Table("name", "what", "parameters (defaults)")
    for b in BUILDERS.values():
        table.add_row(b.name, b.summary, ", ".join(f"{k}={v}" for k, v in b.parameters().items()))
    out.print(table)
    return 0


def topology_summary(net) -> dict:
    """What ``topology show`` reports."""
    try:
        groups = {s: len(h) for s, h in net.host_groups().items()}
    except LiquidschedError:
        groups = {}
    return {"name": net.name, "description": net.description, "hosts": len(net.hosts()),
            "switches": len(net.switches()), "links": len(net.links), "resources": len(net.resources),
            "shared_duplex": len(net.shared_duplex), "routing": net.routing.policy,
            "senders": len(net.senders()), "receivers": len(net.receivers()),
            "capacities_Bps": sorted(set(net.resource_capacity)),
            "port_rate_Bps": None if net.port_rate_Bps is None else float(net.port_rate_Bps),
            "slots": {r: k for r, k in zip(net.resources, net.resource_slots) if k != 1},
            "hosts_per_switch": groups,
            "missing_routes": {f"{s}->{d}": str(e) for (s, d), e in net.missing_routes.items()}}


def _missing_summary(missing: dict[str, str]) -> str:
    """The pairs without a route, a few of them named (one per pair of switches where routes
    are composed)."""
    if not missing:
        return "none: every sender reaches every receiver"
    shown = ", ".join(list(missing)[:4])
    more = f" and {len(missing) - 4:,} more" if len(missing) > 4 else ""
    return f"{len(missing):,} ({shown}{more}); a traffic that needs one is refused"


def cmd_topology_show(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rich.table import Table

    from ..topologies import resolve_topology

    if Path(args.name).suffix.lower() == ".xml":
        # A SimGrid platform: say which reader read it (SimGrid, or liquidsched's own parser).
        from ..simgrid import read_platform

        platform = read_platform(args.name)
        info = topology_summary(platform.network) | {"read_by": platform.read_by}
    else:
        info = topology_summary(resolve_topology(args.name))
    if args.json:
        print_json(info)
        return 0
    table = Table(show_header=False)
    for k, v in info.items():
        if k == "capacities_Bps":
            v = ", ".join(mbps(c) for c in v)
        elif k == "port_rate_Bps":
            v = "-" if v is None else mbps(v)
        elif k == "slots":
            v = slot_summary(v) or "1 on every resource"
        elif k == "hosts_per_switch":
            v = " ".join(f"{s}:{n}" for s, n in v.items()) or "(hosts not each on one switch)"
        elif k == "missing_routes":
            v = _missing_summary(v)
        table.add_row(k, str(v))
    out.print(table)
    return 0


def cmd_topology_export(args: argparse.Namespace) -> int:
    from ..io.topology import save_topology
    from ..topologies import resolve_topology
    from .common import err

    net = resolve_topology(args.name)
    save_topology(net, args.output)
    if args.output != "-":
        err.print(f"wrote {args.output}: {len(net.hosts())} hosts, {len(net.links)} links")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    topo = sub.add_parser("topology", help=command_help("topology"))
    tsub = topo.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = tsub.add_parser("list", help="the built-in topologies and their parameters")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_topology_list)
    p = tsub.add_parser("show", help="summary of a topology")
    p.add_argument("name", metavar="NAME|FILE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_topology_show)
    p = tsub.add_parser("export", help="write a topology as YAML, JSON or a SimGrid platform (.xml)")
    p.add_argument("name", metavar="NAME|FILE")
    p.add_argument("--output", required=True, metavar="FILE", help="the file, by extension; - for standard output (JSON)")
    p.set_defaults(run=cmd_topology_export)
