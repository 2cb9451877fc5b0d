"""Typed stubs of the Rust extension module (the PyO3 layer over liquidsched-core).

Every function that may run long (the searches, colourings, peelings, steps, the simulator and
the sweep) answers Ctrl-C: the core probes for pending signals every few thousand steps, stops,
and the function raises what the signal handler raised (``KeyboardInterrupt``), with no result.
"""

from typing import Callable, Sequence, TypedDict

__version__: str

Access = Sequence[Sequence[Sequence[tuple[int, str]]]]
Fabric = Sequence[tuple[int, Sequence[tuple[int, int]]]]

class RawSweepClass(TypedDict):
    hosts: int
    liquid_throughput: tuple[int, int]
    crossbar_throughput: tuple[int, int]
    count: int
    allocation: list[int]

def sweep_bound(
    access: Access, fabric: Fabric, include_self: bool, allocation: Sequence[int]
) -> tuple[int, int, tuple[int, int], tuple[int, int]]: ...
def sweep_classes(
    access: Access,
    fabric: Fabric,
    include_self: bool,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[list[RawSweepClass], int]: ...
def dsatur(
    paths: Sequence[Sequence[int]], resources: int, *, slots: Sequence[int] = ()
) -> list[list[int]]: ...
def read_plain_rows(text: str, max_size: int) -> tuple[list[str], bytes, bytes, bytes] | None: ...
def transfers_json(hosts: Sequence[str], src: bytes, dst: bytes, sizes: bytes, per_line: int, level: int) -> str: ...
def frames_json(
    hosts: Sequence[str], src: bytes, dst: bytes, sizes: bytes, order: bytes, starts: bytes, per_line: int, level: int
) -> str: ...
def kpbs_peel(
    n1: int, n2: int, edges: Sequence[tuple[int, int, int]], k: int, *, strategy: str = "any"
) -> tuple[list[tuple[int, list[tuple[int, int]]]], int, int]: ...
def kpbs_lower_bound(n1: int, n2: int, edges: Sequence[tuple[int, int, int]], k: int) -> int: ...
def steady_matchings(nodes: int, edges: Sequence[tuple[int, int, int]]) -> list[tuple[int, list[tuple[int, int]]]]: ...

class RawLiquidResult(TypedDict):
    frames: list[list[int]]
    duration: int
    lower_bound: int
    liquid: bool
    optimal: bool
    nodes: int
    frames_tried: int
    memo_hits: int
    restarts: int
    memory_bytes: int
    memo_limit_bytes: int
    symmetry_order: int
    stopped_by: str | None
    source: str

class RawSearchProgress(TypedDict):
    phase: str
    target: int
    frames: int
    deepest: int
    nodes: int

def liquid_schedule(
    paths: Sequence[Sequence[int]] | TransferRoutes,
    resources: int,
    *,
    slots: Sequence[int] = (),
    blank: bool = True,
    idle: bool = True,
    skeleton: bool = True,
    reduced: bool = True,
    full: bool = True,
    memo: bool = True,
    guided: bool = True,
    optimize: bool = True,
    node_limit: int | None = None,
    time_limit: float | None = None,
    bounds: bool = True,
    symmetry: Sequence[Sequence[int]] = (),
    interruptible: bool = True,
    memo_bytes: int | None = None,
    orbits: tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[Sequence[int]], Sequence[int]] | None = None,
    progress: Callable[[RawSearchProgress], object] | None = None,
) -> RawLiquidResult: ...
def count_full_teams(
    paths: Sequence[Sequence[int]],
    resources: int,
    *,
    slots: Sequence[int] = (),
    blank: bool = True,
    idle: bool = True,
    skeleton: bool = True,
    guided: bool = False,
    node_limit: int | None = None,
) -> tuple[int, int, bool]: ...

class RawPrediction(TypedDict):
    makespan_s: float
    start_s: list[float]
    finish_s: list[float]
    utilisation: list[float]
    bins: int
    rate_updates: int
    level_changes: int

def simulate(
    capacities: Sequence[float],
    paths: Sequence[Sequence[int]],
    sizes: Sequence[float],
    latencies: Sequence[float],
    senders: Sequence[int],
    frames: Sequence[Sequence[int]],
    model: str,
    policy: str = "all-at-once",
    overhead_s: float = 0.0,
    bins: int = 0,
    slots: Sequence[int] = (),
    receivers: Sequence[int] = (),
    frame_steps: Sequence[int] = (),
    window: int = 0,
    engine: str = "auto",
) -> RawPrediction: ...
def weighted_steps(
    paths: Sequence[Sequence[int]], resources: int, times: Sequence[float], *, slots: Sequence[int] = (),
    quantum: float = 0.0,
) -> list[tuple[float, list[tuple[int, float]]]]: ...
def heaviest_frame(
    paths: Sequence[Sequence[int]], resources: int, weights: Sequence[float], *, slots: Sequence[int] = (),
    node_limit: int = 10_000_000,
) -> tuple[list[int], float, bool, int]: ...
def exchange_steps(p: int, permutation: str, *, remap: tuple[int, int] | None = None) -> list[list[int]]: ...

class PacedPlanner:
    """Paced plans (Λ) of the matrices between ``ranks`` ranks, each from the last plan."""

    def __init__(self, ranks: int, routes: Sequence[Sequence[int]], capacity_bps: Sequence[float]) -> None: ...
    @property
    def ranks(self) -> int: ...
    def plan(self, matrix: bytes) -> tuple[float, int | None, int, int, bool]: ...
    def forget(self) -> None: ...

class TransferRoutes:
    def __init__(
        self, up: bytes, down: bytes, run: bytes, run_offsets: bytes, run_resources: bytes, resources: int
    ) -> None: ...
    def __len__(self) -> int: ...
    def resource_sums(self, sizes: bytes, weights: bytes, slots: Sequence[int]) -> tuple[bytes, list[int], list[int]]: ...
    def dsatur_frames(self, slots: Sequence[int]) -> bytes: ...
    def overloads(self, frame_of: bytes, slots: Sequence[int]) -> list[tuple[int, int, int]]: ...
    def first_fit_by_step(self, order: bytes, step_starts: bytes, slots: Sequence[int]) -> bytes: ...
