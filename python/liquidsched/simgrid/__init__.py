"""SimGrid: its platform files and its simulator, as one package.

* :mod:`.platform_file`: export any network as a platform (XML 4.1) and liquidsched's own parser
  of one Full zone with explicit routes;
* :mod:`.reading`, :mod:`.description`, :mod:`.platform_runner`: every common style of platform
  read by SimGrid itself (the runner script runs in the Python that has SimGrid:
  :mod:`.install`) and turned into liquidsched resources; :mod:`.grouped`: platforms of
  thousands of hosts, their routes asked by cluster;
* :mod:`.values`: what both readers read alike (SimGrid's units, the ``slots`` property);
* :mod:`.read`: which of the two readers reads a file (:func:`read_platform`);
* :mod:`.backend`, :mod:`.simulation_runner`: SimGrid as an independent reference for the
  fluid model (``simulate --backend simgrid``).

Topology files of type ``.xml`` are read and written here: :data:`liquidsched.io.topology.FILE_TYPES`
names this package's :func:`load_platform` and :func:`save_platform` for them, and imports it only
when such a file is met, so that the topology and schedule modules do not import SimGrid's code.
"""

from .install import INSTALL_HINT, simgrid_available, simgrid_python
from .platform_file import (CM02_CONFIG, network_from_platform, platform_xml,
                            save_platform)
from .values import parse_bandwidth, parse_latency
from .read import PLATFORM_READERS, READER_VARIABLE, PlatformRead, load_platform, read_platform

__all__ = ["CM02_CONFIG", "INSTALL_HINT", "PLATFORM_READERS", "READER_VARIABLE", "PlatformRead", "load_platform",
           "network_from_platform", "parse_bandwidth", "parse_latency", "platform_xml", "read_platform",
           "save_platform", "simgrid_available", "simgrid_python"]
