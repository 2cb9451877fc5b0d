"""Load a SimGrid platform with SimGrid itself and print its hosts, links and routes as JSON.

This script runs under the Python that has SimGrid (Debian's ``python3-simgrid`` is built for the
system Python, not for liquidsched's environment), so it imports nothing but the standard library
and ``simgrid``. liquidsched calls it as ``python3 platform_runner.py PLATFORM.xml`` and
reads one JSON document from its standard output::

    {"simgrid_version": "3.32.0",
     "hosts": ["a", "b"],
     "links": [["l1", bandwidth_Bps, latency_s, "SHARED"], ...],
     "routes": [[[0, 3], latency_s], ...]}

``routes`` holds the route of every ordered pair of hosts, self routes included, row after row
(``routes[i * len(hosts) + j]`` goes from ``hosts[i]`` to ``hosts[j]``), each as the indices of
its links in ``links`` and SimGrid's latency for it, as SimGrid gives them while it runs (a
host's route to itself is then ``__loopback__``, the network model's loopback, where the platform
declares none). A link of policy ``SPLITDUPLEX`` is two links for SimGrid, ``NAME_UP`` and
``NAME_DOWN``, each reported on its own (SimGrid gives each direction the ``SHARED`` policy).

Called as ``python3 platform_runner.py PLATFORM.xml JOB.json`` (the job naming groups of hosts,
the clusters), it asks routes by group instead (:func:`describe_grouped`): O(hosts + groups²)
questions, for platforms of thousands of hosts.

When SimGrid refuses the file, the script prints ``simgrid-error: MESSAGE`` on its standard
error and exits with status 3 (SimGrid's fatal errors abort the process instead, after a
``[root/CRITICAL]`` line).

The Python binding of SimGrid 3.3x has no getter for a link's sharing policy; the C++ method
``Link::get_sharing_policy`` is called through ctypes in the library the binding loaded, with
the C function ``sg_link_is_shared`` (FATPIPE or not) as a fallback.

The script's own folder is taken off the import path before SimGrid is imported, so that no
module beside it can ever shadow SimGrid's ``simgrid`` module.
"""

import ctypes
import json
import os
import sys

#: SimGrid's ``s4u::Link::SharingPolicy`` values, by number.
POLICIES = {0: "FATPIPE", 1: "SHARED", 2: "SPLITDUPLEX", 3: "WIFI", 4: "NONLINEAR"}


def simgrid_library():
    """The libsimgrid the binding loaded (already in this process), or None."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = [line.split()[-1] for line in maps if "libsimgrid.so" in line]
    except OSError:
        return None
    return ctypes.CDLL(paths[0]) if paths else None


def policy_reader():
    """A function from a link name to its sharing policy's name (every link "SHARED" when the
    library cannot be reached)."""
    lib = simgrid_library()
    if lib is None:
        return lambda name: "SHARED"
    by_name = lib.sg_link_by_name
    by_name.argtypes, by_name.restype = [ctypes.c_char_p], ctypes.c_void_p
    try:
        # The mangled name of `simgrid::s4u::Link::get_sharing_policy() const`.
        getter = lib._ZNK7simgrid3s4u4Link18get_sharing_policyEv
        getter.argtypes, getter.restype = [ctypes.c_void_p], ctypes.c_int
        return lambda name: POLICIES.get(getter(by_name(name.encode())), "UNKNOWN")
    except AttributeError:
        shared = lib.sg_link_is_shared
        shared.argtypes, shared.restype = [ctypes.c_void_p], ctypes.c_int
        return lambda name: "SHARED" if shared(by_name(name.encode())) else "FATPIPE"


def loaded(path):
    """SimGrid's engine with the platform at ``path`` loaded: the engine, each link's sharing
    policy by name, the links, each link's index by name, and the hosts."""
    import simgrid

    engine = simgrid.Engine([sys.argv[0], "--log=root.thres:critical"])
    engine.load_platform(path)
    links = engine.all_links
    return engine, policy_reader(), links, {link.name: i for i, link in enumerate(links)}, engine.all_hosts


def describe(path):
    """The hosts, links and routes of the platform at ``path``."""
    import simgrid

    engine, policy, links, index, hosts = loaded(path)
    routes = []

    def ask_routes():
        for src in hosts:
            for dst in hosts:
                route, latency = src.route_to(dst)
                routes.append([[index[link.name] for link in route], latency])

    if hosts:
        # Routes are asked for while the engine runs, once SimGrid has sealed the platform: a
        # host's route to itself is then the one a communication takes (the network model's
        # loopback where no route is declared; before, some zones fail on such a route).
        simgrid.Actor.create("routes", hosts[0], ask_routes)
        engine.run()
    return {"simgrid_version": str(simgrid.simgrid_version),
            "hosts": [h.name for h in hosts],
            "links": [[l.name, l.bandwidth, l.latency, policy(l.name)] for l in links],
            "routes": routes}


def describe_grouped(path, groups, samples, seed):
    """The hosts and links of the platform at ``path``, and its routes by groups of hosts
    (``groups``: lists of host names, a cluster each; other hosts are groups of one), on the
    hypothesis that the route from a host ``s`` of group ``A`` to another host ``d`` of group
    ``B`` is ``s``'s first link, a middle that depends on ``A`` and ``B`` only, and ``d``'s last
    link. Asked: each host's route to and from a host of another group (or of its own), each
    host's route to itself, and the route of a representative of each ordered pair of groups;
    the hypothesis is then checked on each host's route to the next group's representative and
    back, and on ``samples`` host pairs drawn at random (seeded by ``seed``). The answer::

        {"simgrid_version": ..., "hosts": [...], "links": [...],
         "groups": [[host index, ...], ...],
         "up": [link index per host], "down": [link index per host],
         "middles": [[group a, group b, [link indices]], ...],
         "self": [[link indices] per host],
         "checked": number of routes checked,
         "broken": null, or [src, dst, their links, the composed links]: the first pair found
                   that the hypothesis does not fit (or that has no route)}
    """
    import random
    import simgrid

    engine, policy, links, index, hosts = loaded(path)
    at = {h.name: i for i, h in enumerate(hosts)}
    grouped = [[at[name] for name in group if name in at] for group in groups]
    grouped = [g for g in grouped if g]
    member = {i for g in grouped for i in g}
    grouped += [[i] for i in range(len(hosts)) if i not in member]
    group_of = {i: k for k, g in enumerate(grouped) for i in g}
    answer = {"simgrid_version": str(simgrid.simgrid_version), "hosts": [h.name for h in hosts],
              "links": [[l.name, l.bandwidth, l.latency, policy(l.name)] for l in links],
              "groups": grouped, "up": [], "down": [], "middles": [], "self": [], "checked": 0, "broken": None}

    def route(a, b):
        found, _ = hosts[a].route_to(hosts[b])
        return [index[link.name] for link in found]

    def other(i, k):
        """A host that is not ``i``: of the group after group ``k``, or of group ``k``."""
        if len(grouped) > 1:
            return grouped[(k + 1) % len(grouped)][0]
        g = grouped[k]
        return g[1] if g[0] == i else g[0]

    def ask():
        n = len(hosts)
        if n < 2:
            return
        up, down = [None] * n, [None] * n
        for k, g in enumerate(grouped):
            for i in g:
                j = other(i, k)
                out, back = route(i, j), route(j, i)
                if not out or not back:
                    answer["broken"] = [hosts[i].name, hosts[j].name, out, []] if not out else \
                        [hosts[j].name, hosts[i].name, back, []]
                    return
                up[i], down[i] = out[0], back[-1]
        middles = {}
        for a, ga in enumerate(grouped):
            for b, gb in enumerate(grouped):
                s = ga[0]
                d = gb[0] if a != b else (gb[1] if len(gb) > 1 else None)
                if d is None:
                    continue
                links_sd = route(s, d)
                if len(links_sd) < 2 or links_sd[0] != up[s] or links_sd[-1] != down[d]:
                    answer["broken"] = [hosts[s].name, hosts[d].name, links_sd, [up[s], "...", down[d]]]
                    return
                middles[(a, b)] = links_sd[1:-1]
        answer["up"], answer["down"] = up, down
        answer["middles"] = [[a, b, m] for (a, b), m in middles.items()]
        answer["self"] = [route(i, i) for i in range(n)]

        def check(s, d):
            links_sd = route(s, d)
            composed = [up[s]] + middles.get((group_of[s], group_of[d]), [None]) + [down[d]]
            answer["checked"] += 1
            if links_sd != composed:
                answer["broken"] = [hosts[s].name, hosts[d].name, links_sd, composed]
                return False
            return True

        for k, g in enumerate(grouped):
            for i in g:
                j = other(i, k)
                if not (check(i, j) and check(j, i)):
                    return
        rng = random.Random(seed)
        for _ in range(samples):
            s, d = rng.randrange(n), rng.randrange(n)
            if s != d and not check(s, d):
                return

    simgrid.Actor.create("routes", hosts[0], ask)
    engine.run()
    return answer


def main():
    # This folder holds liquidsched's io/simgrid.py, which would shadow SimGrid's own module.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        if len(sys.argv) > 2:
            # Grouped: python3 platform_runner.py PLATFORM.xml JOB.json, the job holding
            # {"groups": [[host, ...], ...], "samples": N, "seed": S}.
            with open(sys.argv[2], encoding="utf-8") as f:
                job = json.load(f)
            description = describe_grouped(sys.argv[1], job["groups"], job["samples"], job["seed"])
        else:
            description = describe(sys.argv[1])
    except Exception as e:  # SimGrid's parser raises RuntimeError, ValueError, ...
        # One line that the caller passes on: SimGrid's own words, without this script's traceback.
        sys.stderr.write("simgrid-error: " + " ".join(str(e).split()) + "\n")
        sys.exit(3)
    sys.stdout.write(json.dumps(description))


if __name__ == "__main__":
    main()
