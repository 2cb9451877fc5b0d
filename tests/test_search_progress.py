"""The liquid search reports its progress to a callable, stops with its best schedule when the
callable asks, and ``plan``'s first Ctrl-C asks so (a second one aborts)."""

from __future__ import annotations

import signal

import pytest

from liquidsched.cli.common import _FirstInterruptStops, describe_search
from liquidsched.schedulers.liquid import SearchProgress, liquid
from liquidsched.topologies import build_topology
from liquidsched.traffic import all_to_all
from liquidsched.validation import validate

#: An all-to-all whose search runs until a budget stops it: 501 frames found for a bound of
#: 496 (the oversubscribed fat tree of the search-scale suite), 65,280 transfers.
OVERSUBSCRIBED = "fat-tree:k=8,hosts_per_edge=8"

#: The order of the phases (a phase may be skipped, never revisited out of order).
PHASES = ["line product", "torus design", "orbit assignment", "preparing", "starting", "orbit cover",
          "symmetry group", "symmetric search", "search", "completion"]


@pytest.fixture(scope="module")
def oversubscribed():
    net = build_topology(OVERSUBSCRIBED)
    return net, all_to_all(net)


def test_reports_follow_the_search_and_its_phases(oversubscribed):
    net, traffic = oversubscribed
    seen: list[SearchProgress] = []
    s = liquid(net, traffic, node_limit=100_000, progress=seen.append)
    assert s.info.stats["stopped_by"] == "nodes"
    phases = [p.phase for p in seen]
    assert {"preparing", "starting", "search", "completion"} <= set(phases)
    order = [PHASES.index(p) for p in phases]
    assert order == sorted(order), phases
    frame_bound = s.info.lower_bound
    assert all(p.target == frame_bound for p in seen)
    assert all(p.frames <= p.deepest <= p.target for p in seen)
    nodes = [p.nodes for p in seen]
    assert nodes == sorted(nodes) and nodes[-1] <= s.info.stats["nodes_explored"]
    elapsed = [p.elapsed_s for p in seen]
    assert elapsed == sorted(elapsed)
    # The deepest partial schedule reported is what the completion started from.
    assert max(p.deepest for p in seen) > 0


def test_a_true_answer_stops_the_search_with_a_whole_valid_schedule(oversubscribed):
    net, traffic = oversubscribed
    seen: list[SearchProgress] = []

    def stop_once_searching(p: SearchProgress) -> bool:
        seen.append(p)
        return p.phase == "search" and p.nodes > 0

    s = liquid(net, traffic, progress=stop_once_searching)
    assert s.info.stats["stopped_by"] == "request"
    assert validate(s) == []
    assert sum(len(f) for f in s.frames) == len(traffic)
    # Nothing beyond the frame bound is proven when the search is stopped.
    assert s.info.optimal is (s.length == s.info.lower_bound)
    assert s.info.stats["proven_lower_bound"] <= s.length
    assert seen[-1].phase == "completion"


def test_a_stop_asked_before_the_core_skips_the_constructions():
    # The 8 × 8 torus's design would make it liquid; asked to stop at once, liquid gives the
    # best schedule the core knows without searching: DSatur's, valid, its claims true.
    net = build_topology("torus:dims=8/8")
    traffic = all_to_all(net)
    seen: list[str] = []
    s = liquid(net, traffic, progress=lambda p: seen.append(p.phase) or True)
    assert "torus design" not in seen and seen[0] == "line product"
    assert s.info.stats["stopped_by"] == "request" and s.info.stats["source"] == "dsatur"
    assert validate(s) == []
    assert s.info.optimal is (s.length == 80)


def test_an_exception_of_the_callable_ends_the_search(oversubscribed):
    net, traffic = oversubscribed

    def fail_in_search(p: SearchProgress) -> None:
        if p.phase == "search":
            raise ValueError("the watcher failed")

    with pytest.raises(ValueError, match="the watcher failed"):
        liquid(net, traffic, progress=fail_in_search)


def test_the_first_ctrl_c_asks_to_stop_and_the_second_aborts():
    before = signal.getsignal(signal.SIGINT)
    with _FirstInterruptStops() as interrupt:
        assert not interrupt.asked
        signal.raise_signal(signal.SIGINT)
        assert interrupt.asked
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before


def test_a_search_is_described_in_one_line():
    assert describe_search(SearchProgress("orbit cover", 640, 0, 0, 0, 1.0)) == "liquid: orbit cover"
    line = describe_search(SearchProgress("symmetric search", 640, 512, 512, 3_434, 40.0))
    assert line == "liquid: symmetric search for 640 frames, 512 placed (deepest 512), 3,434 nodes"


def test_cpsat_reports_and_stops_with_its_best_schedule():
    pytest.importorskip("ortools")
    from liquidsched.schedulers.cpsat import CpSatProgress, cpsat

    # The 4 × 4 mesh's all-to-all: CP-SAT searches it for more than 20 s.
    net = build_topology("mesh:dims=4/4")
    traffic = all_to_all(net)
    seen: list[CpSatProgress] = []

    def stop_after_a_second(p: CpSatProgress) -> bool:
        seen.append(p)
        return p.elapsed_s > 1.0

    s = cpsat(net, traffic, progress=stop_after_a_second)
    assert s.info.stats["stopped_by"] == "request" and s.info.stats["status"] in ("FEASIBLE", "UNKNOWN")
    assert s.info.stats["source"] == ("cp-sat" if s.info.stats["status"] == "FEASIBLE" else "dsatur")
    assert validate(s) == []
    assert s.length >= s.info.stats["proven_lower_bound"] >= s.info.lower_bound
    assert s.info.optimal is (s.length <= s.info.stats["proven_lower_bound"])
    assert all(p.bound >= s.info.lower_bound for p in seen)
    found = [p.best_frames for p in seen if p.best_frames is not None]
    # Each solution is better than the one before, and the schedule is at least as good.
    assert found == sorted(found, reverse=True) and (not found or s.length <= found[-1])
