"""Paper 002's cost model (eqs. 1, 2, 6) and its calibration by ping-pong."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from liquidsched import build_topology
from liquidsched.cli import main
from liquidsched.cost_model import (CostParameters, pairwise_exchange_s, per_node_bandwidth_Bps, point_to_point_s,
                                    shuffle_exchange_s)
from liquidsched.errors import InputError
from liquidsched.execute import calibrate

needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None,
                                reason="needs root and iproute2")

#: The paper's regime (O_s + O_r + U_r) < g < L, in microseconds, 1500-byte packets.
PAPER_LIKE = CostParameters(send_overhead_s=8e-6, latency_s=180e-6, gap_s=120e-6, recv_overhead_s=10e-6,
                            user_recv_s=4e-6, packet_bytes=1500)


def test_equations_by_hand():
    """A 15,000-byte message is 10 packets; T_w = 8 + 180 − 120 + 10 + 4 = 82 µs."""
    c = PAPER_LIKE
    assert c.packets(15_000) == 10 and c.packets(15_001) == 11 and c.packets(0) == 1
    assert point_to_point_s(c, 15_000) == pytest.approx((8 + 9 * 120 + 180 + 10 + 4) * 1e-6)
    assert shuffle_exchange_s(c, 16, 15_000) == pytest.approx((10 * 15 * 120 + 82) * 1e-6)
    assert pairwise_exchange_s(c, 16, 15_000) == pytest.approx((10 * 120 * 15 + 15 * 82) * 1e-6)


@pytest.mark.parametrize("p", [2, 3, 8, 33])
def test_pairwise_pays_the_pipeline_once_per_round(p):
    """Eq. 6 − eq. 2 = (p − 2)·T_w: what the pairwise exchange's rounds cost beyond the
    shuffle's one pipeline; eq. 2 with p = 2 is eq. 1 of a message of k packets."""
    c = PAPER_LIKE
    for m in (1, 1500, 150_000):
        assert pairwise_exchange_s(c, p, m) - shuffle_exchange_s(c, p, m) == pytest.approx((p - 2) * c.pipeline_s)
        assert shuffle_exchange_s(c, 2, m) == pytest.approx(point_to_point_s(c, m))
    assert per_node_bandwidth_Bps(p, 1000, 2.0) == (p - 1) * 500


def test_bad_parameters_are_refused():
    with pytest.raises(InputError, match="gap_s"):
        CostParameters(1e-6, 1e-6, -1.0, 1e-6, 1e-6, 100)
    with pytest.raises(InputError, match="packet_bytes"):
        CostParameters(1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 0)
    with pytest.raises(InputError, match="at least two nodes"):
        shuffle_exchange_s(PAPER_LIKE, 1, 10)
    with pytest.raises(InputError, match="two distinct hosts"):
        calibrate(["a", "a"], 1000)


def test_calibrate_here_gives_every_parameter_and_the_predictions(capsys):
    assert main(["calibrate", "--topology", "hierarchical:d1=2,d2=2", "--packet-bytes", "4KiB", "--repeats", "5",
                 "--size", "16KiB", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    params = report["parameters"]
    assert report["hosts"] == ["h1.1", "h2.2"] and params["packet_bytes"] == 4096
    assert report["where"] == "this machine (shared memory)"
    assert all(params[k] >= 0 for k in params) and report["round_trip_s"] > 0
    assert [(r["algorithm"], r["model"].split(",")[0]) for r in report["all_to_all"]["predictions"]] == [
        ("shuffle", "eq. 2 (no contention)"), ("shuffle", "fluid"), ("pairwise", "eq. 6 (no contention)"),
        ("pairwise", "fluid")]
    assert main(["calibrate", "--topology", "hierarchical:d1=2,d2=2", "--hosts", "h1.1,zz"]) == 2
    assert "'zz' is not a host" in capsys.readouterr().err


def test_calibrate_names_every_place_its_ranks_can_run():
    """Where the ping-pong ran is told by network_kind, never declared to be the modelled network."""
    from liquidsched.cli.calibrate import WHERE
    from liquidsched.execute import Launcher, network_kind

    srun = Launcher("srun", "/usr/bin/srun")
    kinds = {network_kind(emulated, False, args, launcher) for emulated in (None, {"h": "ns"})
             for args in ([], ["-f", "hosts"]) for launcher in (None, srun)}
    assert kinds == set(WHERE) == {"emulated", "undeclared", "local"}


@needs_root
def test_calibrated_gap_is_the_emulated_links_time_per_packet(capsys):
    """On a 2.5 MB/s emulated path a 16 KiB packet takes 6.55 ms on the wire: the gap measured
    by streaming packets is that time (the link, not the machine, is the limit). A round trip
    is two crossings less what the idle links' token buckets let through at once (3 frames,
    4.5 kB, each way): 2·(16,384 − 4,542) / 2.5 MB/s = 9.5 ms."""
    assert main(["calibrate", "--topology", "hierarchical:d1=1,d2=2,c1=2.5MB/s,c2=10MB/s", "--emulate",
                 "--packet-bytes", "16KiB", "--repeats", "12", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    wire = 16384 / 2.5e6
    assert 0.85 * wire <= report["parameters"]["gap_s"] <= 1.3 * wire
    # Above: the two crossings with room for what a busy machine adds (a round trip waits for
    # two ranks to be scheduled; measured 2.4 × the wire time with both cores busy).
    assert 0.9 * 2 * (16384 - 3 * 1514) / 2.5e6 <= report["round_trip_s"] <= 4 * wire
