"""An InfiniBand fabric as a liquidsched network: ``ibnetdiscover`` output for the cables, the
switches' linear forwarding tables (``dump_fts``, ``dump_lfts.sh``, ``ibroute`` or opensm's
``opensm-lfts.dump``) for the routes.

The fabric (``ibnetdiscover``)
------------------------------
Blocks of node lines, each followed by one line per connected port::

    vendid=0x2c9
    devid=0xbd36
    sysimgguid=0x2c90200404043
    switchguid=0x2c90200404040(2c90200404040)
    Switch  36 "S-0002c90200404040"     # "leaf1" enhanced port 0 lid 1 lmc 0
    [1]     "H-0002c9030004a1b0"[1](2c9030004a1b1)      # "node1 HCA-1" lid 11 4xEDR
    [3]     "S-0002c90200505050"[1]     # "spine1" lid 3 4xHDR

    caguid=0x2c9030004a1b0
    Ca      2 "H-0002c9030004a1b0"      # "node1 HCA-1"
    [1](2c9030004a1b1)  "S-0002c90200404040"[1]     # lid 11 lmc 0 "leaf1" lid 1 4xEDR

Lines starting with ``#``, the grouping annotations of ``ibnetdiscover -g`` (``Chassis``,
``Hostname:``, ``Non-Chassis Nodes``, ``[ext N]``) and ``-f``'s ``s= w= v=`` are read and
ignored. Routers (``Rt``) are refused: a route across subnets is not in one subnet's tables.

* **Switches** are the ``Switch`` nodes, named by their description when it is one word, unique
  and no host's name, else ``S-<guid>`` as ``ibnetdiscover`` writes it.
* **Hosts** are the connected ports of the ``Ca`` nodes, named by the first word of the
  description (``node1`` from ``"node1 HCA-1"``, the ``"%h %d"`` convention of node
  descriptions). Where that word is empty or shared by several ports, the whole description
  (spaces as ``_``, ``-p<port>`` added for a CA with several connected ports) is used, and where
  that is still shared, the port GUID (``0x0002c9030004a1b1``).
* **Cables** are the port lines; both ends must agree on where a cable goes. Where they
  disagree on its rate (each end reports its own port's width and speed: a link trained down to
  1x, seen from one end), the cable takes the lower, with a note. A port cabled to another port
  of its own switch (a loopback cable) carries nothing between nodes: it is left out, with a
  note. Parallel cables between two switches become one link per direction with the sum of their
  rates (a network has one link per pair of nodes), so which of them a table picks is not seen.

Link rates are the data rates after encoding, lanes × per-lane rate, from the port line's
``<width><speed>`` (``4xQDR``: 4 × 8 Gbit/s = 32 Gbit/s = 4 GB/s):

======  ===================  ===========  =========================
speed   signalling per lane  encoding     data per lane (Gbit/s)
======  ===================  ===========  =========================
SDR     2.5 Gbaud            8b/10b       2
DDR     5 Gbaud              8b/10b       4
QDR     10 Gbaud             8b/10b       8
FDR10   10.3125 Gbaud        64b/66b      10
FDR     14.0625 Gbaud        64b/66b      13.6364 (= 14.0625 × 64/66)
EDR     25.78125 Gbaud       64b/66b      25
HDR     53.125 Gb/s PAM4     64b/66b+FEC  50 (nominal)
NDR     106.25 Gb/s PAM4     64b/66b+FEC  100 (nominal)
XDR     212.5 Gb/s PAM4      64b/66b+FEC  200 (nominal)
======  ===================  ===========  =========================

Widths are ``1x``, ``2x``, ``4x``, ``8x`` and ``12x`` lanes.

The forwarding tables
---------------------
One block per switch, the switch known by its node GUID, in the form every tool of
infiniband-diags (rdma-core) writes: ``ibroute`` for one switch, ``dump_fts`` for all of them
(switches named by direct-route path), ``dump_lfts.sh`` (older: ``ibroute`` for each switch;
today: ``dump_fts``'s output)::

    Unicast lids [0x0-0xe] of switch Lid 1 guid 0x0002c90200404040 (leaf1):
      Lid  Out   Destination
           Port     Info
    0x000b 001 : (Channel Adapter portguid 0x0002c9030004a1b1: 'node1 HCA-1')
    0x000d 003 : (Channel Adapter portguid 0x0002c9030004a1d1: 'node3 HCA-1')
    2 valid lids dumped

``dump_fts`` writes ``of switch DR path slid 0; dlid 0; 0,1 guid ...``; ``-n`` leaves out the
destination info; ``-a`` lists invalid entries too (out port 255, ``: (illegal port)``) and ends
``N lids dumped``; the count must match the block's lines. ``dump_lfts.sh`` ends with
``*** WARNING ***: this command has been replaced by dump_fts``. The subnet manager's own dump
(opensm writes ``opensm-lfts.dump`` in its dump directory, e.g. ``/var/log``) has no titles, a
decimal LID range, ``#`` before the destination and the table's top LID, not its count, last::

    Unicast lids [0-14] of switch Lid 1 guid 0x0002c90200404040 ('leaf1'):
    0x000b 001 # Channel Adapter portguid 0x0002c9030004a1b1: 'node1 HCA-1'
    14 lids dumped

All read alike. Lines the tools write to stderr, found in files captured with ``2>&1``
(``ibwarn: [pid] function: ...``, libibnetdisc's ``src/query_smp.c:228; ...``, ``SubnGet(LFT)
failed ...``) and ``dump_lfts.sh``'s ``*** WARNING ***`` line are skipped, in either file, with
one note per file.

Notes are warnings of the logger :data:`log` (``liquidsched.io.infiniband``), one line each
naming the file and the line; with logging not configured they show on stderr.

A route from
host ``a`` to host ``b`` follows the tables exactly: ``a``'s cable to its switch, then at each
switch the cable of the out port that switch's table gives for ``b``'s base LID, until ``b``'s
port. A LID missing from a table the route needs, an out port without a cable, a route that
comes back to a switch or ends at another port, and a malformed line in either file are each
refused with one line naming the file and the line.

Every route is checked so at load, once per switch and destination (the routes of all the
hosts behind a switch share its walk). The network then routes by the tables themselves
(:class:`~liquidsched.routing.Forwarding`: at each switch, the next node for each destination
host, one entry per switch and host the routes cross, none where the switch's cable reaches the
host), so identical routes with N entries per switch rather than N² paths, and saves as an
ordinary topology file.

On the command line, ``--topology infiniband:NETDISCOVER,LFTS`` (:func:`load_infiniband_spec`).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

from ..errors import TopologyError
from ..network import HOST, SWITCH, Link, Network, Node
from ..routing import Forwarding
from .files import read_text

E = TopologyError
#: Notes on what was read past (tool messages, self-cabled ports, cables whose ends disagree):
#: warnings of this logger, one line each, on stderr unless the application configures logging.
log = logging.getLogger(__name__)

#: Data rate per lane after encoding, in bit/s (the table of the module doc).
LANE_RATE_BPS: dict[str, Fraction] = {
    "SDR": Fraction(2 * 10**9), "DDR": Fraction(4 * 10**9), "QDR": Fraction(8 * 10**9),
    "FDR10": Fraction(10 * 10**9), "FDR": Fraction(140_625 * 10**5) * Fraction(64, 66),
    "EDR": Fraction(25 * 10**9), "HDR": Fraction(50 * 10**9), "NDR": Fraction(100 * 10**9),
    "XDR": Fraction(200 * 10**9),
}
#: Lanes of each link width.
WIDTH_LANES = {"1x": 1, "2x": 2, "4x": 4, "8x": 8, "12x": 12}


def link_rate_Bps(text: str) -> float:
    """The data rate in bytes/s of a link ``ibnetdiscover`` shows as ``<width><speed>``.

    Examples
    --------
    >>> link_rate_Bps("4xQDR"), link_rate_Bps("4xEDR"), link_rate_Bps("12xSDR")
    (4000000000.0, 12500000000.0, 3000000000.0)
    """
    match = re.fullmatch(r"(\d+x)([A-Z0-9]+)", text)
    if not match or match.group(1) not in WIDTH_LANES or match.group(2) not in LANE_RATE_BPS:
        raise ValueError(f"expected a link width and speed such as 4xEDR "
                         f"(widths {', '.join(WIDTH_LANES)}; speeds {', '.join(LANE_RATE_BPS)}), got {text!r}")
    return float(WIDTH_LANES[match.group(1)] * LANE_RATE_BPS[match.group(2)] / 8)


# -- ibnetdiscover -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PortLine:
    """One connected port as a port line shows it."""

    port: int
    peer_guid: int
    peer_port: int
    peer_lid: int
    rate_Bps: float
    line: int
    #: the port's own GUID and base LID (CA port lines only)
    guid: int | None = None
    lid: int | None = None
    #: the width and speed as written (``4xEDR``)
    rate_text: str = ""


@dataclass
class IbNode:
    """A switch or a CA with its connected ports."""

    kind: str  # "Switch" or "Ca"
    guid: int
    ports_count: int
    description: str
    line: int
    lid: int | None = None  # a switch's port-0 LID
    ports: dict[int, PortLine] = field(default_factory=dict)


_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]{1,16})"\s*#\s*"(.*)"(.*)$')
_SWITCH_TAIL = re.compile(r"^\s+(?:enhanced|base)\s+port\s+0\s+lid\s+(\d+)\s+lmc\s+(\d+)\s*$")
_PORT = re.compile(r'^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s+"([SHR])-([0-9a-fA-F]{1,16})"'
                   r'\[(\d+)\](?:\[ext \d+\])?\s*(?:\(([0-9a-fA-F]+)\))?\s*#\s*(.*)$')
# What follows '#' on a switch's port line, and on a CA's (whose own LID comes first).
_SWITCH_PORT_INFO = re.compile(r'^"(.*)"\s+lid\s+(\d+)\s+(\S+)(.*)$')
_CA_PORT_INFO = re.compile(r'^lid\s+(\d+)\s+lmc\s+(\d+)\s+"(.*)"\s+lid\s+(\d+)\s+(\S+)(.*)$')
_ID = re.compile(r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=0x([0-9a-fA-F]+)(?:\(([0-9a-fA-F]+)\))?(\s+#.*)?$")
# Tail annotations ibnetdiscover may add after the rate: -f's counters, Xsigo's slot or (scp).
_EXTRA = re.compile(r"^(\s+s=\d+\s+w=\d+\s+v=\d+)?(\s+slot\s+\d+|\s+\(scp\))?\s*$")
_IGNORED = re.compile(r"^(Chassis\s+\d+.*|Hostname:.*|Non-Chassis Nodes)$")
# What the diagnostics write to stderr, found in files captured with 2>&1: libibmad's IBWARN
# ("ibwarn: [pid] function: ..."), libibnetdisc's IBND_ERROR ("src/query_smp.c:228; ..."), the
# tools' exit message ("ibroute: iberror: ..."), a failed table read ("SubnGet(LFT) failed ..."),
# and the trailer dump_lfts.sh / dump_mfts.sh print after dump_fts's tables
# ("*** WARNING ***: this command has been replaced by dump_fts").
_TOOL_MESSAGE = re.compile(r"^(?:ib(?:warn|panic|debug): \[\d+\] |[\w./-]+\.c:\d+; |\S+: iberror: |"
                           r"SubnGet\([^)]*\) failed|\*\*\* WARNING \*\*\*)")


class _Skipped:
    """The tool messages skipped in one file, noted once when the file is read."""

    def __init__(self, where: str) -> None:
        self.where, self.first, self.count = where, (0, ""), 0

    def add(self, number: int, line: str) -> None:
        if not self.count:
            self.first = (number, line)
        self.count += 1

    def note(self) -> None:
        if self.count:
            number, line = self.first
            more = f" and {self.count - 1} more" if self.count > 1 else ""
            log.warning(f"{self.where}: line {number}{more}: skipped tool messages, not part of the output "
                        f"(captured with 2>&1?): {line[:80]!r}")


def read_ibnetdiscover(text: str, where: str = "ibnetdiscover") -> dict[int, IbNode]:
    """The switches and CAs of an ``ibnetdiscover`` output, by GUID, each port line parsed.

    Raises
    ------
    TopologyError
        one line naming ``where`` and the line that cannot be read.
    """
    nodes: dict[int, IbNode] = {}
    current: IbNode | None = None
    expected_guid: tuple[str, int] | None = None
    skipped = _Skipped(where)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        at = f"{where}: line {number}"
        if not line:
            current = None
        elif line.startswith("#") or _IGNORED.match(line):
            continue
        elif _TOOL_MESSAGE.match(line):
            skipped.add(number, line)
        elif match := _ID.match(line):
            key, value = match.group(1), int(match.group(2), 16)
            if key == "rtguid":
                raise E(f"{at}: routers are not supported (a route across subnets is in no switch's table)")
            if key in ("switchguid", "caguid"):
                expected_guid = (key, value)
        elif line.startswith(("Switch", "Ca", "Rt")) and not line.startswith("["):
            current = _node(line, number, at, expected_guid)
            if current.guid in nodes:
                raise E(f"{at}: node {_label(current)} appears twice (first on line {nodes[current.guid].line})")
            nodes[current.guid] = current
            expected_guid = None
        elif line.startswith("["):
            if current is None:
                raise E(f"{at}: a port line outside a Switch or Ca block")
            port = _port(line, current, at, number)
            if port.port in current.ports:
                raise E(f"{at}: port {port.port} of {_label(current)} is listed twice")
            current.ports[port.port] = port
        else:
            raise E(f"{at}: cannot read {line[:60]!r} as ibnetdiscover output")
    if not nodes:
        raise E(f"{where}: no Switch or Ca line: not ibnetdiscover output")
    skipped.note()
    return nodes


def _node(line: str, number: int, at: str, expected: tuple[str, int] | None) -> IbNode:
    match = _NODE.match(line)
    if not match:
        raise E(f"{at}: expected a node line such as 'Switch 36 \"S-<guid>\" # \"description\" ...', got {line[:60]!r}")
    kind, count, letter, guid_text, description, tail = match.groups()
    if kind == "Rt":
        raise E(f"{at}: routers are not supported (a route across subnets is in no switch's table)")
    if letter != kind[0].replace("C", "H"):
        raise E(f"{at}: a {kind} named {letter}-{guid_text} (ibnetdiscover names a switch S-, a CA H-)")
    guid = int(guid_text, 16)
    if expected is not None and expected[1] != guid:
        raise E(f"{at}: {kind} {letter}-{guid_text} follows {expected[0]}=0x{expected[1]:x}")
    node = IbNode(kind, guid, int(count), description, number)
    if kind == "Switch":
        tail_match = _SWITCH_TAIL.match(tail)
        if not tail_match:
            raise E(f"{at}: expected 'enhanced port 0 lid N lmc N' after the switch's description, got {tail.strip()!r}")
        node.lid = int(tail_match.group(1))
    elif tail.strip() not in ("", "(scp)"):
        raise E(f"{at}: unexpected text after the CA's description: {tail.strip()!r}")
    return node


def _port(line: str, node: IbNode, at: str, number: int) -> PortLine:
    match = _PORT.match(line)
    if not match:
        raise E(f"{at}: expected a port line such as '[1] \"S-<guid>\"[5] # ...', got {line[:60]!r}")
    port, own_guid, letter, peer_guid, peer_port, _peer_port_guid, info = match.groups()
    if not 1 <= int(port) <= node.ports_count:
        raise E(f"{at}: port {port} of {_label(node)}, which has {node.ports_count} ports")
    is_ca = node.kind == "Ca"
    if is_ca != (own_guid is not None):
        raise E(f"{at}: a {node.kind} port line {'needs' if is_ca else 'has no'} the port's own GUID after [{port}]")
    if letter == "R":
        raise E(f"{at}: routers are not supported (a route across subnets is in no switch's table)")
    info_match = (_CA_PORT_INFO if is_ca else _SWITCH_PORT_INFO).match(info)
    if not info_match:
        shape = "# lid N lmc N \"description\" lid N 4xEDR" if is_ca else "# \"description\" lid N 4xEDR"
        raise E(f"{at}: expected {shape!r} after the ports, got {info[:60]!r}")
    if is_ca:  # lid N lmc N "description" lid N rate
        own_lid, _lmc, _description, peer_lid, rate_text, extra = info_match.groups()
    else:  # "description" lid N rate
        own_lid, (_description, peer_lid, rate_text, extra) = None, info_match.groups()
    if not _EXTRA.match(extra):
        raise E(f"{at}: unexpected text after the link rate: {extra.strip()!r}")
    try:
        rate = link_rate_Bps(rate_text)
    except ValueError as e:
        raise E(f"{at}: {e}") from None
    return PortLine(int(port), int(peer_guid, 16), int(peer_port), int(peer_lid), rate, number,
                    int(own_guid, 16) if own_guid else None, int(own_lid) if own_lid else None, rate_text)


def _label(node: IbNode) -> str:
    return f"{'S' if node.kind == 'Switch' else 'H'}-{node.guid:016x} ({node.description!r})"


# -- forwarding tables -----------------------------------------------------------------------------------


@dataclass
class Lft:
    """One switch's linear forwarding table: out port and line of each LID."""

    guid: int
    line: int
    entries: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: the LID range of the header
    first: int = 0
    last: int = 0
    #: written by opensm, whose last line gives the table's top LID rather than its entry count
    opensm: bool = False


# The header: LID bounds in hex (ibroute, dump_fts, dump_lfts.sh) or decimal (opensm), the switch
# as "Lid N" (ibroute by LID, opensm) or "DR path slid 0; dlid 0; 0,1" (dump_fts, ibroute -D),
# its node GUID, its description (quoted by opensm).
_LFT_HEADER = re.compile(r"^Unicast lids \[(0x[0-9a-fA-F]+|\d+)-(0x[0-9a-fA-F]+|\d+)\] of switch (.*?) "
                         r"guid 0x([0-9a-fA-F]+) \((.*)\):$")
_LFT_TITLES = re.compile(r"^(Lid\s+Out\s+Destination|Port\s+Info)$")
# An entry: LID, out port, and what is there after ':' (ibroute, dump_fts) or '#' (opensm).
_LFT_ENTRY = re.compile(r"^0x([0-9a-fA-F]+)\s+(\d+)(?:\s+([:#])\s*(.*))?$")
_LFT_END = re.compile(r"^(\d+)\s+(?:valid\s+)?lids dumped$")


def _number(text: str) -> int:
    return int(text, 16) if text.startswith("0x") else int(text)


def read_lfts(text: str, where: str = "lfts") -> dict[int, Lft]:
    """The unicast forwarding tables of a ``dump_fts``, ``dump_lfts.sh``, ``ibroute`` or opensm
    (``opensm-lfts.dump``) output, by switch GUID.

    Tool messages captured with the output (``2>&1``) and ``dump_lfts.sh``'s closing
    ``*** WARNING ***`` are skipped with one note (a warning of :data:`log`).

    Raises
    ------
    TopologyError
        one line naming ``where`` and the line that cannot be read.
    """
    tables: dict[int, Lft] = {}
    current: Lft | None = None
    skipped = _Skipped(where)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        at = f"{where}: line {number}"
        if not line or line.startswith("#") or _LFT_TITLES.match(line):
            continue
        if _TOOL_MESSAGE.match(line):
            skipped.add(number, line)
            continue
        if line.startswith("Multicast"):
            raise E(f"{at}: a multicast table (ibroute -M); unicast tables route the transfers")
        if match := _LFT_HEADER.match(line):
            if current is not None:
                raise E(f"{at}: a new table before the 'lids dumped' line of the one on line {current.line}")
            guid = int(match.group(4), 16)
            if guid in tables:
                raise E(f"{at}: a second table of switch guid 0x{guid:016x} (first on line {tables[guid].line})")
            first, last = _number(match.group(1)), _number(match.group(2))
            # opensm alone writes the bounds in decimal.
            current = tables[guid] = Lft(guid, number, first=first, last=last,
                                         opensm=not match.group(1).startswith("0x"))
        elif match := _LFT_ENTRY.match(line):
            if current is None:
                raise E(f"{at}: a table entry before any 'Unicast lids ... of switch' line")
            lid, port = int(match.group(1), 16), int(match.group(2))
            if not current.first <= lid <= current.last:
                raise E(f"{at}: LID 0x{lid:04x} outside the table's range [0x{current.first:x}-0x{current.last:x}]")
            # opensm alone puts '#' before the destination (older opensm wrote hex bounds too).
            current.opensm = current.opensm or match.group(3) == "#"
            if lid in current.entries:
                raise E(f"{at}: LID 0x{lid:04x} listed twice (first on line {current.entries[lid][1]})")
            current.entries[lid] = (port, number)
        elif match := _LFT_END.match(line):
            if current is None:
                raise E(f"{at}: a 'lids dumped' line outside a table")
            said = int(match.group(1))
            if current.opensm and said != current.last:
                # opensm writes the table's top LID there, not the number of its lines.
                raise E(f"{at}: says {said} lids but the table from line {current.line} goes up to LID "
                        f"{current.last} (opensm writes its top LID here)")
            if not current.opensm and said != len(current.entries):
                raise E(f"{at}: says {said} lids but the table from line {current.line} has "
                        f"{len(current.entries)}")
            current = None
        else:
            raise E(f"{at}: cannot read {line[:60]!r} as a forwarding table line")
    if current is not None:
        raise E(f"{where}: line {current.line}: the table has no 'lids dumped' line (truncated?)")
    if not tables:
        raise E(f"{where}: no 'Unicast lids ... of switch' table")
    skipped.note()
    return tables


# -- the fabric --------------------------------------------------------------------------------------------

Endpoint = tuple[int, int]  # (node GUID, port)


@dataclass
class Fabric:
    """The checked fabric: nodes, cables between endpoints, and each node's and port's name."""

    nodes: dict[int, IbNode]
    cable: dict[Endpoint, PortLine]
    host_of: dict[Endpoint, str]
    switch_of: dict[int, str]
    where: str
    #: ports cabled to another port of their own node, left out of ``cable`` and of the nodes' ports
    self_cabled: dict[Endpoint, PortLine] = field(default_factory=dict)


def build_fabric(nodes: dict[int, IbNode], where: str = "ibnetdiscover") -> Fabric:
    """Check that both ends of every cable agree, and name the hosts and switches.

    A port cabled to another port of its own node (a loopback cable, seen on switches) carries
    nothing between nodes: it is left out, with a note. Where the two ends of a cable report
    different rates (a link trained down, seen from one side), both directions take the lower,
    with a note.
    """
    cable: dict[Endpoint, PortLine] = {}
    self_cabled: dict[Endpoint, PortLine] = {}
    disagree: list[tuple[PortLine, PortLine]] = []
    for node in nodes.values():
        for port in node.ports.values():
            back = _check_other_end(nodes, node, port, where)
            if port.peer_guid == node.guid:
                self_cabled[(node.guid, port.port)] = port
                continue
            if back.rate_Bps != port.rate_Bps:
                if port.line < back.line:
                    disagree.append((port, back))
                port = replace(port, rate_Bps=min(port.rate_Bps, back.rate_Bps))
            cable[(node.guid, port.port)] = port
    for guid, number in self_cabled:
        del nodes[guid].ports[number]
    _note_fabric(nodes, self_cabled, disagree, where)
    host_of = _host_names(nodes, where)
    return Fabric(nodes, cable, host_of, _switch_names(nodes, set(host_of.values())), where, self_cabled)


def _note_fabric(nodes: dict[int, IbNode], self_cabled: dict[Endpoint, PortLine],
                 disagree: list[tuple[PortLine, PortLine]], where: str) -> None:
    """One note for the self-cabled ports, one for the cables whose ends disagree."""
    if self_cabled:
        (guid, number), port = min(self_cabled.items(), key=lambda item: item[1].line)
        pairs = len(self_cabled) // 2
        more = f" ({pairs} such cables)" if pairs > 1 else ""
        log.warning(f"{where}: line {port.line}: ignored port {number} of {_label(nodes[guid])} cabled to its "
                    f"own port {port.peer_port}{more}: such a cable carries nothing between nodes")
    if disagree:
        a, b = disagree[0]
        more = f" ({len(disagree)} such cables)" if len(disagree) > 1 else ""
        log.warning(f"{where}: line {a.line}: the two ends of a cable disagree on its rate ({a.rate_text} here, "
                    f"{b.rate_text} on line {b.line}){more}: it takes the lower")


def _check_other_end(nodes: dict[int, IbNode], node: IbNode, port: PortLine, where: str) -> PortLine:
    at = f"{where}: line {port.line}"
    peer = nodes.get(port.peer_guid)
    if peer is None:
        raise E(f"{at}: port {port.port} of {_label(node)} leads to guid 0x{port.peer_guid:016x}, which has no block")
    back = peer.ports.get(port.peer_port)
    if back is None or (back.peer_guid, back.peer_port) != (node.guid, port.port):
        seen = "is not listed" if back is None else f"(line {back.line}) leads elsewhere"
        raise E(f"{at}: port {port.port} of {_label(node)} leads to port {port.peer_port} of {_label(peer)}, "
                f"whose port line {seen}")
    peer_lid = peer.lid if peer.kind == "Switch" else back.lid
    if peer_lid != port.peer_lid:
        raise E(f"{at}: says {_label(peer)} has LID {port.peer_lid}, but line {back.line if peer.kind == 'Ca' else peer.line} "
                f"says {peer_lid}")
    return back


def _host_names(nodes: dict[int, IbNode], where: str) -> dict[Endpoint, str]:
    """Each connected CA port's host name (the cascade of the module doc)."""
    ports = [(ca, port) for ca in nodes.values() if ca.kind == "Ca" for port in sorted(ca.ports)]

    def first_word(ca: IbNode, port: int) -> str:
        return ca.description.split()[0] if ca.description.split() else ""

    def whole(ca: IbNode, port: int) -> str:
        name = "_".join(ca.description.split())
        return f"{name}-p{port}" if name and len(ca.ports) > 1 else name

    def guid(ca: IbNode, port: int) -> str:
        return f"0x{ca.ports[port].guid:016x}"

    names: dict[Endpoint, str] = {}
    left = ports
    for rule in (first_word, whole, guid):
        proposed = {(ca.guid, p): rule(ca, p) for ca, p in left}
        counts: dict[str, int] = {}
        for name in proposed.values():
            counts[name] = counts.get(name, 0) + 1
        taken = set(names.values())
        names.update({e: n for e, n in proposed.items() if n and counts[n] == 1 and n not in taken})
        left = [(ca, p) for ca, p in left if (ca.guid, p) not in names]
    if left:  # only when two ports claim one GUID
        ca, p = left[0]
        raise E(f"{where}: line {ca.ports[p].line}: port GUID {guid(ca, p)} belongs to another port too")
    return {(ca.guid, p): names[(ca.guid, p)] for ca, p in ports}  # in the file's order


def _switch_names(nodes: dict[int, IbNode], hosts: set[str]) -> dict[int, str]:
    """Each switch's description when it is one word, unique and no host's, else ``S-<guid>``."""
    switches = [n for n in nodes.values() if n.kind == "Switch"]
    counts: dict[str, int] = {}
    for s in switches:
        counts[s.description] = counts.get(s.description, 0) + 1
    return {s.guid: s.description if (s.description and len(s.description.split()) == 1 and
                                       counts[s.description] == 1 and s.description not in hosts)
            else f"S-{s.guid:016x}" for s in switches}


# -- routes ------------------------------------------------------------------------------------------------


class _Router:
    """Routes to one destination port by the tables, each switch's remaining path found once
    and checked (see the module doc)."""

    def __init__(self, fabric: Fabric, tables: dict[int, Lft], lfts_where: str, dst: Endpoint) -> None:
        self.fabric, self.tables, self.lfts_where, self.dst = fabric, tables, lfts_where, dst
        self.dst_name = fabric.host_of[dst]
        self.lid = fabric.cable[dst].lid
        self.rest: dict[int, list[str]] = {}  # switch GUID → nodes from it to the destination

    def check_from(self, at: Endpoint, src_name: str) -> None:
        """Follow the tables from endpoint ``at`` (where the cable of host ``src_name`` arrives),
        refusing what cannot reach the destination: once per switch for every source behind it."""
        if at[0] not in self.rest:
            self._from(at, src_name)

    def next_hops(self) -> dict[str, str]:
        """The node after each switch the routes to the destination cross, by switch name."""
        return {self.fabric.switch_of[guid]: rest[1] for guid, rest in self.rest.items()}

    def _from(self, at: Endpoint, src_name: str) -> list[str]:
        """The nodes from endpoint ``at`` (where a cable arrives) to the destination."""
        walked: list[tuple[int, int]] = []  # (switch GUID, LFT line of its entry)
        while True:
            guid, _ = at
            node = self.fabric.nodes[guid]
            if node.kind == "Ca":
                tail = self._arrive(at, walked, src_name)
                break
            if guid in self.rest:
                tail = self.rest[guid]
                break
            if any(g == guid for g, _ in walked):
                self._loop(walked, guid, src_name)
            out, line = self._entry(guid, src_name)
            walked.append((guid, line))
            peer = self.fabric.cable.get((guid, out))
            if peer is None:
                which = ("is cabled back to the switch itself" if (guid, out) in self.fabric.self_cabled
                         else "has no cable")
                raise E(f"{self.lfts_where}: line {line}: switch {self.fabric.switch_of[guid]} sends LID "
                        f"0x{self.lid:04x} ({self.dst_name}) out of port {out}, which {which} "
                        f"(needed for {src_name} → {self.dst_name})")
            at = (peer.peer_guid, peer.peer_port)
        for guid, _ in reversed(walked):
            tail = [self.fabric.switch_of[guid], *tail]
            self.rest[guid] = tail
        return tail

    def _arrive(self, at: Endpoint, walked: list[tuple[int, int]], src_name: str) -> list[str]:
        if at == self.dst:
            return [self.dst_name]
        where = f"{self.lfts_where}: line {walked[-1][1]}" if walked else f"{self.fabric.where}: line {self.fabric.cable[at].line}"
        raise E(f"{where}: the route for LID 0x{self.lid:04x} ({self.dst_name}) ends at "
                f"{self.fabric.host_of.get(at, 'another CA port')} (needed for {src_name} → {self.dst_name})")

    def _entry(self, guid: int, src_name: str) -> tuple[int, int]:
        name = self.fabric.switch_of[guid]
        table = self.tables.get(guid)
        if table is None:
            raise E(f"{self.fabric.where}: line {self.fabric.nodes[guid].line}: switch {name} has no table in "
                    f"{self.lfts_where} (needed for {src_name} → {self.dst_name})")
        entry = table.entries.get(self.lid)
        if entry is None:
            raise E(f"{self.lfts_where}: line {table.line}: the table of switch {name} has no entry for LID "
                    f"0x{self.lid:04x} ({self.dst_name}) (needed for {src_name} → {self.dst_name})")
        if entry[0] == 0:
            raise E(f"{self.lfts_where}: line {entry[1]}: switch {name} keeps LID 0x{self.lid:04x} "
                    f"({self.dst_name}) for itself (port 0), but it is a CA's")
        return entry

    def _loop(self, walked: list[tuple[int, int]], guid: int, src_name: str) -> None:
        names = [self.fabric.switch_of[g] for g, _ in walked] + [self.fabric.switch_of[guid]]
        raise E(f"{self.lfts_where}: line {walked[-1][1]}: the tables loop for LID 0x{self.lid:04x} "
                f"({self.dst_name}): {' → '.join(names)} (from {src_name})")


def network_from_infiniband(fabric_text: str, lfts_text: str, fabric_where: str = "ibnetdiscover",
                            lfts_where: str = "lfts", name: str | None = None) -> Network:
    """The network of an ``ibnetdiscover`` output routed by its switches' forwarding tables.

    Parameters
    ----------
    fabric_text, lfts_text
        The two outputs.
    fabric_where, lfts_where
        Their names, for errors.
    name
        The network's name (default: the fabric file's stem).

    Raises
    ------
    TopologyError
        one line naming the file and line (see the module doc).
    """
    fabric = build_fabric(read_ibnetdiscover(fabric_text, fabric_where), fabric_where)
    tables = read_lfts(lfts_text, lfts_where)
    for table in tables.values():
        if table.guid not in fabric.switch_of:
            raise E(f"{lfts_where}: line {table.line}: switch guid 0x{table.guid:016x} is not a switch of {fabric_where}")
    if not fabric.host_of:
        raise E(f"{fabric_where}: no connected CA port: the fabric has no host")
    nodes = [Node(fabric.switch_of[g], SWITCH, origin=f"{fabric_where}: line {n.line}")
             for g, n in fabric.nodes.items() if n.kind == "Switch"]
    nodes += [Node(h, HOST, origin=f"{fabric_where}: line {fabric.cable[e].line}") for e, h in fabric.host_of.items()]
    # Where each host's cable arrives, the first host behind each such port naming it in errors.
    arrivals: dict[Endpoint, str] = {}
    for src, src_name in fabric.host_of.items():
        first = fabric.cable[src]
        arrivals.setdefault((first.peer_guid, first.peer_port), src_name)
    table: dict[str, dict[str, str]] = {}
    for dst, dst_name in fabric.host_of.items():
        router = _Router(fabric, tables, lfts_where, dst)
        for at, src_name in arrivals.items():
            router.check_from(at, src_name)
        for switch, after in router.next_hops().items():
            if after != dst_name:  # the cable to the destination needs no entry
                table.setdefault(switch, {})[dst_name] = after
    return Network(nodes, _links(fabric), Forwarding(table), name=name or Path(fabric_where).stem or "infiniband",
                   description=f"InfiniBand fabric {fabric_where} routed by {lfts_where}")


def _links(fabric: Fabric) -> list[Link]:
    """One link per direction of each cable; parallel cables summed into one."""
    name_of = {**{(g, p): fabric.switch_of[g] for (g, p) in fabric.cable if g in fabric.switch_of}, **fabric.host_of}
    capacity: dict[tuple[str, str], float] = {}
    origin: dict[tuple[str, str], str] = {}
    for end, port in fabric.cable.items():
        key = (name_of[end], name_of[(port.peer_guid, port.peer_port)])
        capacity[key] = capacity.get(key, 0.0) + port.rate_Bps
        origin.setdefault(key, f"{fabric.where}: line {port.line}")
    return [Link(f"{a}>{b}", a, b, c, origin=origin[(a, b)]) for (a, b), c in capacity.items()]


def load_infiniband(fabric_path: str | os.PathLike, lfts_path: str | os.PathLike) -> Network:
    """Read an ``ibnetdiscover`` output and a forwarding-table dump (``dump_fts``,
    ``dump_lfts.sh``, ``ibroute`` or ``opensm-lfts.dump``; see :func:`network_from_infiniband`)."""
    return network_from_infiniband(read_text(fabric_path, E), read_text(lfts_path, E), str(fabric_path), str(lfts_path))


def load_infiniband_spec(spec: str) -> Network:
    """A network from ``NETDISCOVER,LFTS`` (what follows ``infiniband:`` in ``--topology``).

    Examples
    --------
    >>> load_infiniband_spec("fabric.txt")
    Traceback (most recent call last):
    ...
    liquidsched.errors.TopologyError: infiniband:fabric.txt: expected infiniband:NETDISCOVER,LFTS (the ibnetdiscover output and the dump_lfts.sh output)
    """
    parts = spec.split(",")
    if len(parts) != 2 or not all(parts):
        raise E(f"infiniband:{spec}: expected infiniband:NETDISCOVER,LFTS "
                "(the ibnetdiscover output and the dump_lfts.sh output)")
    return load_infiniband(*parts)


def looks_like_infiniband(text: str) -> bool:
    """Whether a text reads as ``ibnetdiscover`` or forwarding-table output."""
    return re.search(r'(?m)^(?:(?:Switch|Ca)\s+\d+\s+"[SH]-[0-9a-fA-F]+"|Unicast lids \[)', text) is not None
