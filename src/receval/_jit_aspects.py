"""The compiled greedy ideals of α-nDCG and αβ-nDCG (numba; imported only by the loader of
:mod:`receval.metrics.aspects`, which sets the cache directory first).

One user at a time (users in a fixed number of parts, in parallel: every user writes only its
own places, so the arrays never depend on the number of threads), :func:`greedy_ideals` does
what the numpy path does in :func:`receval.metrics.aspects._order_by_tie_key`,
``_greedy_ideal`` and ``_resolve_ambiguous``, with the same floating point operations in the
same order:

* the label-free tie key κ of every candidate (``_tie_keys``: the same SplitMix64 sums, modulo
  2^64);
* the candidates grouped in classes of equal content (categories, and P for αβ-nDCG): the
  candidates of one class are interchangeable, so each class's gain is computed once;
* the greedy: at each rank the classes of the largest gain, among them those of the largest
  key; when several such classes remain (equal gain and key, different content), every
  choice is followed and the ideal is the largest DCG over the choices (``_ideal_search``).
  A gain's terms are folded in ascending order of their values (``_fold_sorted``), each state
  multiplied pick by pick, the DCG summed rank by rank from 0.

Only called when every gain can only fall and stays finite (α in [0, 1]; αβ: every P and every
``P γ`` in [0, 1]), where the numpy path resolves exactly the users whose tied choices may lead
to different ideals and proves the others' greedy equal to every choice. A user whose choices
grow past ``budget`` steps is flagged and left to the numpy path.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: the parts users are split into (fixed: the arrays never depend on the number of threads)
PARTS = 64

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True, inline="always")
def _mix(x, salt):  # pragma: no cover - compiled
    """SplitMix64's finaliser of ``x + salt`` (uint64, wrapping), as ``aspects._mix``."""
    z = x + salt
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _gain(buf, cs, ce, tcat, tpg, st, ab):  # pragma: no cover - compiled
    """The gain of a candidate whose triples are ``cs .. ce - 1`` at the state row ``st``:
    α: the sum of the states, αβ: ``1 - prod(1 - (P γ) s)``, the terms in ascending order."""
    d = ce - cs
    for i in range(d):
        s = st[tcat[cs + i]]
        v = 1.0 - tpg[cs + i] * s if ab else s
        # insertion sort, ascending
        h = i
        while h > 0 and buf[h - 1] > v:
            buf[h] = buf[h - 1]
            h -= 1
        buf[h] = v
    g = buf[0]
    if ab:
        for i in range(1, d):
            g *= buf[i]
        return 1.0 - g
    for i in range(1, d):
        g += buf[i]
    return g


@njit(cache=True, nogil=True)
def _user(u, a, b, ci, cp, cpbits, ab, indptr, indices, C, gmode, gdense, gkeys, gvals, oma, disc, k,
          budget, loc, keys_out):  # pragma: no cover - compiled
    """The greedy ideal DCG of user ``u`` (candidates ``a .. b - 1``); returns (value, ok): ok
    False when the choices grew past ``budget`` steps. Writes the candidates' tie keys."""
    n = b - a
    # the user's triples (candidate, category): local category numbers, in the candidates' order
    T = 0
    for d in range(n):
        it = ci[a + d]
        T += indptr[it + 1] - indptr[it]
    tst = np.empty(n + 1, np.int64)
    tcat = np.empty(T, np.int64)
    tpg = np.zeros(T, np.float64)
    cats = np.empty(T, np.int64)
    L = 0
    pos = 0
    dmax = 1
    for d in range(n):
        tst[d] = pos
        it = ci[a + d]
        dmax = max(dmax, indptr[it + 1] - indptr[it])
        for t in range(indptr[it], indptr[it + 1]):
            c = indices[t]
            if loc[c] < 0:
                loc[c] = L
                cats[L] = c
                L += 1
            tcat[pos] = loc[c]
            if ab:
                tpg[pos] = _gamma_at(u, c, C, gmode, gdense, gkeys, gvals) * cp[a + d]
            pos += 1
    tst[n] = pos
    for i in range(L):
        loc[cats[i]] = -1
    # tie keys (aspects._tie_keys): m_c, h1, b_c, kappa
    cnt = np.zeros(L, np.int64)
    for t in range(T):
        cnt[tcat[t]] += 1
    h1 = np.empty(n, np.uint64)
    for d in range(n):
        s = np.uint64(0)
        for t in range(tst[d], tst[d + 1]):
            s += _mix(np.uint64(cnt[tcat[t]]), np.uint64(1))
        if ab:
            s += _mix(cpbits[a + d], np.uint64(4))
        h1[d] = s
    bb = np.zeros(L, np.uint64)
    for d in range(n):
        hm = _mix(h1[d], np.uint64(2))
        for t in range(tst[d], tst[d + 1]):
            bb[tcat[t]] += hm
    key = np.empty(n, np.uint64)
    for d in range(n):
        s = np.uint64(0)
        for t in range(tst[d], tst[d + 1]):
            s += _mix(bb[tcat[t]], np.uint64(3))
        key[d] = s + _mix(h1[d], np.uint64(5))
        keys_out[a + d] = key[d]
    # classes of equal content (categories, and P): a hash table of content hashes, each match
    # confirmed on the categories and P
    size = 4
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, np.int64)
    crep = np.empty(n, np.int64)  # a class's representative candidate
    cmult = np.zeros(n, np.int64)
    ncls = 0
    for d in range(n):
        it = ci[a + d]
        hsh = np.uint64(0x9E3779B97F4A7C15)
        for t in range(indptr[it], indptr[it + 1]):
            hsh = _mix(hsh ^ np.uint64(indices[t]), np.uint64(7))
        if ab:
            hsh = _mix(hsh ^ cpbits[a + d], np.uint64(9))
        s = hsh & mask
        while True:
            r = table[s]
            if r < 0:
                table[s] = ncls
                crep[ncls] = d
                cmult[ncls] = 1
                ncls += 1
                break
            e = crep[r]
            ie = ci[a + e]
            same = indptr[ie + 1] - indptr[ie] == indptr[it + 1] - indptr[it]
            if same and ab:
                same = cpbits[a + e] == cpbits[a + d]
            if same:
                for t in range(indptr[it + 1] - indptr[it]):
                    if indices[indptr[it] + t] != indices[indptr[ie] + t]:
                        same = False
                        break
            if same:
                cmult[r] += 1
                break
            s = (s + np.uint64(1)) & mask
    # the greedy, every choice among tied classes of different content followed (depth-first)
    kd = min(k, n)
    S = np.empty((kd + 1, L), np.float64)
    S[0, :] = 1.0
    M = np.empty((kd + 1, ncls), np.int64)
    M[0, :] = cmult[:ncls]
    ACC = np.zeros(kd + 1, np.float64)
    CH = np.empty((max(kd, 1), ncls), np.int64)
    NCH = np.zeros(max(kd, 1), np.int64)
    PTR = np.zeros(max(kd, 1), np.int64)
    GM = np.zeros(max(kd, 1), np.float64)
    gains = np.empty(ncls, np.float64)
    buf = np.empty(dmax, np.float64)
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
            gmax = -np.inf
            for c in range(ncls):
                if M[j, c] > 0:
                    d = crep[c]
                    g = _gain(buf, tst[d], tst[d + 1], tcat, tpg, S[j], ab)
                    gains[c] = g
                    if g > gmax:
                        gmax = g
            kmax = np.uint64(0)
            found = False
            for c in range(ncls):
                if M[j, c] > 0 and gains[c] == gmax:
                    kc = key[crep[c]]
                    if not found or kc > kmax:
                        kmax = kc
                        found = True
            nt = 0
            for c in range(ncls):
                if M[j, c] > 0 and gains[c] == gmax and key[crep[c]] == kmax:
                    CH[j, nt] = c
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
        c = CH[j, PTR[j]]
        PTR[j] += 1
        d = crep[c]
        mult = 1.0 - cp[a + d] if ab else oma
        S[j + 1, :] = S[j, :]
        for t in range(tst[d], tst[d + 1]):
            S[j + 1, tcat[t]] = S[j + 1, tcat[t]] * mult
        M[j + 1, :] = M[j, :]
        M[j + 1, c] -= 1
        ACC[j + 1] = ACC[j] + GM[j] * disc[j]
        j += 1
        expand = True
    return best, True


@njit(cache=True, nogil=True, parallel=True)
def greedy_ideals(coff, ci, cp, cpbits, ab, indptr, indices, C, gmode, gdense, gkeys, gvals, oma, disc, k,
                  budget, idcg, ok, keys_out):  # pragma: no cover - compiled
    """The greedy ideal DCG@k of every user (candidates ``coff[u] .. coff[u+1] - 1``: items
    ``ci``, for αβ-nDCG (``ab``) their P ``cp`` and its bits ``cpbits``) into ``idcg``; ``ok[u]``
    False for a user left to the numpy path (its choices grew past ``budget`` steps);
    ``keys_out``: the candidates' tie keys."""
    U = coff.shape[0] - 1
    for p in prange(PARTS):
        u0 = p * U // PARTS
        u1 = (p + 1) * U // PARTS
        loc = np.full(C, -1, np.int64)
        for u in range(u0, u1):
            a, b = coff[u], coff[u + 1]
            if a == b:
                idcg[u] = 0.0
                ok[u] = True
                continue
            v, good = _user(u, a, b, ci, cp, cpbits, ab, indptr, indices, C, gmode, gdense, gkeys, gvals, oma,
                            disc, k, budget, loc, keys_out)
            idcg[u] = v
            ok[u] = good
