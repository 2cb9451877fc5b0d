"""What a report shows, as plain data (JSON-ready): the network drawn with each link's load
against Λ, the bound, the schedule as frames × resources, the simulators' predictions and a
run's measurements beside them. :mod:`.page` renders it."""

from __future__ import annotations

from typing import Any

from ..bounds import Bound
from ..errors import InputError, LiquidschedError
from ..io.fields import field_path, list_of, read_mapping, read_number, read_size, read_str
from ..network import Network
from ..occupancy import resources_by_load, slot_shares
from .layout import positions

#: The schedule's rows drawn: its most loaded resources (the bottlenecks first).
MAX_SCHEDULE_ROWS = 80
#: The most transfers whose routes the page carries (hover a host to see its own).
MAX_ROUTED_TRANSFERS = 5000
#: The simulators' models and policies a report predicts a schedule in.
PREDICTIONS = (("frames", "frames"), ("circuit", "all-at-once"), ("fluid", "frames"), ("fluid", "all-at-once"))


def network_content(net: Network, bound: Bound | None, traffic=None) -> dict[str, Any]:
    """Nodes with their positions, one edge per pair of connected nodes holding its directed
    links, each with its load in seconds and as a share of Λ (0 without a traffic), and the
    route of each transfer of ``traffic`` as edge indices (up to :data:`MAX_ROUTED_TRANSFERS`).

    Examples
    --------
    >>> from liquidsched import build_topology, compute_bound, half_all_to_all
    >>> net = build_topology("two-switch")
    >>> doc = network_content(net, compute_bound(net, half_all_to_all(net)))
    >>> hot = [e for e in doc["edges"] if e["ratio"] == 1.0]
    >>> [(e["a"], e["b"]) for e in hot], len(doc["nodes"]), len(doc["edges"])
    ([('a', 'b')], 12, 11)
    """
    pos = positions(net)
    loads = {r: float(v) for r, v in bound.loads_s.items()} if bound is not None else {}
    lam = float(bound.duration_s) if bound is not None else 0.0
    hot = set(bound.bottlenecks) if bound is not None else set()
    nodes = [{"id": n, "kind": "switch" if net.is_switch(n) else "host", "x": round(pos[n][0], 5),
              "y": round(pos[n][1], 5)} for n in net.nodes]
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    for lid, link in net.links.items():
        a, b = sorted((link.src, link.dst), key=net.node_index)
        r = net.link_resource[lid]
        name = net.resources[r]
        load = loads.get(name, 0.0)
        ratio = round(load / lam, 6) if lam else 0.0
        edge = edges.setdefault((a, b), {"a": a, "b": b, "links": [], "ratio": 0.0, "bottleneck": False})
        edge["links"].append({"id": lid, "src": link.src, "dst": link.dst, "resource": name,
                              "capacity_Bps": link.capacity_Bps, "slots": net.resource_slots[r],
                              "load_s": load, "ratio": ratio})
        edge["ratio"] = max(edge["ratio"], ratio)
        edge["bottleneck"] = edge["bottleneck"] or name in hot
    edge_list = list(edges.values())
    return {"name": net.name, "hosts": len(net.hosts()), "switches": len(net.switches()),
            "nodes": nodes, "edges": edge_list, "routes": routes_content(net, traffic, edges)}


def routes_content(net: Network, traffic, edges: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any] | None:
    """Each transfer's source, destination, bytes and the edges its route crosses, in order
    (indices into the edge list); None without a traffic or past :data:`MAX_ROUTED_TRANSFERS`."""
    if traffic is None or len(traffic) > MAX_ROUTED_TRANSFERS:
        return None
    index = {key: k for k, key in enumerate(edges)}
    out = []
    for t in traffic:
        ends = [(net.links[lid].src, net.links[lid].dst) for lid in net.route(t.src, t.dst)]
        out.append([t.src, t.dst, t.size_bytes, [index[tuple(sorted(e, key=net.node_index))] for e in ends]])
    return {"transfers": out}


def bound_content(bound: Bound, traffic_name: str) -> dict[str, Any]:
    """The bound and what limits it."""
    return {"traffic": traffic_name, "transfers": bound.transfers, "total_bytes": bound.total_bytes,
            "duration_s": float(bound.duration_s), "liquid_throughput_Bps": float(bound.liquid_throughput_Bps),
            "bottlenecks": list(bound.bottlenecks), "frame_lower_bound": bound.frame_lower_bound,
            "frame_bottlenecks": list(bound.frame_bottlenecks), "frame_bound_time_s": float(bound.frame_bound_time_s),
            "uniform": bound.uniform}


def schedule_content(schedule, max_rows: int = MAX_SCHEDULE_ROWS) -> dict[str, Any]:
    """The schedule as frames × its most loaded resources: the share of each resource's slots
    in use in each frame (non-zero cells only), bottlenecks flagged."""
    net = schedule.network
    rows, load, peak = resources_by_load(schedule)
    shown = rows[:max_rows]
    share = slot_shares(schedule, shown)
    cells = [[int(i), int(f), round(float(share[i, f]), 4)] for i, f in zip(*share.nonzero())]
    return {"algorithm": schedule.info.algorithm, "frames": schedule.length, "frame_bound": schedule.info.lower_bound,
            "liquid": schedule.liquid, "optimal": schedule.info.optimal,
            "makespan_s": float(schedule.makespan_s()), "duration_s": float(schedule.bound.duration_s),
            "resources": [{"name": net.resources[r], "frames_needed": int(load[r]), "bottleneck": load[r] == peak}
                          for r in shown],
            "resources_used": len(rows), "cells": cells}


def predictions_content(schedule) -> list[dict[str, Any]]:
    """The schedule's makespan in each of :data:`PREDICTIONS`; a model that refuses the schedule
    says why instead."""
    from ..simulate import simulate

    out = []
    for model, policy in PREDICTIONS:
        try:
            p = simulate(schedule, model, policy)
            out.append({"model": model, "policy": policy, "makespan_s": p.makespan_s,
                        "ratio_to_bound": p.ratio_to_bound})
        except LiquidschedError as e:
            out.append({"model": model, "policy": policy, "error": str(e)})
    return out


def _optional(read: Any) -> Any:
    """``read``, letting a missing or null value through as None."""
    def read_or_none(value: Any, where: str, error: type[Exception]) -> Any:
        return None if value is None else read(value, where, error)

    return read_or_none


def _read_measured_mode(value: Any, where: str, error: type[Exception]) -> dict[str, Any]:
    m = read_mapping(value, where, error)
    number = _optional(read_number)
    out = {"mode": read_str(m.get("mode"), field_path(where, "mode"), error),
           "median_s": read_number(m.get("median_s"), field_path(where, "median_s"), error)}
    for key in ("min_s", "max_s", "ratio_to_bound"):
        out[key] = number(m.get(key), field_path(where, key), error)
    return out


def _read_measured_size(value: Any, where: str, error: type[Exception]) -> dict[str, Any]:
    row = read_mapping(value, where, error)
    return {"size_bytes": read_size(row.get("size_bytes"), field_path(where, "size_bytes"), error),
            "modes": list_of(_read_measured_mode)(row.get("modes"), field_path(where, "modes"), error)}


def read_run_measurements(doc: Any, where: str) -> dict[str, Any]:
    """The fields of a run's JSON (``run --output``) that the report shows, each checked: a
    mapping with ``modes`` (each a mode name and finite times) or ``sizes`` (each a size and
    its modes); what it does not show is left as it is.

    Raises
    ------
    InputError
        naming the file and the field that is missing or not what a run writes.
    """
    run = read_mapping(doc, where, InputError)
    if "modes" not in run and "sizes" not in run:
        raise InputError(f"{where}: not a run's JSON (run --output): it has no modes or sizes")
    out = dict(run)
    if "sizes" in run:
        out["sizes"] = list_of(_read_measured_size)(run["sizes"], field_path(where, "sizes"), InputError)
    if "modes" in run:
        out["modes"] = list_of(_read_measured_mode)(run["modes"], field_path(where, "modes"), InputError)
    predicted = read_mapping(run.get("predicted_ratio_to_bound") or {}, field_path(where, "predicted_ratio_to_bound"),
                             InputError)
    out["predicted_ratio_to_bound"] = {
        read_str(k, field_path(where, "predicted_ratio_to_bound"), InputError):
            _optional(read_number)(v, field_path(field_path(where, "predicted_ratio_to_bound"), str(k)), InputError)
        for k, v in predicted.items()}
    out["liquid_throughput_Bps"] = _optional(read_number)(run.get("liquid_throughput_Bps"),
                                                          field_path(where, "liquid_throughput_Bps"), InputError)
    out["metadata"] = read_mapping(run.get("metadata") or {}, field_path(where, "metadata"), InputError)
    return out


def measured_content(run: dict[str, Any]) -> dict[str, Any]:
    """A run's measurements (``run --output``, read by :func:`read_run_measurements`): per mode
    the median and its ratio to the liquid throughput beside the prediction; with ``--sizes``,
    per size and mode."""
    about = run.get("metadata", {})
    out: dict[str, Any] = {"network": run.get("network"), "network_note": run.get("network_note"),
                           "mpi_library": run.get("mpi_library") or about.get("mpi_library", ""),
                           "topology": about.get("topology"), "traffic": about.get("traffic"),
                           "algorithm": run.get("algorithm") or about.get("algorithm"),
                           "liquid_throughput_Bps": run.get("liquid_throughput_Bps")}
    predicted = run.get("predicted_ratio_to_bound") or {}
    if run.get("sizes"):
        out["sizes"] = [{"size_bytes": s["size_bytes"],
                         "modes": [{"mode": m["mode"], "median_s": m["median_s"], "min_s": m.get("min_s"),
                                    "max_s": m.get("max_s"), "ratio_to_bound": m.get("ratio_to_bound")}
                                   for m in s["modes"]]} for s in run["sizes"]]
    else:
        out["modes"] = [{"mode": m["mode"], "median_s": m["median_s"], "min_s": m.get("min_s"),
                         "max_s": m.get("max_s"), "ratio_to_bound": m.get("ratio_to_bound"),
                         "predicted_ratio_to_bound": predicted.get(m["mode"])} for m in run.get("modes", [])]
    return out
