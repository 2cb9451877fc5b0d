"""Expert-routing traffic and rank matrices, against their definitions: the draw without
replacement against its exact inclusion probabilities, the dispatch's deduplication against a
token-by-token count, Zipf weights against 1/i**alpha, the calibrated imbalance against its
target, and rank matrices read from files against what was written."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched import moe
from liquidsched.errors import TrafficError
from liquidsched.matrices import matrix_bytes, read_rank_matrices
from liquidsched.topologies import crossbar
from liquidsched.traffic import make_traffic, rank_matrix_traffic


def inclusion_probabilities(p: list[float], k: int) -> list[float]:
    """P(expert i among k drawn one after another without replacement), by enumerating every
    ordered draw: the independent fact the sampler is checked against."""
    out = [0.0] * len(p)
    for draw in itertools.permutations(range(len(p)), k):
        prob, left = 1.0, 1.0
        for e in draw:
            prob *= p[e] / left
            left -= p[e]
        for e in draw:
            out[e] += prob
    return out


@pytest.mark.parametrize("rounds", [moe.REJECTION_ROUNDS, 0])
def test_experts_are_drawn_without_replacement_with_the_exact_inclusion_probabilities(monkeypatch, rounds):
    # rounds=0 sends every row to the exact keys that finish rows the rejection rounds leave short.
    monkeypatch.setattr(moe, "REJECTION_ROUNDS", rounds)
    p = np.array([0.4, 0.3, 0.2, 0.1])
    tokens = 40_000 if rounds else 8_000
    picks = moe.pick_experts(p, tokens, 2, seed=7)
    assert all(len(set(row)) == 2 for row in picks.tolist())
    seen = np.bincount(picks.ravel(), minlength=4) / tokens
    expected = inclusion_probabilities(p.tolist(), 2)
    assert math.isclose(sum(expected), 2)
    for i in range(4):
        sigma = math.sqrt(expected[i] * (1 - expected[i]) / tokens)
        assert abs(seen[i] - expected[i]) < 5 * sigma, (i, seen[i], expected[i])


def test_a_popularity_on_fewer_experts_than_top_k_is_refused():
    with pytest.raises(TrafficError, match="top_k=3 distinct experts asked of 2"):
        moe.pick_experts(np.array([0.5, 0.5, 0.0]), 10, 3, seed=0)


def test_dispatch_sends_a_token_once_to_each_rank_holding_one_of_its_experts():
    rng = np.random.default_rng(3)
    ranks, per_rank, tokens, k = 3, 2, 5, 3
    picks = np.array([rng.choice(ranks * per_rank, k, replace=False) for _ in range(ranks * tokens)])
    expected = np.zeros((ranks, ranks), dtype=np.int64)
    for t, row in enumerate(picks.tolist()):
        for r in {e // per_rank for e in row}:
            expected[t // tokens, r] += 11
    assert (moe.dispatch_matrix(picks, tokens, per_rank, ranks, 11) == expected).all()


def test_uniform_routing_reaches_each_rank_as_often_as_the_hypergeometric_law_says():
    # 4 ranks of 8 experts, top-2: a token reaches a given rank unless both experts are elsewhere.
    ranks, experts, k, tokens = 4, 32, 2, 20_000
    r = moe.route_tokens(ranks, experts, k, tokens, bytes_per_token=1, seed=11)
    p_reach = 1 - math.comb(experts - 8, k) / math.comb(experts, k)
    sigma = math.sqrt(p_reach * (1 - p_reach) / tokens)
    for s in range(ranks):
        for d in range(ranks):
            assert abs(r.bytes[s, d] / tokens - p_reach) < 5 * sigma
    assert int(r.choices_per_rank.sum()) == ranks * tokens * k


def test_zipf_popularity_weighs_the_expert_of_rank_i_as_one_over_i_to_the_alpha():
    p = np.sort(moe.expert_popularity("zipf", 16, 1.5, seed=4))[::-1]
    assert np.allclose(p / p[0], np.arange(1, 17) ** -1.5)


@pytest.mark.parametrize("skew", ["zipf", "lognormal"])
@pytest.mark.parametrize("target", [1.1, 1.35, 2.0])
def test_the_calibrated_imbalance_is_the_target_max_over_mean_of_choices_per_rank(skew, target):
    r = moe.route_tokens(16, top_k=8, tokens=1024, bytes_per_token=1, skew=skew, imbalance=target, seed=2)
    # The calibration stops within 2 % on its sample; the whole draw is 4 times larger.
    assert abs(r.imbalance / target - 1) < 0.04, r.imbalance
    assert r.parameter is not None and r.parameter > 0


def test_an_imbalance_out_of_reach_is_refused_naming_what_was_reached():
    with pytest.raises(TrafficError, match="imbalance 50 is out of reach"):
        moe.route_tokens(4, top_k=8, tokens=256, skew="zipf", imbalance=50)


@pytest.mark.parametrize("spec, message", [
    ("moe:skew=gaussian", "unknown skew 'gaussian'"),
    ("moe:skew=lognormal,alpha=1", "alpha does not apply to skew=lognormal"),
    ("moe:skew=zipf,alpha=1,imbalance=1.5", "give the level of skew=zipf once"),
    ("moe:experts=12", "experts=12 must be a multiple of ranks=8"),
    ("moe:ranks=9", "9 ranks but only 8 hosts"),
    ("moe:top_k=0", "top_k"),
    ("moe:tokens=x", "tokens"),
])
def test_a_bad_moe_spec_is_refused_naming_the_field(spec, message):
    with pytest.raises(TrafficError, match=message):
        make_traffic(crossbar(8), spec)


def test_a_moe_spec_is_the_routing_of_its_fields_on_the_first_hosts():
    net = crossbar(8)
    t = make_traffic(net, "moe:ranks=6,tokens=128,skew=zipf,alpha=1.2,seed=3")
    r = moe.route_tokens(6, tokens=128, skew="zipf", alpha=1.2, seed=3)
    hosts = net.hosts()[:6]
    expected = {(hosts[i], hosts[j]): int(r.bytes[i, j]) for i in range(6) for j in range(6)
                if i != j and r.bytes[i, j]}
    assert {(x.src, x.dst): x.size_bytes for x in t} == expected
    assert t.total_bytes == int(r.bytes.sum() - np.trace(r.bytes))


def test_successive_steps_draw_new_tokens_from_the_same_popularity_unless_it_drifts():
    steps = moe.route_steps(3, 8, tokens=256, skew="lognormal", sigma=1.0, seed=1)
    assert all((s.popularity == steps[0].popularity).all() for s in steps)
    assert not (steps[1].bytes == steps[2].bytes).all()
    drifting = moe.route_steps(3, 8, tokens=256, skew="lognormal", sigma=1.0, drift=0.2, seed=1)
    assert (drifting[0].bytes == steps[0].bytes).all()
    assert not np.allclose(drifting[2].popularity, steps[0].popularity)
    net = crossbar(8)
    assert make_traffic(net, "moe:tokens=256,skew=lognormal,sigma=1,seed=1,step=2").total_bytes == \
        int(steps[2].bytes.sum() - np.trace(steps[2].bytes))


# -- rank matrices ---------------------------------------------------------------------------------


def test_a_csv_of_several_matrices_reads_one_per_step_with_units(tmp_path):
    path = tmp_path / "dispatch.csv"
    path.write_text("# step 0\n0,1KiB,2\n3,0,4\n5,6,0\n# step 1\n0,1,1\n1,0,1\n1,1,0\n")
    first, second = read_rank_matrices(path)
    assert first.tolist() == [[0, 1024, 2], [3, 0, 4], [5, 6, 0]]
    assert second.tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    net = crossbar(4)
    t = make_traffic(net, f"matrix:file={path},step=0")
    h = net.hosts()
    assert [(x.src, x.dst, x.size_bytes) for x in t] == [
        (h[0], h[1], 1024), (h[0], h[2], 2), (h[1], h[0], 3), (h[1], h[2], 4), (h[2], h[0], 5), (h[2], h[1], 6)]
    t = make_traffic(net, f"matrix:file={path},step=1,total=600")
    assert t.total_bytes == 600 and {x.size_bytes for x in t} == {100}


def test_a_npy_sequence_reads_as_steps(tmp_path):
    path = tmp_path / "steps.npy"
    np.save(path, np.arange(18, dtype=float).reshape(2, 3, 3))
    assert [m.tolist() for m in read_rank_matrices(path)] == np.arange(18).reshape(2, 3, 3).tolist()


@pytest.mark.parametrize("text, message", [
    ("0,1\n2\n", "line 2: 1 cells in a matrix of 2 rows"),
    ("0,1,2\n3,0,4\n", "line 1: 3 cells in a matrix of 2 rows"),
    ("0,-1\n2,0\n", "line 1, column 2: '-1' is not a size"),
    ("0,x\n2,0\n", "line 1, column 2"),
    ("0,0.5\n0.5,0\n", "holds 0.5 bytes: give total="),
])
def test_a_bad_rank_matrix_is_refused_naming_where(tmp_path, text, message):
    path = tmp_path / "m.csv"
    path.write_text(text)
    with pytest.raises(TrafficError, match=message):
        make_traffic(crossbar(4), f"matrix:file={path}")


def test_a_step_beyond_the_file_and_a_matrix_larger_than_the_network_are_refused(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("0,1\n1,0\n")
    with pytest.raises(TrafficError, match="step 1 of a file of 1 matrix"):
        make_traffic(crossbar(4), f"matrix:file={path},step=1")
    with pytest.raises(TrafficError, match="a matrix of 2 ranks, but only 1 hosts"):
        make_traffic(crossbar(4), f"matrix:file={path}", hosts=["h1"])


def test_a_headerless_numeric_csv_as_a_traffic_file_points_to_matrix(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("0,1\n1,0\n")
    with pytest.raises(TrafficError, match="matrix:file="):
        make_traffic(crossbar(4), str(path))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=4, max_size=25).filter(any), st.integers(1, 10**9))
def test_shares_of_a_total_add_up_to_it_and_each_is_within_a_byte_of_its_exact_share(cells, total):
    n = int(math.isqrt(len(cells)))
    m = np.array(cells[:n * n], dtype=float).reshape(n, n)
    if not m.any():
        return
    out = matrix_bytes(m, total)
    assert int(out.sum()) == total
    assert np.all(np.abs(out - m / m.sum() * total) < 1)


def test_matrix_traffic_drops_the_diagonal_and_empty_cells():
    t = rank_matrix_traffic(["a", "b"], np.array([[7, 0], [2, 9]]))
    assert [(x.src, x.dst, x.size_bytes) for x in t] == [("b", "a", 2)]
