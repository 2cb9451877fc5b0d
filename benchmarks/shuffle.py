"""Paper 002 on liquidsched's model and on emulated networks: the shuffle and pairwise exchanges,
with and without remapping and window, against the liquid schedule, all at once, MPI_Alltoallv
and MPICH's alltoall algorithms.

    python benchmarks/shuffle.py --output out/shuffle.json --plot out/shuffle.png            # both parts
    python benchmarks/shuffle.py --part fluid --output out/shuffle-fluid.json

**Fluid part** (no root): the paper's four clusters, 8 × 2, 8 × 3, 6 × 4 and 8 × 4 (hosts at
12.5 MB/s, shared-duplex uplinks of 103 MB/s with a buffer of 45 frames, Table 1), an all-to-all
of ``--fluid-size`` per destination cut into packets of 1,500 bytes (the paper's MTU). Each
strategy is predicted by the fluid model in the policy its execution follows: the shuffle
exchange under its window (or none), the pairwise exchange one step at a time per node, the
liquid schedule frame by frame, all at once. One table, ratios to the liquid throughput and
per-node bandwidths. The shuffle exchange runs in the XOR order (the paper's) and, remapped and
windowed, in the shift order too: remapped, shift is switch-contention-free on every shape and
has no idle step when the node count is not a power of two.

**Emulated part** (root): hierarchies of ``--shapes`` d1 × d2 with the paper's ratio of uplink
capacity to d1 × host rate (103 / (8 · 12.5) = 1.03), host links of ``--host-rate`` (2.5 MB/s
by default: 8 to 12 busy-polling MPI ranks share 2 cores), shared-duplex uplinks whose shaper
queue is the buffer B_L = 45 frames; per-node bandwidth against message size (the paper's
Figs. 7–10), ``--repeats`` timed runs per point after a warm-up, every byte checked. Packets
of ``--packet-bytes`` (4 KiB: three frames, so W_g = ⌊45 / (2ν·3)⌋). Per shape, one TCP flow's
rate is checked against its link first (the machine, not the links, would otherwise limit), and
the packets the uplinks' buffers drop are counted for every strategy: the window's purpose.
"""

from __future__ import annotations

import os
import time

from common import benchmark_parser, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched import build_topology, plan
from liquidsched.bounds import compute_bound
from liquidsched.cost_model import per_node_bandwidth_Bps
from liquidsched.execute import predict_mode, run_exchange
from liquidsched.io.files import write_document
from liquidsched.traffic import all_to_all
from liquidsched.units import parse_size

#: The paper's clusters (d1 hosts on each of d2 switches).
PAPER_SHAPES = ((8, 2), (8, 3), (6, 4), (8, 4))
#: Uplink capacity over d1 × host rate in the paper: 103 MB/s over 8 × 12.5 MB/s.
UPLINK_RATIO = 103 / (8 * 12.5)
#: The buffer of the paper's IBM Gigabit uplink (Table 1), in frames.
BUFFER_FRAMES = 45
MTU = 1500


def hierarchy(d1: int, d2: int, host_Bps: float) -> str:
    return (f"hierarchical:d1={d1},d2={d2},c1={host_Bps:g},c2={UPLINK_RATIO * d1 * host_Bps:g},"
            f"shared_uplinks=true,buffer={BUFFER_FRAMES}")


def strategies(net, traffic, packet_bytes: int) -> list[tuple[str, object, str]]:
    """(label, schedule, execution mode) of every strategy compared."""
    def shuffle(remap: bool, window: str, permutation: str = "xor"):
        return plan(net, traffic, "shuffle", remap=remap, packet_bytes=packet_bytes, window=window,
                    permutation=permutation)

    liquid = plan(net, traffic, "liquid", time_limit=10)
    return [("shuffle (shift), remap, W_g", shuffle(True, "auto", "shift"), "shuffle"),
            ("shuffle, remap, W_g", shuffle(True, "auto"), "shuffle"),
            ("shuffle, remap", shuffle(True, "none"), "shuffle"),
            ("shuffle, W_g", shuffle(False, "auto"), "shuffle"),
            ("shuffle", shuffle(False, "none"), "shuffle"),
            ("pairwise, remap", plan(net, traffic, "pairwise", remap=True), "pairwise"),
            ("pairwise", plan(net, traffic, "pairwise"), "pairwise"),
            ("liquid, frames", liquid, "frames"),
            ("all at once", liquid, "all-at-once")]


#: MPI's own: MPI_Alltoallv, and MPI_Alltoall with MPICH's choice and three of its algorithms.
MPI_MODES = ("alltoallv", "alltoall", "alltoall-brucks", "alltoall-pairwise", "alltoall-scattered-4",
             "alltoall-scattered-32")
#: run_exchange calls per shape and size: the nine strategies and MPI's modes, one by one (so
#: that the uplinks' drops are each one's).
RUNS_PER_SIZE = 9 + len(MPI_MODES)


def predicted_ratio(schedule, mode: str) -> float:
    return predict_mode(schedule, mode).ratio_to_bound


def fluid_table(message_bytes: int, console: Console) -> list[dict]:
    rows = []
    with progress_bar("fluid predictions", console) as progress:
        task = progress.add_task("", total=len(PAPER_SHAPES))
        for d1, d2 in PAPER_SHAPES:
            net = build_topology(hierarchy(d1, d2, 12.5e6))
            traffic = all_to_all(net, size_bytes=message_bytes)
            bound = compute_bound(net, traffic)
            p = d1 * d2
            for label, schedule, mode in strategies(net, traffic, MTU):
                ratio = predicted_ratio(schedule, mode)
                per_node = float(bound.liquid_throughput_Bps) * ratio / p
                rows.append({"shape": f"{d1}x{d2}", "strategy": label, "mode": mode,
                             "window": schedule.info.parameters.get("window"),
                             "predicted_ratio": ratio, "per_node_MBps": per_node / 1e6,
                             "bound_per_node_MBps": float(bound.liquid_throughput_Bps) / p / 1e6})
            progress.advance(task)
    table = Table("cluster", "strategy", "W_g", "of liquid", "per node", "bound per node",
                  title=f"fluid model, paper 002's clusters, all-to-all of {message_bytes:,} B in {MTU}-byte packets")
    for r in rows:
        table.add_row(r["shape"], r["strategy"], "-" if r["window"] is None else str(r["window"]),
                      f"{r['predicted_ratio']:.1%}", f"{r['per_node_MBps']:.2f} MB/s",
                      f"{r['bound_per_node_MBps']:.2f} MB/s")
    console.print(table)
    return rows


def measure_shape(d1: int, d2: int, args, progress, task) -> dict:
    from liquidsched.emulate import Emulation, queue_drops, single_flow_check

    net = build_topology(hierarchy(d1, d2, args.host_rate))
    p = d1 * d2
    record: dict = {"shape": f"{d1}x{d2}", "topology": hierarchy(d1, d2, args.host_rate), "repeats": args.repeats,
                    "points": []}
    with Emulation(net, args.prefix) as emu:
        record["single_flow"] = single_flow_check(emu, net.hosts()[0], net.hosts()[-1], seconds=0.5)
        buffered = [net.resources[r] for r, b in enumerate(net.resource_buffer_packets) if b is not None]
        for size in args.sizes:
            traffic = all_to_all(net, size_bytes=size)
            bound = compute_bound(net, traffic)
            ours = strategies(net, traffic, args.packet_bytes)
            runs = [(label, schedule, mode) for label, schedule, mode in ours]
            runs += [(mode, ours[-1][1], mode) for mode in MPI_MODES]
            for label, schedule, mode in runs:
                t0 = time.perf_counter()
                before = queue_drops(emu)
                result = run_exchange(schedule, [mode], repeats=args.repeats, warmup=1, namespaces=emu.namespace,
                                      mode_schedules={mode: schedule}, seed=size)
                after = queue_drops(emu)
                m = result.modes[0]
                record["points"].append({
                    "size_bytes": size, "strategy": label, "mode": m.mode,
                    "window": schedule.info.parameters.get("window") if m.mode == "shuffle" else None,
                    "times_s": m.times_s, "median_s": m.median_s,
                    "per_node_MBps": per_node_bandwidth_Bps(p, size, m.median_s) / 1e6,
                    "ratio_to_bound": m.ratio_to_bound, "predicted_ratio": predicted_ratio(schedule, m.mode),
                    "bound_per_node_MBps": float(bound.liquid_throughput_Bps) / p / 1e6,
                    # packets the uplinks' buffers dropped over the warm-up and timed runs
                    "uplink_drops": sum(after[r] - before[r] for r in buffered),
                    "verified": m.verified, "wall_s": time.perf_counter() - t0})
                progress.advance(task)
    return record


def emulated_table(records: list[dict], console: Console) -> None:
    table = Table("shape", "size", "strategy", "W_g", "runs", "per node", "of liquid", "predicted", "spread",
                  "uplink drops", "bytes",
                  title="emulated hierarchies, shared-duplex uplinks with B_L = 45 frames (median of the timed runs)")
    for rec in records:
        for r in rec["points"]:
            spread = (max(r["times_s"]) - min(r["times_s"])) / r["median_s"]
            table.add_row(rec["shape"], f"{r['size_bytes'] // 1024} KiB", r["strategy"],
                          "-" if r["window"] is None else str(r["window"]), str(len(r["times_s"])),
                          f"{r['per_node_MBps']:.3f} MB/s", f"{r['ratio_to_bound']:.1%}",
                          f"{r['predicted_ratio']:.1%}", f"{spread:.0%}", str(r.get("uplink_drops", "-")),
                          "exact" if r["verified"] else "WRONG")
    console.print(table)
    for rec in records:
        f = rec["single_flow"]
        console.print(f"{rec['shape']}: one TCP flow {f['src']} → {f['dst']} reaches {f['ratio']:.1%} of its link")


def plot(records: list[dict], path: str) -> None:
    """Per shape, per-node bandwidth against message size, one line per strategy, the bound
    dashed (the paper's Figs. 7–10)."""
    from liquidsched.plot import _save, plt

    fig, axes = plt.subplots(1, len(records), figsize=(5.2 * len(records), 5.6), squeeze=False)
    colours = plt.get_cmap("tab20").colors
    for ax, rec in zip(axes[0], records):
        names = list(dict.fromkeys(r["strategy"] for r in rec["points"]))
        for k, name in enumerate(names):
            pts = sorted((r["size_bytes"], r["per_node_MBps"]) for r in rec["points"] if r["strategy"] == name)
            # liquidsched's strategies solid, the MPI library's dotted
            style = ":" if name.startswith("alltoall") else "-"
            ax.plot([x / 1024 for x, _ in pts], [y for _, y in pts], style, marker="os^v<>Dph*"[k % 10], ms=4,
                    lw=1.3, color=colours[k % len(colours)], label=name)
        bound = sorted({(r["size_bytes"], r["bound_per_node_MBps"]) for r in rec["points"]})
        ax.plot([x / 1024 for x, _ in bound], [y for _, y in bound], "k--", lw=1.5, label="bound (liquid)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size per destination (KiB)")
        ax.set_title(f"{rec['shape']} (d1 × d2)")
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("per-node bandwidth (MB/s)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=8, fontsize=8, frameon=False)
    fig.suptitle("all-to-all on emulated two-level hierarchies, shared-duplex uplinks, B_L = 45 frames "
                 f"(median of {records[0]['repeats']} runs)", fontsize=11)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    _save(fig, path)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--part", choices=("fluid", "emulated", "both"), default="both")
    parser.add_argument("--fluid-size", type=parse_size, default=parse_size("96KiB"), metavar="BYTES")
    parser.add_argument("--shapes", default="4x2,6x2,4x3", help="d1xd2 shapes of the emulated part")
    parser.add_argument("--sizes", default="8KiB,32KiB,128KiB,512KiB", help="message sizes of the emulated part")
    parser.add_argument("--host-rate", type=parse_size, default=2_500_000, metavar="BYTES_PER_S")
    parser.add_argument("--packet-bytes", type=parse_size, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--prefix", default="lsqshuf")
    args = parser.parse_args()
    args.sizes = [parse_size(s) for s in args.sizes.split(",")]
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    console = Console(width=170)
    result: dict = {"benchmark": "shuffle"}
    if args.part in ("fluid", "both"):
        result["fluid"] = {"message_bytes": args.fluid_size, "packet_bytes": MTU,
                           "rows": fluid_table(args.fluid_size, console)}
        write_document(result, args.output)
    if args.part in ("emulated", "both"):
        if os.geteuid() != 0:
            raise SystemExit("the emulated part needs root")
        records = []
        per_shape = len(args.sizes) * RUNS_PER_SIZE
        with progress_bar("{task.description}", console) as progress:
            task = progress.add_task("runs", total=len(shapes) * per_shape)
            for d1, d2 in shapes:
                records.append(measure_shape(d1, d2, args, progress, task))
                result["emulated"] = {"host_rate_Bps": args.host_rate, "packet_bytes": args.packet_bytes,
                                      "repeats": args.repeats, "shapes": records}
                write_document(result, args.output)
        emulated_table(records, console)
        if args.plot:
            plot(records, args.plot)


if __name__ == "__main__":
    main()
