"""The compiled kernels of :mod:`receval.kernels` (numba; imported only by its loader, which sets
the cache directory first). Every kernel is serial and deterministic: the same rows give the same
arrays whatever the machine."""

from __future__ import annotations

import numpy as np
from numba import njit

#: statuses of :func:`match`: the rows it cannot decide alone (the numpy path then takes the call)
OK, TRUTH_REPEAT, REC_REPEAT, TIE = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def group(codes, n_groups):  # pragma: no cover - compiled
    """The rows grouped by code, input order kept within a group (rows with code < 0 left out):
    two stable counting (radix) passes over the low and high half of the code's bits, so each
    pass writes to at most ~2^(bits/2) places at a time. Returns the first row of each group in
    ``rows`` (``starts``, n_groups + 1 entries) and the row indices grouped."""
    bits = 1
    while (1 << bits) < n_groups:
        bits += 1
    lo_bits = (bits + 1) // 2
    n_lo, n_hi = 1 << lo_bits, 1 << (bits - lo_bits)
    lo_mask = n_lo - 1
    starts = np.zeros(n_groups + 1, np.int64)
    c_lo = np.zeros(n_lo + 1, np.int64)
    for i in range(len(codes)):
        c = codes[i]
        if c >= 0:
            starts[c + 1] += 1
            c_lo[(c & lo_mask) + 1] += 1
    for g in range(n_groups):
        starts[g + 1] += starts[g]
    for g in range(n_lo):
        c_lo[g + 1] += c_lo[g]
    n = starts[n_groups]
    tmp = np.empty(n, np.int64)  # pass 1: by the low bits
    fill = c_lo[:n_lo].copy()
    for i in range(len(codes)):
        c = codes[i]
        if c >= 0:
            tmp[fill[c & lo_mask]] = i
            fill[c & lo_mask] += 1
    rows = np.empty(n, np.int64)  # pass 2: by the high bits (stable: the low bits stay in order)
    c_hi = np.zeros(n_hi + 1, np.int64)
    for g in range(n_hi):
        c_hi[g + 1] = starts[min(n_groups, (g + 1) << lo_bits)]
    fill2 = c_hi[:n_hi].copy()
    for j in range(n):
        i = tmp[j]
        h = codes[i] >> lo_bits
        rows[fill2[h]] = i
        fill2[h] += 1
    return starts, rows


@njit(cache=True, nogil=True)
def scatter(codes, starts, column):  # pragma: no cover - compiled
    """``column`` (uint64) grouped as :func:`group` groups the rows (a sequential read; the
    writes go to the groups' slots)."""
    out = np.empty(starts[-1], np.uint64)
    fill = starts[:-1].copy()
    for i in range(len(codes)):
        c = codes[i]
        if c >= 0:
            out[fill[c]] = column[i]
            fill[c] += 1
    return out


@njit(cache=True, nogil=True, inline="always")
def _slot(h, mask):  # pragma: no cover - compiled
    return (h ^ (h >> np.uint64(29))) & mask


@njit(cache=True, nogil=True)
def match(rst, rrows, r_hash, sbits, score, tst, trows, t_hash, relevant, input_ties, reach):  # pragma: no cover
    """Per user (rows grouped by :func:`group`): the truth item hashes in a small open-addressing
    set, every recommended row looked up in it; repeated item hashes of one user (a duplicate or
    two ids sharing a hash) and tied scores found in the same pass. A hit's position is 1 + the
    number of the user's rows scored higher (+ tied rows earlier in the input, ``input_ties``).
    ``r_hash``, ``sbits``, ``score`` are grouped as ``rrows`` is (:func:`scatter`), ``t_hash`` as ``trows``.

    Returns (status, hit_user, hit_row, hit_t, hit_pos, tied): the hits grouped by user in
    position order (``hit_row`` / ``hit_t``: recommendation and truth row indices, to be confirmed
    on the ids); ``tied[u]``: a tie group of ``u`` starts at a position <= ``reach`` (0: anywhere;
    < 0: not asked). ``status`` != OK: the call is not decided here (no arrays are meaningful)."""
    n_users = len(rst) - 1
    widest = 1
    for u in range(n_users):
        widest = max(widest, rst[u + 1] - rst[u], tst[u + 1] - tst[u])
    size = 16
    while size < 2 * widest:
        size *= 2
    mask = np.uint64(size - 1)
    one = np.uint64(1)
    t_key = np.zeros(size, np.uint64)
    t_val = np.full(size, -1, np.int64)
    r_key = np.zeros(size, np.uint64)
    r_used = np.zeros(size, np.bool_)
    s_key = np.zeros(size, np.uint64)
    s_cnt = np.zeros(size, np.int64)
    t_slots = np.empty(widest, np.uint64)  # the slots one user filled (cleared after it)
    r_slots = np.empty(widest, np.uint64)
    s_slots = np.empty(widest, np.uint64)
    cap = len(trows)
    hit_user = np.empty(cap, np.int64)
    hit_row = np.empty(cap, np.int64)
    hit_t = np.empty(cap, np.int64)
    hit_pos = np.empty(cap, np.int64)
    tied = np.zeros(n_users, np.bool_)
    n_hits = 0
    for u in range(n_users):
        a, b = rst[u], rst[u + 1]
        ta, tb = tst[u], tst[u + 1]
        for j in range(ta, tb):  # the user's truth items
            t = trows[j]
            h = t_hash[j]
            s = _slot(h, mask)
            while t_val[s] >= 0 and t_key[s] != h:
                s = (s + one) & mask
            if t_val[s] >= 0:
                return TRUTH_REPEAT, hit_user[:0], hit_row[:0], hit_t[:0], hit_pos[:0], tied
            t_key[s] = h
            t_val[s] = t
            t_slots[j - ta] = s
        first_hit = n_hits
        has_tie = False
        n_scores = 0
        for i in range(a, b):
            r = rrows[i]
            h = r_hash[i]
            s = _slot(h, mask)  # repeated item hashes
            while r_used[s] and r_key[s] != h:
                s = (s + one) & mask
            if r_used[s]:
                return REC_REPEAT, hit_user[:0], hit_row[:0], hit_t[:0], hit_pos[:0], tied
            r_used[s] = True
            r_key[s] = h
            r_slots[i - a] = s
            k = sbits[i]  # tied scores
            s = _slot(k, mask)
            while s_cnt[s] > 0 and s_key[s] != k:
                s = (s + one) & mask
            if s_cnt[s] > 0:
                has_tie = True
            else:
                s_key[s] = k
                s_slots[n_scores] = s
                n_scores += 1
            s_cnt[s] += 1
            s = _slot(h, mask)  # the truth row of the item
            while t_val[s] >= 0 and t_key[s] != h:
                s = (s + one) & mask
            t = t_val[s]
            if t >= 0 and relevant[t]:
                hit_user[n_hits] = u
                hit_row[n_hits] = r
                hit_t[n_hits] = t
                hit_pos[n_hits] = i  # (the position is counted below)
                n_hits += 1
        if has_tie and not input_ties:
            return TIE, hit_user[:0], hit_row[:0], hit_t[:0], hit_pos[:0], tied
        for q in range(first_hit, n_hits):  # positions: rows scored higher (+ tied rows before)
            i = hit_pos[q]
            v = score[i]
            p = 1
            for j in range(a, b):
                w = score[j]
                if w > v or (w == v and j < i):
                    p += 1
            hit_pos[q] = p
        for q in range(first_hit + 1, n_hits):  # position order (insertion sort: a few hits)
            q2 = q
            while q2 > first_hit and hit_pos[q2 - 1] > hit_pos[q2]:
                hit_row[q2 - 1], hit_row[q2] = hit_row[q2], hit_row[q2 - 1]
                hit_t[q2 - 1], hit_t[q2] = hit_t[q2], hit_t[q2 - 1]
                hit_pos[q2 - 1], hit_pos[q2] = hit_pos[q2], hit_pos[q2 - 1]
                q2 -= 1
        if has_tie and reach >= 0:  # a tie group starting within the reach
            best = b - a + 1
            for i in range(a, b):
                k = sbits[i]
                s = _slot(k, mask)
                while s_key[s] != k:
                    s = (s + one) & mask
                if s_cnt[s] > 1:
                    v = score[i]
                    p = 1
                    for j in range(a, b):
                        if score[j] > v:
                            p += 1
                    best = min(best, p)
            tied[u] = reach == 0 or best <= reach
        for j in range(tb - ta):  # clear the slots this user filled
            t_val[t_slots[j]] = -1
        for j in range(b - a):
            r_used[r_slots[j]] = False
        for j in range(n_scores):
            s_cnt[s_slots[j]] = 0
    return OK, hit_user[:n_hits], hit_row[:n_hits], hit_t[:n_hits], hit_pos[:n_hits], tied
