"""Built-in topologies, each reachable by name.

A topology is named with optional parameters: ``"fat-tree:k=8,oversubscription=2"``,
``"hierarchical:d1=8,d2=4,shared_uplinks=true"``, ``"torus:dims=4/4/4"``. List values are
separated by ``/``; rates take units (``c2=1Gbit/s``).
"""

from __future__ import annotations

import functools
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
from .dragonfly import dragonfly
from .fat_tree import fat_tree
from .hierarchical import hierarchical
from .ml_cluster import rail_optimised, two_tier
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


def _guarded(name: str, build: Callable[..., Network]) -> Callable[..., Network]:
    """``build``, refusing before it starts a network of more than :data:`MAX_NODES` nodes,
    however it is called (a spec or Python: ``crossbar(10**9)`` would fill the memory first)."""
    signature = inspect.signature(build)

    @functools.wraps(build)
    def guarded(*args: Any, **kwargs: Any) -> Network:
        try:
            given = signature.bind(*args, **kwargs).arguments
            nodes = _nodes(name, given, {p.name: p.default for p in signature.parameters.values()})
        except (TypeError, ValueError, OverflowError):
            nodes = 0  # arguments the builder itself refuses, with its own message
        if nodes > MAX_NODES:
            raise TopologyError(f"{name}: {nodes:,} nodes, more than the {MAX_NODES:,} liquidsched builds")
        return build(*args, **kwargs)

    return guarded


backbone, crossbar, fat_tree, hierarchical = (_guarded("backbone", backbone), _guarded("crossbar", crossbar),
                                              _guarded("fat-tree", fat_tree), _guarded("hierarchical", hierarchical))
mesh, torus, random_network = _guarded("mesh", mesh), _guarded("torus", torus), _guarded("random", random_network)
rail_optimised, two_tier = _guarded("rail-optimised", rail_optimised), _guarded("two-tier", two_tier)
dragonfly = _guarded("dragonfly", dragonfly)

BUILDERS: dict[str, Builder] = {
    b.name: b
    for b in (
        Builder("two-switch", two_switch, "paper 000 Fig. 2: 5 senders, 5 receivers, 2 switches"),
        Builder("swiss-t1", swiss_t1, "paper 000 Fig. 10: 8-switch K-ring, 32 nodes, 86 MB/s"),
        Builder("hierarchical", hierarchical, "paper 002: d2 edge switches of d1 hosts under a root"),
        Builder("fat-tree", fat_tree, "k-ary fat tree, optional edge oversubscription, D-mod-k routing by destination host"),
        Builder("torus", torus, "torus of routers, dimension-order routing"),
        Builder("mesh", mesh, "mesh of routers, dimension-order routing"),
        Builder("crossbar", crossbar, "n hosts on one non-blocking switch"),
        Builder("backbone", backbone, "paper 004: two clusters joined by one backbone link"),
        Builder("random", random_network, "seeded random switch graph, mixed link kinds and capacities"),
        Builder("rail-optimised", rail_optimised, "servers of accelerators, NIC g on rail g's leaf, spines above"),
        Builder("two-tier", two_tier, "servers with a fast internal crossbar under an oversubscribed fabric"),
        Builder("dragonfly", dragonfly, "groups of routers joined all to all, one global cable between groups, "
                                        "minimal routing"),
    )
}


#: Rate parameters of the builders (the others of type float are plain numbers).
RATE_PARAMETERS = ("capacity_Bps", "card_Bps", "backbone_Bps", "c1", "c2", "nic_Bps", "nvlink_Bps", "internal_Bps",
                   "global_Bps")
#: The most nodes a built-in topology may have: a spec that implies more is refused before it is
#: built (``crossbar:n=100000000`` would fill the memory first).
MAX_NODES = 1_000_000
#: The most a whole-number parameter may be (a seed excepted).
MAX_PARAMETER = MAX_NODES


def _convert(text: str, default: Any, where: str, key: str, whole: bool = False) -> Any:
    """The value of one field, by the one numeric rule (:mod:`liquidsched.units`)."""
    from ..spec import parse_bool
    from ..units import parse_count, parse_number

    if key == "seed":
        return parse_count(text, where, least=0, most=2**63 - 1)
    if whole or isinstance(default, int) and not isinstance(default, bool):
        return parse_count(text, where, least=0, most=MAX_PARAMETER)
    if isinstance(default, bool):
        return parse_bool(text, where, TopologyError)
    if key in RATE_PARAMETERS:
        return parse_rate(text, where)
    if isinstance(default, float):
        return parse_number(text, where, least=0, most=1e6)
    if isinstance(default, (tuple, list)) or default is None:
        return [parse_count(v, where, least=0, most=MAX_PARAMETER) for v in text.split("/")]
    return text


def _nodes(name: str, kw: dict[str, Any], defaults: dict[str, Any]) -> int:
    """How many nodes the builder ``name`` would make of ``kw`` (over ``defaults``), at least."""
    v = {**defaults, **kw}
    if name == "crossbar":
        return v["n"] + 1
    if name == "fat-tree":
        k = v["k"]
        return k * (k // 2) * (v["hosts_per_edge"] or k // 2) + k * k + (k // 2) ** 2
    if name in ("torus", "mesh"):
        routers = 1
        for d in v["dims"] or ():
            routers *= max(d, 1)
        return routers * (1 + v["hosts_per_router"])
    if name == "hierarchical":
        return v["d1"] * v["d2"] + v["d2"] + 1
    if name == "backbone":
        return v["n1"] + v["n2"] + 2
    if name == "random":
        return v["switches"] + v["hosts"]
    if name == "rail-optimised":
        return v["servers"] * (2 * v["gpus"] + 1) + v["gpus"] + v["spines"]
    if name == "dragonfly":
        groups = v["g"] or v["a"] * v["h"] + 1
        return groups * v["a"] * (1 + v["p"])
    if name == "two-tier":
        return v["servers"] * (v["gpus"] + 1) + v["servers"] // max(v["servers_per_leaf"], 1) + 1 + v["spines"]
    return 0


def build_topology(spec: str) -> Network:
    """Build a named topology, ``"NAME"`` or ``"NAME:param=value,..."``: the fields are read by
    the one spec reader (:func:`liquidsched.spec.spec_fields`, a key given twice refused) and
    the one numeric rule; a topology of more than :data:`MAX_NODES` nodes is refused before it
    is built (by the builder's guard, :func:`_guarded`).

    Examples
    --------
    >>> len(build_topology("crossbar:n=4").hosts())
    4
    """
    from ..spec import field_where, spec_fields

    if not isinstance(spec, str):
        raise TopologyError(f"expected a topology such as 'crossbar:n=4', got {type(spec).__name__} {spec!r}")
    name = spec.partition(":")[0]
    if name not in BUILDERS:
        raise TopologyError(f"unknown topology {name!r} (built-in: {', '.join(BUILDERS)})")
    builder = BUILDERS[name]
    defaults = builder.parameters()
    _, fields = spec_fields(spec, "topology", defaults, TopologyError)
    whole = builder.optional_whole_numbers()
    try:
        kwargs = {key: _convert(value, defaults[key], field_where("topology", name, key), key, key in whole)
                  for key, value in fields.items()}
    except ValueError as e:  # the numeric rule's NumberError, a topology's error here
        raise TopologyError(str(e)) from None
    return builder.build(**kwargs)


def resolve_topology(spec: str | os.PathLike) -> Network:
    """A topology from a file path (YAML, JSON or a SimGrid platform), a built-in name with
    parameters, or a fabric: ``slurm:PATH[,hosts=RATE][,switches=RATE][,rates=FILE]``
    (:mod:`liquidsched.io.slurm`) or ``infiniband:NETDISCOVER,LFTS`` (:mod:`liquidsched.io.infiniband`)."""
    from ..io.topology import load_topology

    if not isinstance(spec, (str, os.PathLike)):
        raise TopologyError(f"expected a topology: a built-in such as 'crossbar:n=4' or a file, got "
                            f"{type(spec).__name__} {spec!r}")
    text = str(spec)
    name = text.partition(":")[0]
    if name in BUILDERS:
        return build_topology(text)
    if name in ("slurm", "infiniband"):
        from ..io import infiniband, slurm

        load = slurm.load_slurm_spec if name == "slurm" else infiniband.load_infiniband_spec
        net = load(text.partition(":")[2])
    elif Path(text).suffix.lower() in (".yaml", ".yml", ".json", ".xml") or Path(text).exists():
        net = load_topology(text)
    else:
        raise TopologyError(f"unknown topology {name!r}: not a built-in ({', '.join(BUILDERS)}) nor a file")
    # Named in the errors of what the file's description leaves out (a pair without a route).
    net.source = text
    return net


__all__ = ["BUILDERS", "Builder", "build_topology", "resolve_topology", "two_switch", "swiss_t1",
           "hierarchical", "fat_tree", "torus", "mesh", "crossbar", "backbone",
           "random_network", "rail_optimised", "two_tier", "dragonfly"]
