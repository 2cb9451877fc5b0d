"""Built-in topologies, each reachable by name.

A topology is named with optional parameters: ``"fat-tree:k=8,oversubscription=2"``,
``"hierarchical:d1=8,d2=4,shared_uplinks=true"``, ``"torus:dims=4/4/4"``. List values are
separated by ``/``; rates take units (``c2=1Gbit/s``).
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import TopologyError
from ..network import Network
from ..units import parse_rate
from .backbone import backbone
from .crossbar import crossbar
from .fat_tree import fat_tree
from .hierarchical import hierarchical
from .random_graph import random_network
from .swiss_t1 import swiss_t1
from .torus import mesh, torus
from .two_switch import two_switch


@dataclass(frozen=True)
class Builder:
    name: str
    build: Callable[..., Network]
    summary: str

    def parameters(self) -> dict[str, Any]:
        """Parameter names and their defaults."""
        return {p.name: p.default for p in inspect.signature(self.build).parameters.values()}

    def optional_whole_numbers(self) -> set[str]:
        """Parameters that default to None and take a whole number (``int | None``)."""
        return {p.name for p in inspect.signature(self.build).parameters.values()
                if p.default is None and str(p.annotation).replace(" ", "") == "int|None"}


BUILDERS: dict[str, Builder] = {
    b.name: b
    for b in (
        Builder("two-switch", two_switch, "paper 000 Fig. 2: 5 senders, 5 receivers, 2 switches"),
        Builder("swiss-t1", swiss_t1, "paper 000 Fig. 10: 8-switch K-ring, 32 nodes, 86 MB/s"),
        Builder("hierarchical", hierarchical, "paper 002: d2 edge switches of d1 hosts under a root"),
        Builder("fat-tree", fat_tree, "k-ary fat tree, optional edge oversubscription, up/down routing"),
        Builder("torus", torus, "torus of routers, dimension-order routing"),
        Builder("mesh", mesh, "mesh of routers, dimension-order routing"),
        Builder("crossbar", crossbar, "n hosts on one non-blocking switch"),
        Builder("backbone", backbone, "paper 004: two clusters joined by one backbone link"),
        Builder("random", random_network, "seeded random switch graph, mixed link kinds and capacities"),
    )
}


def _convert(text: str, default: Any, where: str, whole: bool = False) -> Any:
    try:
        if whole:
            return int(text)
        if isinstance(default, bool):
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(f"expected true or false, got {text!r}")
            return text.lower() in ("true", "1", "yes")
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return parse_rate(text)
        if isinstance(default, (tuple, list)) or default is None:
            return [int(v) for v in text.split("/")]
        return text
    except ValueError as e:
        raise TopologyError(f"{where}: {e}") from None


def build_topology(spec: str) -> Network:
    """Build a named topology, ``"NAME"`` or ``"NAME:param=value,..."``.

    Examples
    --------
    >>> len(build_topology("crossbar:n=4").hosts())
    4
    """
    name, _, params = spec.partition(":")
    if name not in BUILDERS:
        raise TopologyError(f"unknown topology {name!r} (built-in: {', '.join(BUILDERS)})")
    builder = BUILDERS[name]
    defaults = builder.parameters()
    kwargs = {}
    for item in filter(None, params.split(",")):
        key, eq, value = item.partition("=")
        where = f"topology {name}: parameter {key!r}"
        if not eq:
            raise TopologyError(f"{where}: expected key=value, got {item!r}")
        if key not in defaults:
            raise TopologyError(f"{where}: unknown (parameters: {', '.join(defaults)})")
        kwargs[key] = _convert(value, defaults[key], where, key in builder.optional_whole_numbers())
    return builder.build(**kwargs)


def resolve_topology(spec: str | os.PathLike) -> Network:
    """A topology from a file path (YAML, JSON or a SimGrid platform), a built-in name with
    parameters, or a fabric: ``slurm:PATH[,hosts=RATE][,switches=RATE][,rates=FILE]``
    (:mod:`liquidsched.io.slurm`) or ``infiniband:NETDISCOVER,LFTS`` (:mod:`liquidsched.io.infiniband`)."""
    from ..io.topology import load_topology

    text = str(spec)
    name = text.partition(":")[0]
    if name in BUILDERS:
        return build_topology(text)
    if name in ("slurm", "infiniband"):
        from ..io import infiniband, slurm

        load = slurm.load_slurm_spec if name == "slurm" else infiniband.load_infiniband_spec
        return load(text.partition(":")[2])
    if Path(text).suffix.lower() in (".yaml", ".yml", ".json", ".xml") or Path(text).exists():
        return load_topology(text)
    raise TopologyError(f"unknown topology {name!r}: not a built-in ({', '.join(BUILDERS)}) nor a file")


__all__ = ["BUILDERS", "Builder", "build_topology", "resolve_topology", "two_switch", "swiss_t1",
           "hierarchical", "fat_tree", "torus", "mesh", "crossbar", "backbone",
           "random_network"]
