"""Traffic as expert routing makes it: the dispatch of a mixture-of-experts layer.

Every rank holds ``tokens`` tokens. Each token picks ``top_k`` distinct experts, drawn one after
another by their popularity without replacement (as ``torch.multinomial(p, top_k,
replacement=False)`` draws them in DeepEP's tests). Experts sit on ranks in contiguous blocks of
``experts / ranks``, and a token goes once to every other rank that holds at least one of its
experts (the dispatch sends a token to a rank once, however many of its experts are there),
``bytes_per_token`` bytes each time. Tokens whose experts are on their own rank stay there.

The popularity of the experts is the skew:

``uniform``
    every expert equally likely: the balanced dispatch.
``zipf``
    the expert of popularity rank ``i`` (a seeded order) weighs ``i ** -alpha``, DeepEP's
    ``powerlaw`` imbalance model.
``lognormal``
    every expert's weight drawn from LogNormal(0, ``sigma``). DeepEP PR #393 fitted per-rank
    token counts recorded from DeepSeek-V3 layers (MMLU-Pro inputs) and found the log-normal the
    best fit of those it tried; its tests set the level by the *imbalance*, not by sigma.

The level of either skew is given directly (``alpha``, ``sigma``) or as ``imbalance``: the
max / mean of the expert choices that land on each rank, the statistic DeepEP's tests
calibrate (``imbalance_factor``, by bisection of the parameter to within 2 %). Measured values
to choose it from: 1.069 (Kimi K3, 16 expert-parallel ranks, load balancing off; vLLM PR
#50647), 1.008 (the same with balancing on), about 1.35 (Qwen3.6-35B-A3B, 4 ranks, 622 steps;
aiconfigurator's routing capture), and DeepEP issue #343 reports a 2x slower dispatch for
traffic balanced between hosts but not inside them.

The defaults are DeepSeek-V3's: 8 experts per rank (256 on 32 ranks), top-8, 4,096 tokens per
rank (DeepEP's normal-kernel test) and 7,408 bytes per token (FP8 dispatch of a hidden size of
7,168: 7,168 values, a 4-byte scale per 128 and 16 bytes of metadata).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .errors import TrafficError

#: Tokens per rank by default: DeepEP's normal-kernel test.
DEFAULT_TOKENS = 4096
#: Experts each token picks by default (DeepSeek-V3).
DEFAULT_TOP_K = 8
#: Experts per rank by default (DeepSeek-V3: 256 routed experts on 32 ranks).
DEFAULT_EXPERTS_PER_RANK = 8
#: Bytes per token by default: FP8 dispatch at hidden size 7,168 (7,168 + 7,168 / 128 * 4 + 16).
DEFAULT_BYTES_PER_TOKEN = 7408
#: The skews :func:`expert_popularity` draws.
SKEWS = ("uniform", "zipf", "lognormal")
#: Where the bisection of ``imbalance`` searches each skew's parameter (DeepEP's ranges).
PARAMETER_RANGE = {"zipf": (0.0, 5.0), "lognormal": (0.1, 5.0)}
#: The calibration stops within this relative distance of the target imbalance.
IMBALANCE_TOLERANCE = 0.02
#: Tokens the calibration samples at most: enough for the max / mean of 8 choices per token on
#: hundreds of ranks to within about 1 %, and fast whatever the traffic's own token count.
CALIBRATION_TOKENS = 1 << 16
#: Rounds of rejection sampling before the rows still short of ``top_k`` experts are finished
#: by exact keys (only a popularity concentrated on fewer than ``top_k`` experts needs them).
REJECTION_ROUNDS = 64


@dataclass(frozen=True)
class Routing:
    """What expert routing sends: bytes between ranks, and the statistics that describe it.

    Attributes
    ----------
    bytes : numpy.ndarray
        ``ranks × ranks`` int64 bytes, row the sender; the diagonal (tokens whose experts are
        all local) is what stays on a rank.
    popularity : numpy.ndarray
        the probability of each expert, summing to 1.
    choices_per_rank : numpy.ndarray
        expert choices that landed on each rank's experts (token copies before deduplication).
    parameter : float | None
        the skew's parameter used (``alpha`` or ``sigma``; None for ``uniform``).
    """

    bytes: np.ndarray
    popularity: np.ndarray
    choices_per_rank: np.ndarray
    parameter: float | None
    skew: str = "uniform"

    @property
    def imbalance(self) -> float:
        """Max / mean of the expert choices per rank (1 when perfectly even)."""
        return float(self.choices_per_rank.max() / self.choices_per_rank.mean())


def expert_popularity(skew: str, experts: int, parameter: float | None, seed: int) -> np.ndarray:
    """The probability of each of ``experts`` experts under ``skew``, in a seeded expert order.

    Examples
    --------
    >>> p = expert_popularity("zipf", 4, 1.0, seed=0)
    >>> sorted(np.round(p * 25, 6).tolist())       # weights 1, 1/2, 1/3, 1/4 of 25/12
    [3.0, 4.0, 6.0, 12.0]
    >>> expert_popularity("uniform", 4, None, seed=0).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    if skew not in SKEWS:
        raise TrafficError(f"moe: unknown skew {skew!r} (one of {', '.join(SKEWS)})")
    rng = np.random.default_rng(seed)
    order = rng.permutation(experts)
    if skew == "uniform":
        weights = np.ones(experts)
    elif skew == "zipf":
        weights = np.arange(1, experts + 1, dtype=float) ** -float(parameter or 0.0)
    else:
        # Sorted, then scattered by the seed's order, as DeepEP's tests do: the same seed gives
        # the same experts the heavy weights whatever sigma is, so the imbalance grows with sigma
        # in the calibration instead of jumping between draws.
        weights = np.sort(np.exp(float(parameter) * rng.standard_normal(experts)))[::-1]
        weights = np.maximum(weights, 1e-9 * weights[0])
    popularity = np.empty(experts)
    popularity[order] = weights
    return popularity / popularity.sum()


def pick_experts(popularity: np.ndarray, tokens: int, top_k: int, seed: int | tuple[int, int]) -> np.ndarray:
    """``tokens × top_k`` distinct experts per token, drawn one after another by ``popularity``
    without replacement.

    Drawing with replacement and keeping the first ``top_k`` distinct experts is the same draw:
    given that an expert is new, it is chosen in proportion to its popularity among those left.
    Rows still short after :data:`REJECTION_ROUNDS` rounds are finished by Efraimidis–Spirakis
    keys (``u ** (1 / p)``, the ``top_k`` largest), which is the same distribution again.

    Examples
    --------
    >>> picks = pick_experts(np.full(16, 1 / 16), tokens=1000, top_k=4, seed=1)
    >>> picks.shape, all(len(set(row)) == 4 for row in picks.tolist())
    ((1000, 4), True)
    """
    experts = len(popularity)
    if top_k > int(np.count_nonzero(popularity)):
        raise TrafficError(f"moe: top_k={top_k} distinct experts asked of {np.count_nonzero(popularity)} that "
                           "can be chosen")
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(popularity)
    cdf /= cdf[-1]
    picks = np.full((tokens, top_k), -1, dtype=np.int64)
    filled = np.zeros(tokens, dtype=np.int64)
    rows = np.arange(tokens)
    for _ in range(REJECTION_ROUNDS * top_k):
        if len(rows) == 0:
            break
        drawn = np.minimum(np.searchsorted(cdf, rng.random(len(rows)), side="right"), experts - 1)
        new = ~(picks[rows] == drawn[:, None]).any(axis=1)
        taken, what = rows[new], drawn[new]
        picks[taken, filled[taken]] = what
        filled[taken] += 1
        rows = rows[filled[rows] < top_k]
    for row in rows:
        # Exact keys for the rest of the row: the largest u ** (1 / p) among the experts left.
        left = popularity.copy()
        left[picks[row, :filled[row]]] = 0
        chosen = np.flatnonzero(left)
        keys = np.log(rng.random(len(chosen))) / left[chosen]
        need = top_k - filled[row]
        picks[row, filled[row]:] = chosen[np.argsort(-keys)[:need]]
    return picks


def choices_per_rank(picks: np.ndarray, experts_per_rank: int, ranks: int) -> np.ndarray:
    """Expert choices landing on each rank (a token's two experts on one rank count twice)."""
    return np.bincount((picks // experts_per_rank).ravel(), minlength=ranks)


def dispatch_matrix(picks: np.ndarray, tokens: int, experts_per_rank: int, ranks: int,
                    bytes_per_token: int) -> np.ndarray:
    """Bytes from rank to rank: token ``t`` belongs to rank ``t // tokens`` and goes once to
    every rank holding one of its experts.

    Examples
    --------
    >>> picks = np.array([[0, 1], [1, 3], [2, 3], [0, 2]])   # 2 ranks of 2 tokens, 2 experts each
    >>> # rank 0's first token stays; its second goes to ranks 0 and 1, and so does rank 1's second
    >>> dispatch_matrix(picks, tokens=2, experts_per_rank=2, ranks=2, bytes_per_token=10).tolist()
    [[20, 10], [10, 20]]
    """
    dest = np.sort(picks // experts_per_rank, axis=1)
    first = np.ones_like(dest, dtype=bool)
    first[:, 1:] = dest[:, 1:] != dest[:, :-1]
    src = np.repeat(np.arange(len(picks)) // tokens, picks.shape[1]).reshape(dest.shape)
    pairs = np.bincount((src * ranks + dest)[first], minlength=ranks * ranks)
    return pairs.reshape(ranks, ranks).astype(np.int64) * int(bytes_per_token)


def calibrate(imbalance: float, skew: str, experts: int, experts_per_rank: int, ranks: int, top_k: int,
              tokens: int, seed: int) -> float:
    """The ``alpha`` (zipf) or ``sigma`` (lognormal) whose routing gives ``imbalance`` max / mean
    expert choices per rank, by bisection over DeepEP's range with the same random draws at every
    step, stopping within :data:`IMBALANCE_TOLERANCE`. Refused when the range cannot reach it."""
    if skew not in PARAMETER_RANGE:
        raise TrafficError(f"moe: imbalance needs skew=zipf or skew=lognormal, not {skew}")
    sample = min(tokens * ranks, CALIBRATION_TOKENS)

    def measured(parameter: float) -> float:
        p = expert_popularity(skew, experts, parameter, seed)
        counts = choices_per_rank(pick_experts(p, sample, top_k, seed + 1), experts_per_rank, ranks)
        return float(counts.max() / counts.mean())

    low, high = PARAMETER_RANGE[skew]
    most = measured(high)
    if most < imbalance * (1 - IMBALANCE_TOLERANCE):
        raise TrafficError(f"moe: imbalance {imbalance:g} is out of reach: the most skewed {skew} of "
                           f"{experts} experts on {ranks} ranks, top_k={top_k}, gives {most:.3g}")
    return _bisect(measured, imbalance, low, high)


def _bisect(measured: Callable[[float], float], target: float, low: float, high: float) -> float:
    """The parameter in [low, high] where the increasing ``measured`` meets ``target``."""
    middle = (low + high) / 2
    for _ in range(40):
        middle = (low + high) / 2
        value = measured(middle)
        if abs(value - target) <= IMBALANCE_TOLERANCE * target:
            return middle
        low, high = (middle, high) if value < target else (low, middle)
    return middle


def route_tokens(ranks: int, experts: int | None = None, top_k: int = DEFAULT_TOP_K,
                 tokens: int = DEFAULT_TOKENS, bytes_per_token: int = DEFAULT_BYTES_PER_TOKEN,
                 skew: str = "uniform", alpha: float | None = None, sigma: float | None = None,
                 imbalance: float | None = None, seed: int = 0) -> Routing:
    """Route ``tokens`` tokens per rank to their experts and count the bytes between ranks.

    Parameters
    ----------
    ranks : int
        ranks taking part (each holds ``experts / ranks`` experts).
    experts : int, optional
        experts in the layer, a multiple of ``ranks`` (default 8 per rank).
    top_k, tokens, bytes_per_token : int
        experts per token, tokens per rank, bytes sent per token and destination rank.
    skew : {"uniform", "zipf", "lognormal"}
        the popularity of the experts; give its level as ``alpha`` (zipf), ``sigma``
        (lognormal) or ``imbalance`` (either).
    seed : int
        the expert order, the log-normal weights and every token's draw.

    Examples
    --------
    >>> r = route_tokens(4, top_k=2, tokens=100, bytes_per_token=1, seed=3)
    >>> r.bytes.shape, int(r.choices_per_rank.sum())
    ((4, 4), 800)
    >>> r = route_tokens(8, tokens=512, skew="zipf", imbalance=1.5, seed=1)
    >>> abs(r.imbalance / 1.5 - 1) < 0.1
    True
    """
    experts = DEFAULT_EXPERTS_PER_RANK * ranks if experts is None else experts
    _check_shape(ranks, experts, top_k, tokens, bytes_per_token)
    parameter = _skew_parameter(skew, alpha, sigma, imbalance)
    if imbalance is not None:
        parameter = calibrate(imbalance, skew, experts, experts // ranks, ranks, top_k, tokens, seed)
    popularity = expert_popularity(skew, experts, parameter, seed)
    return _routed(popularity, ranks, top_k, tokens, bytes_per_token, seed + 1, parameter, skew)


def _routed(popularity: np.ndarray, ranks: int, top_k: int, tokens: int, bytes_per_token: int,
            seed: int | tuple[int, int], parameter: float | None, skew: str) -> Routing:
    """The routing of ``tokens`` tokens per rank drawn from ``popularity`` with ``seed``."""
    picks = pick_experts(popularity, tokens * ranks, top_k, seed)
    per_rank = len(popularity) // ranks
    return Routing(dispatch_matrix(picks, tokens, per_rank, ranks, bytes_per_token), popularity,
                   choices_per_rank(picks, per_rank, ranks), parameter, skew)


def _check_shape(ranks: int, experts: int, top_k: int, tokens: int, bytes_per_token: int) -> None:
    """Refuse a layer that cannot be routed, naming the field."""
    if ranks < 2:
        raise TrafficError(f"moe: ranks={ranks}: expert routing needs at least 2 ranks")
    if experts < ranks or experts % ranks:
        raise TrafficError(f"moe: experts={experts} must be a multiple of ranks={ranks} (experts sit on ranks "
                           "in equal blocks)")
    if not 1 <= top_k <= experts:
        raise TrafficError(f"moe: top_k={top_k} must be between 1 and experts={experts}")
    for name, value in (("tokens", tokens), ("bytes_per_token", bytes_per_token)):
        if value < 1:
            raise TrafficError(f"moe: {name}={value} must be at least 1")


def _skew_parameter(skew: str, alpha: float | None, sigma: float | None, imbalance: float | None) -> float | None:
    """The skew's parameter as given, refusing one that belongs to another skew."""
    if skew not in SKEWS:
        raise TrafficError(f"moe: unknown skew {skew!r} (one of {', '.join(SKEWS)})")
    given = {k: v for k, v in (("alpha", alpha), ("sigma", sigma), ("imbalance", imbalance)) if v is not None}
    own = {"uniform": set(), "zipf": {"alpha", "imbalance"}, "lognormal": {"sigma", "imbalance"}}[skew]
    foreign = sorted(set(given) - own)
    if foreign:
        raise TrafficError(f"moe: {foreign[0]} does not apply to skew={skew} (it takes "
                           f"{', '.join(sorted(own)) or 'no level'})")
    if len(given) > 1:
        raise TrafficError(f"moe: give the level of skew={skew} once, as {' or '.join(sorted(given))}")
    if imbalance is not None and not (math.isfinite(imbalance) and imbalance >= 1):
        raise TrafficError(f"moe: imbalance={imbalance} must be a max / mean of at least 1")
    if skew == "zipf":
        return 1.0 if alpha is None and imbalance is None else alpha
    if skew == "lognormal":
        return 1.0 if sigma is None and imbalance is None else sigma
    return None


def route_steps(steps: int, ranks: int, experts: int | None = None, top_k: int = DEFAULT_TOP_K,
                tokens: int = DEFAULT_TOKENS, bytes_per_token: int = DEFAULT_BYTES_PER_TOKEN,
                skew: str = "uniform", alpha: float | None = None, sigma: float | None = None,
                imbalance: float | None = None, drift: float = 0.0, seed: int = 0) -> list[Routing]:
    """The routing of ``steps`` successive steps of one layer: every step draws its tokens
    anew; the popularity is step 0's, moved by a log-normal random walk of ``drift`` per step
    (0: the same experts stay popular, as measured routing shows over hundreds of steps: the
    busiest rank's max / mean varied by 1.8 % step to step in aiconfigurator's capture).

    Examples
    --------
    >>> a, b = route_steps(2, 4, tokens=64, skew="zipf", alpha=1.0, seed=5)
    >>> bool((a.popularity == b.popularity).all()), bool((a.bytes == b.bytes).all())
    (True, False)
    """
    if steps < 1:
        raise TrafficError(f"moe: steps={steps} must be at least 1")
    if not (math.isfinite(drift) and drift >= 0):
        raise TrafficError(f"moe: drift={drift} must be a finite number >= 0")
    first = route_tokens(ranks, experts, top_k, tokens, bytes_per_token, skew, alpha, sigma, imbalance, seed)
    out = [first]
    walk = np.random.default_rng((seed, 1 << 20))
    log_popularity = np.log(first.popularity)
    popularity = first.popularity
    for step in range(1, steps):
        if drift:
            log_popularity = log_popularity + drift * walk.standard_normal(len(log_popularity))
            popularity = np.exp(log_popularity - log_popularity.max())
            popularity /= popularity.sum()
        out.append(_routed(popularity, ranks, top_k, tokens, bytes_per_token, (seed, step), first.parameter, skew))
    return out


#: The fields of a ``moe:`` traffic spec.
SPEC_FIELDS = ("ranks", "experts", "top_k", "tokens", "bytes_per_token", "skew", "alpha", "sigma", "imbalance",
               "seed", "step", "drift")


def routing_from_spec(fields: dict[str, str], ranks_available: int) -> Routing:
    """The routing a ``moe:`` spec's fields describe (strings, as :func:`~liquidsched.spec.spec_fields`
    gives them) on at most ``ranks_available`` ranks; ``step=N`` is step N of
    :func:`route_steps` (0 the first)."""
    from .spec import field_where
    from .units import parse_count, parse_number, parse_size

    at = lambda key: field_where("traffic", "moe", key)  # noqa: E731
    count = lambda key, default, least=1: parse_count(fields[key], at(key), least=least) \
        if key in fields else default  # noqa: E731
    number = lambda key, least, most: parse_number(fields[key], at(key), least=least, most=most) \
        if key in fields else None  # noqa: E731
    ranks = count("ranks", ranks_available)
    if ranks > ranks_available:
        raise TrafficError(f"{at('ranks')}: {ranks} ranks but only {ranks_available} hosts both send and receive")
    bytes_per_token = parse_size(fields["bytes_per_token"], at("bytes_per_token")) \
        if "bytes_per_token" in fields else DEFAULT_BYTES_PER_TOKEN
    step = count("step", 0, least=0)
    return route_steps(step + 1, ranks, count("experts", None), count("top_k", DEFAULT_TOP_K),
                       count("tokens", DEFAULT_TOKENS), bytes_per_token, fields.get("skew", "uniform").strip(),
                       number("alpha", 0, 1e3), number("sigma", 0, 1e3), number("imbalance", 1, 1e6),
                       number("drift", 0, 1e3) or 0.0, count("seed", 0, least=0))[-1]
