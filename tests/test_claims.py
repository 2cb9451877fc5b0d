"""Every printed claim true: what the tables of bound, plan and simulate say agrees with the
numbers they show, every model and back end refuses a schedule that does not deliver its
traffic, and the messages say what they mean."""

from __future__ import annotations

import json
import re

import pytest

from liquidsched.wording import milliseconds, percent, plural, short_time
from .cli_run import run

#: A heterogeneous network (mixed link kinds and capacities) and a traffic of uneven sizes.
HETEROGENEOUS = ["--topology", "random:switches=5,hosts=10,seed=3", "--traffic", "random:seed=2,density=0.6"]
BACKBONE = ["--topology", "backbone:n1=3,n2=3", "--traffic", "random:seed=1,density=0.7"]


def rows(text: str) -> dict[str, str]:
    """The rows of a two-column table as printed (box or plain), wrapped cells joined."""
    table: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃|]", line)[1:-1]]
        if len(cells) != 2:
            continue
        label, value = cells
        if label:
            last = label
            table[label] = value
        elif last is not None:
            table[last] += " " + value
    # A label wrapped over two lines leaves its second half in the next row's label column:
    # the rows are looked up by the start of their label.
    return table


def row(table: dict[str, str], start: str) -> str:
    if start in table:
        return table[start]
    found = [v for k, v in table.items() if k.startswith(start)]
    assert len(found) == 1, (start, list(table))
    return found[0]


def ms(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"([\d.]+) ms", text)]


def percents(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"([\d.]+)%", text)]


def mb_per_s(text: str) -> float:
    return float(re.search(r"([\d,.]+) MB/s", text).group(1).replace(",", ""))


# -- 1. a schedule that does not deliver its traffic is refused everywhere, with one line --------

@pytest.fixture
def schedule_file(tmp_path, capsys):
    path = tmp_path / "plan.json"
    assert run(capsys, "plan", "--topology", "two-switch", "--algorithm", "round-robin", "--output", path)[0] == 0
    return path


def edited(path, tmp_path, name, edit):
    doc = json.loads(path.read_text())
    edit(doc)
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


def drop_last_frame(doc):
    doc["frames"].pop()


def no_frames(doc):
    doc["frames"] = []


def first_frame_twice(doc):
    doc["frames"].append(doc["frames"][0])


def short_piece(doc):
    doc["frames"][0][0]["bytes"] -= 1


def long_piece(doc):
    doc["frames"][0][0]["bytes"] += 1


UNDELIVERED = {"missing": (drop_last_frame, "is missing (never delivered)"),
               "no frames": (no_frames, "is missing (never delivered)"),
               "twice": (first_frame_twice, "is delivered more than once"),
               "short": (short_piece, "delivers 999999 of 1000000 bytes"),
               "long": (long_piece, "delivers 1000001 of 1000000 bytes (more than its size, frame 1)")}
MODELS = [["--model", "frames"], ["--model", "circuit"], ["--model", "fluid"],
          ["--model", "fluid", "--policy", "all-at-once"], ["--model", "fluid", "--policy", "per-sender"],
          ["--backend", "simgrid"]]


@pytest.mark.parametrize("case", list(UNDELIVERED))
def test_every_model_refuses_a_schedule_that_does_not_deliver_its_traffic(case, schedule_file, tmp_path, capsys):
    edit, problem = UNDELIVERED[case]
    path = edited(schedule_file, tmp_path, "bad.json", edit)
    messages = set()
    for model in MODELS:
        code, out, err = run(capsys, "simulate", "--schedule", path, *model)
        assert code == 2 and out == "", model
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, model
        messages.add(lines[0])
    # One check for all: the same line whatever the model or back end.
    assert len(messages) == 1
    (message,) = messages
    assert message.startswith(f"liquidsched: error: {path}: the schedule does not deliver its traffic exactly: ")
    assert problem in message


def test_run_refuses_it_too_even_forced(schedule_file, tmp_path, capsys):
    path = edited(schedule_file, tmp_path, "bad.json", drop_last_frame)
    _, _, expected = run(capsys, "simulate", "--schedule", path)
    for force in ([], ["--force"]):
        code, out, err = run(capsys, "run", "--schedule", path, *force)
        assert code == 2 and err == expected, force


def test_the_python_api_refuses_it_in_every_model_and_in_the_exchange_plan(two_switch_net):
    from liquidsched import plan
    from liquidsched.errors import InputError
    from liquidsched.execute.plan import exchange_plan
    from liquidsched.schedule import Schedule
    from liquidsched.simulate import simulate
    from liquidsched.traffic import half_all_to_all

    good = plan(two_switch_net, half_all_to_all(two_switch_net), "round-robin")
    bad = Schedule(good.network, good.traffic, good.frames + [good.frames[0]], good.info)
    for model in ("frames", "circuit", "fluid"):
        with pytest.raises(InputError, match="delivered more than once"):
            simulate(bad, model)
    with pytest.raises(InputError, match="delivered more than once"):
        exchange_plan(bad)


def test_check_lists_the_same_problems_in_frame_order(schedule_file, tmp_path, capsys):
    path = edited(schedule_file, tmp_path, "bad.json", first_frame_twice)
    code, _, err = run(capsys, "check", path)
    lines = err.strip().splitlines()
    # Round-robin's 7 frames plus the copy of frame 1; the copy's transfers are delivered twice.
    assert code == 1 and lines[0] == f"{path}: invalid, {plural(len(lines) - 1, 'violation')}:"
    assert all("delivered more than once" in line and "frames 1, 8" in line for line in lines[1:])


# -- 2. the frames model of plan excludes latency, simulate's includes it, and both say so --------

def test_plan_and_simulate_say_whether_latency_is_counted(tmp_path, capsys):
    path = tmp_path / "s.json"
    spec = ["--topology", "random:switches=5,hosts=10,seed=3", "--traffic", "all-to-all"]
    code, out, _ = run(capsys, "plan", *spec, "--algorithm", "liquid", "--output", path)
    planned = rows(out)
    time = row(planned, "time (frames model, latency excluded)")
    assert code == 0 and "100.0%" in time and row(planned, "liquid").startswith("True")
    code, out, _ = run(capsys, "simulate", "--schedule", path)
    simulated = rows(out)
    assert code == 0 and row(simulated, "model").startswith("frames, latency included")
    (makespan,), (duration,) = ms(row(simulated, "makespan")), ms(row(simulated, "Λ (latency excluded)"))
    # Route latency makes the simulated makespan longer than Λ, and the ratio is of the two shown.
    assert makespan > duration == ms(time)[1]
    assert percents(row(simulated, "of the liquid throughput"))[0] == pytest.approx(100 * duration / makespan, abs=0.05)


# -- 3. a ratio printed beside its numbers never contradicts them --------------------------------

def test_weighted_shows_the_digits_that_tell_its_time_from_lambda(capsys):
    code, out, _ = run(capsys, "plan", *BACKBONE, "--algorithm", "weighted", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["liquid"] is False and summary["makespan_s"] > summary["duration_s"]
    code, out, _ = run(capsys, "plan", *BACKBONE, "--algorithm", "weighted")
    table = rows(out)
    makespan, duration = ms(row(table, "time (frames model"))
    assert makespan > duration and "100.0%" not in row(table, "time (frames model")
    assert row(table, "liquid") == f"False: time − Λ = {short_time(summary['makespan_s'] - summary['duration_s'])}"


def test_the_cost_with_beta_is_in_the_table(capsys):
    argv = ["plan", *BACKBONE, "--algorithm", "weighted", "--overhead", "0.001"]
    code, out, _ = run(capsys, *argv, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["liquid"] is True
    with_beta = summary["makespan_s"] + summary["length"] * 0.001
    assert summary["makespan_with_overhead_s"] == pytest.approx(with_beta)
    assert summary["ratio_with_overhead"] == pytest.approx(summary["duration_s"] / with_beta)
    table = rows(run(capsys, *argv)[1])
    shown = row(table, "time with β")
    assert ms(shown)[0] == pytest.approx(with_beta * 1e3, abs=5e-4)
    assert percents(shown)[0] == pytest.approx(100 * summary["duration_s"] / with_beta, abs=0.05)
    assert percents(shown)[0] < 100
    assert row(table, "liquid") == "True: time = Λ (β excluded)"


# -- 4. a steady-state period is shown against the frame bound that applies to it ---------------

def test_a_steady_state_period_is_shown_against_its_frame_bound(tmp_path, capsys):
    path = tmp_path / "P.json"
    assert run(capsys, "steady", "scatter", "--topology", "star:n=4", "--output", path)[0] == 0
    code, out, _ = run(capsys, "simulate", "--schedule", path, "--json")
    data = json.loads(out)
    assert code == 0 and data["ratio_to_frame_bound"] == pytest.approx(data["frame_bound_time_s"] / data["makespan_s"])
    table = rows(run(capsys, "simulate", "--schedule", path)[1])
    assert row(table, "frame bound").startswith(f"{plural(data['frame_lower_bound'], 'frame')}, "
                                                f"{data['frame_bound_time_s'] * 1e3:.3f} ms")
    assert row(table, "of the frame bound").startswith("100.0%")
    # The liquid bound still shown, with its own ratio: Λ over the makespan.
    assert percents(row(table, "of the liquid throughput"))[0] == pytest.approx(
        100 * data["duration_s"] / data["makespan_s"], abs=0.05)


# -- 5. frames of packets are not counted against a bound in frames of whole transfers ----------

def test_shuffle_is_compared_with_the_frame_bound_in_time(capsys):
    code, out, _ = run(capsys, "plan", "--topology", "two-switch", "--algorithm", "shuffle", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["whole_transfers"] is False and summary["gap"] is None
    assert summary["gap_s"] == pytest.approx(summary["makespan_s"] - summary["frame_bound_time_s"])
    table = rows(run(capsys, "plan", "--topology", "two-switch", "--algorithm", "shuffle")[1])
    assert not any("frame" in v for k, v in table.items() if k.startswith("gap") and "time" not in k)
    shown = row(table, "gap to the frame bound, in time")
    assert shown.startswith(short_time(summary["gap_s"]))
    assert row(table, "frames").startswith(f"{summary['length']} of pieces (frame bound {summary['lower_bound']} in "
                                           "frames of whole transfers)")


# -- 6. the ratios printed are the ratios of the numbers printed --------------------------------

@pytest.mark.parametrize("algorithm", ["round-robin", "weighted", "dsatur"])
def test_plan_ratios_are_those_of_the_numbers_shown(algorithm, capsys):
    code, out, _ = run(capsys, "plan", *HETEROGENEOUS, "--algorithm", algorithm, "--json")
    summary = json.loads(out)
    table = rows(run(capsys, "plan", *HETEROGENEOUS, "--algorithm", algorithm)[1])
    time = row(table, "time (frames model, latency excluded)")
    makespan, duration = ms(time)
    assert (makespan, duration) == pytest.approx((summary["makespan_s"] * 1e3, summary["duration_s"] * 1e3), abs=1e-3)
    assert percents(time)[0] == pytest.approx(100 * duration / makespan, abs=0.06)
    throughput, liquid = mb_per_s(row(table, "throughput")), mb_per_s(row(table, "liquid throughput"))
    assert throughput / liquid == pytest.approx(duration / makespan, abs=1e-3)
    assert row(table, "liquid").startswith(str(summary["liquid"]))
    if not summary["liquid"]:
        assert "100.0%" not in time


@pytest.mark.parametrize("model", [["--model", "frames"], ["--model", "circuit"], ["--model", "fluid"]])
def test_simulate_ratios_are_those_of_the_numbers_shown(model, capsys):
    argv = ["simulate", *HETEROGENEOUS, "--algorithm", "round-robin", *model]
    code, out, _ = run(capsys, *argv, "--json")
    data = json.loads(out)
    table = rows(run(capsys, *argv)[1])
    (makespan,), (duration,) = ms(row(table, "makespan")), ms(row(table, "Λ (latency excluded)"))
    assert (makespan, duration) == pytest.approx((data["makespan_s"] * 1e3, data["duration_s"] * 1e3), abs=1e-3)
    assert percents(row(table, "of the liquid throughput"))[0] == pytest.approx(100 * duration / makespan, abs=0.06)
    throughput, liquid = mb_per_s(row(table, "throughput")), mb_per_s(row(table, "liquid throughput"))
    assert throughput / liquid == pytest.approx(duration / makespan, abs=1e-3)


def test_bound_shows_what_its_json_says(capsys):
    code, out, _ = run(capsys, "bound", *HETEROGENEOUS, "--json")
    data = json.loads(out)
    table = rows(run(capsys, "bound", *HETEROGENEOUS)[1])
    assert code == 0 and row(table, "transfers") == str(data["transfers"])
    assert ms(row(table, "duration Λ"))[0] == pytest.approx(data["duration_s"] * 1e3, abs=1e-3)
    # The liquid throughput is the traffic's bytes over the Λ shown.
    assert mb_per_s(row(table, "liquid throughput")) == pytest.approx(data["total_bytes"] / data["duration_s"] / 1e6,
                                                                      abs=0.01)


# -- the shared wording -------------------------------------------------------------------------

def test_wording_never_rounds_a_difference_away():
    assert [plural(1, "transfer"), plural(2, "transfer"), plural(1, "scatter"), plural(1, "step")] == \
        ["1 transfer", "2 transfers", "1 scatter", "1 step"]
    assert percent(1.0) == "100.0%" and percent(0.99999994) != "100.0%" and percent(1.0000001) != "100.0%"
    assert percent(1.0, exact_one=False) != "100.0%"
    assert milliseconds(0.13517184, beside=0.13517176) == "135.17184 ms"
    assert milliseconds(0.13517176, beside=0.13517184) == "135.17176 ms"


# -- 7. messages that say what they mean --------------------------------------------------------

def one_error(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    return lines[0]


def test_a_window_is_counted_in_steps_everywhere(tmp_path, capsys, two_switch_net):
    from liquidsched import plan
    from liquidsched.errors import InputError
    from liquidsched.simulate import simulate
    from liquidsched.traffic import half_all_to_all

    messages = [one_error(capsys, "plan", "--topology", "two-switch", "--algorithm", "shuffle", "--window", "0")]
    schedule = plan(two_switch_net, half_all_to_all(two_switch_net), "shuffle")
    for call in (lambda: plan(two_switch_net, half_all_to_all(two_switch_net), "shuffle", window=0),
                 lambda: plan(two_switch_net, half_all_to_all(two_switch_net), "shuffle", window="auto"),
                 lambda: simulate(schedule, "fluid", "window", window=0)):
        with pytest.raises(InputError) as e:
            call()
        messages.append(str(e.value))
    # (buffer_packets is a field's name, not the window's unit)
    assert all("step" in m and not re.search(r"(?<!buffer_)packet", m) for m in messages), messages
    path = tmp_path / "s.json"
    schedule.save(path)
    code, out, _ = run(capsys, "simulate", "--schedule", path, "--policy", "window", "--window", "1")
    assert code == 0 and row(rows(out), "model").endswith("W = 1 step")


def test_a_highs_status_is_said_in_words():
    import highspy

    from liquidsched.steady.lp import highs_status_meaning

    said = highs_status_meaning(highspy.HighsModelStatus.kNotset)
    assert said.startswith("HiGHS stopped before it reached any status") and "Not Set" not in said
    assert highs_status_meaning(highspy.HighsModelStatus.kInfeasible).startswith("no solution meets every constraint")


@pytest.fixture
def crossbar_platform(tmp_path, capsys):
    path = tmp_path / "x.xml"
    assert run(capsys, "topology", "export", "crossbar:n=3", "--output", path)[0] == 0
    return path


def simgrid_reader_or_skip(monkeypatch):
    from liquidsched.simgrid import install

    if not install.simgrid_available():
        pytest.skip("SimGrid is not installed")
    monkeypatch.setenv("LIQUIDSCHED_PLATFORM_READER", "simgrid")


@pytest.mark.parametrize("reader", ["liquidsched", "simgrid"])
def test_a_missing_route_is_reported_with_the_file(reader, crossbar_platform, monkeypatch, capsys):
    if reader == "simgrid":
        simgrid_reader_or_skip(monkeypatch)
    else:
        monkeypatch.setenv("LIQUIDSCHED_PLATFORM_READER", "liquidsched")
    text = crossbar_platform.read_text()
    text = re.sub(r'\s*<route src="h1" dst="h2"[^>]*>.*?</route>', "", text, count=1, flags=re.S)
    crossbar_platform.write_text(text)
    # The platform loads (it routes every other pair); the traffic that needs h1 to h2 is refused,
    # naming the transfer, the file and the pair.
    message = one_error(capsys, "bound", "--topology", crossbar_platform)
    assert message.startswith("liquidsched: error: transfers[") and f"(h1->h2): {crossbar_platform}: " in message
    assert "h1 to h2" in message


def test_a_negative_simgrid_latency_is_called_that(crossbar_platform, monkeypatch, capsys):
    simgrid_reader_or_skip(monkeypatch)
    crossbar_platform.write_text(crossbar_platform.read_text().replace('latency="0.0s"', 'latency="-1s"', 1))
    message = one_error(capsys, "bound", "--topology", crossbar_platform)
    assert "latency -1.0 s" in message and "at least 0" in message and "coordinates?" not in message


def test_json_errors_do_not_repeat_at(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text('{"a": "x')
    message = one_error(capsys, "simulate", "--schedule", path)
    assert "starting at line 1" in message and "at at" not in message


def test_a_directory_as_launcher_is_called_a_directory(tmp_path, capsys):
    message = one_error(capsys, "run", "--topology", "two-switch", "--launcher", tmp_path)
    assert f"launcher {tmp_path}: a directory" in message


def test_one_run_has_no_spread():
    from types import SimpleNamespace

    from rich.console import Console

    from liquidsched.cli.run import result_table, sizes_table
    from liquidsched.execute.results import ModeResult

    def printed(table) -> str:
        console = Console(width=300, record=True)
        console.print(table)
        return console.export_text()

    modes = [ModeResult("frames", [0.01], True, 10**6, 1e8), ModeResult("pairwise", [0.01, 0.02], True, 10**6, 1e8)]
    text = printed(result_table(SimpleNamespace(modes=modes, network="local"), {}, "t", lambda r: f"{r:g}"))
    frames, pairwise = (line for line in text.splitlines() if "frames" in line or "pairwise" in line)
    assert "one run" in frames and "–" in pairwise and "one run" not in pairwise
    row_of = {"mode": "frames", "mean_s": 0.01, "std_s": 0.0, "min_s": 0.01, "median_s": 0.01, "p95_s": 0.01,
              "times_s": [0.01], "throughput_Bps": 1e8, "ratio_to_bound": None, "verified": True}
    point = SimpleNamespace(size_bytes=1000, mode_rows=lambda: [row_of])
    text = printed(sizes_table(SimpleNamespace(points=[point], network="local"), "t"))
    assert "one run" in text and "0.0 µs" not in text


def test_counts_of_one_are_in_the_singular(tmp_path, capsys):
    code, out, err = run(capsys, "steady", "scatter", "--topology", "star:n=4", "--output", tmp_path / "P.json")
    assert code == 0 and row(rows(out), "period T").endswith(", 1 scatter")
    code, out, _ = run(capsys, "bound", "--topology", "crossbar:n=2", "--traffic", "permutation:seed=1")
    assert code == 0
    code, out, _ = run(capsys, "plan", "--topology", "two-switch", "--traffic", "all-to-all", "--algorithm",
                       "round-robin", "--json")
    assert code == 0
    # A 1-frame, 1-transfer schedule, checked.
    doc = json.loads(json.dumps({"src": "t1", "dst": "r1"}))
    traffic = tmp_path / "one.csv"
    traffic.write_text(f"src,dst,size_bytes\n{doc['src']},{doc['dst']},1000\n")
    path = tmp_path / "one.json"
    assert run(capsys, "plan", "--topology", "two-switch", "--traffic", traffic, "--output", path)[0] == 0
    code, out, _ = run(capsys, "check", path)
    assert code == 0 and out.strip() == f"{path}: valid, 1 frame, 1 transfer"
    code, out, _ = run(capsys, "bound", "--topology", "two-switch", "--traffic", traffic)
    assert row(rows(out), "duration Λ").startswith("1 transfer (")


def test_a_simulated_makespan_within_float_rounding_of_lambda_is_lambda(capsys):
    """The fluid model reaches Λ up to a float's rounding: neither the 17th digit nor an
    "≈ 100.0%" is shown for it."""
    code, out, _ = run(capsys, "simulate", "--topology", "two-switch", "--algorithm", "liquid", "--model", "fluid")
    table = rows(out)
    assert code == 0 and row(table, "makespan") == "60.000 ms" == row(table, "Λ (latency excluded)")
    assert row(table, "of the liquid throughput") == "100.0% (Λ / makespan)"


def test_a_schedule_over_its_slots_is_refused_by_the_slot_models_naming_its_file(schedule_file, tmp_path, capsys):
    def merge_first_two_frames(doc):
        doc["frames"][0] += doc["frames"].pop(1)

    path = edited(schedule_file, tmp_path, "over.json", merge_first_two_frames)
    for model in ("frames", "circuit"):
        message = one_error(capsys, "simulate", "--schedule", path, "--model", model)
        assert message.startswith(f"liquidsched: error: {path}: the schedule is not valid in the slot model (frame 1: ")
    assert run(capsys, "simulate", "--schedule", path, "--model", "fluid")[0] == 0
