"""The one numeric rule (liquidsched.units) and the one spec reader (liquidsched.spec): every
rate, size, time and count is parsed with units, finite and within its bounds, with the option or
field named; every spec refuses a key given twice; run-away sizes are refused up front."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import liquidsched as ls
from liquidsched.cli import main
from liquidsched.errors import InputError, TopologyError, TrafficError
from liquidsched.io.topology import topology_from_dict
from liquidsched.spec import spec_fields
from liquidsched.steady.platform import complete, resolve_platform
from liquidsched.units import (MAX_DURATION_S, MAX_RATE_BPS, MIN_RATE_BPS, NumberError, parse_count, parse_duration,
                               parse_exact_duration, parse_rate, parse_size, parse_work)


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    """Exit status and standard error of a command run in this process."""
    try:
        status = main(list(argv))
    except SystemExit as e:
        status = e.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return status, captured.err


# -- the rule itself ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, seconds", [("1ms", 1e-3), ("250us", 250e-6), ("250µs", 250e-6), ("2s", 2.0),
                                           ("1.5min", 90.0), ("2", 2.0), ("0", 0.0), ("1h", 3600.0)])
def test_durations_take_units_and_plain_numbers_are_seconds(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-15)


@pytest.mark.parametrize("value", ["inf", "nan", float("inf"), float("nan"), "1e308", 1e308, "-1", -1e-9, "1e400",
                                   10**400, "1.1e6", "12 parsecs", "", True])
def test_durations_out_of_bounds_or_not_finite_are_refused_naming_where(value):
    with pytest.raises(NumberError, match=r"^--overhead: ") as e:
        parse_duration(value, "--overhead")
    assert isinstance(e.value, InputError) and isinstance(e.value, ValueError)
    assert len(str(e.value)) < 200          # a 300-digit number is not echoed whole


@pytest.mark.parametrize("value", ["0", "0B/s", 0, "1e-300B/s", 1e-300, "1e16", "inf", "nan", "-5MB/s"])
def test_rates_outside_1bit_to_1PB_per_second_are_refused(value):
    with pytest.raises(NumberError, match="bandwidth_Bps: "):
        parse_rate(value, "bandwidth_Bps")


def test_rate_bounds_are_inclusive():
    assert parse_rate("1bit/s") == MIN_RATE_BPS == 0.125
    assert parse_rate("1000TB/s") == MAX_RATE_BPS


@given(st.floats(allow_nan=True, allow_infinity=True))
@settings(max_examples=200, deadline=None)
def test_a_duration_is_accepted_exactly_when_finite_and_in_bounds(x):
    inside = math.isfinite(x) and 0 <= x <= MAX_DURATION_S
    if inside:
        assert parse_duration(x) == x and parse_duration(repr(x)) == x
    else:
        with pytest.raises(NumberError):
            parse_duration(x)


@given(st.integers(min_value=-10**30, max_value=10**30))
@settings(max_examples=200, deadline=None)
def test_counts_are_whole_numbers_within_their_bounds(n):
    if 1 <= n <= 1000:
        assert parse_count(str(n), "--repeats", most=1000) == n
    else:
        with pytest.raises(NumberError, match="^--repeats: "):
            parse_count(str(n), "--repeats", most=1000)


@pytest.mark.parametrize("value", ["1.5", 2.0, "x", "", None, True])
def test_counts_refuse_what_is_not_a_whole_number(value):
    with pytest.raises(NumberError):
        parse_count(value, "n")


def test_exact_durations_are_exact_fractions():
    assert parse_exact_duration("0.1") == Fraction(1, 10)
    assert parse_exact_duration("3/4") == Fraction(3, 4)
    assert parse_exact_duration("250ms") == Fraction(1, 4)
    for bad in ("0", "1/0", "-1/2", "2e6", "x/y"):
        with pytest.raises(NumberError, match="^--fixed-period: "):
            parse_exact_duration(bad, "--fixed-period")


def test_work_and_sizes_name_where():
    assert parse_work("10Mflop") == 1e7
    with pytest.raises(NumberError, match="^--task-flops: "):
        parse_work("0", "--task-flops")
    with pytest.raises(NumberError, match="^size_bytes: "):
        parse_size("1.5", "size_bytes")


# -- specs: one reader -------------------------------------------------------------------------


@pytest.mark.parametrize("build, spec, error", [
    (ls.build_topology, "crossbar:n=4,n=5", TopologyError),
    (resolve_platform, "complete:n=4,n=5", TopologyError),
    (lambda s: ls.make_traffic(ls.build_topology("crossbar:n=4"), s), "random:seed=1,seed=2", TrafficError),
])
def test_a_key_given_twice_is_refused_in_every_spec(build, spec, error):
    with pytest.raises(error, match=r"given twice \('.*', then '.*'\)"):
        build(spec)


def test_spec_fields_refuse_items_without_a_value_and_unknown_keys():
    with pytest.raises(InputError, match="expected key=value"):
        spec_fields("crossbar:n", "topology", ["n"], InputError)
    with pytest.raises(InputError, match="unknown parameter 'm'"):
        spec_fields("crossbar:m=1", "topology", ["n"], InputError)


@pytest.mark.parametrize("spec", ["complete:n=4,bandwidth_Bps=0", "star:n=4,bandwidth_Bps=0",
                                  "chain:n=4,bandwidth_Bps=0", "complete:n=4,bandwidth_Bps=0B/s",
                                  "star:n=4,bandwidth_Bps=1e-300B/s"])
def test_a_platform_rate_of_zero_is_refused_naming_the_field(spec):
    name = spec.partition(":")[0]
    with pytest.raises(TopologyError, match=f"^platform spec {name}: bandwidth_Bps: expected a rate"):
        resolve_platform(spec)


def test_a_platform_rate_of_zero_is_refused_from_python_too():
    with pytest.raises(NumberError, match="complete: bandwidth_Bps"):
        complete(4, bandwidth_Bps=0)


@pytest.mark.parametrize("spec, field", [("crossbar:n=4,capacity_Bps=1e-300B/s", "capacity_Bps"),
                                         ("hierarchical:c2=inf", "c2"), ("crossbar:n=x", "n"),
                                         ("random:seed=-1", "seed")])
def test_topology_spec_fields_follow_the_numeric_rule(spec, field):
    with pytest.raises(TopologyError, match=f"^topology spec {spec.partition(':')[0]}: {field}: "):
        ls.build_topology(spec)


def test_a_run_away_topology_is_refused_before_it_is_built():
    with pytest.raises(TopologyError, match="251,250,000 nodes, more than the 1,000,000"):
        ls.build_topology("fat-tree:k=1000")


@pytest.mark.parametrize("spec, field", [("random:density=0", "density"), ("random:density=inf", "density"),
                                         ("skewed:alpha=nan", "alpha"), ("permutation:seed=1.5", "seed"),
                                         ("half-all-to-all:include_self=maybe", "include_self")])
def test_traffic_spec_fields_follow_the_numeric_rule(spec, field):
    with pytest.raises(TrafficError, match=f"^traffic spec {spec.partition(':')[0]}: {field}: "):
        ls.make_traffic(ls.build_topology("crossbar:n=4"), spec)


def test_file_fields_follow_the_numeric_rule():
    doc = yaml.safe_load("""
switches: [s]
hosts: [a, b]
cables: [{a: a, b: s, capacity_Bps: 1MB/s, latency_s: 1e300}, {a: b, b: s, capacity_Bps: 1MB/s}]
""")
    with pytest.raises(TopologyError, match="latency_s.*from 0 to 1,000,000 s"):
        topology_from_dict(doc)


# -- the Python API ----------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["weighted", "ggp", "oggp", "solstice"])
@pytest.mark.parametrize("overhead", [float("inf"), 1e308, float("nan"), -1.0])
def test_plan_refuses_an_overhead_outside_the_rule(algorithm, overhead):
    net = ls.build_topology("backbone:n1=3,n2=3")
    traffic = ls.make_traffic(net, "random:seed=1,density=0.7")
    with pytest.raises(NumberError, match=f"^{algorithm}: overhead_s: "):
        ls.plan(net, traffic, algorithm, overhead_s=overhead)


def test_plan_reads_an_overhead_with_a_unit():
    net = ls.build_topology("backbone:n1=3,n2=3")
    traffic = ls.make_traffic(net, "random:seed=1,density=0.7")
    assert ls.plan(net, traffic, "ggp", overhead_s="1ms").info.parameters["overhead_s"] == pytest.approx(1e-3)


def test_a_string_where_a_list_of_hosts_is_expected_is_refused():
    net = ls.build_topology("two-switch")
    with pytest.raises(TrafficError, match=r"got the string 'r1' \(write \['r1'\] for one host\)"):
        ls.scatter(net, "t1", "r1")
    assert [(t.src, t.dst) for t in ls.scatter(net, "t1", ["r1"])] == [("t1", "r1")]


def test_shuffle_refuses_a_run_away_number_of_packets_up_front():
    net = ls.build_topology("two-switch")
    traffic = ls.half_all_to_all(net)       # 25 transfers of 1 MB: 25,000,000 packets of 1 byte
    with pytest.raises(InputError, match=r"--packet-bytes\) 1: .* 25,000,000 packets, more than the 1,000,000"):
        ls.plan(net, traffic, "shuffle", packet_bytes=1)


# -- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize("argv, option", [
    (["plan", "--topology", "backbone:n1=3,n2=3", "--traffic", "random:seed=1,density=0.7", "--algorithm",
      "weighted", "--overhead", "inf"], "--overhead"),
    (["plan", "--topology", "backbone:n1=3,n2=3", "--algorithm", "ggp", "--overhead", "1e308"], "--overhead"),
    (["plan", "--topology", "two-switch", "--algorithm", "liquid", "--time-limit", "-1"], "--time-limit"),
    (["run", "--topology", "two-switch", "--algorithm", "ggp", "--repeats", "0"], "--repeats"),
    (["steady", "scatter", "--topology", "complete:n=4", "--fixed-period", "0"], "--fixed-period"),
    (["steady", "scatter", "--topology", "complete:n=4", "--timeout", "0"], "--timeout"),
    (["steady", "scatter", "--topology", "complete:n=4", "--participants", ""], "--participants"),
    (["steady", "scatter", "--topology", "complete:n=4", "--participants", "P1,,P2"], "--participants"),
    (["pmpi-config", "--topology", "two-switch", "--hosts", "", "--output", "-"], "--hosts"),
    (["pmpi-config", "--topology", "two-switch", "--latency", "1e300", "--output", "-"], "--latency"),
])
def test_bad_numbers_and_lists_are_refused_naming_the_option(capsys, argv, option):
    status, err = run_cli(capsys, *argv)
    assert status == 2
    assert option in err.strip().splitlines()[-1]


def test_run_repeats_zero_is_refused_before_anything_is_announced(capsys):
    status, err = run_cli(capsys, "run", "--topology", "two-switch", "--algorithm", "ggp", "--repeats", "0")
    assert status == 2 and "run" not in err.lower().split("error")[0].replace("liquidsched run", "")


@pytest.mark.parametrize("spec", ["complete:n=4,bandwidth_Bps=0", "star:n=4,bandwidth_Bps=0",
                                  "chain:n=4,bandwidth_Bps=0", "complete:n=4,bandwidth_Bps=0B/s"])
def test_steady_scatter_on_a_zero_rate_is_one_error(capsys, spec):
    status, err = run_cli(capsys, "steady", "scatter", "--topology", spec)
    assert status == 2
    assert err.strip().splitlines() == [err.strip()] and "bandwidth_Bps" in err


def test_steady_reduce_without_task_flops_names_the_option(capsys):
    status, err = run_cli(capsys, "steady", "reduce", "--topology", "complete:n=4")
    assert status == 2 and "--task-flops" in err


def test_time_options_take_units(capsys):
    status, _ = run_cli(capsys, "plan", "--topology", "backbone:n1=3,n2=3", "--traffic", "random:seed=1,density=0.7",
                        "--algorithm", "ggp", "--overhead", "1ms", "--json")
    assert status == 0
    status, _ = run_cli(capsys, "steady", "scatter", "--topology", "complete:n=4", "--fixed-period", "250ms", "--json")
    assert status == 0


def test_shuffle_packet_run_away_is_one_error_on_the_command_line(capsys):
    status, err = run_cli(capsys, "plan", "--topology", "two-switch", "--algorithm", "shuffle", "--packet-bytes", "1")
    assert status == 2 and "--packet-bytes" in err and "1,000,000" in err


@pytest.mark.parametrize("capacity", [1e-300, 1e300, 0.1])
def test_a_link_outside_the_rate_bounds_is_refused_however_it_is_built(capacity):
    from liquidsched.topologies import crossbar

    with pytest.raises(TopologyError, match=r"capacity_Bps: expected a rate from 0\.125 to 1e\+15 B/s"):
        crossbar(4, capacity_Bps=capacity)


def test_a_latency_of_1e300_seconds_is_refused_not_printed():
    net = ls.build_topology("crossbar:n=2")
    links = [ls.Link(l.id, l.src, l.dst, l.capacity_Bps, 1e300) for l in net.links.values()]
    with pytest.raises(TopologyError, match=r"latency_s: expected a duration from 0 to 1,000,000 s, got 1e\+300"):
        ls.Network(list(net.nodes.values()), links)


@pytest.mark.parametrize("size", [float("inf"), 0, 1.5, 10**30, "1.5B"])
def test_generators_read_their_size_by_the_rule(size):
    net = ls.build_topology("crossbar:n=3")
    with pytest.raises(TrafficError, match="^half-all-to-all: size_bytes: "):
        ls.half_all_to_all(net, size_bytes=size)
    assert ls.half_all_to_all(net, size_bytes="1MB").total_bytes == 9 * 10**6


@pytest.mark.parametrize("option, value", [("--time-scale", "1e300"), ("--time-scale", "nan"),
                                           ("--queue-bytes", "0"), ("--queue-packets", "1e400")])
def test_emulation_options_follow_the_rule(capsys, option, value):
    status, err = run_cli(capsys, "run", "--topology", "two-switch", "--algorithm", "ggp", "--emulate", option, value)
    assert status == 2 and err.strip().splitlines()[-1].startswith(f"liquidsched: error: {option} {value}: expected")


@pytest.mark.parametrize("algorithm", ["ggp", "oggp", "solstice"])
def test_an_overhead_too_small_for_whole_units_is_refused_not_overflowed(algorithm):
    net = ls.build_topology("backbone:n1=2,n2=2")
    with pytest.raises(InputError, match=r"overhead_s \(--overhead\) 1e-300 s is too small"):
        ls.plan(net, ls.half_all_to_all(net), algorithm, overhead_s=1e-300)
    assert ls.plan(net, ls.half_all_to_all(net), algorithm, overhead_s=1e-9).info.parameters["overhead_s"] == 1e-9


@pytest.mark.parametrize("overhead", [float("inf"), 1e308, -1.0, float("nan")])
def test_simulate_refuses_an_overhead_outside_the_rule(overhead):
    from liquidsched.simulate import simulate

    net = ls.build_topology("two-switch")
    schedule = ls.plan(net, ls.half_all_to_all(net), "round-robin")
    with pytest.raises(NumberError, match="^simulate: overhead_s: "):
        simulate(schedule, "frames", overhead_s=overhead)
    assert simulate(schedule, "frames", overhead_s="1ms").makespan_s > simulate(schedule, "frames").makespan_s


def test_a_series_refuses_a_string_of_participants_and_work_outside_the_rule():
    from liquidsched.steady import Series

    with pytest.raises(InputError, match=r"participants: expected a list of node names, got the string 'P1'"):
        Series("reduce", "P1", "P0", 1, 10)
    with pytest.raises(NumberError, match="task_flops: .*finite"):
        Series("reduce", ("P1", "P2"), "P0", 1, float("inf"))
    with pytest.raises(NumberError, match="is more than liquidsched accepts"):
        Series("reduce", ("P1", "P2"), "P0", 2**60, 10).check(complete(3))


@pytest.mark.parametrize("parse", [parse_rate, parse_duration, parse_size, parse_count, parse_work])
def test_a_number_of_100000_digits_is_refused_and_described_not_printed(parse):
    with pytest.raises(NumberError, match="about 100,000 digits") as e:
        parse(10**100_000, "field")
    assert len(str(e.value)) < 200


@pytest.mark.parametrize("argv", [["steady", "reduce", "--topology", "complete:n=4", "--task-flops", "1Mflop",
                                   "--target", ""],
                                  ["steady", "scatter", "--topology", "complete:n=4", "--source", " "]])
def test_an_empty_node_name_is_refused_at_parse_time(capsys, argv):
    status, err = run_cli(capsys, *argv)
    assert status == 2 and "expected a name, got an empty one" in err and "solving" not in err


def test_a_fixed_period_too_short_for_one_operation_is_one_line_naming_it(capsys):
    status, err = run_cli(capsys, "steady", "scatter", "--topology", "complete:n=4", "--fixed-period", "1ms")
    assert status == 2
    assert err.strip().splitlines() == ["liquidsched: error: fixed period 1/1000 s (0.001 s): too short to carry one "
                                        "whole operation (the optimal period is 3/100 s for 1 operation)"]


def test_a_spec_that_is_not_text_is_refused_by_its_reader():
    net = ls.build_topology("crossbar:n=3")
    with pytest.raises(TopologyError, match="got int 5"):
        ls.build_topology(5)
    with pytest.raises(TopologyError, match="got NoneType None"):
        ls.resolve_topology(None)
    with pytest.raises(TrafficError, match="got int 5"):
        ls.make_traffic(net, 5)


def test_an_option_given_as_none_is_the_schedulers_default():
    net = ls.build_topology("backbone:n1=2,n2=2")
    schedule = ls.plan(net, ls.half_all_to_all(net), "weighted", overhead_s=None)
    assert schedule.info.parameters["overhead_s"] == 0.0


@pytest.mark.parametrize("generator", ["all-to-all", "half-all-to-all", "random", "skewed"])
def test_a_run_away_traffic_is_refused_before_it_is_made(generator):
    net = ls.build_topology("crossbar:n=100000")
    with pytest.raises(TrafficError, match=rf"^{generator}: [\d,]+ transfers among these hosts, more than the 16,777,216"):
        ls.make_traffic(net, generator)


def test_a_run_away_builder_is_refused_from_python_too():
    from liquidsched.topologies import crossbar, torus

    with pytest.raises(TopologyError, match="crossbar: 1,000,000,001 nodes, more than the 1,000,000"):
        crossbar(10**9)
    with pytest.raises(TopologyError, match="torus: 2,000,000 nodes"):
        torus((1000, 1000))


def test_an_allocation_is_a_list_of_counts():
    net = ls.build_topology("swiss-t1")
    with pytest.raises(TrafficError, match="got the string '44'"):
        ls.allocation_hosts(net, "44")
    with pytest.raises(TrafficError, match=r"^allocation\[1\]: expected a whole number from 0"):
        ls.allocation_hosts(net, [2, 1.5, 0, 0, 0, 0, 0, 0])
    assert ls.allocation_hosts(net, [2, 1, 0, 0, 0, 0, 0, 0]) == ["n1.1", "n1.2", "n2.1"]
