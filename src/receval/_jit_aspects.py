"""The compiled greedy ideals of α-nDCG and αβ-nDCG (numba; imported only by the loader of
:mod:`receval.metrics.aspects` through :func:`receval._numba.load`, which sets the cache
directory first).

One user at a time (users in a fixed number of parts, in parallel: every user writes only its
own places, so the arrays never depend on the number of threads), :func:`greedy_ideals` does
what the numpy path does in :func:`receval.metrics.aspects._order_by_tie_key`,
``_greedy_ideal`` and ``_resolve_ambiguous``, with the same floating point operations in the
same order:

* the candidates grouped in classes of equal content (categories, and P for αβ-nDCG): the
  candidates of one class are interchangeable, so each class's gain is computed once;
* the greedy, lazily: gains only fall, so a class's last gain bounds its gain now, and only the
  classes of the largest bound are computed again (each gain exactly as the numpy kernels: the
  same picks and sums). At each rank the classes of the largest gain, among them those of the
  largest label-free tie key κ (``_tie_keys``: the same SplitMix64 sums, modulo 2^64; computed
  for a user only once two of its classes tie on gain at the top);
* when several classes of different content remain (equal gain and key) and they are not
  interchangeable by ``_ideal_search``'s rule (the same shared categories, the private ones
  equal up to their state and P γ), :func:`_search` follows every choice, depth-first, and the
  ideal is the largest DCG over the choices (``_ideal_search``). A gain's terms are folded in
  ascending order of their values (``_fold_sorted``), each state multiplied pick by pick, the
  DCG summed rank by rank from 0.

With ``side``, the same pass computes each user's run DCG (:func:`_side`: α-nDCG's and
αβ-nDCG's rank loops, as ``aspects._alpha_run_dcg`` and ``aspects._run_dcg_blocks``) and, for
αβ-nDCG, its γ from its truth rows (as ``aspects._gamma``: the row sums in numpy's pairwise
order, :func:`_pairwise`), so that nothing per user is left to numpy but the candidates.

Only called when every gain can only fall and stays finite (α in [0, 1]; αβ: every P and every
``P γ`` in [0, 1]), where the numpy path resolves exactly the users whose tied choices may lead
to different ideals and proves the others' greedy equal to every choice. A user whose choices
grow past ``budget`` steps, or whose search would need more than ``max_cells`` cells per level
array, is flagged and left to the numpy path.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from numba import njit, prange

#: the parts users are split into (fixed: the arrays never depend on the number of threads)
PARTS = 64

#: (candidate, category) triples a part's scratch is sized for without counting them (the most
#: candidates of a user times the most categories of an item); beyond, the part's own are counted
SCRATCH_CELLS = 1 << 16

#: up to this many categories :func:`_side` sums a user's γ row dense (else its nonzero places)
DENSE_GAMMA = 64

#: the per-user functions (:func:`_side`, :func:`_user`, :func:`_search` and what they call) are
#: compiled without numba's reference counting (``_nrt=False``): they allocate nothing, and the
#: arrays they are given live as long as :func:`greedy_ideals`; counted, each array passed or
#: unpacked per user cost two atomic operations (30% of the kernel's time on one thread, perf).
#: A function they call inherits the flag unless it sets its own (``_nrt=True`` where it allocates)
_uncounted: Any = cast(Any, njit)(cache=True, nogil=True, _nrt=False)
#: a function that allocates, called from them (``_nrt`` not in numba's typed signature: cast)
_counted: Any = cast(Any, njit)(cache=True, nogil=True, _nrt=True)

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def _mix(x, salt):  # pragma: no cover - compiled
    """SplitMix64's finaliser of ``x + salt`` (uint64, wrapping), as ``aspects._mix``."""
    z = x + salt
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@_uncounted
def _gamma_at(u, c, C, gmode, gdense, gkeys, gvals):  # pragma: no cover - compiled
    """γ of the pair (user ``u``, category ``c``): dense ``[U * C]`` (``gmode`` 0) or the sorted
    keys ``u * C + c`` of the pairs that have one (``gmode`` 1; 0 elsewhere)."""
    key = u * C + c
    if gmode == 0:
        return gdense[key]
    n = gkeys.shape[0]
    if n == 0:
        return 0.0
    i = np.searchsorted(gkeys, key)
    if i < n and gkeys[i] == key:
        return gvals[i]
    return 0.0


@_uncounted
def _pairwise_leaf(cat, val, p0, p1, lo, n):  # pragma: no cover - compiled
    """:func:`_pairwise` of a block of ``n <= 128`` places (numpy: eight accumulators, then the
    rest one by one; fewer than 8 places: one by one from 0)."""
    if p0 == p1:
        return 0.0
    if n < 8:
        res = 0.0
        for p in range(p0, p1):
            res += val[p]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    body = n - n % 8
    p = p0
    while p < p1 and cat[p] - lo < body:
        j = (cat[p] - lo) % 8
        v = val[p]
        if j == 0:
            r0 += v
        elif j == 1:
            r1 += v
        elif j == 2:
            r2 += v
        elif j == 3:
            r3 += v
        elif j == 4:
            r4 += v
        elif j == 5:
            r5 += v
        elif j == 6:
            r6 += v
        else:
            r7 += v
        p += 1
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while p < p1:
        res += val[p]
        p += 1
    return res


@_counted  # (allocates: reference counted, although :func:`_side` is not)
def _pairwise(cat, val, m, C):  # pragma: no cover - compiled
    """numpy's pairwise sum (``add.reduce`` of a contiguous float64 row of ``C`` places) of the
    row whose nonzero entries are ``val[:m]`` at the ascending places ``cat[:m]``: the same
    additions in the same tree (blocks of at most 128 places, halves rounded down to a multiple
    of 8 above), the zero terms left out (adding +0.0 to a sum of terms >= +0.0 changes
    nothing). Not recursive (numba's cache and recursion do not mix): an explicit stack."""
    if C <= 128:
        return _pairwise_leaf(cat, val, 0, m, 0, C)
    depth = 4
    x = C
    while x > 128:
        x //= 2
        depth += 1
    lo_ = np.empty(depth, np.int64)
    n_ = np.empty(depth, np.int64)
    p0_ = np.empty(depth, np.int64)
    p1_ = np.empty(depth, np.int64)
    q_ = np.empty(depth, np.int64)
    st_ = np.zeros(depth, np.int64)
    left_ = np.empty(depth, np.float64)
    lo_[0], n_[0], p0_[0], p1_[0], st_[0] = 0, C, 0, m, 0
    top = 1
    ret = 0.0
    while top > 0:
        f = top - 1
        lo, n = lo_[f], n_[f]
        n2 = n // 2
        n2 -= n2 % 8
        if st_[f] == 0:
            if p0_[f] == p1_[f] or n <= 128:
                ret = _pairwise_leaf(cat, val, p0_[f], p1_[f], lo, n)
                top -= 1
                continue
            q = p0_[f]
            while q < p1_[f] and cat[q] < lo + n2:
                q += 1
            q_[f] = q
            st_[f] = 1
            lo_[top], n_[top], p0_[top], p1_[top], st_[top] = lo, n2, p0_[f], q, 0
            top += 1
        elif st_[f] == 1:
            left_[f] = ret
            st_[f] = 2
            lo_[top], n_[top], p0_[top], p1_[top], st_[top] = lo + n2, n - n2, q_[f], p1_[f], 0
            top += 1
        else:
            ret = left_[f] + ret
            top -= 1
    return ret


@_counted  # (allocates: reference counted, although :func:`_side` is not)
def _sort_by_cat(ucat, unum, m):  # pragma: no cover - compiled
    """``ucat[:m]`` in ascending order, ``unum[:m]`` beside them (more than 32 categories: an
    argsort, which allocates; :func:`_side`, which may not, calls it)."""
    o = np.argsort(ucat[:m])
    cs = ucat[:m][o]
    vs = unum[:m][o]
    ucat[:m] = cs
    unum[:m] = vs


@_uncounted
def _side(u, ab, lo, n, items, P, rel, rows, lt, lr, lrel, pa, pb, prmax, indptr, indices, disc, oma, gk, toff,
          titems, trat, C, loc, ucat, unum, gl, sl, buf):  # pragma: no cover - compiled
    """User ``u``'s run DCG (returned), and with ``gk`` its γ into ``gl`` (dense over the
    categories, 0 elsewhere; the caller clears it), as the numpy path computes them:

    * γ (``aspects._gamma``): per category the ratings ``trat`` of the user's truth rows that
      hold it, summed from 0 in row order (``bincount``), divided by their row sum over the
      categories (:func:`_pairwise`, numpy's order), 0 where that sum is 0;
    * αβ (``ab``): per rank the factors ``1 - (γ P) s`` of the item's categories multiplied in
      ascending order, ``s *= 1 - P`` (``aspects._run_dcg_blocks``); α: the relevant slots' weights
      ``w`` summed in ascending order, ``w *= 1 - α``; each gain times the discount, summed from
      rank 1. ``sl``: the run's state, 1 everywhere between calls.

    The user's list is the slots ``lo .. lo + n - 1`` of ``items`` (-1: padding), slot ``lo + j``
    at rank ``j + 1``. Its P (αβ) and relevance (α) are per slot in ``P`` and ``rel``, or with
    ``rows`` read through each slot's truth row ``lt`` (-1: none): P = ``pa`` for an unrated
    item, else ``pb * (lr[t] / prmax)`` (``aspects._p_rated``); relevant iff ``lrel[t]``."""
    if gk and C <= DENSE_GAMMA:  # few categories: the dense row itself, summed as numpy sums it
        for t in range(toff[u], toff[u + 1]):
            it = titems[t]
            r = trat[t]
            for q in range(indptr[it], indptr[it + 1]):
                gl[indices[q]] += r
        if C < 8:
            res = 0.0
            for c in range(C):
                res += gl[c]
        else:
            r0, r1, r2, r3, r4, r5, r6, r7 = gl[0], gl[1], gl[2], gl[3], gl[4], gl[5], gl[6], gl[7]
            body = C - C % 8
            for i in range(8, body, 8):
                r0 += gl[i]
                r1 += gl[i + 1]
                r2 += gl[i + 2]
                r3 += gl[i + 3]
                r4 += gl[i + 4]
                r5 += gl[i + 5]
                r6 += gl[i + 6]
                r7 += gl[i + 7]
            res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            for i in range(body, C):
                res += gl[i]
        den = 0.0 + res
        if den > 0:  # every place, as numpy divides the row (0 / den = 0)
            for c in range(C):
                gl[c] = gl[c] / den
    elif gk:
        m = 0
        for t in range(toff[u], toff[u + 1]):
            it = titems[t]
            r = trat[t]
            for q in range(indptr[it], indptr[it + 1]):
                c = indices[q]
                x = loc[c]
                if x < 0:
                    x = m
                    loc[c] = m
                    ucat[m] = c
                    unum[m] = 0.0
                    m += 1
                unum[x] += r
        for i in range(m):
            loc[ucat[i]] = -1
        if m > 1:  # ascending categories
            if m <= 32:
                for i in range(1, m):
                    a, b = ucat[i], unum[i]
                    h = i
                    while h > 0 and ucat[h - 1] > a:
                        ucat[h] = ucat[h - 1]
                        unum[h] = unum[h - 1]
                        h -= 1
                    ucat[h] = a
                    unum[h] = b
            else:
                _sort_by_cat(ucat, unum, m)
        den = 0.0 + _pairwise(ucat, unum, m, C)
        for i in range(m):
            gl[ucat[i]] = unum[i] / den if den > 0 else 0.0
    acc = 0.0
    for j in range(n):
        it = items[lo + j]
        if it < 0 or not (ab or _relevant(lo + j, rows, rel, lt, lrel)):
            continue
        e0, e1 = indptr[it], indptr[it + 1]
        d = e1 - e0
        if d == 0:
            continue
        p = _slot_p(lo + j, rows, P, lt, lr, pa, pb, prmax) if ab else 0.0
        om = 1.0 - p
        for i in range(d):
            c = indices[e0 + i]
            s = sl[c]
            if ab:
                v = 1.0 - gl[c] * p * s
                sl[c] = s * om
            else:
                v = s
                sl[c] = s * oma
            _insert(buf, i, v)
        acc += _fold(buf, d, ab) * disc[j]
    if C <= DENSE_GAMMA:  # few categories: every state back to 1
        for c in range(C):
            sl[c] = 1.0
    else:
        for j in range(n):
            it = items[lo + j]
            if it >= 0 and (ab or _relevant(lo + j, rows, rel, lt, lrel)):
                for q in range(indptr[it], indptr[it + 1]):
                    sl[indices[q]] = 1.0
    return acc


@njit(cache=True, nogil=True, inline="always")
def _slot_p(x, rows, P, lt, lr, pa, pb, prmax):  # pragma: no cover - compiled
    """P(a|u,i) of slot ``x`` (:func:`_side`)."""
    if not rows:
        return P[x]
    t = lt[x]
    return pa if t < 0 else pb * (lr[t] / prmax)


@njit(cache=True, nogil=True, inline="always")
def _relevant(x, rows, rel, lt, lrel):  # pragma: no cover - compiled
    """Whether slot ``x`` is relevant (:func:`_side`)."""
    if not rows:
        return rel[x]
    t = lt[x]
    return t >= 0 and lrel[t]


@njit(cache=True, nogil=True, inline="always")
def _gain(buf, cs, ce, tcat, tpg, st, s0, ab):  # pragma: no cover - compiled
    """The gain of a candidate whose triples are ``cs .. ce - 1`` at the states ``st[s0 + ...]``:
    α: the sum of the states, αβ: ``1 - prod(1 - (P γ) s)``, the terms in ascending order."""
    d = ce - cs
    if d == 1:
        s = st[s0 + tcat[cs]]
        return 1.0 - (1.0 - tpg[cs] * s) if ab else s
    for i in range(d):
        s = st[s0 + tcat[cs + i]]
        _insert(buf, i, 1.0 - tpg[cs + i] * s if ab else s)
    return _fold(buf, d, ab)


@njit(cache=True, nogil=True, inline="always")
def _insert(buf, i, v):  # pragma: no cover - compiled
    """Place ``v`` among the ascending ``buf[:i]`` (one step of an insertion sort)."""
    h = i
    while h > 0 and buf[h - 1] > v:
        buf[h] = buf[h - 1]
        h -= 1
    buf[h] = v


@njit(cache=True, nogil=True, inline="always")
def _fold(buf, d, ab):  # pragma: no cover - compiled
    """The gain of the ascending terms ``buf[:d]``, folded in that order: α: their sum, αβ:
    ``1 - prod(terms)``."""
    g = buf[0]
    if ab:
        for i in range(1, d):
            g *= buf[i]
        return 1.0 - g
    for i in range(1, d):
        g += buf[i]
    return g


@_uncounted
def _sorted_pairs(x, y, n):  # pragma: no cover - compiled
    """Sort the pairs ``(x[i], y[i])``, ``i < n``, in place (insertion sort, lexicographic)."""
    for i in range(1, n):
        a, b = x[i], y[i]
        h = i
        while h > 0 and (x[h - 1] > a or (x[h - 1] == a and y[h - 1] > b)):
            x[h] = x[h - 1]
            y[h] = y[h - 1]
            h -= 1
        x[h] = a
        y[h] = b


@_uncounted
def _interchangeable(i, e, M, mo, S, so, cs0, cs1, tcat, tpg, cats, aoff, adj, pbi, pbe, fb, ib):  # pragma: no cover
    """Whether tied classes ``i`` and ``e`` lead to the same ideal (``_ideal_search``'s rule):
    the same multiplicity (``M[mo + ...]``), the same P (bits ``pbi``, ``pbe``), the same
    shared categories (held by another class still to pick) and the same private ones up to
    their (state, P γ): swapping the private categories maps the state onto itself. ``fb``,
    ``ib``: scratch of at least 4 and 2 times the largest number of categories of a candidate."""
    if M[mo + i] != M[mo + e] or pbi != pbe:
        return False
    D = fb.shape[0] // 4
    ns0, ns1, np0, np1 = 0, 0, 0, 0
    for side in range(2):
        c = i if side == 0 else e
        ns, npv = 0, 0
        for t in range(cs0[c], cs1[c]):
            lc = tcat[t]
            shared = False
            for q in range(aoff[lc], aoff[lc + 1]):
                x = adj[q]
                if x != c and M[mo + x] > 0:
                    shared = True
                    break
            if shared:
                ib[side * D + ns] = cats[lc]
                ns += 1
            else:
                fb[side * 2 * D + npv] = S[so + lc]
                fb[side * 2 * D + D + npv] = tpg[t]
                npv += 1
        if side == 0:
            ns0, np0 = ns, npv
        else:
            ns1, np1 = ns, npv
    if ns0 != ns1 or np0 != np1:
        return False
    for q in range(ns0):  # the shared categories, ascending on both sides
        if ib[q] != ib[D + q]:
            return False
    n = np0
    _sorted_pairs(fb[0:D], fb[D:2 * D], n)
    _sorted_pairs(fb[2 * D:3 * D], fb[3 * D:4 * D], n)
    for q in range(n):
        if fb[q] != fb[2 * D + q] or fb[D + q] != fb[3 * D + q]:
            return False
    return True


@_uncounted
def _tie_keys(a, n, L, tst, tcat, cnt, h1, bb, key, ab, cpbits, keys_out):  # pragma: no cover - compiled
    """The tie key of each of the user's ``n`` candidates into ``key`` (and ``keys_out`` when it is
    not empty), as ``aspects._tie_keys``: m_c (``cnt``), h1, b_c, kappa."""
    for d in range(n):
        s = np.uint64(0)
        for t in range(tst[d], tst[d + 1]):
            s += _mix(np.uint64(cnt[tcat[t]]), np.uint64(1))
        if ab:
            s += _mix(cpbits[a + d], np.uint64(4))
        h1[d] = s
    for i in range(L):
        bb[i] = np.uint64(0)
    for d in range(n):
        hm = _mix(h1[d], np.uint64(2))
        for t in range(tst[d], tst[d + 1]):
            bb[tcat[t]] += hm
    for d in range(n):
        s = np.uint64(0)
        for t in range(tst[d], tst[d + 1]):
            s += _mix(bb[tcat[t]], np.uint64(3))
        key[d] = s + _mix(h1[d], np.uint64(5))
        if keys_out.shape[0]:
            keys_out[a + d] = key[d]


@njit(cache=True, nogil=True, inline="always")
def _current(c, gat, cs0, cs1, tcat, cst):  # pragma: no cover - compiled
    """Whether class ``c``'s gain was computed (pick count ``gat[c]``) after the last pick that
    changed one of its categories (``cst``)."""
    g = gat[c]
    for t in range(cs0[c], cs1[c]):
        if cst[tcat[t]] >= g:
            return False
    return True


@_uncounted
def _adjacency(ncls, crep, tst, tcat, L, aoff, adj):  # pragma: no cover - compiled
    """The classes that hold each local category: ``adj[aoff[l] .. aoff[l + 1] - 1]``, ascending."""
    for i in range(L + 1):
        aoff[i] = 0
    for c in range(ncls):
        d = crep[c]
        for t in range(tst[d], tst[d + 1]):
            aoff[tcat[t] + 1] += 1
    for i in range(L):
        aoff[i + 1] += aoff[i]
    for c in range(ncls):
        d = crep[c]
        for t in range(tst[d], tst[d + 1]):
            adj[aoff[tcat[t]]] = c
            aoff[tcat[t]] += 1
    for i in range(L, 0, -1):
        aoff[i] = aoff[i - 1]
    aoff[0] = 0


@_uncounted  # not inlined: inlining saved ~0.1 s CPU at 100k x 20 but made the cold compile ~2.5x longer (20 -> 51 s)
def _user(u, a, b, ci, cp, cpbits, ab, indptr, indices, C, gmode, gdense, gkeys, gvals, oma, disc, k,
          loc, keys_out, W):  # pragma: no cover - compiled
    """The greedy ideal DCG of user ``u`` (candidates ``a .. b - 1``) when no two classes of
    different content tie: returns (value, 0, L, ncls); else (0, 1, L, ncls) and the user's
    triples and classes in ``W`` for :func:`_search` (``L`` categories, ``ncls`` classes).
    Writes the candidates' tie keys when ``keys_out`` is not empty. ``W``: the scratch arrays of
    the part (:func:`_scratch`), large enough for this user."""
    (tst, tcat, tpg, cats, cnt, h1, bb, key, table, crep, cmult, S, M, G, buf, hit,
     gat, alive, aoff, adj, ckey, cs0, cs1, fb, ib, cst) = W
    n = b - a
    # the user's triples (candidate, category): local category numbers, in the candidates' order;
    # each candidate's content hash (its categories, and P) into ``h1`` (free until the tie keys)
    L = 0
    pos = 0
    for d in range(n):
        tst[d] = pos
        it = ci[a + d]
        hsh = np.uint64(0)
        for t in range(indptr[it], indptr[it + 1]):
            c = indices[t]
            hsh = (hsh + np.uint64(c + 1)) * _GOLD
            if loc[c] < 0:
                loc[c] = L
                cats[L] = c
                cnt[L] = 0
                L += 1
            lc = loc[c]
            tcat[pos] = lc
            cnt[lc] += 1
            if ab:
                if gmode == 0:
                    g = gdense[u * C + c]
                elif gmode == 2:  # the user's own γ, dense over the categories (:func:`_side`)
                    g = gdense[c]
                else:
                    g = _gamma_at(u, c, C, gmode, gdense, gkeys, gvals)
                tpg[pos] = g * cp[a + d]
            pos += 1
        if ab:
            hsh ^= cpbits[a + d]
        h1[d] = _mix(hsh, np.uint64(7))
    tst[n] = pos
    for i in range(L):
        loc[cats[i]] = -1
    # classes of equal content (categories, and P): a hash table of the content hashes, each match
    # confirmed on the categories (local numbers: one to one with the categories) and P
    size = 4
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    for i in range(size):
        table[i] = -1
    ncls = 0
    for d in range(n):
        hd = h1[d]
        s = hd & mask
        while True:
            r = table[s]
            if r < 0:
                table[s] = ncls
                crep[ncls] = d
                cmult[ncls] = 1
                ncls += 1
                break
            e = crep[r]
            same = h1[e] == hd and tst[e + 1] - tst[e] == tst[d + 1] - tst[d]
            if same and ab:
                same = cpbits[a + e] == cpbits[a + d]
            if same:
                for t in range(tst[d + 1] - tst[d]):
                    if tcat[tst[d] + t] != tcat[tst[e] + t]:
                        same = False
                        break
            if same:
                cmult[r] += 1
                break
            s = (s + np.uint64(1)) & mask
    for c in range(ncls):
        d = crep[c]
        cs0[c] = tst[d]
        cs1[c] = tst[d + 1]
    # the tie keys only decide between equal gains: computed when two classes first tie (or asked)
    keyed = keys_out.shape[0] > 0
    if keyed:
        _tie_keys(a, n, L, tst, tcat, cnt, h1, bb, key, ab, cpbits, keys_out)
        for c in range(ncls):
            ckey[c] = key[crep[c]]
    kd = min(k, n)
    # the greedy alone, while no two classes of different content tie (gain and key): gains only
    # fall, so a class's last gain bounds its gain now, and only the classes of the largest
    # bounds are computed again (each exactly as below: the same picks and sums). A class's gain
    # is current when it was computed (``gat``, a pick count) after the last pick that changed any
    # of its categories (``cst``); the classes around a category (``aoff``, ``adj``) are made
    # only when two classes tie
    for i in range(L):
        S[i] = 1.0
        cst[i] = 0
    na = ncls
    pos = table  # free once the classes are found: each class's place in ``alive``
    for c in range(ncls):
        # every state is 1: α's gain is the number of categories (a sum of ones, exact)
        G[c] = _gain(buf, cs0[c], cs1[c], tcat, tpg, S, 0, ab) if ab else float(cs1[c] - cs0[c])
        gat[c] = 1
        alive[c] = c
        pos[c] = c
        M[c] = cmult[c]
    now = 1
    adjd = False
    acc = 0.0
    plain = True
    for j in range(kd):
        while True:  # the largest (bound, key), computed again until it is current; eq: others equal to it
            bi = alive[0]
            gm = G[bi]
            at = 1
            eq = 0
            if keyed:  # the largest bound, the largest key at it (the first in ``alive``), the others of it
                for x in range(1, na):  # (selects, no branch)
                    c = alive[x]
                    g = G[c]
                    kc = ckey[c]
                    kb = ckey[bi]
                    gt = g > gm
                    ge = g == gm
                    better = gt | (ge & (kc > kb))
                    bi = c if better else bi
                    eq = 0 if better else eq + (ge & (kc == kb))
                    gm = g if gt else gm
            else:
                for x in range(1, na):  # (selects, no branch: a new largest is a coin toss)
                    c = alive[x]
                    g = G[c]
                    gt = g > gm
                    bi = c if gt else bi
                    at = 1 if gt else at + (g == gm)
                    gm = g if gt else gm
            if at > 1:  # a first tie on the bound: the keys decide from now on
                _tie_keys(a, n, L, tst, tcat, cnt, h1, bb, key, ab, cpbits, keys_out)
                for e in range(ncls):
                    ckey[e] = key[crep[e]]
                keyed = True
                for x in range(na):
                    c = alive[x]
                    if c != bi and G[c] == gm:
                        if ckey[c] > ckey[bi]:
                            bi = c
                            eq = 0
                        elif ckey[c] == ckey[bi]:
                            eq += 1
            if _current(bi, gat, cs0, cs1, tcat, cst):
                break
            G[bi] = _gain(buf, cs0[bi], cs1[bi], tcat, tpg, S, 0, ab)
            gat[bi] = now
        gmax = G[bi]
        kb = ckey[bi]
        if eq:
            if not adjd:
                _adjacency(ncls, crep, tst, tcat, L, aoff, adj)
                adjd = True
            for x in range(na):
                c = alive[x]
                if c != bi and G[c] == gmax and ckey[c] == kb:
                    if not _current(c, gat, cs0, cs1, tcat, cst):
                        G[c] = _gain(buf, cs0[c], cs1[c], tcat, tpg, S, 0, ab)
                        gat[c] = now
                    if G[c] == gmax and not _interchangeable(
                            c, bi, M, 0, S, 0, cs0, cs1, tcat, tpg, cats, aoff, adj,
                            cpbits[a + crep[c]] if ab else np.uint64(0), cpbits[a + crep[bi]] if ab else np.uint64(0),
                            fb, ib):
                        plain = False
                        break
            if not plain:
                break
        acc = acc + gmax * disc[j]
        d = crep[bi]
        mult = 1.0 - cp[a + d] if ab else oma
        for t in range(tst[d], tst[d + 1]):
            lc = tcat[t]
            S[lc] = S[lc] * mult
            cst[lc] = now
        now += 1
        M[bi] -= 1
        if M[bi] == 0:  # out of the alive classes: the last one takes its place
            last = alive[na - 1]
            alive[pos[bi]] = last
            pos[last] = pos[bi]
            na -= 1
    if not plain and not adjd:
        _adjacency(ncls, crep, tst, tcat, L, aoff, adj)
    if plain:
        return acc, 0, L, ncls
    if not keyed:  # (a tie is only found between keyed classes)
        _tie_keys(a, n, L, tst, tcat, cnt, h1, bb, key, ab, cpbits, keys_out)
    return 0.0, 1, L, ncls


@_uncounted
def _search(a, cp, cpbits, ab, oma, disc, budget, W, V, L, ncls, kd):  # pragma: no cover - compiled
    """The greedy ideal of the user :func:`_user` left in ``W`` (``L`` categories, ``ncls``
    classes, ``kd`` ranks), every choice among tied classes of different content followed
    (depth-first); ``V``: the levels' arrays (:func:`_levels`). Returns (value, ok): ok False
    when the choices grew past ``budget`` steps."""
    (tst, tcat, tpg, cats, cnt, h1, bb, key, table, crep, cmult, S0, M0, G0, buf, hit,
     gat, alive, aoff, adj, ckey, cs0, cs1, fb, ib, cst) = W
    S, M, G, ACC, CH, NCH, PTR, GM = V
    # every choice among tied classes of different content followed (depth-first);
    # level j: the states S[j * L ...], the multiplicities M[j * ncls ...], the gains G[j * ncls ...]
    # (a class's gain is computed again only when a state it reads changed), the DCG ACC[j]
    for i in range(L):
        S[i] = 1.0
    for c in range(ncls):
        M[c] = cmult[c]
    ACC[0] = 0.0
    best = -np.inf
    steps = 0
    j = 0
    expand = True
    while True:
        if expand:
            if j == kd:  # a leaf
                if ACC[j] > best or best == -np.inf:
                    best = ACC[j]
                j -= 1
                expand = False
                if j < 0:
                    break
                continue
            steps += 1
            if steps > budget:
                return 0.0, False
            sj = j * L
            mj = j * ncls
            if j > 0:  # the states the previous pick changed
                for i in range(L):
                    hit[i] = False
                dp = crep[CH[(j - 1) * ncls + PTR[j - 1] - 1]]
                for t in range(tst[dp], tst[dp + 1]):
                    hit[tcat[t]] = True
            gmax = -np.inf
            for c in range(ncls):
                if M[mj + c] > 0:
                    d = crep[c]
                    if j > 0:
                        stale = False
                        for t in range(tst[d], tst[d + 1]):
                            if hit[tcat[t]]:
                                stale = True
                                break
                    if j == 0 or stale:
                        g = _gain(buf, tst[d], tst[d + 1], tcat, tpg, S, sj, ab)
                    else:
                        g = G[mj - ncls + c]
                    G[mj + c] = g
                    if g > gmax:
                        gmax = g
            kmax = np.uint64(0)
            found = False
            for c in range(ncls):
                if M[mj + c] > 0 and G[mj + c] == gmax:
                    kc = key[crep[c]]
                    if not found or kc > kmax:
                        kmax = kc
                        found = True
            nt = 0
            for c in range(ncls):
                if M[mj + c] > 0 and G[mj + c] == gmax and key[crep[c]] == kmax:
                    dup = False
                    for q in range(nt):
                        e = CH[mj + q]
                        if _interchangeable(c, e, M, mj, S, sj, cs0, cs1, tcat, tpg, cats, aoff, adj,
                                            cpbits[a + crep[c]] if ab else np.uint64(0),
                                            cpbits[a + crep[e]] if ab else np.uint64(0), fb, ib):
                            dup = True
                            break
                    if not dup:
                        CH[mj + nt] = c
                        nt += 1
            NCH[j] = nt
            PTR[j] = 0
            GM[j] = gmax
        if PTR[j] == NCH[j]:  # every choice followed: back up
            j -= 1
            expand = False
            if j < 0:
                break
            continue
        c = CH[j * ncls + PTR[j]]
        PTR[j] += 1
        d = crep[c]
        mult = 1.0 - cp[a + d] if ab else oma
        sj = j * L
        for i in range(L):
            S[sj + L + i] = S[sj + i]
        for t in range(tst[d], tst[d + 1]):
            S[sj + L + tcat[t]] = S[sj + L + tcat[t]] * mult
        mj = j * ncls
        for i in range(ncls):
            M[mj + ncls + i] = M[mj + i]
        M[mj + ncls + c] -= 1
        ACC[j + 1] = ACC[j] + GM[j] * disc[j]
        j += 1
        expand = True
    return best, True


@njit(cache=True, nogil=True)
def _scratch(nmax, Tmax, dmax):  # pragma: no cover - compiled
    """The scratch arrays of :func:`_user` for users of at most ``nmax`` candidates, ``Tmax``
    (candidate, category) triples, ``dmax`` categories per candidate."""
    size = 4
    while size < 2 * nmax:
        size *= 2
    return (np.empty(nmax + 1, np.int64), np.empty(Tmax, np.int64), np.zeros(Tmax, np.float64),
            np.empty(Tmax, np.int64), np.empty(Tmax, np.int64), np.empty(nmax, np.uint64),
            np.empty(Tmax, np.uint64), np.empty(nmax, np.uint64), np.empty(size, np.int64),
            np.empty(nmax, np.int64), np.empty(nmax, np.int64), np.empty(Tmax, np.float64),
            np.empty(nmax, np.int64), np.empty(nmax, np.float64),
            np.empty(max(dmax, 1), np.float64), np.empty(Tmax, np.bool_),
            np.empty(nmax, np.int64), np.empty(nmax, np.int64), np.empty(Tmax + 1, np.int64), np.empty(Tmax, np.int64),
            np.empty(nmax, np.uint64), np.empty(nmax, np.int64), np.empty(nmax, np.int64),
            np.empty(4 * max(dmax, 1), np.float64), np.empty(2 * max(dmax, 1), np.int64), np.empty(Tmax, np.int64))


@njit(cache=True, nogil=True)
def _levels(nS, nM, kd):  # pragma: no cover - compiled
    """The arrays of :func:`_search`'s levels: ``nS`` states, ``nM`` multiplicities and gains
    (and choices), ``kd`` ranks."""
    return (np.empty(nS, np.float64), np.empty(nM, np.int64), np.empty(nM, np.float64), np.empty(kd + 1, np.float64),
            np.empty(nM, np.int64), np.empty(kd + 1, np.int64), np.empty(kd + 1, np.int64), np.empty(kd + 1, np.float64))


@njit(cache=True, nogil=True, parallel=True)
def greedy_ideals(coff, ci, cp, cpbits, ab, indptr, indices, C, gmode, gdense, gkeys, gvals, oma, disc, k,
                  budget, max_cells, idcg, ok, keys_out, side, items, P, rel, lstart, llen, lt, lr, lrel, pa, pb,
                  prmax, toff, titems, trat, dcg):  # pragma: no cover - compiled
    """The greedy ideal DCG@k of every user (candidates ``coff[u] .. coff[u+1] - 1``: items
    ``ci``, for αβ-nDCG (``ab``) their P ``cp`` and its bits ``cpbits``) into ``idcg``; ``ok[u]``
    False for a user left to the numpy path (its choices grew past ``budget`` steps, or its
    search would hold more than ``max_cells`` cells per array: ranks x classes or categories);
    ``keys_out``: the candidates' tie keys (when it is not empty).

    With ``side``, also the run DCG of every user into ``dcg`` (:func:`_side`: the lists
    ``items`` ``[U, k]`` flat, -1 past a list's end; αβ: their P ``P``; α: the relevant slots
    ``rel``; or, when ``lstart`` is not empty, the lists as rows: user ``u``'s list is the first
    ``k`` of its ``llen[u]`` slots from ``lstart[u]``, read through their truth rows ``lt``), and for αβ-nDCG with ``gmode`` 2 each user's γ from its truth rows (offsets
    ``toff``, items ``titems``, ratings ``trat``) rather than from ``gdense``/``gkeys``."""
    U = coff.shape[0] - 1
    gk = side and ab and gmode == 2
    rows = lstart.shape[0] > 0
    dall = 1  # the most categories of an item
    for it in range(indptr.shape[0] - 1):
        dall = max(dall, indptr[it + 1] - indptr[it])
    for p in prange(PARTS):
        u0 = p * U // PARTS
        u1 = (p + 1) * U // PARTS
        nmax = 1
        for u in range(u0, u1):
            nmax = max(nmax, coff[u + 1] - coff[u])
        Tmax, dmax = nmax * dall, dall  # the scratch's bound, unless that is large: the part's own
        if Tmax > SCRATCH_CELLS:
            Tmax, dmax = 1, 1
            for u in range(u0, u1):
                T = 0
                for x in range(coff[u], coff[u + 1]):
                    dg = indptr[ci[x] + 1] - indptr[ci[x]]
                    T += dg
                    dmax = max(dmax, dg)
                Tmax = max(Tmax, T)
        W = _scratch(nmax, Tmax, dmax)
        V = _levels(1, 1, 0)
        loc = np.full(C, -1, np.int64)
        gl = np.zeros(C if gk else 0, np.float64)
        sl = np.ones(C if side else 0, np.float64)
        ucat = np.empty(C if gk else 0, np.int64)
        unum = np.empty(C if gk else 0, np.float64)
        rbuf = np.empty(dall, np.float64)
        gsrc = gl if gk else gdense  # (chosen once: an array chosen per user is counted per user)
        for u in range(u0, u1):
            if side:
                lo, n = (lstart[u], min(k, llen[u])) if rows else (u * k, k)
                dcg[u] = _side(u, ab, lo, n, items, P, rel, rows, lt, lr, lrel, pa, pb, prmax, indptr, indices, disc,
                               oma, gk, toff, titems, trat, C, loc, ucat, unum, gl, sl, rbuf)
            a, b = coff[u], coff[u + 1]
            if a == b:
                idcg[u] = 0.0
                ok[u] = True
            else:
                v, status, L, ncls = _user(u, a, b, ci, cp, cpbits, ab, indptr, indices, C, gmode,
                                           gsrc, gkeys, gvals, oma, disc, k, loc, keys_out, W)
                good = True
                if status == 1:
                    kd = min(k, b - a)
                    nS, nM = (kd + 1) * L, (kd + 1) * ncls
                    if nS > max_cells or nM > max_cells:
                        good = False
                    else:
                        if V[0].shape[0] < nS or V[1].shape[0] < nM or V[3].shape[0] < kd + 1:
                            V = _levels(max(nS, V[0].shape[0]), max(nM, V[1].shape[0]), max(kd, V[3].shape[0] - 1))
                        v, good = _search(a, cp, cpbits, ab, oma, disc, budget, W, V, L, ncls, kd)
                idcg[u] = v
                ok[u] = good
            if gk and C <= DENSE_GAMMA:  # the user's γ cleared
                gl[:] = 0.0
            elif gk:
                for t in range(toff[u], toff[u + 1]):
                    it = titems[t]
                    for q in range(indptr[it], indptr[it + 1]):
                        gl[indices[q]] = 0.0
