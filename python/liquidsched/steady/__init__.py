"""Series of scatters, personalized all-to-alls and reduces on heterogeneous platforms: the
optimal steady-state throughput by linear programming and its periodic schedule (paper 003).

:func:`solve_steady` goes from a :class:`Platform` and a :class:`Series` to the exact optimum ρ,
the period, the weighted trees and the matchings of one period; :meth:`SteadyState.schedule`
gives that period as a liquidsched schedule, so the validator, the simulators and the executor
take it as they take any other.
"""

from .platform import PLATFORM_BUILDERS, Platform, PlatformEdge, PlatformNode, platform_of_network
from .series import ALL_TO_ALL, REDUCE, SCATTER, Series
from .solve import SteadyState, optimal_throughput, solve_steady

__all__ = ["PLATFORM_BUILDERS", "Platform", "PlatformEdge", "PlatformNode", "platform_of_network",
           "ALL_TO_ALL", "REDUCE", "SCATTER", "Series", "SteadyState", "optimal_throughput", "solve_steady"]
