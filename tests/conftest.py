"""Shared fixtures and strategies."""

from __future__ import annotations

import pytest

from liquidsched.topologies import swiss_t1, two_switch


@pytest.fixture(scope="session")
def two_switch_net():
    return two_switch()


@pytest.fixture(scope="session")
def t1_net():
    return swiss_t1()

# MPI programs the tests launch under mpiexec: not test modules (importing one runs it).
collect_ignore_glob = ["programs/*"]
