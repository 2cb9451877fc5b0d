"""The Swiss-T1 builder against paper 000 Fig. 10, transcribed here independently."""

from __future__ import annotations

import pytest

# Fig. 10 as printed: row i, column j; "x" diagonal, "v" direct link, else the routing switch.
FIG10 = """
x v 2 v 4 v 8 v
v x v 7 v 3 v 5
2 v x v 4 v 8 v
v 7 v x v 7 v 3
4 v 4 v x v 6 v
v 3 v 7 v x v 1
8 v 8 v 6 v x v
v 5 v 3 v 1 v x
"""


def expected_switches(i: int, j: int) -> list[str]:
    cell = FIG10.split("\n")[i].split()[j - 1]
    return [f"s{i}", f"s{j}"] if cell == "v" else [f"s{i}", f"s{cell}", f"s{j}"]


PAIRS = [(i, j) for i in range(1, 9) for j in range(1, 9) if i != j]


def test_all_56_pairs_are_checked():
    assert len(PAIRS) == 56


@pytest.mark.parametrize("i,j", PAIRS)
def test_route_follows_figure_10(t1_net, i, j):
    links = t1_net.route(f"n{i}.1", f"n{j}.4")
    crossed = [t1_net.links[l].dst for l in links[:-1]]
    assert crossed == expected_switches(i, j)
    assert links[0] == f"n{i}.1>s{i}" and links[-1] == f"s{j}>n{j}.4"


def test_shape_and_capacity(t1_net):
    assert len(t1_net.hosts()) == 32 and len(t1_net.switches()) == 8
    assert set(t1_net.resource_capacity) == {86e6}
    # 16 inter-switch cables (odd-even pairs) and 32 node cables, two directions each.
    assert len(t1_net.links) == 2 * (16 + 32)


def test_node_sends_to_itself_through_its_switch(t1_net):
    assert t1_net.route("n3.2", "n3.2") == ("n3.2>s3", "s3>n3.2")


def test_allocation_selects_nodes():
    from liquidsched.topologies import swiss_t1

    net = swiss_t1(allocation=[1, 0, 2, 0, 0, 0, 0, 4])
    assert net.hosts() == ["n1.1", "n3.1", "n3.2", "n8.1", "n8.2", "n8.3", "n8.4"]
