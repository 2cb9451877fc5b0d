"""SimGrid platforms that liquidsched's tests and benchmarks build, written as SimGrid's own
examples are: a grid of sites of clusters, the shape of SimGrid's ``g5k.xml``."""

from __future__ import annotations


def sites_platform(sizes: list[list[int]]) -> str:
    """Sites (zones) of crossbar clusters joined by a backbone: ``sizes[s][c]`` hosts in cluster
    ``c`` of site ``s``; each cluster is routed to the others of its site and to the site's
    gateway through its uplink, each gateway to a core router through the site's WAN link."""
    out = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '  <zone id="grid" routing="Floyd">',
           '    <zone id="core" routing="Full"><router id="core-router"/></zone>']
    for s, clusters in enumerate(sizes):
        site = f"site{s}"
        out.append(f'    <zone id="{site}" routing="Full">')
        for c, n in enumerate(clusters):
            cid = f"{site}-c{c}"
            out.append(f'      <cluster id="{cid}" prefix="{cid}-" suffix="" radical="1-{n}" speed="1Gf" '
                       f'bw="125MBps" lat="50us" router_id="{cid}-router"/>')
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
    out += [f'    <zoneRoute src="site{s}" dst="core" gw_src="site{s}-gw-router" gw_dst="core-router">'
            f'<link_ctn id="site{s}-wan"/></zoneRoute>' for s in range(len(sizes))]
    return "\n".join(out + ['  </zone>', '</platform>', ''])
