"""FAST (Lei et al., "FAST: An Efficient Scheduler for All-to-All GPU Communication", arXiv
2505.09764): the peer planned for skewed all-to-allv on clusters of servers, as its authors'
implementation does it (``src/fast_alltoall`` of their RCCL fork), as a relayed schedule
(:mod:`liquidsched.relay`).

1. **Balance inside each server.** For every pair of servers ``(s, t)``, each accelerator of
   ``s`` is to hold ``target = ⌈bytes from s to t / G⌉`` of what goes to ``t``: accelerators
   above the target hand their excess, first fit, to those below it, taking their bytes by
   destination accelerator in order, over the server's internal links (one step before the
   first stage).
2. **Between servers, stage by stage.** The matrix of per-accelerator loads ``M[s][t] =
   target`` is padded to equal row and column sums ``L`` (phantom bytes, sent by nobody) and cut
   by Birkhoff–von Neumann into permutations ``π_p`` with weights ``f_p`` (each a perfect
   matching of the positive entries by augmenting paths, weighted by its smallest entry, in the
   order found). In stage ``p`` every accelerator ``g`` of server ``s`` sends up to ``f_p`` of
   the bytes it holds for ``π_p(s)`` to accelerator ``g`` of ``π_p(s)``: one flow per
   accelerator, all on one rail.
3. **Restore.** What accelerator ``g`` of ``t`` receives for another accelerator of ``t`` it
   forwards over the internal links in the next step, overlapped with the next stage; the
   transfers inside a server go with the first stage.

The steps are the schedule's (``frame_steps`` where a step needs several frames to respect
the slots): the fluid model's ``steps`` policy runs it as FAST runs, each accelerator moving to
the next stage once its flows of the last are done. Followed and decided: the balancing moves
by destination column in order and keeps no preference for bytes already on the right rail, as
the authors' code does; no quantisation of the matrix (their simulator's option) and no α–β
check that skips balancing; FAST's own cost model assumes the links inside a server far faster
than between, which the simulators here do not.
"""

from __future__ import annotations

import time

from ..errors import InputError
from ..network import Network
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic
from .servers import balance_servers, relayed_schedule, send_inside, servers_and_legs, take_bytes


def fast(net: Network, traffic: Traffic, gpus: int | None = None) -> Schedule:
    """FAST's schedule of ``traffic`` (see the module): balance, Birkhoff–von Neumann stages
    between servers, restore.

    Parameters
    ----------
    gpus
        Accelerators per server, consecutive hosts in network order; by default the host names
        say (``s3.g1``), as the rail-optimised and two-tier builders give them.

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> from liquidsched.validation import validate
    >>> net = build_topology("rail-optimised:servers=2,gpus=2")
    >>> t = Traffic([Transfer("s0.g0", "s1.g1", 4000), Transfer("s1.g1", "s0.g0", 1000)])
    >>> s = fast(net, t)
    >>> s.info.stats["stages"], validate(s)
    (1, [])
    >>> for k, frame in zip(s.frame_steps(), s.frames):   # balance, both rails, restore
    ...     print(k, [(p.transfer, p.bytes) for p in frame])
    0 [('s0.g0->s0.g1', 2000), ('s1.g1->s1.g0', 500)]
    1 [('s0.g0->s1.g0', 2000), ('s0.g1->s1.g1', 2000), ('s1.g0->s0.g0', 500), ('s1.g1->s0.g1', 500)]
    2 [('s1.g0->s1.g1', 2000), ('s0.g1->s0.g0', 500)]
    """
    start = time.perf_counter()
    sorted_traffic, legs = servers_and_legs(net, traffic, gpus, "fast")
    servers, g_count = sorted_traffic.servers, sorted_traffic.gpus
    hold, loads, balanced = balance_servers(legs, traffic, sorted_traffic)
    stages = birkhoff_von_neumann(padded(len(servers), loads))
    place, dst_of = sorted_traffic.place, [t.dst for t in traffic]
    send_inside(legs, traffic, sorted_traffic, 1)
    restored = 0
    for p, (perm, weight) in enumerate(stages):
        for s, t in enumerate(perm):
            if t == s or (s, t) not in hold:
                continue
            for g, held in enumerate(hold[s, t]):
                parts = take_bytes(held, weight)
                legs.send(1 + p, servers[s][g], servers[t][g], parts)
                for i, b in parts:
                    j = place[dst_of[i]][1]
                    if j != g:
                        legs.send(2 + p, servers[t][g], servers[t][j], [(i, b)])
                        restored += b
    # What FAST itself computes (balancing, stages, restore), before the legs become frames.
    algorithm_s = time.perf_counter() - start
    info = ScheduleInfo("fast", parameters={"gpus": g_count},
                        stats={"algorithm_s": algorithm_s, "stages": len(stages), "per_rail_bytes": sum(w for _, w in stages),
                               "padding_bytes": sum(w for _, w in stages) * len(servers) - sum(loads.values()),
                               "balanced_bytes": balanced, "restored_bytes": restored})
    return relayed_schedule(net, legs, info)


def padded(n: int, loads: dict[tuple[int, int], int]) -> list[list[int]]:
    """The ``n × n`` matrix of ``loads`` padded, as FAST pads it, to equal row and column sums
    ``L`` (the largest of them): for each row below ``L``, each column below ``L`` in order gets
    ``L − max(row sum, column sum)``.

    Examples
    --------
    >>> padded(3, {(0, 1): 5, (1, 0): 2, (2, 0): 1})
    [[0, 5, 0], [4, 0, 1], [1, 0, 4]]
    """
    m = [[0] * n for _ in range(n)]
    for (s, t), x in loads.items():
        m[s][t] = x
    rows = [sum(r) for r in m]
    cols = [sum(m[r][c] for r in range(n)) for c in range(n)]
    top = max(rows + cols, default=0)
    for r in range(n):
        for c in range(n):
            if rows[r] >= top:
                break
            if cols[c] >= top:
                continue
            diff = top - max(rows[r], cols[c])
            m[r][c] += diff
            rows[r] += diff
            cols[c] += diff
    return m


def birkhoff_von_neumann(matrix: list[list[int]]) -> list[tuple[list[int], int]]:
    """Permutations and weights that add up to ``matrix`` (non-negative, equal row and column
    sums): while entries remain, a perfect matching of the positive entries (augmenting paths),
    weighted by its smallest entry, which is taken off.

    Examples
    --------
    >>> birkhoff_von_neumann([[0, 5], [3, 2]])
    Traceback (most recent call last):
    ...
    liquidsched.errors.InputError: birkhoff_von_neumann: row and column sums differ
    >>> birkhoff_von_neumann([[1, 4], [4, 1]])
    [([1, 0], 4), ([0, 1], 1)]
    """
    n = len(matrix)
    m = [row[:] for row in matrix]
    sums = {sum(r) for r in m} | {sum(m[r][c] for r in range(n)) for c in range(n)}
    if len(sums) > 1:
        raise InputError("birkhoff_von_neumann: row and column sums differ")
    stages = []
    while any(any(row) for row in m):
        perm = _perfect_matching(m)
        weight = min(m[r][perm[r]] for r in range(n))
        for r in range(n):
            m[r][perm[r]] -= weight
        stages.append((perm, weight))
    return stages


def _perfect_matching(m: list[list[int]]) -> list[int]:
    """A perfect matching of rows to columns over positive entries (Kuhn's augmenting paths);
    Birkhoff's theorem guarantees one for a matrix of equal row and column sums."""
    n = len(m)
    col_of: list[int] = [-1] * n
    row_of: list[int] = [-1] * n
    adjacency = [[c for c in range(n) if m[r][c] > 0] for r in range(n)]
    for r in range(n):
        seen = [False] * n
        if not _augment(r, adjacency, row_of, col_of, seen):
            raise InputError("birkhoff_von_neumann: no perfect matching (row and column sums differ)")
    return col_of


def _augment(r: int, adjacency: list[list[int]], row_of: list[int], col_of: list[int], seen: list[bool]) -> bool:
    stack = [(r, iter(adjacency[r]))]
    path: list[tuple[int, int]] = []
    while stack:
        row, it = stack[-1]
        for c in it:
            if seen[c]:
                continue
            seen[c] = True
            if row_of[c] == -1:
                path.append((row, c))
                for pr, pc in path:
                    row_of[pc], col_of[pr] = pr, pc
                return True
            path.append((row, c))
            stack.append((row_of[c], iter(adjacency[row_of[c]])))
            break
        else:
            stack.pop()
            if path:
                path.pop()
    return False

