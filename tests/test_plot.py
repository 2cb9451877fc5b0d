"""Plots people read: every plot in PNG, PDF and SVG by its extension, any other refused before
anything is computed; the sweep plot labels every host count, the schedule plot has a legend."""

from __future__ import annotations

import pytest

from liquidsched import build_topology, plan
from liquidsched import plot as plots
from liquidsched.cli import main
from liquidsched.errors import InputError
from liquidsched.simulate import simulate
from liquidsched.sweep import run_sweep
from liquidsched.traffic import half_all_to_all

#: What each format's file starts with.
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-", "svg": b"<?xml"}


def sweep_result():
    return run_sweep(build_topology("hierarchical:d1=3,d2=3"))


def liquid_schedule():
    net = build_topology("two-switch")
    return plan(net, half_all_to_all(net), "liquid")


def steady_report() -> dict:
    """The fields plot_steady reads, as ``liquidsched steady`` writes them."""
    return {"operation": "scatter", "platform": "star-3", "throughput_ops_per_s": 2.0,
            "baseline": {"name": "flat scatter", "throughput_per_s": "3/2"},
            "operations": [{"operations": k, "throughput_per_s": 2.0 * k / (k + 1)} for k in (1, 10, 100)]}


def sizes_report(comparable: bool = True) -> dict:
    """The fields plot_message_sizes reads, as ``run --sizes`` writes them."""
    def mode(name: str, median: float) -> dict:
        return {"mode": name, "median_s": median, "min_s": median * 0.9, "p95_s": median * 1.2,
                "throughput_Bps": 6 * 1024 / median}

    return {"metadata": {"topology": "crossbar", "traffic": "all-to-all", "algorithm": "liquid"},
            "network": "emulated" if comparable else "local", "comparable_to_bound": comparable,
            "mpi_library": "MPICH Version:   5.0.2",
            "sizes": [{"size_bytes": s, "network_bytes": 6 * s, "liquid_throughput_Bps": 25e6,
                       "modes": [mode("frames", s * 1e-7 + 1e-4), mode("alltoall", s * 1.2e-7 + 5e-5)]}
                      for s in (1024, 4096, 16384)]}


PLOTS = {
    "sweep": lambda path: plots.plot_sweep(sweep_result(), path),
    "utilisation": lambda path: plots.plot_utilisation(liquid_schedule(), simulate(liquid_schedule(), "fluid"), path),
    "schedule": lambda path: plots.plot_schedule(liquid_schedule(), path),
    "steady": lambda path: plots.plot_steady(steady_report(), path),
    "message sizes": lambda path: plots.plot_message_sizes(sizes_report(), path),
    "message sizes, not comparable": lambda path: plots.plot_message_sizes(sizes_report(False), path),
}


@pytest.mark.parametrize("fmt", list(MAGIC))
@pytest.mark.parametrize("name", list(PLOTS))
def test_every_plot_writes_each_format(tmp_path, name, fmt):
    path = tmp_path / f"plot.{fmt}"
    PLOTS[name](path)
    data = path.read_bytes()
    assert data.startswith(MAGIC[fmt])
    if fmt == "svg":
        assert b"<svg" in data


@pytest.mark.parametrize("name", list(PLOTS))
def test_an_unknown_extension_is_refused_before_computing(tmp_path, monkeypatch, name):
    def must_not_draw(*args, **kwargs):
        raise AssertionError("drew before refusing the extension")

    monkeypatch.setattr(plots.plt, "subplots", must_not_draw)
    with pytest.raises(InputError, match=r"plot\.gif: a plot is written as png, pdf, svg by its extension; "
                                         r"this path has '\.gif'"):
        PLOTS[name](tmp_path / "plot.gif")
    assert list(tmp_path.iterdir()) == []


def test_the_cli_refuses_an_unknown_extension_before_planning(tmp_path, capsys):
    schedule = tmp_path / "s.json"
    code = main(["plan", "--topology", "two-switch", "--algorithm", "liquid", "--output", str(schedule),
                 "--plot", str(tmp_path / "s.jpg")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "s.jpg: a plot is written as png, pdf, svg" in err
    assert not schedule.exists()


def drawn(monkeypatch, draw) -> object:
    """The figure ``draw`` makes, kept instead of written."""
    kept = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: kept.append(fig))
    draw("unused.png")
    assert len(kept) == 1
    return kept[0]


def test_the_sweep_plot_labels_every_host_count(monkeypatch):
    result = sweep_result()
    fig = drawn(monkeypatch, lambda path: plots.plot_sweep(result, path))
    counts = sorted({c.hosts for c in result.classes})
    assert counts == list(range(1, 10))
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == [str(n) for n in counts]


def test_the_sweep_plot_labels_every_host_count_of_the_swiss_t1(monkeypatch):
    """32 host counts, some with one class and some with dozens: every count has its label."""
    result = run_sweep(build_topology("swiss-t1"))
    fig = drawn(monkeypatch, lambda path: plots.plot_sweep(result, path))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [str(n) for n in range(1, 33)]


def test_the_schedule_plot_has_a_legend(monkeypatch):
    fig = drawn(monkeypatch, lambda path: plots.plot_schedule(liquid_schedule(), path))
    legend = fig.axes[0].get_legend()
    assert legend is not None
    texts = [t.get_text() for t in legend.get_texts()]
    assert any("bottleneck" in t for t in texts) and any("other resource" in t for t in texts)


def test_the_message_size_plot_draws_the_bound_only_on_the_modelled_network(monkeypatch):
    for comparable in (True, False):
        fig = drawn(monkeypatch, lambda path: plots.plot_message_sizes(sizes_report(comparable), path))
        for ax in fig.axes[:2]:
            labels = [t.get_text() for t in ax.get_legend().get_texts()]
            assert labels[:2] == ["frames", "alltoall"]
            assert any("liquid throughput" in label for label in labels) is comparable
            assert ax.get_xscale() == ax.get_yscale() == "log"
            assert [t.get_text() for t in ax.get_xticklabels()] == ["1 KiB", "4 KiB", "16 KiB"]
