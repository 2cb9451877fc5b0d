"""Plots of results people compare (matplotlib, written as PNG without a display)."""

from __future__ import annotations

import io
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .io.files import write_atomic  # noqa: E402
from .sweep import SweepResult  # noqa: E402


def _save(fig, path: str | os.PathLike) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    plt.close(fig)
    write_atomic(path, buffer.getvalue())


def plot_sweep(result: SweepResult, path: str | os.PathLike) -> None:
    """Liquid throughput of every class, sorted by host count then throughput, with the
    throughput of an ideal crossbar beside it (as paper 001 Fig. 6)."""
    classes = result.classes
    x = range(len(classes))
    liquid = [float(c.liquid_throughput_Bps) / 1e6 for c in classes]
    crossbar = [float(c.crossbar_throughput_Bps) / 1e6 for c in classes]
    fig, ax = plt.subplots(figsize=(11, 5))
    ax.plot(x, crossbar, color="0.6", lw=1.5, label="full crossbar")
    ax.plot(x, liquid, ".", color="tab:blue", ms=4, label="liquid throughput")
    starts = [i for i, c in enumerate(classes) if i == 0 or c.hosts != classes[i - 1].hosts]
    # Label a host count only where there is room for it: small counts have one class each.
    ticks, gap = [], max(1, len(classes) // 40)
    for i in starts:
        if not ticks or i - ticks[-1] >= gap:
            ticks.append(i)
    ax.set_xticks(ticks, [str(classes[i].hosts) for i in ticks])
    ax.set_xlabel("sub-topology classes, by number of hosts (tick: first class with that many hosts)")
    ax.set_ylabel("throughput (MB/s)")
    ax.set_title(f"{result.network}: liquid throughput of the half all-to-all, "
                 f"{len(classes)} classes of {result.allocations} allocations")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    _save(fig, path)
