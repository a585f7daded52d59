"""The compiled kernels of :mod:`receval.kernels` (numba; imported only by its loader, which sets
the cache directory first). Every kernel is deterministic: the same rows give the same arrays
whatever the machine and the number of threads (the parallel kernels split their work into a
fixed number of parts that do not depend on the threads, and each part writes its own places)."""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

def numba_threads() -> int:
    """The threads numba's parallel kernels run on."""
    return int(get_num_threads())


#: statuses of :func:`match`: the rows it cannot decide alone (the numpy path then takes the call)
OK, TRUTH_REPEAT, REC_REPEAT, TIE = 0, 1, 2, 3


@njit(cache=True, nogil=True, inline="always")
def _slot(h, mask):  # pragma: no cover - compiled
    return (h ^ (h >> np.uint64(29))) & mask


@njit(cache=True, nogil=True, inline="always")
def _score_slot(k, mask):  # pragma: no cover - compiled
    """The slot of the score bits ``k`` in a set of ``mask`` + 1 slots: hashed whole (the scores
    of one list often differ only in their high bits, e.g. a base plus whole numbers: the low
    bits alone would put them all in one chain)."""
    return _slot(_mix(k, k), mask)


@njit(cache=True, nogil=True, inline="always")
def _view(views, starts, first, i):  # pragma: no cover - compiled
    """The Arrow view of row ``i`` of a column held in chunks (``starts``: each chunk's first row)
    and the place of its chunk's first data buffer (``first``)."""
    k = np.searchsorted(starts, i, side="right") - 1
    v = views[k]
    return v[i - starts[k], 0], v[i - starts[k], 1], first[k]


@njit(cache=True, nogil=True, inline="always")
def _same(va, sa, ba, fa, i, vb, sb, bb, fb, j):  # pragma: no cover - compiled
    """Whether row ``i`` of the chunked views ``va`` (data buffers ``ba``, each chunk's first at
    ``fa``) and row ``j`` of ``vb`` hold the same id (:func:`_eq_id`)."""
    a0, a1, a_at = _view(va, sa, fa, i)
    b0, b1, b_at = _view(vb, sb, fb, j)
    return _eq_id(a0, a1, ba, a_at, b0, b1, bb, b_at)


@njit(cache=True, nogil=True, inline="always")
def _mix(v0, v1):  # pragma: no cover - compiled
    """A 64-bit hash of an inline Arrow string view (the id itself): only an index, every
    match is confirmed on the views."""
    h = v0 * np.uint64(0x9E3779B97F4A7C15) ^ v1
    h ^= h >> np.uint64(32)
    h *= np.uint64(0xD6E8FEB86659FD93)
    h ^= h >> np.uint64(32)
    return h


#: the bytes of a view's length word (its low 32 bits) up to which the id is inline in the view
INLINE = 12

#: no data buffers (a column of inline ids; every kernel takes the same typed list)
_NO_BUFS_ARRAY = np.zeros(0, np.uint8)
_NO_BUFS_ARRAY.flags.writeable = False


def _no_bufs() -> list[np.ndarray]:
    return [_NO_BUFS_ARRAY]


def _no_first() -> np.ndarray:
    return np.zeros(1, np.int64)


@njit(cache=True, nogil=True, inline="always")
def _word(buf, at, n):  # pragma: no cover - compiled
    """The ``n`` (<= 8) bytes of ``buf`` from ``at`` as a little-endian word, zero padded (as
    an inline view holds them)."""
    w = np.uint64(0)
    for k in range(n):
        w |= np.uint64(buf[at + k]) << np.uint64(8 * k)
    return w


@njit(cache=True, nogil=True, inline="always")
def _hash_id(v0, v1, bufs, b0):  # pragma: no cover - compiled
    """The 64-bit hash of the id of the Arrow string view (``v0``, ``v1``), the same for every
    length: :func:`_mix` of the view's two words as an inline view holds them (length, bytes
    0-3; bytes 4-11, zero padded), then, for an id longer than 12 bytes (its bytes in the
    data buffer ``bufs[b0 + buffer index]`` at the view's offset), each further 8 bytes (zero
    padded) mixed in. Only an index: every match is confirmed on the bytes (:func:`_eq_id`)."""
    n = np.int64(v0 & np.uint64(0xFFFFFFFF))
    if n <= INLINE:
        return _mix(v0, v1)
    buf = bufs[b0 + np.int64(v1 & np.uint64(0xFFFFFFFF))]
    off = np.int64(v1 >> np.uint64(32))
    h = _mix(v0, _word(buf, off + 4, 8))
    at = INLINE
    while at < n:
        h = _mix(h, _word(buf, off + at, min(8, n - at)))
        at += 8
    return h


@njit(cache=True, nogil=True, inline="always")
def _eq_id(a0, a1, abufs, ab0, b0, b1, bbufs, bb0):  # pragma: no cover - compiled
    """Whether the Arrow string views (``a0``, ``a1``) and (``b0``, ``b1``) hold the same id:
    the same length and first 4 bytes, then the rest of the view (inline, zero padded) or the
    bytes in the data buffers (``abufs[ab0 + buffer index]``, ``bbufs[bb0 + ...]``)."""
    if a0 != b0:
        return False
    n = np.int64(a0 & np.uint64(0xFFFFFFFF))
    if n <= INLINE:
        return a1 == b1
    abuf = abufs[ab0 + np.int64(a1 & np.uint64(0xFFFFFFFF))]
    bbuf = bbufs[bb0 + np.int64(b1 & np.uint64(0xFFFFFFFF))]
    ao, bo = np.int64(a1 >> np.uint64(32)), np.int64(b1 >> np.uint64(32))
    for k in range(4, n):
        if abuf[ao + k] != bbuf[bo + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _hash_views(views, out, hmask, bufs):  # pragma: no cover - compiled
    for i in range(len(views)):
        out[i] = _hash_id(views[i, 0], views[i, 1], bufs, 0) & hmask


def hash_views(views, out, hmask, bufs=None):
    """``out[i]``: the hash (:func:`_hash_id`) of the id of the view ``views[i]`` (its data
    buffers ``bufs``, for ids longer than 12 bytes), and ``hmask`` (all ones; fewer bits in
    tests, where ids then share hashes)."""
    _hash_views(views, out, hmask, _no_bufs() if bufs is None else bufs)


@njit(cache=True, nogil=True)
def padded(views):  # pragma: no cover - compiled
    """Whether every inline Arrow string view (at most 12 bytes) is zero padded (then two views
    of such ids are equal exactly when the ids are; longer ids are read in the data buffers)."""
    for i in range(len(views)):
        w0, w1 = views[i, 0], views[i, 1]
        n = w0 & np.uint64(0xFFFFFFFF)
        if n > 12:
            continue
        if n < 4 and (w0 >> np.uint64(32 + 8 * n)) != 0:
            return False
        if n <= 4:
            if w1 != 0:
                return False
        elif n < 12 and (w1 >> np.uint64(8 * (n - 4))) != 0:
            return False
    return True


@njit(cache=True, nogil=True)
def inline(views):  # pragma: no cover - compiled
    """Whether every Arrow string view holds its id inline (at most 12 bytes), zero padded: then
    two views are equal exactly when the ids are."""
    for i in range(len(views)):
        w0, w1 = views[i, 0], views[i, 1]
        n = w0 & np.uint64(0xFFFFFFFF)
        if n > 12:
            return False
        if n < 4 and (w0 >> np.uint64(32 + 8 * n)) != 0:
            return False
        if n <= 4:
            if w1 != 0:
                return False
        elif n < 12 and (w1 >> np.uint64(8 * (n - 4))) != 0:
            return False
    return True


#: an empty slot of the user table (no view has this length word: ids are shorter than 4 GiB)
EMPTY = np.uint64(2**64 - 1)


#: the most 8-byte words of an id past its 12th byte kept in a slot of :func:`code_users` (ids
#: of at most 44 bytes, e.g. UUIDs: one cache line a lookup; longer ids kept in one array)
TAIL_WORDS = 4


@njit(cache=True, nogil=True, inline="always")
def _eq_slot(table, s, rep, v0, v1, bufs):  # pragma: no cover - compiled
    """Whether slot ``s`` of the table of :func:`code_users` holds the id of the Arrow string
    view (``v0``, ``v1``; data buffers ``bufs``): the slot holds the id's view words as an
    inline view would (length and bytes 0-3, bytes 4-11) and its further bytes in its own words
    (from column 2) or, when ``rep`` holds the bytes of ids too long for a slot, at
    ``rep[table[s, 1]:]`` (bytes 4..; column 2: the hash)."""
    if table[s, 0] != v0:
        return False
    n = np.int64(v0 & np.uint64(0xFFFFFFFF))
    if n <= INLINE:
        return table[s, 1] == v1
    buf = bufs[np.int64(v1 & np.uint64(0xFFFFFFFF))]
    off = np.int64(v1 >> np.uint64(32))
    if len(rep) == 0:
        if table[s, 1] != _word(buf, off + 4, 8):
            return False
        at, j = INLINE, 2
        while at < n:
            if table[s, j] != _word(buf, off + at, min(8, n - at)):
                return False
            at += 8
            j += 1
        return True
    at = np.int64(table[s, 1]) - 4
    for k in range(4, n):
        if rep[at + k] != buf[off + k]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _slot_hash(table, q):  # pragma: no cover - compiled
    """:func:`_hash_id` of the id in slot ``q`` of a table of :func:`code_users` that keeps ids
    whole in their slots (the words it mixes are the slot's)."""
    h = _mix(table[q, 0], table[q, 1])
    n = np.int64(table[q, 0] & np.uint64(0xFFFFFFFF))
    at, j = INLINE, 2
    while at < n:
        h = _mix(h, table[q, j])
        at += 8
        j += 1
    return h


@njit(cache=True, nogil=True, inline="always")
def _probe(table, rep, v0, v1, bufs, h, mask):  # pragma: no cover - compiled
    """The slot of the id (view ``v0``, ``v1``; data buffers ``bufs``; hash ``h``) in ``table``
    (:func:`code_users`): its own, or the empty slot where it goes (linear probing from its
    hash; an id whose hash equals a slot's is confirmed on its bytes, the hash only places it:
    one comparison of the bytes per id found)."""
    one = np.uint64(1)
    s = _slot(h, mask)
    while table[s, 0] != EMPTY and not ((len(rep) == 0 or table[s, 2] == h) and _eq_slot(table, s, rep, v0, v1, bufs)):
        s = (s + one) & mask
    return s


@njit(cache=True, nogil=True)
def _code_users(t_view, hmask, t_bufs):  # pragma: no cover - compiled
    n_t = len(t_view)
    longest = 0
    for i in range(n_t):
        longest = max(longest, np.int64(t_view[i, 0] & np.uint64(0xFFFFFFFF)))
    in_rep = longest > INLINE + 8 * TAIL_WORDS  # ids too long for a slot: their bytes in rep, the hash in the slot
    width = 3 if in_rep else 2 + max(0, (longest - INLINE + 7) // 8)
    size = 1024
    table = np.full((size, width), EMPTY, np.uint64)
    slot_code = np.full(size, -1, np.int32)
    rep = np.empty(1024 if in_rep else 0, np.uint8)
    used = 0
    t_code = np.empty(n_t, np.int32)
    first = np.empty(n_t, np.int64)
    n_users = 0
    for i in range(n_t):
        v0, v1 = t_view[i, 0], t_view[i, 1]
        h = _hash_id(v0, v1, t_bufs, 0) & hmask
        s = _probe(table, rep, v0, v1, t_bufs, h, np.uint64(size - 1))
        if table[s, 0] == EMPTY:
            if 2 * (n_users + 1) > size:  # grow: every id placed again (distinct ids: no comparison)
                size *= 2
                grown = np.full((size, width), EMPTY, np.uint64)
                grown_code = np.full(size, -1, np.int32)
                for q in range(len(table)):
                    if table[q, 0] != EMPTY:
                        g = _slot(table[q, 2] if in_rep else _slot_hash(table, q) & hmask, np.uint64(size - 1))
                        while grown[g, 0] != EMPTY:
                            g = (g + np.uint64(1)) & np.uint64(size - 1)
                        grown[g] = table[q]
                        grown_code[g] = slot_code[q]
                table, slot_code = grown, grown_code
                s = _probe(table, rep, v0, v1, t_bufs, h, np.uint64(size - 1))
            n = np.int64(v0 & np.uint64(0xFFFFFFFF))
            w1 = v1
            if n > INLINE:  # the id's further bytes in the slot's own words, or kept in rep
                buf = t_bufs[np.int64(v1 & np.uint64(0xFFFFFFFF))]
                off = np.int64(v1 >> np.uint64(32))
                if not in_rep:
                    w1 = _word(buf, off + 4, 8)
                    at, j = INLINE, 2
                    while at < n:
                        table[s, j] = _word(buf, off + at, min(8, n - at))
                        at += 8
                        j += 1
                else:
                    while used + n > len(rep):
                        more = np.empty(2 * len(rep), np.uint8)
                        more[:used] = rep[:used]
                        rep = more
                    rep[used:used + n - 4] = buf[off + 4:off + n]
                    w1 = np.uint64(used)
                    used += n - 4
            table[s, 0], table[s, 1] = v0, w1
            if in_rep:
                table[s, 2] = h
            slot_code[s] = n_users
            first[n_users] = i
            n_users += 1
        t_code[i] = slot_code[s]
    return t_code, first[:n_users].copy(), table, slot_code, rep[:used].copy()


def code_users(t_view, hmask, t_bufs=None):
    """The truth users placed by their 64-bit hashes (:func:`_hash_id`) in a table of their ids
    (at most half full; a slot: the words of an inline view, then the further 8-byte words of
    ids up to 44 bytes, :data:`TAIL_WORDS`; longer ids: their bytes copied once per user into
    one array and their hash in the slot; from the data buffers ``t_bufs`` the views point into),
    every match confirmed on the ids' bytes (two ids sharing a hash stay apart). Returns
    ``t_code`` (each truth row's user, in order of first appearance), ``first`` (the first truth
    row of each user), the table :func:`lookup_users` reads (the slots and the kept bytes) and
    each slot's code (-1: empty)."""
    t_code, first, table, slot_code, rep = _code_users(t_view, hmask, _no_bufs() if t_bufs is None else t_bufs)
    return t_code, first, (table, rep), slot_code


@njit(cache=True, nogil=True)
def _lookup_users(table, rep, r_view, out, hmask, r_bufs):  # pragma: no cover - compiled
    mask = np.uint64(len(table) - 1)
    for i in range(len(r_view)):
        v0, v1 = r_view[i, 0], r_view[i, 1]
        s = _probe(table, rep, v0, v1, r_bufs, _hash_id(v0, v1, r_bufs, 0) & hmask, mask)
        out[i] = -1 if table[s, 0] == EMPTY else np.int32(s)


def lookup_users(table, r_view, out, hmask, r_bufs=None):
    """``out[i]``: the slot of the user of row ``i`` (view ``r_view``, data buffers ``r_bufs``)
    in the table of :func:`code_users`, -1 when it is no truth user (:func:`recode` turns slots
    into codes)."""
    slots, rep = table
    _lookup_users(slots, rep, r_view, out, hmask, _no_bufs() if r_bufs is None else r_bufs)


@njit(cache=True, nogil=True)
def recode(codes, rank, n_groups):  # pragma: no cover - compiled
    """``rank[codes]`` in place, -1 kept (``rank`` < 0: no group); returns the rows of each new
    code 0 .. ``n_groups`` - 1 (:func:`count_codes` of the new codes, in the same pass)."""
    cnt = np.zeros(n_groups, np.int64)
    for i in range(len(codes)):
        c = codes[i]
        if c >= 0:
            c = rank[c]
            codes[i] = c
            if c >= 0:
                cnt[c] += 1
    return cnt


#: the parts the parallel kernels split rows or users into (fixed: the arrays never depend on
#: the number of threads)
PARTS = 64

#: :func:`match`'s tie rules: equal scores in the row order (``input``), the expectation over
#: the orderings (``average``: the tie group's bounds), the best place of the group (``optimistic``)
INPUT, AVERAGE, OPTIMISTIC = 0, 1, 2

#: :func:`match`'s ``first_tie`` of a user without tied scores
NO_TIE = np.iinfo(np.int64).max


@njit(cache=True, nogil=True)
def _match_part(u0, u1, rst, rg, tst, tg, fv, relevant, mode, r_view, r_starts, t_view, t_starts, exact,
                r_bufs, r_first, t_bufs, t_first,
                hit_user, hit_row, hit_t, hit_pos, hit_lo, hit_hi, first_tie, max_pos):  # pragma: no cover
    """:func:`match` for the users ``u0`` .. ``u1`` - 1: their hits written from their first truth
    row on (``tst[u0]``: a truth row is hit at most once). Returns (status, number of hits)."""
    widest = 1
    for u in range(u0, u1):
        widest = max(widest, rst[u + 1] - rst[u] + tst[u + 1] - tst[u])
    size = 16
    while size < 4 * widest:  # at most a quarter full: short probes
        size *= 2
    mask = np.uint64(size - 1)
    one = np.uint64(1)
    # one item set per user: its truth items, then the recommended items not in the truth
    i_key = np.zeros(size, np.uint64)
    i_row = np.full(size, -1, np.int64)  # the truth row, or the recommended row (i_truth False); -1: empty
    i_truth = np.zeros(size, np.bool_)
    i_rec = np.zeros(size, np.bool_)  # recommended (a second time: a repeated item)
    s_key = np.zeros(size, np.uint64)
    s_cnt = np.zeros(size, np.int64)
    i_slots = np.empty(widest, np.uint64)  # the slots one user filled (cleared after it)
    s_slots = np.empty(widest, np.uint64)
    n_hits = tst[u0]
    for u in range(u0, u1):
        a, b = rst[u], rst[u + 1]
        ta, tb = tst[u], tst[u + 1]
        n_items = 0
        for j in range(ta, tb):  # the user's truth items
            t = np.int64(tg[j, 0])
            h = tg[j, 1]
            s = _slot(h, mask)
            while i_row[s] >= 0 and not (i_key[s] == h and (not exact or _same(t_view, t_starts, t_bufs, t_first, t, t_view, t_starts, t_bufs, t_first, i_row[s]))):
                s = (s + one) & mask
            if i_row[s] >= 0:
                return TRUTH_REPEAT, 0
            i_key[s] = h
            i_row[s] = t
            i_truth[s] = True
            i_slots[n_items] = s
            n_items += 1
        first_hit = n_hits
        has_tie = False
        n_scores = 0
        for i in range(a, b):
            r = np.int64(rg[i, 0])
            h = rg[i, 1]
            s = _slot(h, mask)  # the item: a truth item, an item recommended before, or new
            while i_row[s] >= 0 and not (i_key[s] == h and (not exact or (
                    _same(r_view, r_starts, r_bufs, r_first, r, t_view, t_starts, t_bufs, t_first, i_row[s])
                    if i_truth[s] else
                    _same(r_view, r_starts, r_bufs, r_first, r, r_view, r_starts, r_bufs, r_first, i_row[s])))):
                s = (s + one) & mask
            if i_rec[s]:
                return REC_REPEAT, 0
            i_rec[s] = True
            if i_row[s] < 0:
                i_key[s] = h
                i_row[s] = r
                i_slots[n_items] = s
                n_items += 1
            elif relevant[i_row[s]]:
                hit_user[n_hits] = u
                hit_row[n_hits] = r
                hit_t[n_hits] = i_row[s]
                hit_pos[n_hits] = i  # (the position is counted below)
                n_hits += 1
            k = rg[i, 2]  # tied scores
            s = _score_slot(k, mask)
            while s_cnt[s] > 0 and s_key[s] != k:
                s = (s + one) & mask
            if s_cnt[s] > 0:
                has_tie = True
            else:
                s_key[s] = k
                s_slots[n_scores] = s
                n_scores += 1
            s_cnt[s] += 1
        for q in range(first_hit, n_hits):  # positions: rows scored higher, tied rows before, the tie group
            i = hit_pos[q]
            v = fv[i, 2]
            higher, before, equal = 0, 0, 0
            for j in range(a, b):
                w = fv[j, 2]
                if w > v:
                    higher += 1
                elif w == v:
                    equal += 1
                    if j < i:
                        before += 1
            hit_lo[q] = higher + 1
            hit_hi[q] = higher + equal
            hit_pos[q] = higher + 1 if mode == OPTIMISTIC else higher + before + 1
        for q in range(first_hit + 1, n_hits):  # position order (stable insertion sort: a few hits)
            q2 = q
            while q2 > first_hit and hit_pos[q2 - 1] > hit_pos[q2]:
                hit_row[q2 - 1], hit_row[q2] = hit_row[q2], hit_row[q2 - 1]
                hit_t[q2 - 1], hit_t[q2] = hit_t[q2], hit_t[q2 - 1]
                hit_pos[q2 - 1], hit_pos[q2] = hit_pos[q2], hit_pos[q2 - 1]
                hit_lo[q2 - 1], hit_lo[q2] = hit_lo[q2], hit_lo[q2 - 1]
                hit_hi[q2 - 1], hit_hi[q2] = hit_hi[q2], hit_hi[q2 - 1]
                q2 -= 1
        first_tie[u] = NO_TIE
        if has_tie:  # the first position of a tie group: above it the highest tied score
            top = -np.inf
            for i in range(a, b):
                k = rg[i, 2]
                s = _score_slot(k, mask)
                while s_key[s] != k:
                    s = (s + one) & mask
                if s_cnt[s] > 1 and fv[i, 2] > top:
                    top = fv[i, 2]
            p = 1
            for i in range(a, b):
                if fv[i, 2] > top:
                    p += 1
            first_tie[u] = p
        max_pos[u] = b - a
        if mode == OPTIMISTIC and has_tie:  # the last place: the lowest score's group's first
            low = np.inf
            for i in range(a, b):
                low = min(low, fv[i, 2])
            p = 1
            for i in range(a, b):
                if fv[i, 2] > low:
                    p += 1
            max_pos[u] = p
        for j in range(n_items):  # clear the slots this user filled
            q = i_slots[j]
            i_row[q] = -1
            i_truth[q] = False
            i_rec[q] = False
        for j in range(n_scores):
            s_cnt[s_slots[j]] = 0
    return OK, n_hits - tst[u0]


def match(rst, rg, tst, tg, relevant, mode, r_view, r_starts, t_view, t_starts, exact, r_bufs=None, r_first=None,
          t_bufs=None, t_first=None):
    """Per user (rows grouped by :func:`receval.kernels._radix`), users in :data:`PARTS` parts in parallel:
    the truth item hashes in a small open-addressing set, every recommended row looked up in it;
    repeated item hashes of one user (a duplicate or two ids sharing a hash) and tied scores
    found in the same pass. Never a sort by score: a hit's tie group is the user's rows scored
    higher (``lo`` = their number + 1) through the rows scored the same (``hi``); its position
    is ``lo`` (``mode`` :data:`OPTIMISTIC`) or ``lo`` + the tied rows earlier in the input
    (:data:`INPUT`, :data:`AVERAGE`: the order of the numpy path's sort).
    ``rg``: the recommended rows grouped (:func:`receval.kernels._radix`) as (row, item hash, the score's bits
    with -0.0 as 0.0) records; ``tg``: the truth rows grouped as (row, item hash, -) records.
    ``exact``: the ids are in their Arrow string views (``r_view``, ``t_view``: the views chunk
    by chunk, ``r_starts``, ``t_starts``: each chunk's first row; ids longer than 12 bytes in
    the data buffers ``r_bufs``, ``t_bufs``, each chunk's first at ``r_first``, ``t_first``), so
    a hash match is confirmed here on the ids' bytes (two items sharing a hash are two items; a
    repeat is a repeated item) and the hits need no other confirmation.

    Returns (status, hit_user, hit_row, hit_t, hit_pos, hit_lo, hit_hi, first_tie, max_pos): the
    hits grouped by user in position order (``hit_row`` / ``hit_t``: recommendation and truth
    row indices, to be confirmed on the ids when not ``exact``); per user, ``first_tie``: the
    first position of a tie group of two or more rows (:data:`NO_TIE`: none) and ``max_pos``: its
    last position. ``status`` != OK: the call is not decided here (no arrays are meaningful)."""
    return _match(rst, rg, tst, tg, relevant, mode, r_view, r_starts, t_view, t_starts, exact,
                  _no_bufs() if r_bufs is None else r_bufs, _no_first() if r_first is None else r_first,
                  _no_bufs() if t_bufs is None else t_bufs, _no_first() if t_first is None else t_first)


@njit(cache=True, nogil=True, parallel=True)
def _match(rst, rg, tst, tg, relevant, mode, r_view, r_starts, t_view, t_starts, exact, r_bufs, r_first, t_bufs,
           t_first):  # pragma: no cover - compiled
    n_users = len(rst) - 1
    fv = rg.view(np.float64)  # the scores: column 2
    cap = len(tg)
    hit_user = np.empty(cap, np.int64)
    hit_row = np.empty(cap, np.int64)
    hit_t = np.empty(cap, np.int64)
    hit_pos = np.empty(cap, np.int64)
    hit_lo = np.empty(cap, np.int64)
    hit_hi = np.empty(cap, np.int64)
    first_tie = np.empty(n_users, np.int64)
    max_pos = np.empty(n_users, np.int64)
    parts = max(1, min(n_users, PARTS))
    status = np.zeros(parts, np.int64)
    count = np.zeros(parts, np.int64)
    for p in prange(parts):
        u0, u1 = p * n_users // parts, (p + 1) * n_users // parts
        status[p], count[p] = _match_part(u0, u1, rst, rg, tst, tg, fv, relevant, mode, r_view, r_starts,
                                          t_view, t_starts, exact, r_bufs, r_first, t_bufs, t_first, hit_user, hit_row, hit_t, hit_pos, hit_lo,
                                          hit_hi, first_tie, max_pos)
    for p in range(parts):
        if status[p] != OK:
            return (status[p], hit_user[:0], hit_row[:0], hit_t[:0], hit_pos[:0], hit_lo[:0], hit_hi[:0],
                    first_tie, max_pos)
    n_hits = 0
    for p in range(parts):  # the parts' hits, one after the other
        at = tst[p * n_users // parts]
        for q in range(at, at + count[p]):
            hit_user[n_hits] = hit_user[q]
            hit_row[n_hits] = hit_row[q]
            hit_t[n_hits] = hit_t[q]
            hit_pos[n_hits] = hit_pos[q]
            hit_lo[n_hits] = hit_lo[q]
            hit_hi[n_hits] = hit_hi[q]
            n_hits += 1
    return (OK, hit_user[:n_hits].copy(), hit_row[:n_hits].copy(), hit_t[:n_hits].copy(), hit_pos[:n_hits].copy(),
            hit_lo[:n_hits].copy(), hit_hi[:n_hits].copy(), first_tie, max_pos)


@njit(cache=True, nogil=True)
def count_codes(codes, n_groups):  # pragma: no cover - compiled
    """The rows of each code 0 .. ``n_groups`` - 1 (rows with code < 0 left out)."""
    cnt = np.zeros(n_groups, np.int64)
    for i in range(len(codes)):
        c = codes[i]
        if c >= 0:
            cnt[c] += 1
    return cnt


def scatter(codes, row0, g0, g1, lo_bits, fill, out, views, hashes, from_views, hmask, sbits, bufs=None):
    """The first radix pass of :func:`receval.kernels._radix` for one segment of rows (``row0``: its first
    row): each row of a code in ``g0`` .. ``g1`` - 1 written at ``fill`` of its bucket (the high
    bits of code - ``g0``) as a (low bits << 32 | row, item hash, score bits) record; the item
    hash from the view (:func:`_hash_id`, ``from_views``; ``bufs``: the segment's chunk's data
    buffers) or ``hashes``; -0.0 as 0.0."""
    _scatter(codes, row0, g0, g1, lo_bits, fill, out, views, hashes, from_views, hmask, sbits,
             _no_bufs() if bufs is None else bufs)


@njit(cache=True, nogil=True)
def _scatter(codes, row0, g0, g1, lo_bits, fill, out, views, hashes, from_views, hmask, sbits, bufs):  # pragma: no cover
    neg_zero = np.uint64(1) << np.uint64(63)
    lo_mask = (1 << lo_bits) - 1
    for j in range(len(codes)):
        c = codes[j]
        if c >= g0 and c < g1:
            c -= g0
            h = c >> lo_bits
            q = fill[h]
            fill[h] = q + 1
            out[q, 0] = (np.uint64(c & lo_mask) << np.uint64(32)) | np.uint64(row0 + j)
            out[q, 1] = (_hash_id(views[j, 0], views[j, 1], bufs, 0) & hmask) if from_views else hashes[j]
            v = sbits[j]
            out[q, 2] = np.uint64(0) if v == neg_zero else v


@njit(cache=True, nogil=True, parallel=True)
def settle(out, starts, lo_bits):  # pragma: no cover - compiled
    """The second radix pass of :func:`receval.kernels._radix`: each bucket (a run of 2^``lo_bits`` groups,
    records written by :func:`scatter`) by the low bits, stably, buckets in parallel; the low
    bits cleared (the records keep the row)."""
    n_groups = len(starts) - 1
    n_lo = 1 << lo_bits
    n_hi = (n_groups + n_lo - 1) >> lo_bits
    low = np.uint64(0xFFFFFFFF)
    for h in prange(n_hi):
        g0 = h << lo_bits
        g1 = min(n_groups, g0 + n_lo)
        b0, b1 = starts[g0], starts[g1]
        if b1 - b0 < 2:
            if b1 > b0:
                out[b0, 0] &= low
            continue
        pos = starts[g0:g1].copy()
        scratch = out[b0:b1].copy()
        for j in range(b1 - b0):
            k = scratch[j, 0]
            q = np.int64(k >> np.uint64(32))
            r = pos[q]
            pos[q] = r + 1
            out[r, 0] = k & low
            out[r, 1] = scratch[j, 1]
            out[r, 2] = scratch[j, 2]
