r"""Sampled-negative evaluation (Krichene & Rendle, KDD 2020), with corrected estimators.

Sampled evaluation ranks each held-out positive against *m* sampled negatives instead of the
whole catalogue. Krichene & Rendle show the resulting "sampled metrics" are not consistent
with the full-ranking metrics; they propose corrected estimators. :func:`sampled_evaluate`
computes, for the same scores and the same seed, the **uncorrected** sampled value, the
**bias–variance corrected** value (their BV estimator, γ named) and the **full-ranking** value
(``estimator="full"``), so the gap can be reported.

**The score source** must score every catalogue item for every truth user (sampling needs
the negatives' scores, the full value needs all of them). Either

* a callable ``scores(user_id) -> array`` returning one score per item of ``catalog`` (in the
  order given), or
* a frame (any input :func:`receval.evaluate` reads) with ``user_id``, ``item_id``, ``score``
  holding every (truth user, catalogue item) pair; a missing pair is an error.

**The protocol** (exactly reproducible from the seed): every distinct relevant truth pair
(user *u*, item *i*) is one instance; instances are taken with users in sorted id order and
their positives in sorted item order. The candidates of *u* are the catalogue items that are
neither relevant to *u* nor in ``exclude`` for *u* (e.g. the train items), *C* of them; *A*
of those score above the positive (:math:`s_j > s_i`, or :math:`s_j \ge s_i` with
``ties=pessimistic``). The full rank is :math:`R = 1 + A`. The sampled rank is
:math:`r = 1 + X` where *X*, the number of the *n* negatives drawn uniformly without
replacement from the candidates that score above the positive, is drawn from its exact law,
the hypergeometric distribution :math:`X \sim \mathrm{Hyp}(A, C - A, n)`, with
``numpy.random.default_rng(seed).hypergeometric(A, C - A, n)`` over the instances in order
(one vectorised call: the negatives' identities are never needed, so nothing loops over users).
Values are means over instances (leave-one-out: one per user).

**Metrics** of a rank *r* (one positive): ``hitrate@k`` :math:`\mathbb{1}[r \le k]` (= recall@k),
``ndcg@k`` :math:`\mathbb{1}[r \le k] / \log_2(r + 1)`, ``mrr`` :math:`1/r` (``mrr@k`` cut).

**Estimators.** ``uncorrected``: the metric of the sampled rank. ``bv`` (Krichene & Rendle
§4.2): a corrected value :math:`\tilde M(r)` per sampled rank, the minimiser of

.. math::

    \sum_{R=1}^{N} p(R) \Bigl[\bigl(\mathbb{E}[\tilde M(r) | R] - M(R)\bigr)^2 + \gamma\,\mathrm{Var}[\tilde M(r) | R]\Bigr],
    \qquad P(r | R) = \frac{\binom{R-1}{r-1}\binom{N-R}{n-r+1}}{\binom{N-1}{n}}

(hypergeometric: *r* − 1 of the *n* negatives drawn from the *R* − 1 candidates above the
positive, out of *N* − 1), with *p(R)* uniform over 1..N (*N* the candidates plus the
positive; the paper also fits *p*), solved in closed form:
:math:`\tilde M = [(1-\gamma) P^\top D P + \gamma\,\mathrm{diag}(P^\top D \mathbf{1})]^{-1} P^\top D M`.
``full``: the metric of the full rank *R* (no sampling).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._version import __version__
from .engine import rel_message, say
from .errors import DataError, SpecError, closest, did_you_mean
from .io import columns_of, read_frame
from .metrics import registered
from .options import _render_number
from .resolve import REL_POSITIVE
from .spec import parse_k, signature_text, split_spec

if TYPE_CHECKING:  # pragma: no cover
    from .types import Frame, Ids, ScoreSource

ESTIMATORS = ("uncorrected", "bv", "full")
#: the registered metrics with a formula of one positive's rank (the module docstring), and
#: whether that formula also has a value over the whole rank, without a cut-off (``mrr``: 1/r)
_METRICS = {"hitrate": False, "ndcg": False, "mrr": True}
_TIES = ("pessimistic", "optimistic")
#: cells (rows × (n + 1) columns) of one block of the table P(r | R) the corrected estimator
#: sums over: its memory is a few such blocks, whatever the catalogue size. A table that fits
#: in one block is computed whole, by the very operations of the dense formula.
_BLOCK = 1 << 16


@dataclass
class SampledResults:
    """Values of :func:`sampled_evaluate`: ``values[(spec, estimator)]`` and their signatures."""

    values: dict[tuple[str, str], float]
    signatures: dict[tuple[str, str], str]
    instances: int
    per_instance: dict[str, np.ndarray] = field(default_factory=dict)  # sampled / full ranks

    def __getitem__(self, key: tuple[str, str]) -> float:
        return self.values[key]

    def table(self) -> list[tuple[str, str, float]]:
        return [(s, e, v) for (s, e), v in self.values.items()]


def _metric_of(name: str, k: int | None) -> Callable[[np.ndarray], np.ndarray]:
    kk = np.inf if k is None else k
    if name == "hitrate":
        return lambda r: (r <= kk).astype(np.float64)
    if name == "ndcg":
        return lambda r: np.where(r <= kk, 1.0 / np.log2(r + 1.0), 0.0)
    return lambda r: np.where(r <= kk, 1.0 / r, 0.0)


def _show(x: Any) -> str:
    """An id as the user wrote it: ``5``, ``'a'`` (not ``np.int64(5)``)."""
    return repr(x.item() if isinstance(x, np.generic) else x)


def _parse(spec: Any) -> tuple[str, int | None]:
    """``(metric, cut-off)`` of a metric string, read by the spec grammar
    (:func:`receval.spec.split_spec`); sampled evaluation takes the standard definition of a
    metric of :data:`_METRICS`, with no option."""
    if not isinstance(spec, str):
        raise SpecError(f"a metric must be a string like 'ndcg@10', got {spec!r}")
    bare = spec.strip().lower()
    if bare.endswith("@") and bare[:-1].strip() in _METRICS:
        name = bare[:-1].strip()
        raise SpecError(f"'{spec}' has an '@' without a cut-off: write '{name}@10'" + (" or 'mrr'" if _METRICS[name] else ""))
    name, options, k_raw = split_spec(spec) if not bare.endswith("@") else (bare[:-1].strip(), [], None)
    if name not in _METRICS:
        close = closest(name, _METRICS)
        raise SpecError(f"sampled evaluation supports {', '.join(_METRICS)}; got '{spec}'" + (f"; did you mean '{close}'?" if close else ""))
    metric = registered()[name]
    if options:
        raise SpecError(f"sampled evaluation computes the standard '{name}' and takes no option; got '{spec}': write "
                        f"'{name}@10'" + (f" or '{name}'" if _METRICS[name] else ""))
    if k_raw is None:
        if metric.needs_k and not _METRICS[name]:
            raise SpecError(f"'{name}' needs a cut-off: write '{name}@10'")
        return name, None
    try:
        return name, parse_k(k_raw)
    except SpecError as exc:
        raise SpecError(f"{exc} in '{spec}'; write e.g. '{name}@10'") from None


def rank_distribution(N: int, n: int) -> np.ndarray:
    """``P[R-1, r-1] = P(sampled rank r | full rank R)`` for ``R = 1..N`` and ``r = 1..n+1``:
    the hypergeometric pmf of r − 1 successes in n draws from N − 1 items of which R − 1 are
    "above", from log-gamma values (equal to ``scipy.stats.hypergeom.pmf``, much faster)."""
    return _rank_rows(N, n, 0, N)


def _rank_rows(N: int, n: int, lo: int, hi: int, lg: np.ndarray | None = None) -> np.ndarray:
    """Rows ``R = lo+1..hi`` of :func:`rank_distribution`. ``lg[j]`` is ``gammaln(j + 1)``
    (``j = 0..N``, computed here unless given): every log-binomial reads the log-gammas of its
    integer arguments from it, the very values ``gammaln`` gives them cell by cell, so the rows
    are bit-identical to those of the whole table, however the rows are split.

    Each cell is ``exp(((lg[R-1] - lg[r-1]) - lg[R-r]) + ((lg[N-R] - lg[n-r+1]) - lg[N-R-n+r-1])
    - lncomb(N-1, n))``, 0 where a binomial is empty (``r > R`` or ``R - r > N - n - 1``). The
    terms that read ``R - r`` come from one vector seen through a strided (Toeplitz) view, the
    others by broadcasting: the same operations in the same order on the same values as one
    log-binomial per cell with fancy indexing, with no index array and a few passes."""
    if lg is None:
        from scipy.special import gammaln

        lg = gammaln(np.arange(1, N + 2, dtype=np.float64))
    if not 0 <= n <= N - 1:  # lncomb(N - 1, n) is empty: every cell as the formula gives it
        return _rank_rows_cells(N, n, lo, hi, lg)
    from numpy.lib.stride_tricks import as_strided

    rows = hi - lo
    R = np.arange(lo + 1, hi + 1, dtype=np.int64)
    r = np.arange(1, n + 2, dtype=np.int64)
    # d = R - r over the block runs from lo - n to hi - 1; cell (i, j) reads d = lo + i - j, i.e.
    # position n + i - j of a vector over that range (outside a binomial's range: a finite
    # stand-in, overwritten by 0 below)
    d = np.arange(lo - n, hi, dtype=np.int64)
    t1 = lg[np.clip(d, 0, N)]  # lg[R - r]
    t2 = lg[np.clip(N - n - 1 - d, 0, N)]  # lg[N - R - n + r - 1]
    step = t1.strides[0]
    v1 = as_strided(t1[n:], shape=(rows, n + 1), strides=(step, -step), writeable=False)
    v2 = as_strided(t2[n:], shape=(rows, n + 1), strides=(step, -step), writeable=False)
    x = np.subtract(lg[R - 1][:, None], lg[r - 1][None, :])
    x -= v1
    y = np.subtract(lg[N - R][:, None], lg[n - r + 1][None, :])
    y -= v2
    x += y
    x -= (lg[N - 1] - lg[n]) - lg[N - 1 - n]
    np.exp(x, out=x)
    # empty binomials: r > R (the first n rows of the table) and R - r > N - n - 1 (the last n)
    if lo < n:
        i = np.arange(min(rows, n - lo))
        x[:len(i)][r[None, :] > R[i][:, None]] = 0.0
    if hi > N - n:
        i = np.arange(max(0, N - n - lo), rows)
        x[i[0]:][(R[i][:, None] - r[None, :]) > N - n - 1] = 0.0
    return x


def _rank_rows_cells(N: int, n: int, lo: int, hi: int, lg: np.ndarray) -> np.ndarray:
    """:func:`_rank_rows` one log-binomial per cell (fancy indexing): any ``N`` and ``n``."""

    def lncomb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        aa, bb = np.broadcast_arrays(a, b)
        ok = (bb >= 0) & (bb <= aa)
        out = np.full(aa.shape, -np.inf)
        a_ok, b_ok = aa[ok], bb[ok]
        out[ok] = lg[a_ok] - lg[b_ok] - lg[a_ok - b_ok]
        return out

    R = np.arange(lo + 1, hi + 1, dtype=np.int64)[:, None]
    r = np.arange(1, n + 2, dtype=np.int64)[None, :]
    logp = lncomb(R - 1, r - 1) + lncomb(N - R, n - r + 1) - lncomb(np.array(N - 1), np.array(n))
    return np.exp(logp)


def bv_correction(metric: Callable[[np.ndarray], np.ndarray], N: int, n: int, gamma: float) -> np.ndarray:
    r"""Corrected values :math:`\tilde M(r)`, ``r = 1..n+1`` (Krichene & Rendle's BV estimator, uniform *p(R)*)."""
    return _bv_corrections([metric], N, n, gamma)[0]


def _bv_corrections(metrics: list[Callable[[np.ndarray], np.ndarray]], N: int, n: int, gamma: float,
                    table: np.ndarray | None = None) -> list[np.ndarray]:
    r""":func:`bv_correction` of several metrics for one (N, n, γ), in O(_BLOCK + N) memory
    (a few blocks of rows and one N-long log-gamma table) instead of several N × (n + 1) tables.

    :math:`P^\top D P`, :math:`P^\top D \mathbf{1}` and :math:`P^\top D M` are sums over the
    rows *R* of *P*: they are accumulated over blocks of at most ``_BLOCK`` cells of *P* instead
    of from the dense N × (n + 1) table (and shared by the metrics). When the table fits in one
    block the result is bit-identical to the dense formula. Otherwise only the rows
    ``R <= N/2`` are computed: row ``N + 1 - R`` is row *R* reversed, bit for bit (the two
    log-binomials of a cell swap places and their sum commutes), so the mirrored half adds the
    reversed sums; only the summation order differs from the dense formula (relative
    differences of the corrected values ≈ cond(A) · 1e-16, cond(A) ≈ 1/γ), and the system is
    solved by LU (γ > 0: positive definite). γ = 0 keeps the blocks of every row and ``lstsq``
    (the system may be singular, and its least-squares answer follows every rounding).

    ``table``: :func:`_log_table` of ``n`` with at least N rows, shared by several N (each
    cell then costs one addition, one subtraction and one ``exp``; the cells are the same)."""
    from scipy.special import gammaln

    lg = gammaln(np.arange(1, N + 2, dtype=np.float64))  # gammaln(j + 1), j = 0..N: one table for every block
    rows = max(1, _BLOCK // (n + 1))
    if gamma == 0 and N > rows:
        return _bv_blocks(metrics, N, n, lg, rows)
    if N <= rows:  # one block: the dense formula's very operations
        P = _rank_rows(N, n, 0, N, lg)
        d = np.full(N, 1.0 / N)
        Pd = P.T * d
        A = np.zeros((n + 1, n + 1))
        A += (1 - gamma) * Pd @ P
        A += gamma * np.diag(np.zeros(n + 1) + P.T @ d)
        R = np.arange(1, N + 1, dtype=np.float64)
        return [np.linalg.lstsq(A, np.zeros(n + 1) + Pd @ metric(R), rcond=None)[0] for metric in metrics]
    from scipy.linalg.blas import dsyrk

    if table is not None and (table.shape[0] < N or table.shape[1] != n + 1):
        table = None
    lnc = (lg[N - 1] - lg[n]) - lg[N - 1 - n]  # lncomb(N - 1, n): N - 1 >= n here
    half = N // 2
    G = np.zeros((n + 1, n + 1))  # upper triangle of the sum of p p^T over the rows R <= half
    col = np.zeros(n + 1)
    B = np.zeros((n + 1, len(metrics)))  # sum of p M(R) over R <= half
    B2 = np.zeros((n + 1, len(metrics)))  # sum of p M(N + 1 - R): the mirrored rows, reversed below

    def block(lo: int, hi: int) -> np.ndarray:
        if table is None:
            return _rank_rows(N, n, lo, hi, lg)
        # cell (R, r): lncomb(R - 1, r - 1) + lncomb(N - R, n - r + 1) - lncomb(N - 1, n), whose
        # second term is the first one of cell (N + 1 - R, n + 2 - r): one table, read twice
        x = np.add(table[lo:hi], table[N - hi:N - lo][::-1, ::-1])
        x -= lnc
        return np.exp(x, out=x)

    for lo in range(0, half, rows):
        hi = min(half, lo + rows)
        P = block(lo, hi)
        G = dsyrk(1.0, P.T, c=G, beta=1.0, overwrite_c=True)  # P^T P, upper triangle
        col += P.sum(axis=0)
        R = np.arange(lo + 1, hi + 1, dtype=np.float64)
        B += P.T @ np.stack([metric(R) for metric in metrics], axis=1)
        B2 += P.T @ np.stack([metric(N + 1.0 - R) for metric in metrics], axis=1)
    G = np.triu(G) + np.triu(G, 1).T
    G += G[::-1, ::-1].copy()
    col += col[::-1].copy()
    B += B2[::-1]
    if N % 2:  # the middle row is its own mirror
        P = block(half, half + 1)
        G += P.T @ P
        col += P[0]
        B += P.T @ np.stack([metric(np.array([half + 1.0])) for metric in metrics], axis=1)
    pR = 1.0 / N  # p(R), uniform
    A = ((1 - gamma) * pR) * G
    A[np.diag_indices(n + 1)] += (gamma * pR) * col
    B *= pR
    X = np.linalg.solve(A, B)
    return [X[:, j].copy() for j in range(len(metrics))]


def _log_table(n: int, rows: int) -> np.ndarray:
    """``T[R - 1, r - 1] = lncomb(R - 1, r - 1)`` for ``R = 1..rows``, ``r = 1..n + 1`` (-inf
    where empty), computed as :func:`_rank_rows` computes the first log-binomial of a cell."""
    from numpy.lib.stride_tricks import as_strided
    from scipy.special import gammaln

    lg = gammaln(np.arange(1, rows + 1, dtype=np.float64))
    i = np.arange(rows, dtype=np.int64)
    j = np.arange(n + 1, dtype=np.int64)
    t = lg[np.clip(np.arange(-n, rows, dtype=np.int64), 0, rows - 1)]  # lg[i - j] at position n + i - j
    step = t.strides[0]
    x = np.subtract(lg[i][:, None], lg[np.minimum(j, rows - 1)][None, :])
    x -= as_strided(t[n:], shape=(rows, n + 1), strides=(step, -step), writeable=False)
    x[j[None, :] > i[:, None]] = -np.inf
    return x


#: cells of the largest :func:`_log_table` an evaluation builds (16 MB): above, every
#: candidate-set size computes its cells from the log-gammas (:func:`_rank_rows`)
_TABLE_CELLS = 1 << 21


def _bv_blocks(metrics: list[Callable[[np.ndarray], np.ndarray]], N: int, n: int, lg: np.ndarray, rows: int) -> list[np.ndarray]:
    """:func:`_bv_corrections` with γ = 0 over blocks of ``rows`` rows, every row computed."""
    A = np.zeros((n + 1, n + 1))
    col = np.zeros(n + 1)
    b = [np.zeros(n + 1) for _ in metrics]
    for lo in range(0, N, rows):
        hi = min(N, lo + rows)
        P = _rank_rows(N, n, lo, hi, lg)
        d = np.full(hi - lo, 1.0 / N)
        Pd = P.T * d
        A += 1 * Pd @ P
        col += P.T @ d
        R = np.arange(lo + 1, hi + 1, dtype=np.float64)
        for j, metric in enumerate(metrics):
            b[j] += Pd @ metric(R)
    A += 0.0 * np.diag(col)
    return [np.linalg.lstsq(A, bj, rcond=None)[0] for bj in b]


#: corrected values already computed in this process, by (N, n, γ, _BLOCK, metrics): they
#: depend on nothing else, and an evaluation needs one per candidate-set size (oldest dropped
#: past _BV_CACHE_SIZE entries; an entry is a few (n + 1)-long arrays)
_BV_CACHE: dict[tuple[Any, ...], tuple[np.ndarray, ...]] = {}
_BV_CACHE_SIZE = 4096


def _bv_cached(N: int, n: int, gamma: float, metrics: tuple[tuple[str, int | None], ...],
               table: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """:func:`_bv_corrections` of the metrics ``(name, k)``, computed once per key (read-only arrays)."""
    key = (N, n, gamma, _BLOCK, metrics)
    hit = _BV_CACHE.get(key)
    if hit is not None:
        return hit
    out = tuple(_bv_corrections([_metric_of(name, k) for name, k in metrics], N, n, gamma, table))
    for c in out:
        c.flags.writeable = False
    while len(_BV_CACHE) >= _BV_CACHE_SIZE:
        del _BV_CACHE[next(iter(_BV_CACHE))]
    _BV_CACHE[key] = out
    return out


def _codes(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Position of each value in the sorted unique ``table``, -1 where absent (vectorised)."""
    if len(table) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(table, values), len(table) - 1)
    return np.where(table[pos] == values, pos, -1).astype(np.int64)


def _codes_of(values: np.ndarray, table: np.ndarray, what: str, of: str) -> np.ndarray:
    """:func:`_codes`, refusing text ids looked up among numbers (or the reverse)."""
    text_v, text_t = values.dtype.kind in "OUS", table.dtype.kind in "OUS"
    if len(values) and len(table) and text_v != text_t:
        kind = lambda t: "text" if t else "numbers"  # noqa: E731
        raise DataError(
            f"the {what} ids are {kind(text_v)} but the {of} ids are {kind(text_t)}; "
            "give both the same type (e.g. cast the ids to str on both sides)"
        )
    return _codes(values, table)


# --------------------------------------------------------------------------- the arguments


@dataclass(frozen=True)
class _Args:
    """The arguments of :func:`sampled_evaluate`, checked."""

    metrics: list[tuple[str, str, int | None]]  # (spec as written, name, k)
    n: int
    seed: int
    estimators: tuple[str, ...]
    gamma: float
    ties: str
    rel: float | None
    catalog: np.ndarray  # the catalogue's ids, sorted
    order: np.ndarray | None  # catalog[j] is the order[j]-th item as given (None: given sorted)
    truth: dict[str, np.ndarray]
    exclude: dict[str, np.ndarray] | None


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _frame_like(obj: Any) -> bool:
    return isinstance(obj, (dict, str, os.PathLike)) or type(obj).__module__.split(".")[0] in ("pandas", "polars", "pyarrow", "pyspark", "ranx")


_CATALOG_FIX = "pass a list, array or Series of item ids, in the order the score function scores them"


def _read_catalog(catalog: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """``(sorted ids, order)``: ``sorted[j]`` is item ``order[j]`` of the catalogue as given
    (``order`` None when the catalogue is given sorted). Repeated ids are refused: a score
    function returns one score per item as given, so a repeated item has no single score."""
    if catalog is None:
        raise DataError(f"no catalogue given: {_CATALOG_FIX}")
    if isinstance(catalog, (set, frozenset, dict)):
        raise DataError(f"the catalogue is a {type(catalog).__name__}, which has no order the scores can follow; {_CATALOG_FIX} (e.g. sorted(...))")
    values = catalog.to_list() if hasattr(catalog, "to_list") else catalog  # pandas, polars
    if isinstance(values, (str, bytes)) or not (isinstance(values, Sequence) or hasattr(values, "__array__")):
        raise DataError(f"the catalogue is of type {type(catalog).__name__}; {_CATALOG_FIX}")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"cannot read the catalogue as one list of ids ({why}); {_CATALOG_FIX}") from None
    if arr.ndim != 1:
        raise DataError(f"the catalogue must be one id per item (one dimension), got shape {arr.shape}; {_CATALOG_FIX}")
    if len(arr) == 0:
        raise DataError("the catalogue is empty: pass the items to rank")
    kind = arr.dtype.kind
    if kind in "UO":  # text, or Python objects: one type for every id
        items = values if isinstance(values, (list, tuple)) else arr.tolist()
        missing = [x for x in items if x is None or type(x).__name__ in ("NAType", "NaTType") or (isinstance(x, float) and x != x)]
        if missing:
            raise DataError(f"the catalogue holds a missing id ({missing[0]}); drop it")
        if all(isinstance(x, str) for x in items):
            arr = np.array(items, dtype=object)
        elif all(_is_int(x) for x in items):
            try:
                arr = np.array(items, dtype=np.int64)
            except OverflowError:
                raise DataError("the catalogue holds integer ids beyond 64 bits; use str ids") from None
        elif all(_is_real(x) for x in items):
            arr = np.array(items, dtype=np.float64)
        else:
            names = sorted({type(x).__name__ for x in items})
            raise DataError(f"the catalogue mixes id types ({', '.join(names)}); give every item id one type (e.g. [str(i) for i in catalog])")
        kind = arr.dtype.kind
    if kind == "u":
        if arr.max() > np.iinfo(np.int64).max:
            raise DataError("the catalogue holds integer ids beyond 64 bits; use str ids")
        arr = arr.astype(np.int64)
    elif kind == "f" and not np.isfinite(arr).all():
        raise DataError("the catalogue holds NaN or infinite ids; drop them")
    elif kind == "S":
        raise DataError("the catalogue holds bytes ids; decode them to str (e.g. [i.decode() for i in catalog])")
    elif kind not in "iufO":
        raise DataError(f"the catalogue's ids have type {arr.dtype}; use integers or strings")
    cat, first, counts = np.unique(arr, return_index=True, return_counts=True)
    if (counts > 1).any():
        j = int(np.flatnonzero(counts > 1)[0])
        raise DataError(f"the catalogue repeats item {_show(cat[j])} ({int(counts[j])} times); pass each item once (and one score per item)")
    return cat, None if np.array_equal(first, np.arange(len(cat))) else first


def _read_args(scores: Any, truth: Any, metrics: Any, catalog: Any, n: Any, seed: Any, estimators: Any, gamma: Any,
               ties: Any, exclude: Any, rel: Any) -> _Args:
    """Every argument of :func:`sampled_evaluate` checked, in one place: a bad one raises a
    one-line :class:`~receval.errors.SpecError` (options) or :class:`~receval.errors.DataError`
    (inputs) that names the fix."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, (list, tuple)):
        raise SpecError(f"`metrics` must be a metric string like 'ndcg@10' or a list of them, got {metrics!r}")
    if not metrics:
        raise SpecError("no metric given: pass e.g. ['hitrate@10', 'ndcg@10', 'mrr']")
    parsed = [(m, *_parse(m)) for m in metrics]
    if not _is_int(n) or n < 1:
        raise SpecError(f"`n` (negatives per positive) must be an integer >= 1, got {n!r}; pass e.g. n=100")
    if seed is None:
        raise SpecError("`seed` must be an integer >= 0, got None: a sampled value is reproducible only from a fixed seed; pass e.g. seed=0")
    if not _is_int(seed) or seed < 0:
        raise SpecError(f"`seed` must be an integer >= 0 (the draws are reproducible from it), got {seed!r}; pass e.g. seed=0")
    if isinstance(estimators, str):
        estimators = (estimators,)
    if not isinstance(estimators, (list, tuple)):
        raise SpecError(f"`estimators` must be a list of {', '.join(map(repr, ESTIMATORS))}, got {estimators!r}")
    if not estimators:
        raise SpecError(f"no estimator given: pass some of {', '.join(map(repr, ESTIMATORS))} (the default is all three)")
    for e in estimators:
        if not isinstance(e, str) or e not in ESTIMATORS:
            close = did_you_mean(e, ESTIMATORS) if isinstance(e, str) else f"; choose from {', '.join(map(repr, ESTIMATORS))}"
            raise SpecError(f"unknown estimator {e!r}{close}")
    if not _is_real(gamma) or not 0 <= gamma <= 1:  # NaN fails the comparison
        raise SpecError(f"`gamma` (the corrected estimator's variance weight) must be a number in [0, 1], got {gamma!r}; the default is 0.01")
    if not isinstance(ties, str) or ties not in _TIES:
        close = did_you_mean(ties, _TIES) if isinstance(ties, str) else ""
        raise SpecError(f"`ties` must be 'pessimistic' or 'optimistic', got {ties!r}" + (close if "did you mean" in close else ""))
    if rel is not None and rel != "auto" and (not _is_real(rel) or not np.isfinite(rel)):
        raise SpecError(f"`rel` (the rating from which a truth row is relevant) must be a number or None, got {rel!r}")
    if not callable(scores) and not _frame_like(scores):
        raise DataError(
            f"the score source is of type {type(scores).__name__}; pass a function scores(user_id) -> one score per catalogue item "
            "(in the catalogue's order), or a frame with user_id, item_id, score"
        )
    if callable(scores) and not _frame_like(scores):
        import inspect

        try:
            inspect.signature(scores).bind(0)
        except TypeError:
            raise DataError("pass a score function that takes one user id, scores(user_id) -> one score per catalogue "
                            f"item; {getattr(scores, '__name__', type(scores).__name__)} cannot be called with one argument") from None
        except ValueError:  # no signature to inspect (a builtin): called as given
            pass
    cat, order = _read_catalog(catalog)
    t = columns_of(read_frame(truth, "ground truth"), "ground truth", {"user": "user_id", "item": "item_id"}, {"rating": "rating"})
    if rel == "auto":  # the standard default: rel:>0 when the truth is rated, every row without a rating column
        rel = None
        if "rating" in t and t["rating"].dtype.kind in "iuf":
            y = t["rating"][np.isfinite(t["rating"])]
            say(rel_message(len(t["rating"]), int((y <= 0).sum()), int(np.unique(y[y > 0]).size)))
            rel = REL_POSITIVE
    if rel is not None and "rating" not in t:
        raise DataError("a relevance threshold (rel=) needs a rating column in the ground truth; add one or pass rel=None")
    if rel is not None and t["rating"].dtype.kind not in "iuf":
        raise DataError("the ground truth's rating column is not numeric; give it numbers to compare with rel=")
    ex = None
    if exclude is not None:
        ex = columns_of(read_frame(exclude, "exclude"), "exclude", {"user": "user_id", "item": "item_id"}, {})
    return _Args(parsed, int(n), int(seed), tuple(dict.fromkeys(estimators)), float(gamma), ties,
                 None if rel is None else float(rel), cat, order, t, ex)


def _score_matrix(scores: Any, users: np.ndarray, catalog: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Scores ``[len(users), len(catalog)]``: every truth user's score of every item of the
    sorted ``catalog``; a callable's scores follow the catalogue as given (``order``)."""
    if callable(scores):  # the user's own per-user function: one call per user is its contract
        S = np.empty((len(users), len(catalog)), dtype=np.float64)
        for j, u in enumerate(users.tolist()):
            out = scores(u)
            try:
                row = np.asarray(out, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise DataError(
                    f"the score source returned a {type(out).__name__} that is not numbers for user {u!r} ({first}); "
                    "it must return one number per catalogue item, in the catalogue's order"
                ) from None
            if row.shape != (len(catalog),):
                raise DataError(
                    f"the score source returned {row.shape} scores ({type(out).__name__}) for user {u!r}; "
                    f"it must return one per catalogue item ({len(catalog)}), in the catalogue's order"
                )
            S[j] = row if order is None else row[order]
    else:
        c = columns_of(read_frame(scores, "scores"), "scores", {"user": "user_id", "item": "item_id", "score": "score"}, {})
        uc, ic = _codes_of(c["user"], users, "score source's user", "ground truth's user"), _codes_of(c["item"], catalog, "score source's item", "catalogue's")
        keep = (uc >= 0) & (ic >= 0)
        flat = uc[keep] * len(catalog) + ic[keep]
        flat_s = np.full(len(users) * len(catalog), np.nan)
        seen = np.zeros(len(flat_s), dtype=np.int64)
        np.add.at(seen, flat, 1)
        if (seen > 1).any():
            f = int(np.flatnonzero(seen > 1)[0])
            raise DataError(f"the scores repeat (user {_show(users[f // len(catalog)])}, item {_show(catalog[f % len(catalog)])}); keep one score per pair")
        if c["score"].dtype.kind not in "iuf":
            raise DataError("the score source's score column is not numeric; give it numbers")
        flat_s[flat] = c["score"][keep].astype(np.float64)
        if (seen == 0).any():
            f = int(np.flatnonzero(seen == 0)[0])
            raise DataError(
                f"the scores miss (user {_show(users[f // len(catalog)])}, item {_show(catalog[f % len(catalog)])}); "
                "sampled evaluation needs a score for every catalogue item of every truth user"
            )
        S = flat_s.reshape(len(users), len(catalog))
    if not np.all(np.isfinite(S)):
        u = users[int(np.flatnonzero(~np.isfinite(S).all(axis=1))[0])]
        raise DataError(f"the score source returned NaN or infinite scores for user {_show(u)}")
    return S


def _candidates_above(S: np.ndarray, never: np.ndarray, inst_u: np.ndarray, inst_i: np.ndarray, pessimistic: bool) -> np.ndarray:
    """For every instance (user row u, positive column i): how many candidates of u (columns
    not in ``never[u]``) score above ``S[u, i]`` (or equal, with ``pessimistic``). Vectorised
    comparisons of the instances' rows, in chunks of at most 2^24 cells."""
    out = np.empty(len(inst_u), dtype=np.int64)
    step = max(1, (1 << 24) // max(S.shape[1], 1))
    for lo in range(0, len(inst_u), step):
        u, i = inst_u[lo:lo + step], inst_i[lo:lo + step]
        rows, sp = S[u], S[u, i][:, None]
        hit = (rows >= sp) if pessimistic else (rows > sp)
        hit &= ~never[u]
        out[lo:lo + step] = hit.sum(axis=1)
    return out


def sampled_evaluate(
    scores: ScoreSource,
    truth: Frame,
    metrics: str | Sequence[str],
    *,
    catalog: Ids,
    n: int = 100,
    seed: int = 0,
    estimators: tuple[str, ...] = ESTIMATORS,
    gamma: float = 0.01,
    ties: str = "pessimistic",
    exclude: Frame | None = None,
    rel: float | str | None = "auto",
    progress: bool | None = None,
) -> SampledResults:
    """Sampled-negative evaluation of a full score source (see the module docs for the exact protocol).

    ``truth`` (user_id, item_id[, rating]) gives the positives (``rel`` a rating threshold;
    by default ``rel:>0`` when the truth has a rating column, every row without one; ``None``
    makes every row a positive),
    ``catalog`` the candidate items, ``exclude`` (user_id, item_id) items never sampled as
    negatives (e.g. the train interactions). ``n`` negatives per positive, drawn with ``seed``.

    ``catalog`` is a list, array or Series of distinct item ids, in any order: a callable
    ``scores`` returns its scores in that order (a repeated id is refused, as is a set, which
    has no order). The values do not depend on the order (the instances follow the sorted ids).
    Every bad argument raises a one-line :class:`~receval.errors.SpecError` (an option: a
    metric, ``n``, ``seed``, ``estimators``, ``gamma``, ``ties``, ``rel``) or
    :class:`~receval.errors.DataError` (an input) that names the fix.

    ``progress``: a rich progress bar on stderr while the corrected estimator is computed
    (one system per candidate-set size); by default shown when stderr is a terminal and the
    work is long (thousands of candidates per user and more than a few sizes), never
    otherwise. It does not change any value.

    >>> import numpy as np
    >>> catalog = [1, 2, 3, 4, 5]
    >>> score = {1: [0.9, 0.8, 0.7, 0.6, 0.5]}          # user 1 ranks items 1..5 in order
    >>> truth = {"user_id": [1], "item_id": [3]}        # the positive has full rank 3
    >>> r = sampled_evaluate(lambda u: score[u], truth, ["hitrate@1"], catalog=catalog, n=4)
    >>> r[("hitrate@1", "full")], r[("hitrate@1", "uncorrected")]   # every negative sampled: 3 either way
    (0.0, 0.0)
    >>> r.instances
    1
    >>> shuffled = [3, 5, 1, 4, 2]                      # the same scores, given in another order
    >>> r2 = sampled_evaluate(lambda u: [0.7, 0.5, 0.9, 0.6, 0.8], truth, ["hitrate@1"], catalog=shuffled, n=4)
    >>> r2.values == r.values
    True
    """
    a = _read_args(scores, truth, metrics, catalog, n, seed, estimators, gamma, ties, exclude, rel)
    cat, t, n, seed, gamma, ties, rel = a.catalog, a.truth, a.n, a.seed, a.gamma, a.ties, a.rel
    relevant = np.ones(len(t["user"]), dtype=bool) if rel is None else t["rating"] >= rel
    tu, ti = t["user"][relevant], t["item"][relevant]
    if len(tu) == 0:
        raise DataError("no relevant truth row: nothing to evaluate")
    users = np.unique(tu)
    # the instances: unique (user, positive) pairs, users in sorted id order, items in sorted order
    pu, pi = _codes(tu, users), _codes_of(ti, cat, "ground truth's item", "catalogue's")
    if (pi < 0).any():
        bad = np.flatnonzero(pi < 0)[0]
        raise DataError(f"positive (user {_show(tu[bad])}, item {_show(ti[bad])}) is not in the catalogue; pass a catalog that holds every truth item")
    inst = np.unique(pu * len(cat) + pi)
    inst_u, inst_i = inst // len(cat), inst % len(cat)
    # items that are never negatives of a user: the positives and the excluded items
    nc = inst
    if a.exclude is not None:
        ex = a.exclude
        eu, ei = _codes_of(ex["user"], users, "exclude's user", "ground truth's user"), _codes_of(ex["item"], cat, "exclude's item", "catalogue's")
        ok = (eu >= 0) & (ei >= 0)
        nc = np.unique(np.r_[inst, eu[ok] * len(cat) + ei[ok]])
    never = np.zeros((len(users), len(cat)), dtype=bool)  # never a negative: positives, excluded items
    never.ravel()[nc] = True
    S = _score_matrix(scores, users, cat, a.order)
    above = _candidates_above(S, never, inst_u, inst_i, ties == "pessimistic")
    cand = len(cat) - never.sum(axis=1)[inst_u]
    short = cand < n
    if short.any():
        j = int(np.flatnonzero(short)[0])
        raise DataError(f"user {_show(users[inst_u[j]])} has {int(cand[j])} candidate negatives, fewer than n={n}; lower n or enlarge the catalogue")
    rng = np.random.default_rng(seed)
    # the number of the n sampled negatives (drawn without replacement) that rank above the
    # positive follows the hypergeometric law exactly: drawn directly, no negative's identity needed
    r_s = 1.0 + rng.hypergeometric(above, cand - above, n).astype(np.float64)
    r_f, N = 1.0 + above.astype(np.float64), cand + 1
    fns = [_metric_of(name, k) for _, name, k in a.metrics]
    corrected: list[float] = []
    if "bv" in a.estimators:
        tot = [0.0] * len(fns)
        keys = tuple((name, k) for _, name, k in a.metrics)
        sizes = np.unique(N)
        todo = [int(x) for x in sizes if (int(x), n, gamma, _BLOCK, keys) not in _BV_CACHE]
        # the first log-binomial of every cell, shared by the sizes (when it fits in memory)
        big = max(todo, default=0)
        table = _log_table(n, big) if len(todo) > 1 and big * (n + 1) <= _TABLE_CELLS else None
        # one correction per candidate-set size, shared by the metrics (and by later calls); the
        # BLAS calls are small (an (n + 1)-wide block each), so they run on one thread: several
        # threads would wait for each other at every call (50-120 s instead of 3-5 s on a busy
        # 2-core machine for the MovieLens case); the values are the same
        with _one_blas_thread(bool(todo)), \
                _Progress(len(sizes), "corrected estimator (BV)", progress, weight=sum(todo) * (n + 1) ** 2) as bar:
            for size in sizes:
                corr = _bv_cached(int(size), n, gamma, keys, table)
                at = (r_s[N == size] - 1).astype(np.int64)
                for j, c in enumerate(corr):
                    tot[j] += float(c[at].sum())
                bar.advance()
        corrected = [x / len(r_s) for x in tot]
    values: dict[tuple[str, str], float] = {}
    sigs: dict[tuple[str, str], str] = {}
    base = signature_text(("protocol", "sampled"), ("n", n), ("seed", seed), ("ties", ties),
                          ("exclude", "given" if a.exclude is not None else "none"), ("rel", "all" if rel is None else _render_number(rel)))
    for j, (spec, _, _) in enumerate(a.metrics):
        fn = fns[j]
        for est in a.estimators:
            if est == "uncorrected":
                v = float(fn(r_s).mean())
            elif est == "full":
                v = float(fn(r_f).mean())
            else:
                v = corrected[j]
            values[(spec, est)] = v
            extra = [("gamma", format(gamma, "g"))] if est == "bv" else []
            sigs[(spec, est)] = signature_text(spec, base, ("estimator", est), *extra, ("v", __version__))
    return SampledResults(values, sigs, len(r_s), {"sampled_rank": r_s, "full_rank": r_f})


def _one_blas_thread(on: bool) -> Any:
    """A context that runs the BLAS libraries on one thread (``threadpoolctl``): the many small
    calls of the correction do not wait on each other, and the last bits of a value do not
    depend on the machine's thread count."""
    import contextlib

    if on:
        from threadpoolctl import threadpool_limits

        return threadpool_limits(limits=1, user_api="blas")
    return contextlib.nullcontext()


#: work (cells of the tables summed, ~N (n + 1)^2 per candidate-set size) from which a
#: corrected estimator shows a progress bar by default (about a second on one core)
_PROGRESS_WORK = 1 << 31


class _Progress:
    """A rich progress bar on stderr, only when asked (``show``) or, by default, when stderr
    is a terminal and the work is long; nothing otherwise (not even a rich import)."""

    def __init__(self, total: int, text: str, show: bool | None, *, weight: int = 0) -> None:
        import sys

        if show is None:
            show = weight >= _PROGRESS_WORK and total > 1 and sys.stderr.isatty()
        self.bar: Any = None
        if show:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                console=Console(stderr=True), transient=True)
            self.task = self.bar.add_task(text, total=total)

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


__all__ = ["sampled_evaluate", "SampledResults", "bv_correction", "rank_distribution"]
