"""Slurm's ``topology.conf`` (the ``topology/tree`` plugin) as a liquidsched network.

The file
--------
Each line names a switch and its children, either nodes or switches, in Slurm's syntax::

    # comments run from an unescaped '#' to the end of the line
    SwitchName=s0 Nodes=tux[0-3]
    SwitchName=s1 Nodes=tux[4-6],tux9 LinkSpeed=100
    SwitchName=s2 Switches=s[0-1] \\
                  LinkSpeed=400          # a trailing '\\' continues the line

Keys are case-insensitive; a value may be quoted (``Nodes="tux[0-3], tux9"``); ``\\#`` and
``\\\\`` escape as Slurm's parser has them. ``Nodes`` and ``Switches`` are hostlist expressions
(:func:`expand_hostlist`). ``LinkSpeed`` is read (a whole number, as Slurm reads it) and otherwise
ignored: Slurm says its unit is arbitrary and does not use it, so it cannot give bytes/s.

Every switch is named once, has nodes or switches but not both, and no switch is its own
ancestor (a cycle); a node is under one switch (Slurm warns "Multiple leaf switches contain
nodes" of the others, a likely mistake; which of its cables such a node would send on is not in
the file). Anything else is refused with one line naming the file and the line.

Slurm calls the file a tree, but real files are often not one, and both forms load:

* **A switch under several parents**, as generators such as ``ibmap2slurm`` write a fat tree
  (each leaf switch listed under every switch it is cabled to above it). Routes are
  then up/down, as a fat tree's forwarding tables make them (:func:`up_down_tables`): up from the
  source's leaf switch until a switch above the destination's leaf switch, then down, by the
  fewest hops; where several parents (or children) qualify, the destination's number in the
  file picks one, D-mod-k (``⌊i / (w_0 · … · w_{h-1})⌋ mod`` their count at level ``h``), so a
  regular fat tree spreads the destinations evenly over its up links. The network routes by
  these tables (:class:`~liquidsched.routing.Forwarding`), one entry per switch and node.
* **Several roots** that the switches do not join are separate fabrics. Slurm loads such a file,
  warns "no switch can reach all nodes through its descendants" and never spans a job over two
  of them ("Jobs can only span nodes connected by the same switch fabric", topology.conf(5)).
  So does liquidsched: the file loads with a note (a warning of :data:`log`), the node pairs
  across fabrics have no route (``net.missing_routes``), and a traffic needing one is refused
  naming the pair. (Several roots above shared switches, as the spines of a fat tree, are one
  fabric.)

Rates
-----
A host's cable (node ↔ its leaf switch) and a switch's cables down to its child switches take
their rates from, in this order: an entry of the rates file, that file's ``default``, the
``hosts`` / ``switches`` options. The rates file is YAML (or JSON)::

    hosts: 100Gbit/s                          # every host cable; or a mapping:
    # hosts: {default: 100Gbit/s, "tux[0-3]": 200Gbit/s}
    switches: {default: 200Gbit/s, s2: 400Gbit/s}   # s2's cables down to s0 and s1

Keys of ``hosts`` name nodes, keys of ``switches`` name switches with child switches; both may be
hostlist expressions. A name matched by two keys, or a key that names nothing, is an error. A
cable left without a rate is an error naming it: liquidsched never guesses a capacity.

Where every switch has one parent at most, routing is the tree's: up to the lowest common
ancestor and down. In a tree that path is the only one, hence the shortest, so the network routes
by :class:`~liquidsched.routing.ShortestPath` (its switch-level paths are then composed and
shared, as on any cluster of leaf switches). Either way a saved topology file routes the same.

On the command line, ``--topology slurm:PATH[,hosts=RATE][,switches=RATE][,rates=FILE]``
(:func:`load_slurm_spec`).

Examples
--------
>>> net = network_from_topology_conf(
...     "SwitchName=s0 Nodes=tux[0-1]\\nSwitchName=s1 Nodes=tux[2-3]\\nSwitchName=top Switches=s[0-1]",
...     hosts="10Gbit/s", switches="40Gbit/s")
>>> net.route("tux0", "tux3")
('tux0>s0', 's0>top', 'top>s1', 's1>tux3')
>>> net.links["s0>top"].capacity_Bps
5000000000.0
"""

from __future__ import annotations

import logging
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..errors import TopologyError
from ..network import HOST, SWITCH, Link, Network, Node
from ..routing import Forwarding, ShortestPath
from .fields import Fields, read_mapping, read_rate
from .files import read_document, read_text

E = TopologyError
#: Notes on what loads but may surprise (separate fabrics): warnings of this logger, one line each.
log = logging.getLogger(__name__)

#: The most names one hostlist expression may stand for (a typo such as ``n[0-99999999]`` is
#: refused before it fills the memory).
MAX_HOSTLIST_NAMES = 1_000_000
#: Slurm reads LinkSpeed as an unsigned 32-bit number.
_MAX_LINK_SPEED = 2**32 - 1
_KEYS = {"switchname": "SwitchName", "nodes": "Nodes", "switches": "Switches", "linkspeed": "LinkSpeed"}
_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")
# Slurm's own key=value pattern: a value is quoted (may hold spaces) or runs to the next space.
_PAIR = re.compile(r'\s*([A-Za-z0-9_.]+)\s*=\s*(?:"([^"]*)"|(\S+))(?=\s|$)')


# -- hostlist expressions --------------------------------------------------------------------------


def expand_hostlist(expression: str, where: str = "hostlist") -> list[str]:
    """The names a Slurm hostlist expression stands for, in order.

    Names are separated by commas or spaces outside brackets. ``prefix[ranges]`` expands each
    range of the comma-separated list: ``lo-hi`` or one number, zero-padded to the width of ``lo``
    as written. Several bracket groups multiply, the first varying slowest. As in Slurm, nothing
    may follow the last ``]`` of a name.

    Parameters
    ----------
    expression
        The expression, e.g. ``"tux[001-003,20],login"``.
    where
        Where it comes from, for errors (``"topology.conf: line 3: Nodes"``).

    Raises
    ------
    TopologyError
        one line naming ``where``, the expression and what is wrong.

    Examples
    --------
    >>> expand_hostlist("tux[001-003,20],login")
    ['tux001', 'tux002', 'tux003', 'tux20', 'login']
    >>> expand_hostlist("rack[1-2]-n[8-9]")
    ['rack1-n8', 'rack1-n9', 'rack2-n8', 'rack2-n9']
    >>> expand_hostlist("n[3-1]")
    Traceback (most recent call last):
    ...
    liquidsched.errors.TopologyError: hostlist: 'n[3-1]': range 3-1 goes down
    """
    names: list[str] = []
    for token in _hostlist_tokens(expression, where):
        names += _expand_token(token, f"{where}: {token!r}", MAX_HOSTLIST_NAMES - len(names))
    return names


def _hostlist_tokens(expression: str, where: str) -> list[str]:
    """Split at commas and spaces outside brackets; refuse unbalanced or nested brackets."""
    tokens, start, inside = [], 0, False
    for i, c in enumerate(expression):
        if c == "[":
            if inside:
                raise E(f"{where}: {expression!r}: '[' inside brackets")
            inside = True
        elif c == "]":
            if not inside:
                raise E(f"{where}: {expression!r}: ']' without '['")
            inside = False
        elif c in ", \t" and not inside:
            tokens.append(expression[start:i])
            start = i + 1
    if inside:
        raise E(f"{where}: {expression!r}: '[' without ']'")
    tokens.append(expression[start:])
    return [t for t in tokens if t]


def _expand_token(token: str, where: str, room: int) -> list[str]:
    """The names of one token: literal text and bracket groups, alternating."""
    pieces = re.split(r"\[([^\]]*)\]", token)
    if len(pieces) > 1 and pieces[-1]:
        raise E(f"{where}: text after the last ']' ({pieces[-1]!r}); Slurm ends a hostlist name with its range")
    groups = [_range_list(group, where) for group in pieces[1::2]]
    if math.prod(len(g) for g in groups) > room:
        raise E(f"{where}: more than {MAX_HOSTLIST_NAMES:,} names")
    names = [pieces[0]]
    for group, text in zip(groups, pieces[2::2]):
        names = [name + number + text for name in names for number in group]
    return names


def _range_list(text: str, where: str) -> list[str]:
    """``"001-003,20"`` → ``['001', '002', '003', '20']``: each range padded to its own width."""
    numbers: list[str] = []
    for item in text.split(","):
        match = _RANGE.match(item)
        if not match:
            raise E(f"{where}: expected a number or a range lo-hi inside brackets, got {item!r}")
        lo_text, hi_text = match.groups()
        lo, hi = int(lo_text), int(hi_text if hi_text is not None else lo_text)
        if lo > hi:
            raise E(f"{where}: range {item} goes down")
        if hi - lo + 1 + len(numbers) > MAX_HOSTLIST_NAMES:
            raise E(f"{where}: more than {MAX_HOSTLIST_NAMES:,} names")
        width = len(lo_text)
        numbers += [f"{n:0{width}d}" for n in range(lo, hi + 1)]
    return numbers


# -- topology.conf lines ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SwitchLine:
    """One ``SwitchName=`` line: the switch, its child nodes or switches, and where it is."""

    name: str
    nodes: tuple[str, ...]
    switches: tuple[str, ...]
    link_speed: int | None
    line: int


def _strip_comment(line: str) -> str:
    """Cut at the first '#' not escaped by an odd number of backslashes (Slurm's rule)."""
    backslashes = 0
    for i, c in enumerate(line):
        if c == "#" and backslashes % 2 == 0:
            return line[:i]
        backslashes = backslashes + 1 if c == "\\" else 0
    return line


def _continued(line: str) -> tuple[str, bool]:
    """The line without its continuation backslash, and whether it had one (an odd number of
    trailing backslashes, trailing spaces ignored)."""
    body = line.rstrip()
    trailing = len(body) - len(body.rstrip("\\"))
    if trailing % 2 == 1:
        return body[:-1], True
    return line, False


def _unescape(text: str) -> str:
    r"""``\x`` → ``x`` (so ``\#`` is '#' and ``\\`` is '\')."""
    return re.sub(r"\\(.)", r"\1", text)


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Each logical line of a Slurm configuration file with the number of its first physical line:
    comments stripped, continued lines joined, escapes resolved; blank lines skipped."""
    pending, first = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        body, more = _continued(_strip_comment(raw))
        first = first or number
        pending += body
        if more:
            continue
        if pending.strip():
            yield first, _unescape(pending)
        pending, first = "", 0
    if pending.strip():
        yield first, _unescape(pending)


def _pairs(text: str, where: str) -> list[tuple[str, str]]:
    """The ``Key=Value`` pairs of a line, each key once."""
    pairs: list[tuple[str, str]] = []
    pos = 0
    while text[pos:].strip():
        match = _PAIR.match(text, pos)
        if not match:
            raise E(f"{where}: expected Key=Value, got {text[pos:].split()[0]!r}")
        key = match.group(1)
        if any(k.lower() == key.lower() for k, _ in pairs):
            raise E(f"{where}: {key} given twice")
        pairs.append((key, match.group(2) if match.group(2) is not None else match.group(3)))
        pos = match.end()
    return pairs


def _switch_line(number: int, text: str, where: str) -> SwitchLine:
    at = f"{where}: line {number}"
    pairs = _pairs(text, at)
    first = pairs[0][0].lower()
    if first in ("blockname", "blocksizes"):
        raise E(f"{at}: {pairs[0][0]} belongs to the topology/block plugin; only topology/tree "
                "(SwitchName lines) describes a network liquidsched can route")
    if first != "switchname":
        raise E(f"{at}: expected a line starting with SwitchName=, got {pairs[0][0]}=")
    values: dict[str, str] = {}
    for key, value in pairs:
        if key.lower() not in _KEYS:
            raise E(f"{at}: unknown key {key!r} (expected one of: {', '.join(_KEYS.values())})")
        values[_KEYS[key.lower()]] = value
    name = values["SwitchName"]
    if not name or re.search(r"[\[\],\s]", name):
        raise E(f"{at}: SwitchName: expected one switch name, got {name!r}")
    nodes = _children(values, "Nodes", at)
    switches = _children(values, "Switches", at)
    if nodes and switches:
        raise E(f"{at}: switch {name} has both Nodes and Switches (Slurm's tree plugin refuses it)")
    if not nodes and not switches:
        raise E(f"{at}: switch {name} has neither Nodes nor Switches")
    return SwitchLine(name, nodes, switches, _link_speed(values.get("LinkSpeed"), at), number)


def _children(values: dict[str, str], key: str, at: str) -> tuple[str, ...]:
    if key not in values:
        return ()
    names = expand_hostlist(values[key], f"{at}: {key}")
    if not names:
        raise E(f"{at}: {key}: empty")
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise E(f"{at}: {key}: {n} is listed twice")
        seen.add(n)
    return tuple(names)


def _link_speed(value: str | None, at: str) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or int(value) > _MAX_LINK_SPEED:
        raise E(f"{at}: LinkSpeed: expected a whole number (Slurm's relative speed), got {value!r}")
    return int(value)


def read_topology_conf(text: str, where: str = "topology.conf") -> list[SwitchLine]:
    """The switch lines of a ``topology.conf`` text, each checked on its own.

    Examples
    --------
    >>> [(s.name, s.nodes, s.line) for s in read_topology_conf("# racks\\nSwitchName=s0 Nodes=n[1-2]")]
    [('s0', ('n1', 'n2'), 2)]
    """
    lines: list[SwitchLine] = []
    for number, text_line in logical_lines(text):
        if text_line.split(None, 1)[0].lower() == "include":
            raise E(f"{where}: line {number}: Include is not supported; give the switch lines in one file")
        lines.append(_switch_line(number, text_line, where))
    if not lines:
        raise E(f"{where}: no SwitchName line")
    return lines


# -- the tree ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tree:
    """The checked switches of a ``topology.conf``: each switch's line, each child switch's
    parents (in file order), each node's leaf switch, and the roots (switches no line lists).

    Slurm calls it a tree; a fat tree written by a generator gives a switch several parents,
    and a file may have several roots."""

    switches: dict[str, SwitchLine]
    parents: dict[str, tuple[str, ...]]
    leaf_of: dict[str, str]
    roots: tuple[str, ...]

    @property
    def several_parents(self) -> bool:
        """Whether some switch has more than one parent (routes then have a choice)."""
        return any(len(p) > 1 for p in self.parents.values())


def build_tree(lines: list[SwitchLine], where: str = "topology.conf") -> Tree:
    """Check the switch lines as Slurm's tree plugin reads them.

    A switch may be listed under several parents (a fat tree) and several switches may have
    none (several roots: where they share no switch below them, Slurm warns that no switch
    reaches all nodes, and hosts under different ones cannot reach each other; see the module
    doc).

    Raises
    ------
    TopologyError
        naming the file and the line: a switch defined twice, a child switch never defined,
        a cycle, a node under two switches or named like a switch.
    """
    switches: dict[str, SwitchLine] = {}
    for s in lines:
        if s.name in switches:
            raise E(f"{where}: line {s.line}: switch {s.name} is defined twice (first on line {switches[s.name].line})")
        switches[s.name] = s
    parents: dict[str, list[str]] = {}
    leaf_of: dict[str, str] = {}
    for s in lines:
        at = f"{where}: line {s.line}"
        for child in s.switches:
            if child not in switches:
                raise E(f"{at}: switch {child} has no SwitchName line")
            parents.setdefault(child, []).append(s.name)
        for node in s.nodes:
            if node in switches:
                raise E(f"{at}: {node} is both a node and a switch")
            if node in leaf_of:
                # Slurm warns of it ("Multiple leaf switches contain nodes"); which cable the
                # node sends on is not in the file, so no route could be told.
                raise E(f"{at}: node {node} is under two switches, {leaf_of[node]} (line "
                        f"{switches[leaf_of[node]].line}) and {s.name}: a node must be under one leaf switch "
                        "(Slurm warns 'Multiple leaf switches contain nodes')")
            leaf_of[node] = s.name
    _refuse_cycles(switches, parents, where)
    roots = tuple(name for name in switches if name not in parents)
    return Tree(switches, {c: tuple(p) for c, p in parents.items()}, leaf_of, roots)


def _refuse_cycles(switches: dict[str, SwitchLine], parents: dict[str, list[str]], where: str) -> None:
    """A cycle is a walk up the parents that comes back: a depth-first search up from every
    switch in file order, the first loop found named by the line that closes it."""
    done: set[str] = set()
    for start in switches:
        if start in done:
            continue
        chain: list[str] = [start]
        todo: list[Iterator[str]] = [iter(parents.get(start, ()))]
        while todo:
            up = next(todo[-1], None)
            if up is None:
                done.add(chain.pop())
                todo.pop()
            elif up in chain:
                loop = chain[chain.index(up):] + [up]
                raise E(f"{where}: line {switches[loop[1]].line}: switches form a cycle: "
                        f"{' → '.join(loop)} (each a child of the next)")
            elif up not in done:
                chain.append(up)
                todo.append(iter(parents.get(up, ())))


def _levels(tree: Tree) -> dict[str, int]:
    """Each switch's level: 0 for a switch with nodes (or nothing below), else one more than its
    highest child switch."""
    level: dict[str, int] = {}

    def of(s: str) -> int:
        if s not in level:
            # Iterative, children first: a deep chain of switches must not exhaust the stack.
            stack = [s]
            while stack:
                top = stack[-1]
                below = [c for c in tree.switches[top].switches if c not in level]
                if below:
                    stack += below
                    continue
                stack.pop()
                level[top] = 1 + max((level[c] for c in tree.switches[top].switches), default=-1)
        return level[s]

    for s in tree.switches:
        of(s)
    return level


def up_down_tables(tree: Tree) -> dict[str, dict[str, str]]:
    """Forwarding tables by destination node for a topology whose switches may have several
    parents: up/down routing, the choice among equal parents (or children) by D-mod-k.

    A route to node ``d`` (the ``i``-th node of the file) on leaf switch ``L`` goes up until it
    reaches a switch above ``L`` (an *ancestor*), then down to ``L``: each switch that is an
    ancestor of ``L`` sends down through a child on a shortest way down, any other switch up
    through a parent on a shortest up-then-down way. Where several parents (or children) qualify,
    in the order the file lists them, a switch of level ``h`` (leaf switches are level 0) takes
    number ``⌊i / (w_0 · … · w_{h-1})⌋ mod (how many qualify)``, ``w_j`` being the most parents
    a switch of level ``j`` has: D-mod-k as OpenSM's fat-tree routing and the XGFT papers give
    it, which spreads the destinations evenly over the up links of a regular fat tree. A switch
    with no way up to an ancestor of ``L`` (under another root) has no entry: the pair has no
    route.
    """
    level = _levels(tree)
    widths: dict[int, int] = {}
    for s, ups in tree.parents.items():
        widths[level[s]] = max(widths.get(level[s], 1), len(ups))
    divisor = [1]
    for h in range(1, max(level.values(), default=0) + 1):
        divisor.append(divisor[-1] * widths.get(h - 1, 1))
    children = {s: line.switches for s, line in tree.switches.items()}
    # Parents before children, for the up-then-down distances.
    order = sorted(tree.switches, key=lambda s: -level[s])
    table: dict[str, dict[str, str]] = {s: {} for s in tree.switches}
    by_leaf: dict[str, tuple[dict[str, int], dict[str, int]]] = {}
    for i, (node, leaf) in enumerate(tree.leaf_of.items()):
        if leaf not in by_leaf:
            by_leaf[leaf] = _distances(tree, leaf, order)
        down, updown = by_leaf[leaf]
        for s, dist in updown.items():
            if s == leaf:
                continue  # the direct link to the node
            if s in down:
                options = [c for c in children[s] if down.get(c) == dist - 1]
            else:
                options = [p for p in tree.parents.get(s, ()) if updown.get(p) == dist - 1]
            table[s][node] = options[(i // divisor[level[s]]) % len(options)]
    return {s: row for s, row in table.items() if row}


def _distances(tree: Tree, leaf: str, order: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """Hops down to ``leaf`` from each of its ancestors (and itself), and hops up then down to
    it from every switch that has such a way."""
    down = {leaf: 0}
    queue = [leaf]
    for s in queue:  # breadth first up the parents
        for p in tree.parents.get(s, ()):
            if p not in down:
                down[p] = down[s] + 1
                queue.append(p)
    updown = dict(down)
    for s in order:
        if s not in down:
            ups = [updown[p] for p in tree.parents.get(s, ()) if p in updown]
            if ups:
                updown[s] = 1 + min(ups)
    return down, updown


# -- rates ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rates:
    """Rates in bytes/s: each cable's by name, else the defaults (None where not given)."""

    hosts: float | None = None
    switches: float | None = None
    host_rates: Mapping[str, float] | None = None
    switch_rates: Mapping[str, float] | None = None
    #: where the per-name rates come from, for errors
    where: str = "rates"


def read_rates(doc: Any, where: str = "rates") -> Rates:
    """The rates of a parsed rates document ``{hosts: RATE | {name: RATE}, switches: ...}``."""
    top = Fields(doc, where, E, ("hosts", "switches"))
    hosts, host_rates = _rate_field(top, "hosts")
    switches, switch_rates = _rate_field(top, "switches")
    return Rates(hosts, switches, host_rates, switch_rates, where)


def _rate_field(top: Fields, key: str) -> tuple[float | None, dict[str, float]]:
    """A rate for all, or a mapping of hostlist keys (and ``default``) to rates."""
    if not top.has(key):
        return None, {}
    value = top.value[key]
    if not isinstance(value, dict):
        return top.get(key, read_rate), {}
    default, rates, first_key = None, {}, {}
    for expr, rate in read_mapping(value, top.at(key), E).items():
        at = f"{top.at(key)}.{expr}"
        if expr == "default":
            default = read_rate(rate, at, E)
            continue
        for name in expand_hostlist(str(expr), at):
            if name in rates:
                raise E(f"{at}: {name} already has a rate from key {first_key[name]!r}")
            rates[name], first_key[name] = read_rate(rate, at, E), expr
    return default, rates


def load_rates(path: str | os.PathLike) -> Rates:
    """Read a rates file (YAML or JSON)."""
    return read_rates(read_document(path, E), str(path))


def _combine(options: Rates, file: Rates | None) -> Rates:
    """The file's rates, its defaults before the options'."""
    if file is None:
        return options
    return Rates(file.hosts if file.hosts is not None else options.hosts,
                 file.switches if file.switches is not None else options.switches,
                 file.host_rates, file.switch_rates, file.where)


def _check_rate_names(tree: Tree, rates: Rates) -> None:
    """Every name the rates file gives a rate to is a node, or a switch with child switches."""
    for name in rates.host_rates or {}:
        if name not in tree.leaf_of:
            raise E(f"{rates.where}: hosts: {name} is not a node of the topology")
    for name in rates.switch_rates or {}:
        line = tree.switches.get(name)
        if line is None:
            raise E(f"{rates.where}: switches: {name} is not a switch of the topology")
        if not line.switches:
            raise E(f"{rates.where}: switches: {name} has no child switches (its cables go to nodes: "
                    "give their rate under hosts)")


def _rate(own: Mapping[str, float] | None, key: str, default: float | None, option: str, what: str,
          at: str) -> float:
    """A cable's rate: its own entry, else the default; none is an error naming ``option``."""
    if own and key in own:
        return own[key]
    if default is None:
        raise E(f"{at}: no rate for {what}: give {option}=RATE or a rates file (see liquidsched.io.slurm)")
    return default


# -- the network -------------------------------------------------------------------------------------------


def network_from_topology_conf(
    text: str,
    where: str = "topology.conf",
    *,
    hosts: float | str | None = None,
    switches: float | str | None = None,
    rates: str | os.PathLike | Mapping | None = None,
    name: str | None = None,
) -> Network:
    """The network a ``topology.conf`` text describes.

    Parameters
    ----------
    text, where
        The file's text and its name (for errors and the network's default name).
    hosts, switches
        Default rates (bytes/s, or strings with units such as ``"10Gbit/s"``) of host cables and
        of switch-to-switch cables.
    rates
        A rates file (path) or its parsed mapping, whose entries and defaults come first.
    name
        The network's name (default: the file's stem).

    Raises
    ------
    TopologyError
        one line naming the file (and line) or the rates file and what is wrong; ``rates``
        neither a path nor a mapping.
    """
    tree = build_tree(read_topology_conf(text, where), where)
    options = Rates(None if hosts is None else read_rate(hosts, "hosts", E),
                    None if switches is None else read_rate(switches, "switches", E))
    file = None
    if isinstance(rates, Mapping):
        file = read_rates(rates, "rates")
    elif isinstance(rates, (str, os.PathLike)):
        file = load_rates(rates)
    elif rates is not None:
        raise E(f"rates: expected the path of a rates file or its parsed mapping, got {type(rates).__name__}")
    combined = _combine(options, file)
    _check_rate_names(tree, combined)
    nodes, links = _nodes_and_links(tree, combined, where)
    _note_separate_fabrics(tree, where)
    routing = Forwarding(up_down_tables(tree)) if tree.several_parents else ShortestPath()
    return Network(nodes, links, routing, name=name or Path(where).stem or "slurm",
                   description=f"Slurm topology.conf {where}")


def _note_separate_fabrics(tree: Tree, where: str) -> None:
    """A note when the switches form separate fabrics, whose nodes cannot reach each other."""
    group = {s: s for s in tree.switches}

    def find(s: str) -> str:
        while group[s] != s:
            group[s] = group[group[s]]
            s = group[s]
        return s

    for child, ups in tree.parents.items():
        for p in ups:
            group[find(child)] = find(p)
    fabrics: dict[str, list[str]] = {}
    for r in tree.roots:
        fabrics.setdefault(find(r), []).append(r)
    if len(fabrics) > 1:
        named = "; ".join(", ".join(f"{r} (line {tree.switches[r].line})" for r in roots)
                          for roots in fabrics.values())
        log.warning(f"{where}: the switches form {len(fabrics)} separate fabrics, with roots {named}: as for "
                    "Slurm (\"no switch can reach all nodes through its descendants\"), nodes under different ones "
                    "cannot reach each other and their pairs have no route")


def _nodes_and_links(tree: Tree, rates: Rates, where: str) -> tuple[list[Node], list[Link]]:
    """Switches then nodes, in file order; a cable (two links) from each child to its switch."""
    nodes = [Node(s, SWITCH, origin=f"{where}: line {line.line}") for s, line in tree.switches.items()]
    links: list[Link] = []
    for s, line in tree.switches.items():
        at = f"{where}: line {line.line}"
        for child in line.switches:
            rate = _rate(rates.switch_rates, s, rates.switches, "switches", f"the cables of switch {s} down", at)
            links += _cable(child, s, rate, at)
        for host in line.nodes:
            nodes.append(Node(host, HOST, origin=at))
            links += _cable(host, s, _rate(rates.host_rates, host, rates.hosts, "hosts", f"the cable of node {host}", at),
                            at)
    return nodes, links


def _cable(a: str, b: str, rate: float, origin: str) -> list[Link]:
    return [Link(f"{a}>{b}", a, b, rate, origin=origin), Link(f"{b}>{a}", b, a, rate, origin=origin)]


def load_slurm(path: str | os.PathLike, *, hosts: float | str | None = None, switches: float | str | None = None,
               rates: str | os.PathLike | None = None) -> Network:
    """Read a ``topology.conf`` file (see :func:`network_from_topology_conf`)."""
    return network_from_topology_conf(read_text(path, E), str(path), hosts=hosts, switches=switches, rates=rates)


_SPEC_OPTIONS = ("hosts", "switches", "rates")


def load_slurm_spec(spec: str) -> Network:
    """A network from ``PATH[,hosts=RATE][,switches=RATE][,rates=FILE]`` (what follows ``slurm:``
    in ``--topology``). Paths cannot hold commas here; the Python API takes any.

    Examples
    --------
    >>> load_slurm_spec("topology.conf,speed=1")
    Traceback (most recent call last):
    ...
    liquidsched.errors.TopologyError: slurm:topology.conf,speed=1: unknown option 'speed' (options: hosts, switches, rates)
    """
    path, *items = spec.split(",")
    options: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or key not in _SPEC_OPTIONS:
            raise E(f"slurm:{spec}: unknown option {key!r} (options: {', '.join(_SPEC_OPTIONS)})")
        if key in options:
            raise E(f"slurm:{spec}: option {key} given twice")
        if not value:
            raise E(f"slurm:{spec}: option {key}: empty")
        options[key] = read_rate(value, f"slurm:{spec}: {key}", E) if key != "rates" else value
    if not path:
        raise E(f"slurm:{spec}: expected slurm:PATH[,hosts=RATE][,switches=RATE][,rates=FILE]")
    return load_slurm(path, hosts=options.get("hosts"), switches=options.get("switches"), rates=options.get("rates"))


def looks_like_topology_conf(text: str) -> bool:
    """Whether a text reads as a Slurm ``topology.conf`` (a line starting with ``SwitchName=``)."""
    return re.search(r"(?im)^\s*SwitchName\s*=", text) is not None
