"""Where the time of a run goes: its timeline against the model, and a picture of it.

A timeline (:class:`~liquidsched.execute.progress.Timeline`, recorded by ``run --timeline``)
holds, per rank, when each piece was posted and seen complete, and each barrier entered and
left, from the start of the run. :func:`breakdown` splits the gap between the measured time
``T`` and the modelled time ``M`` (the frames model's time of the schedule for the frames mode,
Λ for every other) into parts that add up to ``T − M`` exactly:

``start and end``
    before the first piece is posted and after the last one is seen received (the barrier that
    starts a run, the reduction of the times that ends it, the ranks' late starts);
``synchronisation``
    between frames: from the last byte of frame k − 1 to the first piece of frame k (the frames
    mode only: the barrier and what it leaves idle);
``stragglers``
    within a frame, from its first piece posted to its last (ranks that left the barrier late);
``slow pieces``
    the rest of each frame beyond its modelled length (pieces slower than their slot rate: TCP's
    ramp-up after idle, queues, losses, a rank that did not run); without frames, the time the
    busiest bottleneck carried a piece beyond Λ;
``bottleneck idle``
    without frames, the time between the first and the last byte when no piece crossed the
    busiest bottleneck (a resource at Λ, the one that carried pieces longest).

The picture (:func:`plot_timelines`) draws ranks against time, every piece a bar on its sender's
row, barriers grey and frames shaded.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..schedule import Schedule

#: The parts of the gap, in the order they are reported.
PARTS = ("start and end", "synchronisation", "stragglers", "slow pieces", "bottleneck idle")


def median_run(times_s: Sequence[float]) -> int:
    """The index of the run whose time is the median (the lower one of an even count).

    Examples
    --------
    >>> median_run([3.0, 1.0, 2.0, 5.0])
    2
    """
    order = sorted(range(len(times_s)), key=lambda k: times_s[k])
    return order[(len(order) - 1) // 2]


def _events(ranks: Sequence[Sequence[Sequence[Any]]]) -> list[tuple[str, int, int, float, float]]:
    return [(str(e[0]), int(e[1]), int(e[2]), float(e[3]), float(e[4])) for rank in ranks for e in rank]


def frame_model_s(schedule: Schedule) -> list[float]:
    """Each frame's modelled length: its longest piece that crosses the network at its slot
    rate (0 for a frame of self transfers only, which are local copies in execution)."""
    net, traffic = schedule.network, schedule.traffic
    lists = traffic.resource_lists(net)
    out = []
    for frame in schedule.frames:
        longest = 0.0
        for piece in frame:
            i = traffic.index[piece.transfer]
            if traffic[i].src != traffic[i].dst:
                longest = max(longest, float(piece.bytes / net.slot_rate_exact(lists[i])))
        out.append(longest)
    return out


def breakdown(schedule: Schedule, mode: str, ranks: Sequence[Sequence[Sequence[Any]]], measured_s: float,
              lambda_s: float) -> dict[str, Any]:
    """The gap between a run's measured time and its model, split as the module says.

    Parameters
    ----------
    schedule
        The schedule the mode ran (its frames and their pieces; self transfers are local
        copies and recorded by no event).
    mode
        The mode: ``frames`` is split frame by frame, every other against Λ.
    ranks
        Per rank, the run's events (:class:`~liquidsched.execute.progress.Timeline`).
    measured_s
        The run's time (the slowest rank's).
    lambda_s
        Λ of the transfers that cross the network.

    Returns
    -------
    dict
        ``measured_s``, ``model_s``, ``gap_s`` and ``parts`` (seconds, by :data:`PARTS`, adding
        up to the gap), ``first_post_s`` and ``last_byte_s``.
    """
    events = _events(ranks)
    pieces = [e for e in events if e[0] in ("send", "recv")]
    parts = dict.fromkeys(PARTS, 0.0)
    if not pieces:
        return {"measured_s": measured_s, "model_s": 0.0, "gap_s": measured_s, "parts": parts | {
            "start and end": measured_s}, "first_post_s": None, "last_byte_s": None}
    first = min(e[3] for e in pieces if e[0] == "send")
    last = max(e[4] for e in pieces if e[0] == "recv")
    parts["start and end"] = first + (measured_s - last)
    if mode == "frames":
        model = frame_model_s(schedule)
        model_s = sum(model)
        previous_end = None
        for k, modelled in enumerate(model):
            sends = [e for e in pieces if e[0] == "send" and e[2] == k]
            recvs = [e for e in pieces if e[0] == "recv" and e[2] == k]
            if not sends or not recvs:
                continue
            begin, end = min(e[3] for e in sends), max(e[4] for e in recvs)
            if previous_end is not None:
                parts["synchronisation"] += begin - previous_end
            straggling = max(e[3] for e in sends) - begin
            parts["stragglers"] += straggling
            parts["slow pieces"] += (end - begin) - straggling - modelled
            previous_end = end
    else:
        model_s = lambda_s
        busy = bottleneck_busy_s(schedule, pieces)
        parts["bottleneck idle"] = (last - first) - busy
        parts["slow pieces"] = busy - lambda_s
    gap = measured_s - model_s
    return {"measured_s": measured_s, "model_s": model_s, "gap_s": gap, "parts": parts,
            "first_post_s": first, "last_byte_s": last}


def bottleneck_busy_s(schedule: Schedule, pieces: Sequence[tuple[str, int, int, float, float]]) -> float:
    """How long the busiest bottleneck carried at least one piece: of the resources at Λ, the
    one whose pieces (from posted to received) cover the longest time."""
    from ..bounds import compute_bound

    net, traffic = schedule.network, schedule.traffic
    crossing = [i for i, t in enumerate(traffic) if t.src != t.dst]
    sub = type(traffic)([traffic[i] for i in crossing], traffic.name)
    bottlenecks = {net.link_resource[name.split("|")[0]] for name in compute_bound(net, sub).bottlenecks}
    lists = traffic.resource_lists(net)
    posted: dict[int, float] = {}
    received: dict[int, float] = {}
    for kind, transfer, _, start, end in pieces:
        if kind == "send":
            posted[transfer] = min(posted.get(transfer, start), start)
        else:
            received[transfer] = max(received.get(transfer, end), end)
    best = 0.0
    for r in bottlenecks:
        intervals = sorted((posted[i], received[i]) for i in crossing if r in lists[i] and i in posted and i in received)
        best = max(best, union_length(intervals))
    return best


def union_length(intervals: Sequence[tuple[float, float]]) -> float:
    """The length of the union of sorted intervals.

    Examples
    --------
    >>> union_length([(0.0, 1.0), (0.5, 2.0), (3.0, 4.0)])
    3.0
    """
    total, start, end = 0.0, None, None
    for a, b in intervals:
        if start is None or a > end:
            if start is not None:
                total += end - start
            start, end = a, b
        else:
            end = max(end, b)
    if start is not None:
        total += end - start
    return total


def mode_breakdown(schedule: Schedule, mode: str, times_s: Sequence[float], timelines: Sequence[Any],
                   lambda_s: float) -> dict[str, Any]:
    """:func:`breakdown` of a mode's median run, with the run's index."""
    k = median_run(times_s)
    return breakdown(schedule, mode, timelines[k], times_s[k], lambda_s) | {"run": k}


def plot_timelines(runs: Sequence[tuple[str, Sequence[Sequence[Sequence[Any]]]]], path: str, title: str = "") -> None:
    """Ranks against time, one panel per ``(mode, ranks' events)`` of ``runs`` on one time axis:
    each piece a bar on its sender's row (from posted to seen received), barriers grey, the
    frames of the frames mode shaded in turn."""
    from ..plot import _save, plt

    hosts = max(len(ranks) for _, ranks in runs)
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, (0.32 * hosts + 1.0) * len(runs) + 0.8), sharex=True,
                             squeeze=False)
    colours = plt.get_cmap("tab20")
    for ax, (mode, ranks) in zip(axes[:, 0], runs):
        events = _events(ranks)
        received: dict[tuple[int, int], float] = {}
        for kind, transfer, frame, _, end in events:
            if kind == "recv":
                received[transfer, frame] = max(received.get((transfer, frame), end), end)
        frames = sorted({e[2] for e in events if e[0] == "send" and e[2] >= 0}) if mode == "frames" else []
        for n, k in enumerate(frames):
            starts = [e[3] for e in events if e[0] == "send" and e[2] == k]
            ends = [e[4] for e in events if e[0] == "recv" and e[2] == k]
            if starts and ends:
                ax.axvspan(min(starts) * 1e3, max(ends) * 1e3, color="0.93" if n % 2 else "0.86", zorder=0)
        for rank, rank_events in enumerate(ranks):
            for e in rank_events:
                kind, transfer, frame, start, end = str(e[0]), int(e[1]), int(e[2]), float(e[3]), float(e[4])
                if kind == "sync":
                    ax.broken_barh([(start * 1e3, (end - start) * 1e3)], (rank - 0.45, 0.9), color="0.45", zorder=2)
                elif kind == "send":
                    stop = received.get((transfer, frame), end)
                    ax.broken_barh([(start * 1e3, max(stop - start, 0.0) * 1e3)], (rank - 0.3, 0.6),
                                   color=colours(transfer % 20), alpha=0.75, zorder=3)
        ax.set_yticks(range(len(ranks)), [str(r) for r in range(len(ranks))], fontsize=7)
        ax.set_ylim(len(ranks) - 0.5, -0.5)
        ax.set_ylabel(f"{mode}\nrank", fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    axes[-1, 0].set_xlabel("time since the run started (ms)")
    fig.suptitle(title or "pieces from posted to received (bars on the sender's row), barriers grey, frames shaded",
                 fontsize=10)
    fig.tight_layout()
    _save(fig, path)


def breakdown_rows(breakdowns: dict[str, dict[str, Any]]) -> list[list[str]]:
    """Table rows, one per mode: measured, model, gap and each part in ms."""
    rows = []
    for mode, b in breakdowns.items():
        rows.append([mode, f"{b['measured_s'] * 1e3:.1f}", f"{b['model_s'] * 1e3:.1f}", f"{b['gap_s'] * 1e3:.1f}",
                     *(f"{b['parts'][p] * 1e3:.1f}" for p in PARTS)])
    return rows


__all__ = ["PARTS", "bottleneck_busy_s", "breakdown", "breakdown_rows", "frame_model_s", "median_run",
           "mode_breakdown", "plot_timelines", "union_length"]
