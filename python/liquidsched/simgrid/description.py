"""What SimGrid reports of a platform, and what the platform file says beyond it.

:func:`describe_platform` has SimGrid load a platform (the runner
:mod:`liquidsched.simgrid.platform_runner`, run by the Python that has SimGrid) and returns
its hosts, links and the route of every ordered host pair (:func:`describe_grouped`: its routes
by cluster, for thousands of hosts); :func:`platform_hints` reads what the
XML itself carries that SimGrid's Python binding does not show (liquidsched's own properties);
:func:`refuse_unmodelled` refuses what liquidsched cannot model. :mod:`.reading` builds
the network from them.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BackendError, TopologyError
from .platform_file import SHARED, SPLITDUPLEX
from .values import _slots_property

E = TopologyError
RUNNER = Path(__file__).with_name("platform_runner.py")


# -- what SimGrid reports ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SimgridLink:
    """A link as SimGrid reports it (a SPLITDUPLEX link's directions are two of these)."""

    name: str
    bandwidth_Bps: float
    latency_s: float
    policy: str


@dataclass(frozen=True)
class SimgridPlatform:
    """A platform as SimGrid loaded it: hosts, links by name, and the links and latency of the
    route of every ordered pair of hosts (self routes included)."""

    version: str
    hosts: tuple[str, ...]
    links: dict[str, SimgridLink]
    routes: dict[tuple[str, str], tuple[tuple[str, ...], float]]


def describe_platform(path: str | os.PathLike, python: str, timeout_s: float = 600.0,
                      text: str | None = None) -> SimgridPlatform:
    """Load the platform at ``path`` in SimGrid (run by ``python``) and return what it reports.

    With ``text`` (the file as liquidsched's reader read it), SimGrid loads a copy of that text:
    exactly what was checked (a regular file of UTF-8 under the size cap), without the byte-order
    mark that SimGrid's XML parser refuses; messages still name ``path``.

    Raises
    ------
    TopologyError
        naming the file, with SimGrid's own message, when SimGrid cannot load it.
    BackendError
        if the runner's answer is not what it should be.
    """
    where = str(path)
    if text is not None:
        with tempfile.TemporaryDirectory(prefix="liquidsched-platform-") as folder:
            copy = Path(folder) / (Path(path).name or "platform.xml")
            copy.write_text(text, encoding="utf-8")
            return _described(where, _run_simgrid(python, copy, where, timeout_s), _parse_description, str(copy))
    return _described(where, _run_simgrid(python, Path(path), where, timeout_s), _parse_description)


def _run_simgrid(python: str, path: Path, where: str, timeout_s: float,
                 *job: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([python, str(RUNNER), os.fspath(path), *job], capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise E(f"{where}: SimGrid did not load it within {timeout_s:g} s") from None
    except OSError as e:
        raise E(f"{where}: cannot run SimGrid's Python {python}: {e}") from None


def _described(where: str, done: subprocess.CompletedProcess, parse, copy: str | None = None):
    """SimGrid's description of the platform from its runner's answer ``done``, read by
    ``parse``; a failure names ``where`` (also where SimGrid's own message names the ``copy`` it
    loaded)."""
    if done.returncode != 0:
        message = simgrid_message(done.stderr, done.returncode)
        raise E(f"{where}: SimGrid cannot load it: {message.replace(copy, where) if copy else message}")
    try:
        return parse(json.loads(done.stdout))
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise BackendError(f"{where}: SimGrid's answer cannot be read ({type(e).__name__}: {e})") from None


def simgrid_message(stderr: str, returncode: int) -> str:
    """SimGrid's reason for failing, on one line: the runner's ``simgrid-error:`` line, else the
    last ``CRITICAL`` line of a fatal error (SimGrid then aborts, printing a backtrace)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("simgrid-error:"):
            return line.partition(":")[2].strip()
    for line in reversed(lines):
        if "/CRITICAL]" in line:
            return line.partition("/CRITICAL]")[2].strip()
    return f"exit status {returncode}"


def _parse_description(doc: dict) -> SimgridPlatform:
    names = [item[0] for item in doc["links"]]
    links = {name: SimgridLink(name, float(bw), float(lat), policy) for name, bw, lat, policy in doc["links"]}
    hosts = tuple(doc["hosts"])
    n = len(hosts)
    routes = {(hosts[k // n], hosts[k % n]): (tuple(names[i] for i in ids), float(lat))
              for k, (ids, lat) in enumerate(doc["routes"])}
    return SimgridPlatform(str(doc["simgrid_version"]), hosts, links, routes)


@dataclass(frozen=True)
class GroupedPlatform:
    """A platform as SimGrid loaded it, its routes asked by groups of hosts (the clusters; see
    :func:`liquidsched.simgrid.platform_runner.describe_grouped`): each host's first link
    ``up`` and last link ``down``, the middle of the route from a host of each group to a host of
    each group, each host's route to itself, how many routes were checked against that
    composition, and ``broken``: None, or the first pair it does not fit (src, dst, SimGrid's
    links, the composed links)."""

    version: str
    hosts: tuple[str, ...]
    links: dict[str, SimgridLink]
    groups: tuple[tuple[str, ...], ...]
    up: dict[str, str]
    down: dict[str, str]
    middles: dict[tuple[int, int], tuple[str, ...]]
    self_routes: dict[str, tuple[str, ...]]
    checked: int
    broken: tuple[str, str, tuple[str, ...], tuple[str, ...]] | None


#: Host pairs drawn at random on which the grouped reading checks its composition of routes.
GROUPED_SAMPLES = 20_000


def describe_grouped(path: str | os.PathLike, python: str, groups: list[list[str]], text: str | None = None,
                     samples: int = GROUPED_SAMPLES, seed: int = 0, timeout_s: float = 600.0) -> GroupedPlatform:
    """Load the platform at ``path`` in SimGrid and ask its routes by ``groups`` of hosts (lists of
    host names; other hosts are groups of one) rather than pair by pair: O(hosts + groups²)
    questions instead of hosts². See :func:`describe_platform` for ``text`` and the errors."""
    where = str(path)
    with tempfile.TemporaryDirectory(prefix="liquidsched-platform-") as folder:
        job = Path(folder) / "groups.json"
        job.write_text(json.dumps({"groups": groups, "samples": samples, "seed": seed}), encoding="utf-8")
        copy = None
        if text is not None:
            copy = Path(folder) / (Path(path).name or "platform.xml")
            copy.write_text(text, encoding="utf-8")
        done = _run_simgrid(python, copy or Path(path), where, timeout_s, str(job))
    return _described(where, done, _parse_grouped, str(copy) if copy else None)


def _parse_grouped(doc: dict) -> GroupedPlatform:
    names = [item[0] for item in doc["links"]]
    links = {name: SimgridLink(name, float(bw), float(lat), policy) for name, bw, lat, policy in doc["links"]}
    hosts = tuple(doc["hosts"])

    def named(ids) -> tuple[str, ...]:
        return tuple(names[i] if isinstance(i, int) else str(i) for i in ids)

    broken = doc["broken"]
    up = {hosts[i]: names[k] for i, k in enumerate(doc["up"]) if k is not None}
    down = {hosts[i]: names[k] for i, k in enumerate(doc["down"]) if k is not None}
    return GroupedPlatform(
        str(doc["simgrid_version"]), hosts, links, tuple(tuple(hosts[i] for i in g) for g in doc["groups"]),
        up, down, {(a, b): named(m) for a, b, m in doc["middles"]},
        {hosts[i]: named(r) for i, r in enumerate(doc["self"])}, int(doc["checked"]),
        None if broken is None else (broken[0], broken[1], named(broken[2]), named(broken[3])))


# -- what the file says beyond SimGrid's answer ------------------------------------------------------


@dataclass
class PlatformHints:
    """What liquidsched reads from the XML itself: the outer zone's id and description, the hosts
    declared by ``<host>`` (in file order), the ``<router>`` ids, and the properties liquidsched
    writes: host roles, and for each SimGrid link (a SPLITDUPLEX direction being ``NAME_UP`` or
    ``NAME_DOWN``) the nodes its forward direction joins, its liquidsched ids and its slots."""

    name: str = "platform"
    description: str = ""
    declared_hosts: list[str] = field(default_factory=list)
    routers: set[str] = field(default_factory=set)
    roles: dict[str, str] = field(default_factory=dict)
    ends: dict[str, tuple[str, str]] = field(default_factory=dict)
    ids: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    slots: dict[str, int] = field(default_factory=dict)


def platform_hints(root: ET.Element, where: str) -> PlatformHints:
    """The :class:`PlatformHints` of a parsed platform file."""
    hints = PlatformHints()
    zone = next((c for c in root if c.tag in ("zone", "AS")), None)
    if zone is not None:
        hints.name = zone.get("id") or hints.name
        hints.description = next((p.get("value", "") for p in zone.findall("prop")
                                  if p.get("id") == "description"), "")
    for el in root.iter():
        ident = el.get("id", "")
        props = {p.get("id", ""): p.get("value", "") for p in el.findall("prop")}
        if el.tag == "host":
            hints.declared_hosts.append(ident)
            if "role" in props:
                hints.roles[ident] = props["role"]
        elif el.tag == "router":
            hints.routers.add(ident)
        elif el.tag == "link":
            _link_hints(hints, ident, el.get("sharing_policy", SHARED), props, f"{where}: link {ident!r}")
    return hints


def _link_hints(hints: PlatformHints, ident: str, policy: str, props: dict[str, str], where: str) -> None:
    """Record the properties of ``<link id=ident>`` under the name of each SimGrid link it makes."""
    if policy == SPLITDUPLEX:
        # The DOWN direction goes from the link's dst to its src.
        directions = [(f"{ident}_UP", "src", "dst", props.get("up"), None),
                      (f"{ident}_DOWN", "dst", "src", props.get("down"), None)]
    else:
        directions = [(ident, "src", "dst", props.get("up"), props.get("down"))]
    slots = _slots_property(props, where)
    for name, tail, head, forward_id, backward_id in directions:
        if tail in props and head in props:
            hints.ends[name] = (props[tail], props[head])
        if forward_id or backward_id:
            hints.ids[name] = (forward_id, backward_id)
        if slots is not None:
            hints.slots[name] = slots


#: Why each construct liquidsched refuses cannot be modelled.
VIVALDI = ("coordinate-based routing (Vivaldi) is not modelled: its latencies come from host coordinates, "
           "not from links")
WIFI = "wifi is not modelled: a wifi cell's rates depend on each station's signal, not on link capacities"
NS3 = "the ns-3 network model is not modelled: a packet-level simulation, not flows over links"


def refuse_unmodelled(root: ET.Element, where: str) -> None:
    """Refuse, in one line naming the file and the element, what liquidsched's model cannot
    represent: zones routed by coordinates (Vivaldi), wifi, the ns-3 model, a platform without
    hosts.

    Raises
    ------
    TopologyError
    """
    for el in root.iter():
        why = _unmodelled(el)
        if why:
            raise E(f"{where}: <{el.tag} id={el.get('id', '')!r}>: {why}")
    if not any(el.tag in ("host", "cluster", "cabinet") for el in root.iter()):
        raise E(f"{where}: the platform has no host")


def _unmodelled(el: ET.Element) -> str | None:
    """Why element ``el`` cannot be modelled, or None."""
    routing = el.get("routing", "").lower()
    if routing == "vivaldi" or el.tag == "peer" or "coordinates" in el.attrib:
        return VIVALDI
    if routing == "wifi" or el.get("sharing_policy", "").upper() == "WIFI" or (
            el.tag == "prop" and el.get("id") == "access_point"):
        return WIFI
    if el.tag == "prop" and (el.get("id", "").startswith("ns3/") or (
            el.get("id") == "network/model" and el.get("value", "").lower().replace("-", "") == "ns3")):
        return NS3
    return None
