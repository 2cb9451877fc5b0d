"""Schedules held as columns (a frame for each transfer) against the same schedules held as
lists of pieces: the validator's violations, the frames' times, the summary and the file are
the same; DSatur on the routes as columns colours as DSatur on the transfers' paths does."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from liquidsched import _core
from liquidsched.errors import TrafficError
from liquidsched.io.files import dump_document
from liquidsched.io.topology import topology_from_dict, topology_to_dict
from liquidsched.schedule import Piece, Schedule, ScheduleInfo
from liquidsched.schedulers import plan
from liquidsched.topologies import two_switch
from liquidsched.traffic import Traffic, Transfer
from liquidsched.transfer_routes import routes_of, transfer_routes
from liquidsched.validation import validate

from .strategies import networks, traffics
from .test_scale import forwarding_networks, mixed_networks, uneven_traffics

any_network = st.one_of(networks(max_switches=5, max_hosts=8), mixed_networks(), forwarding_networks())


def hosts_renamed(net, names):
    """``net`` with the hosts of ``names`` renamed to its values."""
    text = json.dumps(topology_to_dict(net))
    for old, new in names.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    return topology_from_dict(json.loads(text))


def both_forms(net, traffic, frame_of):
    """The schedule as a column and as lists of pieces (frames in the same order)."""
    frames = [np.flatnonzero(frame_of == f).tolist() for f in range(int(frame_of.max()) + 1)]
    pieces = [Piece(name, t.size_bytes) for name, t in zip(traffic.names, traffic)]
    return (Schedule.from_frame_of(net, traffic, frame_of, ScheduleInfo("by hand")),
            Schedule(net, traffic, [[pieces[i] for i in f] for f in frames], ScheduleInfo("by hand")))


def test_frames_of_indices_are_held_as_a_column_when_they_hold_every_transfer_once():
    net = two_switch()
    hosts = net.hosts()
    traffic = Traffic([Transfer(hosts[i], hosts[5 + i], 10 + i) for i in range(4)])
    info = ScheduleInfo("by hand")
    column = Schedule.from_indices(net, traffic, [[3, 1], [0, 2]], info)
    assert column.frame_columns is not None
    assert [[p.transfer for p in f] for f in column.frames] == [[traffic.names[3], traffic.names[1]],
                                                                 [traffic.names[0], traffic.names[2]]]
    # Twice, missing, an empty frame: as lists, for the validator to name.
    for frames in ([[0, 1], [1, 2, 3]], [[0, 1], [2]], [[0, 1], [], [2, 3]]):
        schedule = Schedule.from_indices(net, traffic, frames, info)
        assert schedule.frame_columns is None and validate(schedule)


@settings(max_examples=150, deadline=None)
@given(st.data(), any_network)
def test_a_schedule_as_a_column_is_checked_and_timed_as_its_lists_are(data, net):
    assume(net.senders() and net.receivers())
    traffic = data.draw(st.one_of(uneven_traffics(net), traffics(net, max_transfers=20)))
    frames = data.draw(st.integers(1, 4))
    frame_of = np.array(data.draw(st.lists(st.integers(0, frames - 1), min_size=len(traffic),
                                           max_size=len(traffic))))
    column, lists = both_forms(net, traffic, frame_of)
    assert column.frame_columns is not None
    assert [str(v) for v in validate(column)] == [str(v) for v in validate(lists)]
    assert column.length == lists.length
    assert column.frame_durations_s(0.25) == lists.frame_durations_s(0.25)
    assert column.summary() == lists.summary()
    assert column.to_dict() == lists.to_dict()
    assert dump_document(column._document(encoded=True), "s.json", compact=True) == \
        dump_document(lists.to_dict(), "s.json", compact=True)
    # Read back: held as a column where every transfer is once and whole, else as lists.
    loaded = Schedule.from_dict(lists.to_dict())
    assert loaded.to_dict() == lists.to_dict()
    assert [str(v) for v in validate(loaded)] == [str(v) for v in validate(lists)]
    # Asking for its frames turns it into lists, equal to the others.
    assert [[(p.transfer, p.bytes) for p in f] for f in column.frames] == \
        [[(p.transfer, p.bytes) for p in f] for f in lists.frames]
    assert column.frame_columns is None


@pytest.mark.parametrize("huge", [False, True])
def test_a_large_schedule_file_written_from_its_encoded_pieces_is_the_file_of_its_dicts(tmp_path, monkeypatch, huge):
    # Written compact as from 100 transfers; frames and traffic of more than a line of items,
    # repeated pairs (numbered names), host names JSON escapes; int64 sizes (the core writes
    # the text) or a size beyond int64 (sizes held as objects, Python writes it).
    monkeypatch.setattr("liquidsched.schedule.COMPACT_TRANSFERS", 100)
    net = hosts_renamed(two_switch(), {"t1": 'hé"1', "r2": "h\\\\r2"})
    hosts = net.hosts()
    transfers = [Transfer(hosts[i % 5], hosts[5 + i % 3], 1 + i) for i in range(340)]
    transfers += [Transfer(hosts[0], hosts[6], 2**70 if huge else 2**62)]
    traffic = Traffic(transfers, "large")
    assert (traffic.json_columns() is None) == huge
    frame_of = np.arange(len(traffic)) % 2
    frame_of[:3] = 2
    column, lists = both_forms(net, traffic, frame_of)
    column.save(tmp_path / "s.json")
    assert (tmp_path / "s.json").read_text() == dump_document(lists.to_dict(), "s.json", compact=True)


def plain_document():
    """A schedule document of whole transfers, each once: five transfers in two frames."""
    net = two_switch()
    hosts = net.hosts()
    traffic = Traffic([Transfer(hosts[i], hosts[5 + i], 10 + i) for i in range(5)], "plain")
    return Schedule.from_indices(net, traffic, [[0, 2, 4], [1, 3]], ScheduleInfo("by hand")).to_dict()


def test_a_file_of_whole_transfers_each_once_is_read_as_a_column():
    doc = plain_document()
    loaded = Schedule.from_dict(doc)
    assert loaded.frame_columns is not None
    assert loaded.to_dict() == doc and validate(loaded) == []
    # The frames in the file's order, not by index.
    doc["frames"][0].reverse()
    assert Schedule.from_dict(doc).to_dict() == doc


# Each change makes the file invalid in a way the validator names.
@pytest.mark.parametrize("change, problem", [
    (lambda d: d["frames"][0].append(dict(d["frames"][1][0])), "twice"),
    (lambda d: d["frames"][1].pop(), "missing"),
    (lambda d: d["frames"][0][0].update(bytes=4), "a piece"),
    (lambda d: d["frames"].append([]), "empty"),
    (lambda d: d["frames"][0][0].update(transfer="nobody->x"), "not in the traffic"),
])
def test_a_file_of_pieces_is_read_as_lists_and_checked_as_before(change, problem):
    doc = plain_document()
    change(doc)
    loaded = Schedule.from_dict(doc)
    assert loaded.frame_columns is None
    found = [str(v) for v in validate(loaded)]
    assert found, problem


def test_a_traffic_of_plain_items_is_read_as_columns_and_the_others_item_by_item():
    items = [{"src": "a", "dst": "b", "size_bytes": 5}, {"src": "b", "dst": "a", "size_bytes": 7},
             {"src": "a", "dst": "b", "size_bytes": 9}]
    plain = Traffic.from_dict({"name": "t", "transfers": items})
    assert plain == Traffic([Transfer("a", "b", 5), Transfer("b", "a", 7), Transfer("a", "b", 9)], "t")
    assert plain.host_table == ("a", "b") and plain.names == ["a->b", "b->a", "a->b#2"]
    # Units, a number as a name: read item by item, as before.
    mixed = Traffic.from_dict({"transfers": items + [{"src": 3, "dst": "a", "size_bytes": "1KiB"}]})
    assert list(mixed)[-1] == Transfer("3", "a", 1024)
    for bad, message in (({"src": "a", "dst": "b", "size_bytes": 0}, "transfers[1]"),
                         ({"src": "a", "dst": "b", "size_bytes": 5, "extra": 1}, "extra"),
                         ({"src": "", "dst": "b", "size_bytes": 5}, "transfers[1].src")):
        with pytest.raises(TrafficError, match=re.escape(message)):
            Traffic.from_dict({"transfers": [items[0], bad]})


@settings(max_examples=150, deadline=None)
@given(st.data(), any_network)
def test_every_transfer_s_route_as_columns_is_its_path_on_the_network(data, net):
    assume(net.senders() and net.receivers())
    traffic = data.draw(uneven_traffics(net))
    routes = transfer_routes(net, traffic)
    for t, transfer in enumerate(traffic):
        assert sorted(routes_of(routes, t)) == sorted(net.path_resources(transfer.src, transfer.dst))


@settings(max_examples=150, deadline=None)
@given(st.data(), any_network)
def test_dsatur_on_routes_as_columns_colours_as_on_paths_and_is_valid(data, net):
    assume(net.senders() and net.receivers())
    traffic = data.draw(uneven_traffics(net))
    schedule = plan(net, traffic, "dsatur")
    assert validate(schedule) == []
    expected = _core.dsatur(traffic.resource_lists(net), len(net.resources), slots=net.resource_slots)
    assert [[traffic.index[p.transfer] for p in f] for f in schedule.frames] == expected


def test_a_frame_whose_resources_carry_too_much_is_named_with_its_transfers():
    from liquidsched.topologies import two_switch
    from liquidsched.traffic import Traffic, Transfer

    t = Traffic([Transfer("t1", "r4"), Transfer("t2", "r5"), Transfer("t3", "r1")])
    s = Schedule.from_frame_of(two_switch(), t, np.array([0, 0, 2]), ScheduleInfo("by hand"))
    assert [str(v) for v in validate(s)] == [
        "frame 1: resource l_ab has 1 slot but carries 2 transfers: t1->r4, t2->r5", "frame 2 is empty"]
