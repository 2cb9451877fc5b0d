"""The exception hierarchy of liquidsched: everything raised on purpose derives from
:class:`LiquidschedError`, so a caller (and the CLI) can tell a user error from a bug."""

from __future__ import annotations


class LiquidschedError(Exception):
    """Base class of every error liquidsched raises on purpose."""


class InputError(LiquidschedError):
    """Bad input: a file, a field or an argument that is not what was expected.

    The message names where the problem is (file, field path) and what was expected.
    """


class TopologyError(InputError):
    """A network description is malformed or inconsistent."""


class RoutingError(TopologyError):
    """A route is missing, leaves the network, or loops."""


class MissingRouteError(RoutingError):
    """A pair of hosts the network does not route: no path, or no entry in a table. A network
    loads without it; a traffic that needs it is refused naming the pair."""


class TrafficError(InputError):
    """A traffic description is malformed or does not fit the network."""


class ScheduleFormatError(InputError):
    """A schedule file cannot be read as a schedule."""


class InvalidInputError(InputError):
    """The Rust core rejected its input."""


class ProblemTooLargeError(LiquidschedError):
    """The problem is valid but larger than the algorithm accepts."""


class BackendError(LiquidschedError):
    """An external back end (SimGrid, MPI, the emulated network) is missing or failed."""


class ScheduleInvalidError(LiquidschedError):
    """A schedule violates the model; ``violations`` lists every problem found."""

    def __init__(self, violations: list) -> None:
        self.violations = list(violations)
        head = "; ".join(str(v) for v in self.violations[:3])
        more = f" (and {len(self.violations) - 3} more)" if len(self.violations) > 3 else ""
        super().__init__(f"invalid schedule: {head}{more}")


def at(where: str, message: str) -> str:
    """Join a location (``file: field``) and a message into one line."""
    return f"{where}: {message}" if where else message
