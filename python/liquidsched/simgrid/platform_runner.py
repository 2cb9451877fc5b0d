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


def describe(path):
    """The hosts, links and routes of the platform at ``path``."""
    import simgrid

    engine = simgrid.Engine([sys.argv[0], "--log=root.thres:critical"])
    engine.load_platform(path)
    policy = policy_reader()
    links = engine.all_links
    index = {link.name: i for i, link in enumerate(links)}
    hosts = engine.all_hosts
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


def main():
    # This folder holds liquidsched's io/simgrid.py, which would shadow SimGrid's own module.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        description = describe(sys.argv[1])
    except Exception as e:  # SimGrid's parser raises RuntimeError, ValueError, ...
        # One line that the caller passes on: SimGrid's own words, without this script's traceback.
        sys.stderr.write("simgrid-error: " + " ".join(str(e).split()) + "\n")
        sys.exit(3)
    sys.stdout.write(json.dumps(description))


if __name__ == "__main__":
    main()
