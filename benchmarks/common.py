"""What every benchmark script shares: its command line and its progress bar."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def benchmark_parser(doc: str) -> argparse.ArgumentParser:
    """A parser described by the script's first doc line, with ``--output`` (JSON, required)
    and ``--plot`` (PNG)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--output", required=True, metavar="FILE.json")
    parser.add_argument("--plot", metavar="FILE.png")
    return parser


def progress_bar(label: str, console: Console | None = None) -> Progress:
    """A transient progress bar on standard error: label, bar, done/total, time elapsed."""
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=console or Console(stderr=True), transient=True)
