"""Run flows in SimGrid and print their start and finish times as JSON.

This script runs under the Python that has SimGrid (Debian's ``python3-simgrid`` is built for the
system Python), so it imports nothing but the standard library and ``simgrid``. liquidsched calls
it as ``python3 simulation_runner.py JOB.json``; the job names the platform file and lists the flows
as ``[src, dst, bytes, delay_s]``, their frames, the start policy and the overhead between frames.
A flow begins, waits its delay (its route latency), then sends: the links of the platform have no
latency, because CM02 would weight each flow by its latency (TCP's RTT unfairness), which
liquidsched's fluid model does not do.
"""

import json
import sys
import time


def run(job):
    import simgrid
    from simgrid import Actor, Comm, Engine, this_actor

    config = [f"--cfg={k}:{v}" for k, v in job["config"].items()]
    engine = Engine([sys.argv[0], *config, "--log=root.thres:critical"])
    t0 = time.perf_counter()
    engine.load_platform(job["platform"])
    host = {h.name: h for h in engine.all_hosts}
    flows = job["flows"]
    start = [0.0] * len(flows)
    finish = [0.0] * len(flows)

    def drive(ids, t0):
        """Begin the flows ``ids`` at ``t0``; each sends after its delay; wait for all."""
        queue = sorted(ids, key=lambda i: (flows[i][3], i))
        comms, running = [], []
        nxt = 0
        while nxt < len(queue) or comms:
            while nxt < len(queue) and t0 + flows[queue[nxt]][3] <= Engine.clock:
                i = queue[nxt]
                src, dst, size, _ = flows[i]
                start[i] = t0
                comms.append(Comm.sendto_async(host[src], host[dst], size))
                running.append(i)
                nxt += 1
            if nxt < len(queue):
                due = t0 + flows[queue[nxt]][3]
                k = Comm.wait_any_for(comms, due - Engine.clock) if comms else -1
                if k < 0:
                    this_actor.sleep_until(due)
                    continue
            else:
                k = Comm.wait_any(comms)
            finish[running.pop(k)] = Engine.clock
            comms.pop(k)

    def all_at_once():
        drive(range(len(flows)), 0.0)

    def by_frames():
        t = 0.0
        for k, frame in enumerate(job["frames"]):
            if k > 0:
                t = Engine.clock + job["overhead_s"]
                this_actor.sleep_until(t)
            if frame:
                drive(frame, t)

    def one_sender(ids):
        def body():
            for i in ids:
                src, dst, size, delay = flows[i]
                start[i] = Engine.clock
                if delay > 0:
                    this_actor.sleep_for(delay)
                Comm.sendto(host[src], host[dst], size)
                finish[i] = Engine.clock
        return body

    anchor = next(iter(host.values()))
    policy = job["policy"]
    if policy == "all-at-once":
        Actor.create("all-at-once", anchor, all_at_once)
    elif policy == "frames":
        Actor.create("frames", anchor, by_frames)
    elif policy == "per-sender":
        for s, ids in enumerate(job["per_sender"]):
            Actor.create(f"sender-{s}", anchor, one_sender(ids))
    else:
        raise SystemExit(f"unknown policy {policy!r}")
    t1 = time.perf_counter()
    engine.run()
    t2 = time.perf_counter()
    return {"start_s": start, "finish_s": finish, "run_s": t2 - t1, "load_s": t1 - t0,
            "simgrid_version": str(simgrid.simgrid_version)}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        job = json.load(f)
    result = run(job)
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main()
