"""``liquidsched report``: what the page holds, checked against independent facts, and the page
itself opened in headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by
Selenium): it draws every section without a console error, on the demo's networks, on a
1,024-host fat tree and on a run's JSON, and answers a hover."""

from __future__ import annotations

import json
import os
import shutil
from fractions import Fraction

import pytest

from liquidsched import build_topology, compute_bound, half_all_to_all, plan
from liquidsched.cli import main
from liquidsched.errors import InputError
from liquidsched.report import report_data, render_page
from liquidsched.report.layout import positions
from liquidsched.traffic import all_to_all, make_traffic

DEMO = [  # the demo's networks, as make demo plans them
    ["--topology", "two-switch", "--algorithm", "liquid"],
    ["--topology", "swiss-t1", "--alloc", "4,0,4,0,4,0,4,0", "--algorithm", "liquid"],
    ["--topology", "hierarchical:d1=4,d2=2", "--traffic", "all-to-all", "--algorithm", "liquid"],
]
BIG = ["--topology", "fat-tree:k=16", "--traffic", "permutation:seed=1"]  # 1,024 hosts


def test_the_network_carries_each_link_s_load_against_lambda():
    net = build_topology("two-switch")
    traffic = half_all_to_all(net)
    bound = compute_bound(net, traffic)
    doc = report_data(net=net, traffic=traffic)["network"]
    assert len(doc["nodes"]) == len(net.nodes)
    assert sum(len(e["links"]) for e in doc["edges"]) == len(net.links)
    # The two inter-switch links carry 6 of the 25 transfers each: Λ; a host link 5 of them.
    by_link = {link["id"]: link for e in doc["edges"] for link in e["links"]}
    assert by_link["l_ab"]["ratio"] == 1.0 and by_link["l_ba"]["ratio"] == 1.0
    assert by_link["l_t1"]["ratio"] == pytest.approx(5 / 6)
    assert [e for e in doc["edges"] if e["bottleneck"]] == [e for e in doc["edges"] if {e["a"], e["b"]} == {"a", "b"}]
    assert {e["a"] for e in doc["edges"]} | {e["b"] for e in doc["edges"]} == set(net.nodes)
    assert float(bound.duration_s) == report_data(net=net, traffic=traffic)["bound"]["duration_s"]


def test_uneven_sizes_on_links_of_different_speeds_give_each_load_over_lambda():
    net = build_topology("hierarchical:d1=3,d2=2,c1=100Mbit/s,c2=150Mbit/s")
    traffic = make_traffic(net, "random:seed=4,density=0.8", None, 1_000_000)
    bound = compute_bound(net, traffic)
    doc = report_data(net=net, traffic=traffic)["network"]
    for edge in doc["edges"]:
        for link in edge["links"]:
            r = net.link_resource[link["id"]]
            crossing = sum(t.size_bytes for t in traffic if r in net.path_resources(t.src, t.dst))
            load = Fraction(crossing) / Fraction(net.resource_capacity[r])
            assert link["ratio"] == pytest.approx(float(load / bound.duration_s), abs=1e-6)
    assert max(e["ratio"] for e in doc["edges"]) == 1.0


def test_the_schedule_matrix_counts_each_piece_against_the_slots():
    net = build_topology("hierarchical:d1=4,d2=2")  # 10 slots on the uplinks
    schedule = plan(net, all_to_all(net), "liquid")
    doc = report_data(schedule=schedule)["schedule"]
    assert doc["frames"] == schedule.length and doc["liquid"] is True
    names = [r["name"] for r in doc["resources"]]
    used: dict[str, float] = {}
    for i, _, share in doc["cells"]:
        assert 0 < share <= 1
        used[names[i]] = used.get(names[i], 0) + share
    for name, total in used.items():
        r = net.resources.index(name)
        crossing = sum(1 for t in schedule.traffic if r in net.path_resources(t.src, t.dst))
        assert total == pytest.approx(crossing / net.resource_slots[r])
    # A liquid schedule keeps each bottleneck full in every frame.
    hot = [i for i, r in enumerate(doc["resources"]) if r["bottleneck"]]
    assert hot and all(sum(s for i, f, s in doc["cells"] if i == h) == pytest.approx(doc["frames"]) for h in hot)


def test_predictions_are_the_simulators_and_a_liquid_schedule_reaches_the_bound_in_frames():
    net = build_topology("two-switch")
    doc = report_data(schedule=plan(net, half_all_to_all(net), "liquid"))["predictions"]
    frames = next(p for p in doc if p["model"] == "frames")
    assert frames["ratio_to_bound"] == pytest.approx(1.0)
    assert all("makespan_s" in p for p in doc)


def test_each_transfer_s_route_is_the_cables_its_links_cross():
    net = build_topology("swiss-t1:allocation=1/1/0/0/1/0/0/1")
    traffic = half_all_to_all(net)
    doc = report_data(net=net, traffic=traffic)["network"]
    edges = doc["edges"]
    assert len(doc["routes"]["transfers"]) == len(traffic)
    for (src, dst, size, crossed), t in zip(doc["routes"]["transfers"], traffic):
        assert (src, dst, size) == (t.src, t.dst, t.size_bytes)
        ids = [link["id"] for k in crossed for link in edges[k]["links"]]
        assert all(lid in ids for lid in net.route(t.src, t.dst)) and len(crossed) == len(net.route(t.src, t.dst))


def test_layout_puts_hosts_below_their_switches():
    net = build_topology("fat-tree:k=4")
    pos = positions(net)
    for h in net.hosts():
        assert pos[h][1] == 1.0 and all(pos[s][1] < 1.0 for s in net.switches())
    assert all(0 <= x <= 1 and 0 <= y <= 1 for x, y in pos.values())


def test_the_page_is_self_contained_and_escapes_its_data():
    net = build_topology("crossbar:n=2")
    data = report_data(net=net)
    data["network"]["name"] = "</script><script>alert(1)</script>"
    page = render_page("a <b>", "s", data)
    assert "</script><script>alert(1)" not in page and "a &lt;b&gt;" in page
    assert "src=" not in page and "href=\"http" not in page and "@import" not in page


def test_report_refuses_what_it_cannot_draw(tmp_path, capsys):
    with pytest.raises(InputError):
        report_data()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": 1}))
    assert main(["report", "--run", str(bad), "--output", str(tmp_path / "r.html")]) == 2
    assert "not a run's JSON" in capsys.readouterr().err
    assert main(["report", "--output", str(tmp_path / "r.html")]) == 2
    assert not (tmp_path / "r.html").exists()


# --- in a real browser -------------------------------------------------------------------------

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    return None if CHROMIUM and DRIVER else "chromium and chromium-driver are not installed"


needs_browser = pytest.mark.skipif(_browser_missing() is not None and not os.environ.get("CI"),
                                   reason=str(_browser_missing()))


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(120)
    yield driver
    driver.quit()


def _open(browser, page) -> dict:
    """Open ``page``; the data it embeds; no console error."""
    browser.get_log("browser")  # what an earlier page logged
    browser.get(page.as_uri())
    assert browser.find_element("tag name", "body").get_attribute("data-ready") == "1"
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    return json.loads(browser.find_element("id", "report-data").get_attribute("textContent"))


def _screenshot_shows_something(browser, element, path) -> None:
    from PIL import Image

    # Scrolled to first: Chromium cuts the shot of an element that crosses the window's edge.
    browser.execute_script("arguments[0].scrollIntoView(true)", element)
    element.screenshot(str(path))
    with Image.open(path) as image:
        assert image.width > 100 and image.height > 50
        assert len(image.convert("RGB").resize((120, 60)).getcolors(7200)) > 5  # drawn, not blank


def _check_sections(browser, data, tmp_path) -> None:
    shown = [k for k, v in data.items() if v is not None]
    assert [s.get_attribute("id") for s in browser.find_elements("css selector", "section")] == shown
    for key in shown:
        _screenshot_shows_something(browser, browser.find_element("id", key), tmp_path / f"{key}.png")
    if data["network"]:
        assert len(browser.find_elements("css selector", "#network-svg line.edge")) == len(data["network"]["edges"])
        assert len(browser.find_elements("css selector", "#network-svg .node")) == len(data["network"]["nodes"])
    if data["schedule"]:
        assert len(browser.find_elements("css selector", "#schedule-svg rect.cell")) == len(data["schedule"]["cells"])
    if data["predictions"]:
        assert len(browser.find_elements("css selector", "#predictions-svg rect.bar")) == len(data["predictions"])
    if data["measured"] and data["measured"].get("modes"):
        bars = sum((m["ratio_to_bound"] is not None) + (m["predicted_ratio_to_bound"] is not None)
                   for m in data["measured"]["modes"])
        assert len(browser.find_elements("css selector", "#measured-svg rect.bar")) == bars


def _hover_shows(browser, css: str, words: str) -> None:
    from selenium.webdriver import ActionChains

    target = browser.find_elements("css selector", css)[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", target)
    ActionChains(browser).move_to_element(target).perform()
    tip = browser.find_element("id", "tip")
    assert tip.is_displayed() and words in tip.text


def _hover_outlines_the_routes_of(browser, data, host: str) -> None:
    """Hovering ``host`` outlines exactly the cables its transfers' routes cross."""
    from selenium.webdriver import ActionChains

    k = next(i for i, d in enumerate(data["network"]["nodes"]) if d["id"] == host)
    target = browser.find_elements("css selector", "#network-svg .node")[k]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", target)
    ActionChains(browser).move_to_element(target).perform()
    lines = browser.find_elements("css selector", "#network-svg line.edge")
    outlined = {i for i, line in enumerate(lines) if "route" in line.get_attribute("class")}
    expected = {e for t in data["network"]["routes"]["transfers"] if t[0] == host for e in t[3]}
    assert outlined == expected and expected
    assert "transfer(s) from it" in browser.find_element("id", "tip").text


@needs_browser
@pytest.mark.parametrize("args", DEMO, ids=["two-switch", "swiss-t1", "hierarchical"])
def test_a_demo_network_s_report_draws_in_chromium(browser, tmp_path, args):
    page = tmp_path / "report.html"
    assert main(["report", *args, "--output", str(page)]) == 0
    data = _open(browser, page)
    _check_sections(browser, data, tmp_path)
    _hover_shows(browser, "#network-svg line.bottleneck", "of Λ")
    _hover_shows(browser, "#schedule-svg rect.cell", "of its slots in use")
    _hover_outlines_the_routes_of(browser, data, data["network"]["routes"]["transfers"][0][0])


@needs_browser
def test_a_1024_host_fat_tree_s_report_draws_in_chromium(browser, tmp_path):
    page = tmp_path / "big.html"
    assert main(["report", *BIG, "--output", str(page)]) == 0
    data = _open(browser, page)
    assert data["network"]["hosts"] == 1024
    _check_sections(browser, data, tmp_path)
    _hover_shows(browser, "#network-svg line.bottleneck", "of Λ")
    _hover_outlines_the_routes_of(browser, data, data["network"]["routes"]["transfers"][0][0])


@needs_browser
def test_a_run_s_report_shows_measured_beside_predicted_in_chromium(browser, tmp_path):
    run, page = tmp_path / "run.json", tmp_path / "run.html"
    schedule = tmp_path / "s.json"
    assert main(["plan", "--topology", "crossbar:n=3", "--traffic", "all-to-all", "--algorithm", "liquid",
                 "--output", str(schedule)]) == 0
    assert main(["run", "--schedule", str(schedule), "--repeats", "1",
                 "--modes", "frames,alltoallv", "--on-modelled-network", "--output", str(run)]) == 0
    assert main(["report", "--run", str(run), "--schedule", str(schedule), "--output", str(page)]) == 0
    data = _open(browser, page)
    assert [m["mode"] for m in data["measured"]["modes"]] == ["frames", "alltoallv"]
    _check_sections(browser, data, tmp_path)
    _hover_shows(browser, "#measured-svg rect.bar", "measured")
