"""An unmodified MPI application with and without the interposition library, on emulated networks,
against the liquid throughput. Needs root (network namespaces, tc).

    sudo python benchmarks/pmpi.py --output out/pmpi.json --plot out/pmpi.png

The application is ``pmpi/tests/alltoall_check`` (MPI_Alltoall of equal messages, every byte
checked), run once with the MPI library's own MPI_Alltoall and once with
``LD_PRELOAD=libliquidsched_pmpi.so`` and ``LIQUIDSCHED_MODE=frames`` (the liquid schedule, frame by
frame, at every size: what the schedule achieves, not what the library would choose), on:

* two switches of four hosts joined by one cable (``benchmarks/topologies/two-switch-duplex.yaml``,
  100 Mbit/s everywhere): the cable carries 16 messages each way, a host link 7;
* paper 002's hierarchy, 4 × 2 hosts at 100 Mbit/s under uplinks of 200 Mbit/s (two messages
  at once, 2:1 oversubscribed): an uplink carries 16 messages at two at a time, a host link 7.

8 ranks on this machine's 2 cores: links at 100 Mbit/s keep the links, not the processors, the
limit. For each message size the median of ``--repeats`` timed calls, and the liquid
throughput's time Λ (the bound: no schedule of these messages is shorter on the network).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from common import benchmark_parser, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched.bounds import compute_bound
from liquidsched.emulate import Emulation, single_flow_check
from liquidsched.execute.pmpi import application_command, build_pmpi, parse_results
from liquidsched.io.fabric import save_fabric
from liquidsched.io.files import write_document
from liquidsched.topologies import resolve_topology
from liquidsched.traffic import all_to_all
from liquidsched.units import parse_size

HERE = Path(__file__).resolve().parent
NETWORKS = {"two switches, one cable": str(HERE / "topologies" / "two-switch-duplex.yaml"),
            "hierarchical 4x2, 2:1 uplinks": "hierarchical:d1=4,d2=2,c1=100Mbit/s,c2=200Mbit/s"}
WAYS = {"MPI library's MPI_Alltoall": False, "liquidsched (LD_PRELOAD)": True}


def measure(build, net, fabric, namespaces, sizes, repeats, preload):
    """Median time per size of the application's MPI_Alltoall, with or without the library."""
    argv = [str(build.check_program), "--op", "alltoall", "--sizes", ",".join(map(str, sizes)),
            "--repeats", str(repeats), "--warmup", "1"]
    cmd = application_command(argv, len(namespaces), fabric if preload else None,
                              build.library if preload else None, namespaces,
                              env={"LIQUIDSCHED_VERBOSE": "1", "LIQUIDSCHED_MODE": "frames"})
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    rows = parse_results(done.stdout)
    if done.returncode != 0 or len(rows) != len(sizes) or any(r["exact"] != 1 for r in rows):
        raise SystemExit(f"the application failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    if preload and done.stderr.count("planned by") != len(sizes):
        raise SystemExit(f"the library did not plan every size:\n{done.stderr[-2000:]}")
    return {int(r["bytes"]): {"median_s": float(r["median_s"]), "min_s": float(r["min_s"]),
                              "max_s": float(r["max_s"]), "mean_s": float(r["mean_s"])} for r in rows}, done.stderr


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--sizes", default="64KiB,256KiB,1MiB", help="bytes per message, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    console = Console()
    build = build_pmpi()
    results = []
    with progress_bar("networks") as progress:
        task = progress.add_task("networks", total=len(NETWORKS) * len(WAYS))
        for label, spec in NETWORKS.items():
            net = resolve_topology(spec)
            fabric = Path(args.output).with_suffix(f".{net.name}.fabric")
            save_fabric(net, net.hosts(), fabric)
            with Emulation(net, "lsbp") as emulation:
                hosts = net.hosts()
                flow = single_flow_check(emulation, hosts[0], hosts[-1], seconds=0.5)
                namespaces = [emulation.namespace[h] for h in hosts]
                for way, preload in WAYS.items():
                    times, notes = measure(build, net, str(fabric), namespaces, sizes, args.repeats, preload)
                    for size in sizes:
                        bound = compute_bound(net, all_to_all(net, size_bytes=size))
                        results.append({"network": label, "topology": spec, "way": way, "bytes": size,
                                        "liquid_time_s": float(bound.duration_s), **times[size],
                                        "ratio_to_bound": float(bound.duration_s) / times[size]["median_s"],
                                        "single_flow_ratio": flow["ratio"]})
                    if preload:
                        results[-1]["plans"] = [line for line in notes.splitlines() if "planned by" in line]
                    progress.advance(task)
    table = Table("network", "message", "way", "median", "min – max", "of liquid", "gain",
                  title=f"alltoall_check, 8 ranks, emulated, {args.repeats} timed calls per size")
    for r in results:
        base = next(b for b in results if b["network"] == r["network"] and b["bytes"] == r["bytes"]
                    and not WAYS[b["way"]])
        table.add_row(r["network"], f"{r['bytes'] // 1024} KiB", r["way"], f"{r['median_s'] * 1e3:.1f} ms",
                      f"{r['min_s'] * 1e3:.1f} – {r['max_s'] * 1e3:.1f} ms", f"{r['ratio_to_bound']:.1%}",
                      f"{base['median_s'] / r['median_s']:.2f}x")
    console.print(table)
    write_document({"benchmark": "pmpi", "sizes": sizes, "repeats": args.repeats, "results": results}, args.output)
    if args.plot:
        plot(results, args.plot)


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    networks = list(dict.fromkeys(r["network"] for r in results))
    fig, axes = plt.subplots(1, len(networks), figsize=(5 * len(networks), 4), squeeze=False)
    for ax, network in zip(axes[0], networks):
        for way in WAYS:
            rows = [r for r in results if r["network"] == network and r["way"] == way]
            ax.plot([r["bytes"] / 1024 for r in rows], [100 * r["ratio_to_bound"] for r in rows], marker="o",
                    label=way)
        ax.axhline(100, color="grey", linestyle="--", label="liquid throughput")
        ax.set_xscale("log", base=2)
        sizes = sorted({r["bytes"] for r in results})
        ax.set_xticks([b / 1024 for b in sizes], [f"{b // 1024} KiB" for b in sizes])
        ax.set_xlabel("message, every rank to every rank")
        ax.set_ylabel("% of the liquid throughput")
        ax.set_ylim(0, 110)
        ax.set_title(network)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
