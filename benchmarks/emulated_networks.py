"""The emulated networks the *Win when run* benchmarks measure on, each with its traffic and
scheduler, and the buffer regimes (:mod:`liquidsched.emulate.shaping`): one list for
``win_when_run.py`` and ``pmpi_versus_mpich.py``.

Networks (100 Mbit/s host links unless said):

* ``2:1``: the 4 × 2 hierarchy with 200 Mbit/s uplinks (2 host transfers at once), all-to-all;
* ``400``: the same with 400 Mbit/s uplinks;
* ``two-switch``: paper 000 Fig. 2, its half all-to-all;
* ``swiss-t1``: the Swiss-T1 allocation 0,0,1,2,1,0,2,2, all-to-all;
* ``backbone``: paper 004 §4, 10 + 10 hosts through a backbone of k = 5 cards (20 Mbit/s cards so
  that 20 ranks on 2 cores leave the links the limit), all-to-all of an eighth of the size.
"""

from __future__ import annotations

import os

from liquidsched.traffic import all_to_all, half_all_to_all

MB = 1_000_000
#: (key, label, topology, traffic generator, scheduler, size divisor)
NETWORKS = (
    ("2:1", "hierarchy 4×2, 200 Mbit/s uplinks", "hierarchical:d1=4,d2=2,c1=100Mbit/s,c2=200Mbit/s", all_to_all,
     "liquid", 1),
    ("400", "hierarchy 4×2, 400 Mbit/s uplinks", "hierarchical:d1=4,d2=2,c1=100Mbit/s,c2=400Mbit/s", all_to_all,
     "liquid", 1),
    ("two-switch", "two-switch, half all-to-all", "two-switch:capacity_Bps=100Mbit/s", half_all_to_all, "liquid", 1),
    ("swiss-t1", "Swiss-T1 0,0,1,2,1,0,2,2", "swiss-t1:capacity_Bps=100Mbit/s,allocation=0/0/1/2/1/0/2/2", all_to_all,
     "liquid", 1),
    ("backbone", "backbone 10+10, k=5 (004 §4)", "backbone:n1=10,n2=10,card_Bps=20Mbit/s,backbone_Bps=100Mbit/s",
     all_to_all, "oggp", 8),
)
REGIMES = ("deep", "shallow")
#: The C benchmark's ``MPI_Alltoall`` is among every rank: where a network's hosts only send or
#: only receive (the backbone's redistribution goes from A to B, two-switch's from t to r), the
#: same network with every host doing both, so that the library can plan the call and the
#: inter-switch links carry it both ways.
ALL_RANKS_TOPOLOGY = {"backbone": "backbone:n1=10,n2=10,card_Bps=20Mbit/s,backbone_Bps=100Mbit/s,both_ways=true",
                      "two-switch": "two-switch:capacity_Bps=100Mbit/s,both_ways=true"}
#: The C benchmark's largest message on such a network, where not 4 MiB / the size divisor:
#: two-switch's all-to-all of all ten hosts puts 24 messages on each inter-switch link against
#: the half all-to-all's 6, so 1 MiB loads it as 4 MiB loads the paper's exchange.
ALL_RANKS_LARGEST = {"two-switch": 1 << 20}


def add_network_options(parser, prefix: str, only: str = "", regimes: str = ",".join(REGIMES)) -> None:
    """``--prefix`` (the namespaces' names), ``--only`` (network keys; ``only`` by default, empty:
    the benchmark's own choice) and ``--regimes``."""
    parser.add_argument("--prefix", default=prefix)
    parser.add_argument("--only", default=only, help=f"comma-separated network keys (default {only or 'all'}): "
                                                     + ", ".join(k for k, *_ in NETWORKS))
    parser.add_argument("--regimes", default=regimes, help=f"deep,shallow (default {regimes})")


def chosen_networks(args, default_keys: list[str]) -> tuple[list[tuple], list[str]]:
    """The entries of ``NETWORKS`` and the regimes the options of :func:`add_network_options`
    name (``default_keys`` without ``--only``), once the user is known to be root; an unknown
    network or regime refused."""
    if os.geteuid() != 0:
        raise SystemExit("the emulated networks need root")
    keys = [k for k in args.only.split(",") if k] or default_keys
    regimes = [r for r in args.regimes.split(",") if r]
    unknown = sorted(set(keys) - {k for k, *_ in NETWORKS}) + sorted(set(regimes) - set(REGIMES))
    if unknown:
        raise SystemExit(f"no network or buffer regime {', '.join(unknown)}")
    return [n for n in NETWORKS if n[0] in keys], regimes
