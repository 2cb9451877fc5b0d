"""Traffic generators and transfer files."""

from __future__ import annotations

import re

import pytest

from liquidsched import TrafficError, make_traffic
from liquidsched.topologies import build_topology
from liquidsched.traffic import load_traffic, permutation, scatter


def test_generators_count(t1_net):
    assert len(make_traffic(t1_net, "half-all-to-all")) == 32 * 32
    assert len(make_traffic(t1_net, "all-to-all")) == 32 * 31
    assert len(scatter(t1_net, "n1.1")) == 31
    assert len(make_traffic(t1_net, "gather:root=n2.1")) == 31
    p = permutation(t1_net, seed=3)
    assert sorted(t.dst for t in p) == sorted(t1_net.hosts()) and all(t.src != t.dst for t in p)
    r = make_traffic(t1_net, "random:seed=1,density=0.5")
    assert 0 < len(r) < 32 * 31 and r == make_traffic(t1_net, "random:seed=1,density=0.5")


def test_roles_are_respected(two_switch_net):
    t = make_traffic(two_switch_net, "all-to-all")
    assert len(t) == 25 and {x.src[0] for x in t} == {"t"} and {x.dst[0] for x in t} == {"r"}


def test_csv_rows_and_matrix(tmp_path, two_switch_net):
    rows = tmp_path / "rows.csv"
    rows.write_text("src,dst,size_bytes\nt1,r4,100\nt2,r5,2e3\n")
    t = load_traffic(rows)
    assert [(x.src, x.dst, x.size_bytes) for x in t] == [("t1", "r4", 100), ("t2", "r5", 2000)]
    matrix = tmp_path / "m.csv"
    matrix.write_text(",r1,r2\nt1,5,0\nt4,,7\n")
    t = make_traffic(two_switch_net, str(matrix))
    assert [(x.src, x.dst, x.size_bytes) for x in t] == [("t1", "r1", 5), ("t4", "r2", 7)]


@pytest.mark.parametrize("text,expected", [
    ("src,dst,size_bytes\nt1,r4,-1\n", "line 2, column 3: expected a size in bytes"),
    ("src,dst,size_bytes\nt1,x9,10\n", "transfers[0].dst: unknown host 'x9'"),
    ("src,dst,size_bytes\nr1,t1,10\n", "transfers[0].src: host r1 does not send"),
])
def test_bad_traffic_files(tmp_path, two_switch_net, text, expected):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(TrafficError, match=re.escape(expected)):
        make_traffic(two_switch_net, str(path))


def test_allocation_errors(t1_net):
    from liquidsched.traffic import allocation_hosts

    with pytest.raises(TrafficError, match=r"expected 8 counts"):
        allocation_hosts(t1_net, [1, 2])
    with pytest.raises(TrafficError, match=r"allocation\[2\]: switch s3 has 4 hosts, asked for 5"):
        allocation_hosts(t1_net, [0, 0, 5, 0, 0, 0, 0, 0])


def test_backbone_redistribution():
    net = build_topology("backbone:n1=3,n2=2")
    assert len(make_traffic(net, "all-to-all")) == 6


def all_to_all_of_1MB_and_its_bound(topology: str):
    from liquidsched.bounds import compute_bound

    net = build_topology(topology)
    traffic = make_traffic(net, "all-to-all", size_bytes=1_000_000)
    return traffic, compute_bound(net, traffic)


def test_backbone_both_ways_carries_an_all_to_all_of_every_host_across_each_direction():
    traffic, bound = all_to_all_of_1MB_and_its_bound(
        "backbone:n1=3,n2=2,card_Bps=1MB/s,backbone_Bps=2MB/s,both_ways=true")
    assert len(traffic) == 5 * 4
    # 3 × 2 transfers each way across the backbone at 2 MB/s; 4 out of every card at 1 MB/s.
    assert bound.counts["A>B"] == bound.counts["B>A"] == 6
    assert float(bound.duration_s) == 4.0 and set(bound.bottlenecks) == {f"{h}>{s}" for h, s in (
        ("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B"), ("b2", "B"))} | {f"{s}>{h}" for h, s in (
        ("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B"), ("b2", "B"))}


def test_two_switch_both_ways_all_to_all_is_bound_by_the_inter_switch_links():
    traffic, bound = all_to_all_of_1MB_and_its_bound("two-switch:capacity_Bps=1MB/s,both_ways=true")
    assert len(traffic) == 10 * 9
    # Six hosts on switch a, four on b: 6 × 4 one-second transfers cross each way; 9 per card.
    assert bound.counts["l_ab"] == bound.counts["l_ba"] == 24
    assert bound.counts["l_t1"] == bound.counts["l_t1_down"] == bound.counts["l_r5_up"] == 9
    assert float(bound.duration_s) == 24.0 and set(bound.bottlenecks) == {"l_ab", "l_ba"}


def test_skewed_traffic_follows_zipf_shares_of_each_senders_bytes():
    from liquidsched.traffic import skewed

    net = build_topology("crossbar:n=8")
    uniform = skewed(net, alpha=0, size_bytes=1000)
    assert {t.size_bytes for t in uniform} == {1000} and len(uniform) == 8 * 7
    heavy = skewed(net, seed=3, alpha=1.5, size_bytes=1000)
    ratios = []
    for s in net.hosts():
        sent = sorted((t.size_bytes for t in heavy if t.src == s), reverse=True)
        assert 7000 - 7 <= sum(sent) <= 7000  # each share rounded down
        ratios.append(sent[0] / sent[1])
    # The receivers of ranks 1 and 2 get shares in the ratio 2^1.5; the host of rank 1 sends
    # most to ranks 2 and 3 (ratio 1.5^1.5), the host of rank 2 to ranks 1 and 3 (3^1.5).
    assert sorted(ratios) == pytest.approx([1.5**1.5] + [2**1.5] * 6 + [3**1.5], rel=0.02)
    assert make_traffic(net, "skewed:seed=3,alpha=1.5", size_bytes=1000) == heavy
    with pytest.raises(TrafficError, match="alpha"):
        make_traffic(net, "skewed:alpha=-1")
