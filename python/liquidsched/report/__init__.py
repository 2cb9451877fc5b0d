"""``liquidsched report``: one self-contained HTML page for a network and traffic, a schedule,
or a run — the network with its bottlenecks coloured by load, the bound and what limits it, the
schedule as frames × resources, the simulators' predictions and, for a run, what was measured
beside what was predicted. Viewing it needs no network access.

Examples
--------
>>> from liquidsched import build_topology, half_all_to_all, plan
>>> net = build_topology("two-switch")
>>> data = report_data(schedule=plan(net, half_all_to_all(net), "liquid"))
>>> sorted(k for k, v in data.items() if v is not None)
['bound', 'network', 'predictions', 'schedule']
"""

from __future__ import annotations

import os
from typing import Any

from ..bounds import compute_bound
from ..errors import InputError
from ..io.output import write_output
from .content import bound_content, measured_content, network_content, predictions_content, schedule_content
from .page import render_page


def report_data(net=None, traffic=None, schedule=None, run: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the page shows: given a schedule, its network, traffic, bound, frames and
    predictions; given a network (and a traffic), the network (with its loads) and the bound;
    given a run's JSON (``run --output``), its measurements too.

    Raises
    ------
    InputError
        when nothing is given, or a traffic without its network.
    """
    if schedule is not None:
        net, traffic = schedule.network, schedule.traffic
    if net is None and run is None:
        raise InputError("a report needs a network, a schedule or a run")
    if traffic is not None and net is None:
        raise InputError("a traffic needs its network")
    if schedule is not None:
        bound = schedule.bound  # computed once by the schedule, which its frames also need
    else:
        bound = compute_bound(net, traffic) if traffic is not None else None
    return {"network": network_content(net, bound, traffic) if net is not None else None,
            "bound": bound_content(bound, traffic.name) if bound is not None else None,
            "schedule": schedule_content(schedule) if schedule is not None else None,
            "predictions": predictions_content(schedule) if schedule is not None else None,
            "measured": measured_content(run) if run is not None else None}


def report_title(data: dict[str, Any]) -> tuple[str, str]:
    """The page's title and subtitle, from what it shows."""
    net, bound, schedule, measured = data["network"], data["bound"], data["schedule"], data["measured"]
    name = net["name"] if net else (measured or {}).get("topology") or "run"
    parts = []
    if net:
        parts.append(f"{net['hosts']} hosts, {net['switches']} switches")
    if bound:
        parts.append(f"{bound['traffic']}: {bound['transfers']} transfers, Λ = {bound['duration_s'] * 1e3:.3f} ms")
    if schedule:
        parts.append(f"{schedule['algorithm']}: {schedule['frames']} frames")
    if measured:
        parts.append(f"measured on the {measured.get('network') or '?'} network")
    return f"liquidsched report: {name}", "; ".join(parts)


def write_report(path: str | os.PathLike, **given: Any) -> dict[str, Any]:
    """Write the page for ``given`` (:func:`report_data`'s arguments) to ``path``, whole or not
    at all; return its data."""
    data = report_data(**given)
    title, subtitle = report_title(data)
    write_output(path, render_page(title, subtitle, data))
    return data


__all__ = ["render_page", "report_data", "report_title", "write_report"]
