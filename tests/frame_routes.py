"""What a schedule's frames ask of the links, from the network's own routes (not from the
resources a model was built on), as the tests of every construction check it."""

from __future__ import annotations

from collections import Counter


def route_uses(net, frame) -> Counter:
    """How many transfers of ``frame`` cross each link, from the network's routes."""
    used: Counter = Counter()
    for piece in frame:
        src, dst = piece.transfer.split("->")
        used.update(net.route(src, dst))
    return used
