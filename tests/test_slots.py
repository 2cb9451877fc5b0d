"""Slots: links that carry several transfers at once, on every part that stands on them."""

from __future__ import annotations

import hashlib
import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from liquidsched import _core, compute_bound, load_topology, plan, save_topology, validate
from liquidsched.errors import TopologyError
from liquidsched.simgrid.platform_file import network_from_platform, platform_xml
from liquidsched.io.topology import topology_from_dict
from liquidsched.schedule import Schedule, ScheduleInfo
from liquidsched.simulate import simulate
from liquidsched.topologies import build_topology
from liquidsched.traffic import all_to_all, half_all_to_all

from .strategies import problems

BASELINE = Path(__file__).parent / "data" / "t1_search_baseline.json"
MB = 1_000_000


def _benchmark_variants():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    try:
        from t1_schedules import SEARCH_VARIANTS, TEAM_VARIANTS
    finally:
        sys.path.pop(0)
    return SEARCH_VARIANTS, TEAM_VARIANTS


def test_uniform_networks_search_exactly_as_before_slots():
    """The 362 Swiss-T1 classes: same nodes, same schedules; every reduction variant the same."""
    baseline = json.loads(BASELINE.read_text())
    search_variants, team_variants = _benchmark_variants()
    limit = baseline["node_limit"]
    for rec in baseline["classes"]:
        net = build_topology("swiss-t1:allocation=" + "/".join(map(str, rec["allocation"])))
        assert set(net.resource_slots) == {1}
        paths, n = half_all_to_all(net).resource_lists(net), len(net.resources)
        # Without the proofs beyond Λ (which came later), the very same search; with them, the
        # same length in no more nodes.
        raw = _core.liquid_schedule(paths, n, slots=net.resource_slots, bounds=False)
        digest = hashlib.sha1(json.dumps(raw["frames"]).encode()).hexdigest()[:16]
        assert (raw["nodes"], len(raw["frames"]), digest) == (rec["nodes"], rec["frames"], rec["schedule_sha1"])
        bounded = _core.liquid_schedule(paths, n, slots=net.resource_slots)
        assert len(bounded["frames"]) == rec["frames"] and bounded["nodes"] <= rec["nodes"]
        if "teams" in rec:
            for name, flags in team_variants.items():
                got = _core.count_full_teams(paths, n, slots=net.resource_slots, node_limit=limit, **flags)
                assert list(got) == rec["teams"][name], (rec["allocation"], name)
            for name, flags in search_variants.items():
                # The baseline's last variant had every reduction of its day on.
                name = {"+memo": "+memo (all on)"}.get(name, name)
                if name not in rec["search"]:
                    continue  # a reduction newer than the baseline
                r = _core.liquid_schedule(paths, n, slots=net.resource_slots, node_limit=limit, optimize=False,
                                          **flags)
                assert [r["nodes"], len(r["frames"])] == rec["search"][name], (rec["allocation"], name)


def test_gigabit_uplinks_over_fast_ethernet_hosts_give_seven_liquid_frames():
    """hierarchical:d1=4,d2=2: 100 Mbit/s hosts, 1 Gbit/s uplinks with 10 slots. The host links,
    7 transfers each, are the bottlenecks; 7 frames reach the liquid throughput."""
    net = build_topology("hierarchical:d1=4,d2=2")
    traffic = all_to_all(net)
    bound = compute_bound(net, traffic)
    assert bound.slots["e1>root"] == 10 and bound.frame_lower_bound == 7
    assert bound.duration_s == Fraction(7 * MB, int(12.5e6))
    assert bound.liquid_throughput_Bps == 100 * MB
    s = plan(net, traffic, "liquid")
    assert validate(s) == []
    assert (s.length, s.liquid, s.info.optimal, s.time_optimal) == (7, True, True, True)
    assert s.makespan_s() == bound.duration_s
    assert simulate(s, "frames").ratio_to_bound == pytest.approx(1.0, rel=1e-12)
    # Before slots the uplink counted as a 16-transfer bottleneck: 16 frames, 44 %.
    one = _core.liquid_schedule(traffic.resource_lists(net), len(net.resources))
    assert len(one["frames"]) == 16


@pytest.mark.parametrize("d1, d2, frames, hosts_frames", [(8, 2, 16, 15), (8, 3, 32, 23), (6, 4, 27, 23),
                                                          (8, 4, 48, 31)])
def test_paper_002_clusters_with_shared_103_MBps_uplinks(d1, d2, frames, hosts_frames):
    """12.5 MB/s hosts; both directions of an uplink share 103 MB/s: 8 slots, not 8.24. Each
    uplink carries d1·(d1·(d2−1)) transfers each way; the slot model loses 3 % against Λ."""
    net = build_topology(f"hierarchical:d1={d1},d2={d2},c2=103MB/s,shared_uplinks=true")
    traffic = all_to_all(net)
    bound = compute_bound(net, traffic)
    crossing = 2 * d1 * d1 * (d2 - 1)
    assert bound.slots["e1>root|root>e1"] == 8
    assert bound.counts["e1>root|root>e1"] == crossing
    assert bound.duration_s == Fraction(crossing * MB, 103 * MB)
    assert bound.bottlenecks == [f"e{j}>root|root>e{j}" for j in range(1, d2 + 1)]
    assert bound.frame_lower_bound == frames == -(-crossing // 8) and hosts_frames == d1 * d2 - 1
    frame_s = Fraction(MB, int(12.5e6))
    assert bound.frame_bound_time_s == frames * frame_s
    assert bound.frame_bound_ratio == Fraction(crossing, 103) / (frames * frame_s)


def test_builders_derive_slots_from_capacities():
    def slots(spec):
        net = build_topology(spec)
        return {name: k for name, k in zip(net.resources, net.resource_slots) if k != 1}

    assert set(slots("hierarchical:d1=2,d2=2").values()) == {10}
    assert slots("backbone:n1=3,n2=3") == {"A>B": 5, "B>A": 5}
    assert slots("fat-tree:k=4,oversubscription=2") == {}       # slower uplinks: one slot, half rate
    assert slots("fat-tree:k=4,hosts_per_edge=4") == {}         # oversubscribed by host count
    assert slots("two-switch") == slots("swiss-t1") == {}
    assert set(slots("hierarchical:d1=2,d2=2,c2=200Mbit/s").values()) == {2}


SLOTTED = """
name: slotted
defaults: {capacity_Bps: 100MB/s}
switches: [s1, s2, s3]
hosts: [a, b, c]
cables:
  - {a: a, b: s1}
  - {a: b, b: s2}
  - {a: c, b: s3}
  - {a: s1, b: s2, capacity_Bps: 400MB/s}
  - {a: s2, b: s3, capacity_Bps: 400MB/s, slots: 2}
links:
  - {src: s1, dst: s3, capacity_Bps: 250MB/s, slots: 1}
  - {src: s3, dst: s1, capacity_Bps: 250MB/s}
shared_duplex: [{links: ["s1>s2", "s2>s1"], slots: 3}]
"""


def test_slots_set_on_cables_links_and_pairs_round_trip(tmp_path):
    net = topology_from_dict(yaml.safe_load(SLOTTED))
    by_name = dict(zip(net.resources, net.resource_slots))
    assert by_name == {"a>s1": 1, "s1>a": 1, "b>s2": 1, "s2>b": 1, "c>s3": 1, "s3>c": 1,
                       "s1>s2|s2>s1": 3, "s2>s3": 2, "s3>s2": 2, "s1>s3": 1, "s3>s1": 2}
    assert [net.resource_slots_set[net.resources.index(r)] for r in ("s1>s2|s2>s1", "s1>s3", "s3>s1")] == \
        [True, True, False]
    for ext in ("yaml", "json"):
        save_topology(net, tmp_path / f"n.{ext}")
        back = load_topology(tmp_path / f"n.{ext}")
        assert back == net and back.resource_slots == net.resource_slots
    back = network_from_platform(platform_xml(net))
    assert dict(zip(back.resources, back.resource_slots)) == by_name


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["cables"][4].update(slots=0), "cables[4].slots: expected a whole number of slots from 1 to"),
    (lambda d: d["cables"][4].update(slots=2**31), "cables[4].slots: expected a whole number of slots from 1 to"),
    (lambda d: d["links"][0].update(slots=1.5), "links[0].slots: expected a non-negative whole number"),
    (lambda d: d["shared_duplex"][0].update(slots=True), "shared_duplex[0].slots"),
    (lambda d: d["links"][1].update(slots=2) or d["shared_duplex"].append(["s1>s3", "s3>s1"]),
     "links 's1>s3' and 's3>s1' have different slots"),
])
def test_bad_slots_are_one_line_errors(edit, message):
    doc = yaml.safe_load(SLOTTED)
    edit(doc)
    with pytest.raises(TopologyError, match=message.replace("[", r"\[").replace("]", r"\]")):
        topology_from_dict(doc)


@settings(max_examples=120, deadline=None)
@given(problems(), st.data())
def test_the_validator_rejects_a_frame_one_transfer_over_a_resources_slots(problem, data):
    net, traffic = problem
    sets = traffic.resource_sets(net)
    crowded = [r for r in set().union(*sets) if sum(r in s for s in sets) > net.resource_slots[r]]
    assume(crowded)
    r = data.draw(st.sampled_from(sorted(crowded)))
    on_r = [i for i, s in enumerate(sets) if r in s]
    over = data.draw(st.permutations(on_r))[: net.resource_slots[r] + 1]
    rest = [[i] for i in range(len(traffic)) if i not in over]
    s = Schedule.from_indices(net, traffic, [over, *rest], ScheduleInfo("by hand"))
    expected = (f"frame 1: resource {net.resources[r]} has {net.resource_slots[r]} slot"
                f"{'s' if net.resource_slots[r] > 1 else ''} but carries {len(over)} transfers")
    assert any(v.kind == "conflict" and v.message.startswith(expected) for v in validate(s))
    # One transfer fewer on that resource: no violation on it.
    fewer = Schedule.from_indices(net, traffic, [over[:-1], [over[-1]], *rest], ScheduleInfo("by hand"))
    assert not any(f"resource {net.resources[r]} " in v.message for v in validate(fewer))


def test_minimal_frames_is_not_called_least_time_when_slot_rates_differ():
    """Fat tree with 2:1 uplinks at half rate: transfers between edge switches take twice as
    long as those within one. The search proves the fewest frames, not the least time."""
    net = build_topology("fat-tree:k=4,oversubscription=2")
    s = plan(net, all_to_all(net), "liquid")
    assert validate(s) == [] and s.info.optimal
    summary = s.summary()
    if not summary["time_optimal"]:
        assert "not proven least time" in summary["note"]
    assert s.makespan_s() >= s.bound.frame_bound_time_s >= s.bound.duration_s
