"""An independent fluid model in exact arithmetic, for small cases: max-min rates by the
textbook bottleneck algorithm (all resources at the minimal fair share saturate at once), and
a plain event loop over the three start policies."""

from __future__ import annotations

from fractions import Fraction


def max_min_rates(paths: dict[int, list[int]], capacity: list[Fraction]) -> dict[int, Fraction]:
    """Max-min fair rates of the flows ``paths`` (flow -> resources)."""
    rates: dict[int, Fraction] = {}
    left = list(capacity)
    todo = set(paths)
    while todo:
        users: dict[int, int] = {}
        for f in todo:
            for r in paths[f]:
                users[r] = users.get(r, 0) + 1
        share = min(left[r] / n for r, n in users.items())
        tight = {r for r, n in users.items() if left[r] / n == share}
        fixed = {f for f in todo if tight & set(paths[f])}
        for f in fixed:
            rates[f] = share
            for r in paths[f]:
                left[r] -= share
        todo -= fixed
    return rates


def fluid_finish_times(paths, sizes, senders, frames, capacity, policy: str) -> list[Fraction]:
    """Finish time of every flow (zero latency, no overhead)."""
    n = len(paths)
    remaining = [Fraction(s) for s in sizes]
    finish: list[Fraction | None] = [None] * n
    queues: dict[int, list[int]] = {}
    for f in (i for fr in frames for i in fr):
        queues.setdefault(senders[f], []).append(f)
    if policy == "all-at-once":
        active = set(range(n))
    elif policy == "frames":
        frame_no, active = 0, set(frames[0])
    else:
        active = {q.pop(0) for q in queues.values()}
    t = Fraction(0)
    while active:
        rates = max_min_rates({f: paths[f] for f in active}, capacity)
        dt = min(remaining[f] / rates[f] for f in active)
        t += dt
        done = set()
        for f in active:
            remaining[f] -= rates[f] * dt
            if remaining[f] == 0:
                done.add(f)
                finish[f] = t
        active -= done
        if policy == "per-sender":
            for f in done:
                if queues[senders[f]]:
                    active.add(queues[senders[f]].pop(0))
        elif policy == "frames" and not active and frame_no + 1 < len(frames):
            frame_no += 1
            active = set(frames[frame_no])
    return finish  # type: ignore[return-value]


def gated_finish_times(paths, sizes, senders, receivers, frames, frame_steps, capacity,
                       window: int | None) -> list[Fraction]:
    """Finish times under the window policy (``window`` steps) or the steps policy (None),
    straight from their definitions, re-evaluated after every event: node ``x`` may start its
    next flow (schedule order) of step ``k`` while fewer than ``W`` steps before ``k`` have an
    unfinished flow to ``x``; under the steps policy a flow starts when every earlier-step
    flow of its sender and of its receiver, sent or received, has finished."""
    n = len(paths)
    step = {f: frame_steps[k] for k, fr in enumerate(frames) for f in fr}
    order = [f for fr in frames for f in fr]
    remaining = [Fraction(s) for s in sizes]
    finish: list[Fraction | None] = [None] * n
    started: set[int] = set()

    def unfinished_steps_before(k: int, flows) -> int:
        return len({step[f] for f in flows if finish[f] is None and step[f] < k})

    def may_start(f: int) -> bool:
        x, y = senders[f], receivers[f]
        if window is not None:
            earlier = [g for g in order if senders[g] == x and g not in started and order.index(g) < order.index(f)]
            return not earlier and unfinished_steps_before(step[f], [g for g in order if receivers[g] == x]) < window
        mine = [g for g in order if x in (senders[g], receivers[g]) or y in (senders[g], receivers[g])]
        return all(finish[g] is not None for g in mine if step[g] < step[f])

    t = Fraction(0)
    while len(started) < n or any(finish[f] is None for f in started):
        changed = True
        while changed:
            changed = False
            for f in order:
                if f not in started and may_start(f):
                    started.add(f)
                    changed = True
        active = {f for f in started if finish[f] is None}
        rates = max_min_rates({f: paths[f] for f in active}, capacity)
        dt = min(remaining[f] / rates[f] for f in active)
        t += dt
        for f in active:
            remaining[f] -= rates[f] * dt
            if remaining[f] == 0:
                finish[f] = t
    return finish  # type: ignore[return-value]
