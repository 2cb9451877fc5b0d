"""Shared fixtures and strategies."""

from __future__ import annotations

import signal

import pytest
from hypothesis import settings

from liquidsched.topologies import swiss_t1, two_switch


@pytest.fixture(scope="session")
def two_switch_net():
    return two_switch()


@pytest.fixture(scope="session")
def t1_net():
    return swiss_t1()

# MPI programs the tests launch under mpiexec: not test modules (importing one runs it).
collect_ignore_glob = ["programs/*"]

# A busy machine (both cores taken by another process) must not fail a property test on time:
# no example has a deadline, whatever a test's own settings leave out.
settings.register_profile("liquidsched", deadline=None)
settings.load_profile("liquidsched")

# A job started in the background by a non-interactive shell (`make test &`, a CI runner) has
# SIGINT ignored, and every process it starts inherits that: the tests that press Ctrl-C on a
# command would then press it on a process that cannot hear it. A handled signal is reset to the
# default in a program it starts, so the commands the tests start hear Ctrl-C as a user's would.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
