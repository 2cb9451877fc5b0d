"""SimGrid platforms that liquidsched's tests and benchmarks build, written as SimGrid's own
examples are: a grid of sites of clusters, the shape of SimGrid's ``g5k.xml``."""

from __future__ import annotations


def sites_platform(sizes: list[list[int]], backbone: bool = False) -> str:
    """Sites (zones) of crossbar clusters joined by a backbone: ``sizes[s][c]`` hosts in cluster
    ``c`` of site ``s``; each cluster is routed to the others of its site and to the site's
    gateway through its uplink, each gateway to a core router through the site's WAN link.

    With ``backbone``, as SimGrid's ``g5k.xml``: every cluster has a backbone (``bb_bw``,
    SHARED), which its hosts' routes to each other, to themselves, and to and from other
    clusters cross; and the core is a network between sites (a Floyd zone of one router per site,
    each site's joined to the site ``(s - 1) // 2``'s by a link), site ``s``'s WAN link going to
    router ``core-s``."""
    out = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '  <zone id="grid" routing="Floyd">']
    if backbone:
        out.append('    <zone id="core" routing="Floyd">')
        out += [f'      <router id="core-{s}"/>' for s in range(len(sizes))]
        out += [f'      <link id="core-{s}-{(s - 1) // 2}" bandwidth="1.25GBps" latency="1ms"/>'
                for s in range(1, len(sizes))]
        out += [f'      <route src="core-{s}" dst="core-{(s - 1) // 2}"><link_ctn id="core-{s}-{(s - 1) // 2}"/>'
                '</route>' for s in range(1, len(sizes))]
        out.append('    </zone>')
    else:
        out.append('    <zone id="core" routing="Full"><router id="core-router"/></zone>')
    bb = ' bb_bw="1.25GBps" bb_lat="20us"' if backbone else ""
    for s, clusters in enumerate(sizes):
        site = f"site{s}"
        out.append(f'    <zone id="{site}" routing="Full">')
        for c, n in enumerate(clusters):
            cid = f"{site}-c{c}"
            out.append(f'      <cluster id="{cid}" prefix="{cid}-" suffix="" radical="1-{n}" speed="1Gf" '
                       f'bw="125MBps" lat="50us"{bb} router_id="{cid}-router"/>')
        out.append(f'      <zone id="{site}-gw" routing="Full"><router id="{site}-gw-router"/></zone>')
        out += [f'      <link id="{site}-c{c}-uplink" bandwidth="1.25GBps" latency="100us"/>'
                for c in range(len(clusters))]
        for a in range(len(clusters)):
            for b in range(a + 1, len(clusters)):
                out.append(f'      <zoneRoute src="{site}-c{a}" dst="{site}-c{b}" gw_src="{site}-c{a}-router" '
                           f'gw_dst="{site}-c{b}-router"><link_ctn id="{site}-c{a}-uplink"/>'
                           f'<link_ctn id="{site}-c{b}-uplink"/></zoneRoute>')
            out.append(f'      <zoneRoute src="{site}-c{a}" dst="{site}-gw" gw_src="{site}-c{a}-router" '
                       f'gw_dst="{site}-gw-router"><link_ctn id="{site}-c{a}-uplink"/></zoneRoute>')
        out.append('    </zone>')
    out += [f'    <link id="site{s}-wan" bandwidth="1.25GBps" latency="2ms"/>' for s in range(len(sizes))]
    out += [f'    <zoneRoute src="site{s}" dst="core" gw_src="site{s}-gw-router" '
            f'gw_dst="{f"core-{s}" if backbone else "core-router"}">'
            f'<link_ctn id="site{s}-wan"/></zoneRoute>' for s in range(len(sizes))]
    return "\n".join(out + ['  </zone>', '</platform>', ''])
