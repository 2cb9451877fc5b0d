"""Plots of results people compare (matplotlib without a display; PNG, PDF or SVG by the file's
extension, any other refused before anything is computed)."""

from __future__ import annotations

import io
import os
from fractions import Fraction

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402
import numpy as np  # noqa: E402

from .io.output import plot_format, write_output  # noqa: E402
from .occupancy import resources_by_load, slot_shares  # noqa: E402
from .sweep import SweepResult  # noqa: E402


def _save(fig, path: str | os.PathLike) -> None:
    """Write ``fig`` in the format of ``path``'s extension, whole or not at all."""
    buffer = io.BytesIO()
    try:
        # A tight box keeps legends placed outside the axes inside the picture.
        fig.savefig(buffer, format=plot_format(path), dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)
    write_output(path, buffer.getvalue())


def plot_sweep(result: SweepResult, path: str | os.PathLike) -> None:
    """Liquid throughput of every class against its host count, every host count labelled, with
    the throughput of an ideal crossbar of as many hosts (as paper 001 Fig. 6). The classes of
    one host count are spread across its column, lowest throughput on the left."""
    plot_format(path)
    by_count: dict[int, list] = {}
    for c in result.classes:
        by_count.setdefault(c.hosts, []).append(c)
    counts = sorted(by_count)
    xs, liquid = [], []
    for n in counts:
        group = sorted(by_count[n], key=lambda c: c.liquid_throughput_Bps)
        for i, c in enumerate(group):
            xs.append(n if len(group) == 1 else n - 0.35 + 0.7 * i / (len(group) - 1))
            liquid.append(float(c.liquid_throughput_Bps) / 1e6)
    crossbar = [max(float(c.crossbar_throughput_Bps) for c in by_count[n]) / 1e6 for n in counts]
    fig, ax = plt.subplots(figsize=(min(40, max(11, 0.25 * len(counts))), 5))
    ax.plot(counts, crossbar, color="0.6", lw=1.5, label="full crossbar")
    ax.plot(xs, liquid, ".", color="tab:blue", ms=4, label="liquid throughput (one dot per class)")
    # Every host count shown gets its label; many counts are written upright to fit.
    many = len(counts) > 40
    ax.set_xticks(counts, [str(n) for n in counts], rotation=90 if many else 0, fontsize=7 if many else 9)
    ax.set_xlim(counts[0] - 0.6, counts[-1] + 0.6)
    ax.set_xlabel("hosts (the classes of one host count spread across its column, lowest throughput left)")
    ax.set_ylabel("throughput (MB/s)")
    ax.set_title(f"{result.network}: liquid throughput of the half all-to-all, "
                 f"{len(result.classes)} classes of {result.allocations} allocations")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    _save(fig, path)


def _label_rows(ax, net, rows: list[int], load: dict[int, float], peak: float) -> None:
    """Name the rows when they fit, bottlenecks in red."""
    if len(rows) > 60:
        ax.set_yticks([])
        return
    ax.set_yticks(range(len(rows)), [net.resources[r] for r in rows], fontsize=7)
    for label, r in zip(ax.get_yticklabels(), rows):
        if load[r] >= peak * (1 - 1e-12):
            label.set_color("tab:red")
            label.set_fontweight("bold")


def plot_utilisation(schedule, prediction, path: str | os.PathLike) -> None:
    """Busy fraction of every resource the traffic uses (rows, most loaded first, bottlenecks
    labelled in red) over time (columns), as predicted by a simulation."""
    plot_format(path)
    net = schedule.network
    rows, load, peak = resources_by_load(schedule, in_time=True)
    grid = prediction.utilisation[rows, :]
    fig, ax = plt.subplots(figsize=(11, min(12, 2.5 + 0.18 * len(rows))))
    image = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0, vmax=1,
                      extent=(0, prediction.makespan_s * 1e3, len(rows) - 0.5, -0.5))
    fig.colorbar(image, ax=ax, label="busy fraction of capacity")
    _label_rows(ax, net, rows, load, peak)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel(f"resources ({len(rows)}, most loaded first)")
    policy = f", {prediction.policy}" if prediction.policy else ""
    ax.set_title(f"{net.name}: {schedule.traffic.name}, {schedule.info.algorithm} - {prediction.model} model{policy}\n"
                 f"makespan {prediction.makespan_s * 1e3:.3f} ms, {prediction.ratio_to_bound:.1%} of the liquid throughput")
    fig.tight_layout()
    _save(fig, path)


def plot_schedule(schedule, path: str | os.PathLike) -> None:
    """A schedule as frames (columns, numbered from 1) against the resources its traffic uses
    (rows): a cell is shaded by the share of the resource's slots in use in that frame.
    Bottlenecks (the resources needing the most frames) are the top rows, in red; in a schedule
    that reaches the frame bound they are full in every frame. A legend says which is which."""
    plot_format(path)
    net, traffic = schedule.network, schedule.traffic
    rows, load, peak = resources_by_load(schedule)
    share = slot_shares(schedule, rows)
    hot = np.array([load[r] == peak for r in rows])[:, None]
    height = min(12, 2 + 0.18 * len(rows))
    fig, ax = plt.subplots(figsize=(min(16, 7 + 0.2 * schedule.length), height))
    extent = (0.5, share.shape[1] + 0.5, len(rows) - 0.5, -0.5)
    for mask, cmap in ((~hot, "Blues"), (hot, "Reds")):
        cells = np.ma.masked_where(~np.broadcast_to(mask, share.shape) | (share == 0), share)
        image = ax.imshow(cells, aspect="auto", interpolation="nearest", cmap=cmap, vmin=0, vmax=1, extent=extent)
    fig.colorbar(image, ax=ax, label="share of the resource's slots in use (bottlenecks)", pad=0.01)
    _label_rows(ax, net, rows, load, peak)
    bottlenecks = int(hot.sum())
    ax.set_ylabel(f"resources ({len(rows)}; {bottlenecks} bottlenecks at the top, red)")
    ax.set_xlabel("frame")
    ax.legend(handles=[Patch(facecolor=plt.get_cmap("Reds")(0.8), label="bottleneck resource: share of its slots in use"),
                       Patch(facecolor=plt.get_cmap("Blues")(0.8), label="other resource: share of its slots in use"),
                       Patch(facecolor="white", edgecolor="0.5", label="idle in that frame")],
              # Below the axis label whatever the figure's height: the pad is in font sizes.
              loc="upper center", bbox_to_anchor=(0.5, 0), borderaxespad=4.5, ncol=3, fontsize=8, frameon=False)
    info = schedule.info
    state = "liquid" if schedule.liquid else ("fewest frames, proven" if info.optimal else "not proven optimal")
    ax.set_title(f"{net.name}: {traffic.name}, {info.algorithm}\n"
                 f"{schedule.length} frames for a frame bound of {info.lower_bound}; "
                 f"{float(schedule.makespan_s()) * 1e3:.3f} ms for Λ = {float(schedule.bound.duration_s) * 1e3:.3f} ms "
                 f"({state})")
    fig.tight_layout()
    _save(fig, path)


def plot_steady(report: dict, path: str | os.PathLike) -> None:
    """The throughput of K operations with the periodic schedule against K, beside the optimum
    ρ and the baseline's steady throughput (a report of ``liquidsched steady``)."""
    plot_format(path)
    rows = report["operations"]
    fig, ax = plt.subplots(figsize=(7, 4))
    ks = [r["operations"] for r in rows]
    ax.plot(ks, [r["throughput_per_s"] for r in rows], "o-", label="periodic schedule, K operations")
    ax.axhline(report["throughput_ops_per_s"], color="k", linestyle="--", label="ρ (optimal steady state)")
    base = report["baseline"]
    ax.axhline(float(Fraction(base["throughput_per_s"])), color="tab:red", linestyle=":",
               label=f"{base['name']} (steady)")
    ax.set_xscale("log")
    ax.set_xlabel("operations K")
    ax.set_ylabel("operations per second")
    ax.set_title(f"series of {report['operation']} on {report['platform']}")
    ax.legend()
    _save(fig, path)


def plot_message_sizes(report: dict, path: str | os.PathLike) -> None:
    """A message-size sweep (the JSON of ``liquidsched run --sizes``): the median time (a band
    from the fastest run to the p95) and the throughput against the size, log axes, one line per
    mode; the liquid throughput, and the time it gives, where the run was on the modelled
    network (elsewhere the bound is not what was measured, so it is left out)."""
    from .execute.sizes import format_size

    plot_format(path)
    points = report["sizes"]
    sizes = [p["size_bytes"] for p in points]
    modes = list(dict.fromkeys(m["mode"] for p in points for m in p["modes"]))
    fig, (time_ax, rate_ax) = plt.subplots(1, 2, figsize=(13, 4.8))
    for k, mode in enumerate(modes):
        rows = [(p["size_bytes"], m) for p in points for m in p["modes"] if m["mode"] == mode]
        x = [size for size, _ in rows]
        colour = f"C{k % 10}"
        time_ax.plot(x, [m["median_s"] * 1e3 for _, m in rows], "o-", color=colour, ms=4, label=mode)
        time_ax.fill_between(x, [m["min_s"] * 1e3 for _, m in rows], [m["p95_s"] * 1e3 for _, m in rows],
                             color=colour, alpha=0.15, lw=0)
        rate_ax.plot(x, [m["throughput_Bps"] / 1e6 for _, m in rows], "o-", color=colour, ms=4, label=mode)
    liquid = [(p["size_bytes"], p["network_bytes"], p["liquid_throughput_Bps"]) for p in points
              if p.get("liquid_throughput_Bps")]
    if report.get("comparable_to_bound") and liquid:
        time_ax.plot([s for s, _, _ in liquid], [b / rate * 1e3 for _, b, rate in liquid], "k--", lw=1.2,
                     label="liquid throughput's time (bound)")
        rate_ax.plot([s for s, _, _ in liquid], [rate / 1e6 for _, _, rate in liquid], "k--", lw=1.2,
                     label="liquid throughput (bound)")
    for ax, label in ((time_ax, "time per exchange (ms): median, band min to p95"),
                      (rate_ax, "throughput (MB/s): network bytes / median")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [format_size(s) for s in sizes], rotation=45 if len(sizes) > 6 else 0, fontsize=8)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("size of every transfer")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    about = report.get("metadata", {})
    note = "" if report.get("comparable_to_bound") else " (not the modelled network: no bound drawn)"
    fig.suptitle(f"{about.get('topology', '')}: {about.get('traffic', '')}, {about.get('algorithm', '')}; "
                 f"network {report.get('network', '')}{note}; {' '.join(report.get('mpi_library', '').split())}",
                 fontsize=10)
    fig.tight_layout()
    _save(fig, path)
