"""The compiled kernels of :mod:`receval.kernels` (numba; imported only by its loader, which sets
the cache directory first). Every kernel is deterministic: the same rows give the same arrays
whatever the machine and the number of threads (the parallel kernels split their work into a
fixed number of parts that do not depend on the threads, and each part writes its own places)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import get_num_threads, njit, prange, types
from numba.core import cgutils
from numba.core.extending import intrinsic


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
def _mix(v0, v1):  # pragma: no cover - compiled
    """A 64-bit mix of two words (the hash of an inline Arrow string view, the id itself; a
    longer id's words are mixed in one by one, :func:`_read`): only an index, every match is
    confirmed on the ids."""
    h = v0 * np.uint64(0x9E3779B97F4A7C15) ^ v1
    h ^= h >> np.uint64(32)
    h *= np.uint64(0xD6E8FEB86659FD93)
    h ^= h >> np.uint64(32)
    return h


#: the bytes of a view's length word (its low 32 bits) up to which the id is inline in the view
INLINE = 12

_LEN = np.uint64(0xFFFFFFFF)


@intrinsic
def _load(typingctx, addr):  # pragma: no cover - compiled
    """The 8 bytes at the address ``addr`` as a little-endian word (an unaligned load: the
    caller makes sure they lie within one data buffer)."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        return builder.load(builder.inttoptr(args[0], ir.IntType(64).as_pointer()), align=1)

    return types.uint64(addr), codegen


@intrinsic
def _prefetch(typingctx, table, row):  # pragma: no cover - compiled
    """A hint that row ``row`` of the 2-d array ``table`` is read soon (``llvm.prefetch``: no
    fault, no effect on any value)."""
    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        aryty = sig.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], context.get_constant(types.intp, 0)])
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(table, types.intp), codegen


@njit(cache=True, nogil=True, inline="always")
def _tail(p, rem, end):  # pragma: no cover - compiled
    """The ``rem`` (1-8) bytes at the address ``p`` as a little-endian word, zero padded (as an
    inline view holds them), read in one load: from ``p`` when 8 bytes fit before ``end`` (the end
    of the data buffer), else the 8 bytes ending with them (an id's last bytes: at least 12 of
    its bytes come before ``p``)."""
    if p + 8 <= end:
        w = _load(p)
        if rem < 8:
            w &= (np.uint64(1) << np.uint64(8 * rem)) - np.uint64(1)
        return w
    return _load(p + rem - 8) >> np.uint64(8 * (8 - rem))


@njit(cache=True, nogil=True, inline="always")
def _where(v1, addr, end, b0):  # pragma: no cover - compiled
    """The address of a long id's bytes (its view's second word ``v1``: buffer index, offset)
    and the end of its data buffer (``addr``, ``end``: each buffer's first byte and end; the
    view's chunk's first buffer at ``b0``)."""
    k = b0 + np.int64(v1 & _LEN)
    return addr[k] + np.int64(v1 >> np.uint64(32)), end[k]


@njit(cache=True, nogil=True, inline="always")
def _hash_id(v0, v1, addr, end, b0):  # pragma: no cover - compiled
    """The 64-bit hash of the id of the Arrow string view (``v0``, ``v1``), the same for every
    length: :func:`_mix` of the view's two words as an inline view holds them (length and bytes
    0-3; bytes 4-11, zero padded), then, for an id longer than 12 bytes (its bytes in a data
    buffer, :func:`_where`), each further 8 bytes (zero padded) mixed in, each read in one
    load. Only an index: every match is confirmed on the bytes."""
    n = np.int64(v0 & _LEN)
    if n <= INLINE:
        return _mix(v0, v1)
    p, e = _where(v1, addr, end, b0)
    h = _mix(v0, _load(p + 4))
    at = INLINE
    while at < n:
        h = _mix(h, _tail(p + at, min(8, n - at), e))
        at += 8
    return h


@njit(cache=True, nogil=True)
def _read(v0, v1, addr, end, b0, w):  # pragma: no cover - compiled
    """:func:`_hash_id` of the id, its words (bytes 4-11, then each further 8, zero padded; an
    inline id: its view's second word) kept in ``w`` as they are read: returns (the hash, the
    number of words)."""
    n = np.int64(v0 & _LEN)
    if n <= INLINE:
        w[0] = v1
        return _mix(v0, v1), 1
    p, e = _where(v1, addr, end, b0)
    x = _load(p + 4)
    w[0] = x
    h = _mix(v0, x)
    m, at = 1, INLINE
    while at < n:
        x = _tail(p + at, min(8, n - at), e)
        w[m] = x
        h = _mix(h, x)
        m += 1
        at += 8
    return h, m


@njit(cache=True, nogil=True)
def _eq_id(a0, a1, aaddr, aend, ab0, b0, b1, baddr, bend, bb0):  # pragma: no cover - compiled
    """Whether the Arrow string views (``a0``, ``a1``) and (``b0``, ``b1``) hold the same id:
    the same length and first 4 bytes (the prefix in the view rejects most others before any
    read of the data buffers), then the rest of the view (inline, zero padded) or the bytes in
    the data buffers (:func:`_where`) compared 8 at a time."""
    if a0 != b0:
        return False
    n = np.int64(a0 & _LEN)
    if n <= INLINE:
        return a1 == b1
    pa, ea = _where(a1, aaddr, aend, ab0)
    pb, eb = _where(b1, baddr, bend, bb0)
    if _load(pa + 4) != _load(pb + 4):
        return False
    at = INLINE
    while at < n:
        rem = min(8, n - at)
        if _tail(pa + at, rem, ea) != _tail(pb + at, rem, eb):
            return False
        at += 8
    return True


@njit(cache=True, nogil=True, inline="always")
def _view(views, starts, first, i):  # pragma: no cover - compiled
    """The Arrow view of row ``i`` of a column held in chunks (``starts``: each chunk's first row)
    and the place of its chunk's first data buffer (``first``)."""
    k = np.searchsorted(starts, i, side="right") - 1
    v = views[k]
    return v[i - starts[k], 0], v[i - starts[k], 1], first[k]


@njit(cache=True, nogil=True, inline="always")
def _same(va, sa, aaddr, aend, fa, i, vb, sb, baddr, bend, fb, j):  # pragma: no cover - compiled
    """Whether row ``i`` of the chunked views ``va`` (data buffers at ``aaddr`` .. ``aend``,
    each chunk's first at ``fa``) and row ``j`` of ``vb`` hold the same id (:func:`_eq_id`)."""
    a0, a1, a_at = _view(va, sa, fa, i)
    b0, b1, b_at = _view(vb, sb, fb, j)
    return _eq_id(a0, a1, aaddr, aend, a_at, b0, b1, baddr, bend, b_at)


@njit(cache=True, nogil=True)
def hash_views(views, out, hmask, addr, end):  # pragma: no cover - compiled
    """``out[i]``: the hash (:func:`_hash_id`) of the id of the view ``views[i]`` (its data
    buffers at ``addr`` .. ``end``, for ids longer than 12 bytes), and ``hmask`` (all ones;
    fewer bits in tests, where ids then share hashes)."""
    for i in range(len(views)):
        out[i] = _hash_id(views[i, 0], views[i, 1], addr, end, 0) & hmask


@njit(cache=True, nogil=True)
def padded(views):  # pragma: no cover - compiled
    """Whether every inline Arrow string view (at most 12 bytes) is zero padded (then two views
    of such ids are equal exactly when the ids are; longer ids are read in the data buffers)."""
    for i in range(len(views)):
        w0, w1 = views[i, 0], views[i, 1]
        n = w0 & _LEN
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


#: the rows :func:`lookup_users` hashes before it probes their slots (prefetched meanwhile)
BLOCK = 32

#: an empty slot of the user table (no view has this length word: ids are shorter than 4 GiB)
EMPTY = np.uint64(2**64 - 1)

#: the most words (:func:`_read`) of an id kept whole in a slot of :func:`code_users` (ids of at
#: most 44 bytes, e.g. UUIDs: a slot of at most 48 bytes); longer ids: their words in one array
SLOT_WORDS = 5


@njit(cache=True, nogil=True)
def _words(n):  # pragma: no cover - compiled
    """The words (:func:`_read`) of an id of ``n`` bytes."""
    return 1 if n <= INLINE else 1 + (n - INLINE + 7) // 8


@njit(cache=True, nogil=True, inline="always")
def _read5(v0, v1, addr, end, b0):  # pragma: no cover - compiled
    """:func:`_read` of an id of at most 44 bytes (at most :data:`SLOT_WORDS` words), its words
    in registers (0 past its last): returns (the hash, the five words)."""
    n = np.int64(v0 & _LEN)
    z = np.uint64(0)
    if n <= INLINE:
        return _mix(v0, v1), v1, z, z, z, z
    p, e = _where(v1, addr, end, b0)
    x0 = _load(p + 4)
    h = _mix(v0, x0)
    x1 = _tail(p + 12, min(8, n - 12), e)
    h = _mix(h, x1)
    x2, x3, x4 = z, z, z
    if n > 20:
        x2 = _tail(p + 20, min(8, n - 20), e)
        h = _mix(h, x2)
        if n > 28:
            x3 = _tail(p + 28, min(8, n - 28), e)
            h = _mix(h, x3)
            if n > 36:
                x4 = _tail(p + 36, min(8, n - 36), e)
                h = _mix(h, x4)
    return h, x0, x1, x2, x3, x4


@njit(cache=True, nogil=True, inline="always")
def _find5(table, most, v0, x0, x1, x2, x3, x4, h, mask):  # pragma: no cover - compiled
    """:func:`_find` in a table of ids kept whole in their slots (``most``: the words of a slot,
    at most :data:`SLOT_WORDS`; a slot's words past its id's are 0), the id's words in
    registers (:func:`_read5`): the slot compared whole, no loop."""
    one = np.uint64(1)
    s = _slot(h, mask)
    if most == 1:  # ids of at most 12 bytes: their views
        while table[s, 0] != EMPTY and not (table[s, 0] == v0 and table[s, 1] == x0):
            s = (s + one) & mask
        return s
    while True:
        t0 = table[s, 0]
        if t0 == EMPTY or (t0 == v0 and table[s, 1] == x0 and (most < 2 or (table[s, 2] == x1 and (most < 3 or (
                table[s, 3] == x2 and (most < 4 or (table[s, 4] == x3 and (most < 5 or table[s, 5] == x4)))))))):
            return s
        s = (s + one) & mask


@njit(cache=True, nogil=True)
def _find(table, rep, v0, w, m, h, mask):  # pragma: no cover - compiled
    """The slot of the id (view word ``v0``, words ``w[:m]``, hash ``h``, :func:`_read`) in
    ``table`` (:func:`code_users`): its own, or the empty slot where it goes (linear probing
    from its hash; an id is confirmed on its words, the hash only places it). A slot holds
    ``v0`` (length and bytes 0-3: equal words, equal lengths), then the id's words; or, in a
    table of ids too long for a slot (``rep`` not empty), an id of at most 12 bytes its view's
    second word and a longer id its hash and the place of its words in ``rep``."""
    one = np.uint64(1)
    s = _slot(h, mask)
    if m == 1 and (len(rep) == 0 or np.int64(v0 & _LEN) <= INLINE):  # one word: the id's view
        x = w[0]
        while True:
            t0 = table[s, 0]
            if t0 == EMPTY or (t0 == v0 and table[s, 1] == x):
                return s
            s = (s + one) & mask
    while True:
        t0 = table[s, 0]
        if t0 == EMPTY:
            return s
        if t0 == v0:
            same = True
            if len(rep) > 0:
                if table[s, 1] != h:
                    same = False
                else:
                    at = np.int64(table[s, 2])
                    for j in range(m):
                        if rep[at + j] != w[j]:
                            same = False
                            break
            else:
                diff = np.uint64(0)
                for j in range(m):
                    diff |= table[s, 1 + j] ^ w[j]
                same = diff == 0
            if same:
                return s
        s = (s + one) & mask


@njit(cache=True, nogil=True)
def code_users(t_view, hmask, addr, end):  # pragma: no cover - compiled
    """The truth users placed by their 64-bit hashes (:func:`_read`) in a table of their ids (at
    most half full; a slot: the view's first word, then the id's words, :data:`SLOT_WORDS` at
    most; longer ids: their hash and their words, copied once per user into one array ``rep``),
    read from the views ``t_view`` and the data buffers at ``addr`` .. ``end`` (one chunk);
    every match confirmed on the ids' words (two ids sharing a hash stay apart). Returns
    ``t_code`` (each truth row's user, in order of first appearance), ``first`` (the first truth
    row of each user), the table, ``rep`` and the longest id's bytes :func:`lookup_users` reads,
    and each slot's code (-1: empty)."""
    n_t = len(t_view)
    longest = 0
    for i in range(n_t):
        longest = max(longest, np.int64(t_view[i, 0] & _LEN))
    most = _words(longest)
    long = most > SLOT_WORDS
    width = 3 if long else 1 + most
    size = 1024
    table = np.full((size, width), EMPTY, np.uint64)
    slot_code = np.full(size, -1, np.int32)
    rep = np.empty(1024 if long else 0, np.uint64)
    used = 0
    w = np.empty(most, np.uint64)
    t_code = np.empty(n_t, np.int32)
    first = np.empty(n_t, np.int64)
    n_users = 0
    z = np.uint64(0)
    xs = np.empty((BLOCK, 6), np.uint64)  # a block's hashes and words (their slots prefetched)
    for b0 in range(0, n_t, BLOCK):
        b1 = min(n_t, b0 + BLOCK)
        if not long:
            for i in range(b0, b1):
                h, x0, x1, x2, x3, x4 = _read5(t_view[i, 0], t_view[i, 1], addr, end, 0)
                h &= hmask
                _prefetch(table, np.intp(_slot(h, np.uint64(size - 1))))
                k = i - b0
                xs[k, 0], xs[k, 1], xs[k, 2], xs[k, 3], xs[k, 4], xs[k, 5] = h, x0, x1, x2, x3, x4
        for i in range(b0, b1):
            v0 = t_view[i, 0]
            x0, x1, x2, x3, x4, m = z, z, z, z, z, 1
            if long:
                h, m = _read(v0, t_view[i, 1], addr, end, 0, w)
                h &= hmask
                s = _find(table, rep, v0, w, m, h, np.uint64(size - 1))
            else:  # the words in registers (:func:`_read5`)
                k = i - b0
                h, x0, x1, x2, x3, x4 = xs[k, 0], xs[k, 1], xs[k, 2], xs[k, 3], xs[k, 4], xs[k, 5]
                s = _find5(table, most, v0, x0, x1, x2, x3, x4, h, np.uint64(size - 1))
            if table[s, 0] == EMPTY:
                if 2 * (n_users + 1) > size:  # grow: every id placed again (distinct ids: no comparison)
                    size *= 2
                    grown = np.full((size, width), EMPTY, np.uint64)
                    grown_code = np.full(size, -1, np.int32)
                    gmask = np.uint64(size - 1)
                    for q in range(len(table)):
                        if table[q, 0] != EMPTY:
                            if long and np.int64(table[q, 0] & _LEN) > INLINE:
                                g = _slot(table[q, 1], gmask)
                            else:
                                gh = _mix(table[q, 0], table[q, 1])
                                for j in range(2, 1 + _words(np.int64(table[q, 0] & _LEN))):
                                    gh = _mix(gh, table[q, j])
                                g = _slot(gh & hmask, gmask)
                            while grown[g, 0] != EMPTY:
                                g = (g + np.uint64(1)) & gmask
                            grown[g] = table[q]
                            grown_code[g] = slot_code[q]
                    table, slot_code = grown, grown_code
                    if long:
                        s = _find(table, rep, v0, w, m, h, np.uint64(size - 1))
                    else:
                        s = _find5(table, most, v0, x0, x1, x2, x3, x4, h, np.uint64(size - 1))
                table[s, 0] = v0
                if long and np.int64(v0 & _LEN) > INLINE:
                    while used + m > len(rep):
                        more = np.empty(2 * len(rep), np.uint64)
                        more[:used] = rep[:used]
                        rep = more
                    rep[used:used + m] = w[:m]
                    table[s, 1] = h
                    table[s, 2] = np.uint64(used)
                    used += m
                elif long:  # an id of at most 12 bytes: its view
                    table[s, 1], table[s, 2] = w[0], z
                else:  # the words, 0 past the id's
                    table[s, 1] = x0
                    if width > 2:
                        table[s, 2] = x1
                    if width > 3:
                        table[s, 3] = x2
                    if width > 4:
                        table[s, 4] = x3
                    if width > 5:
                        table[s, 5] = x4
                slot_code[s] = n_users
                first[n_users] = i
                n_users += 1
            t_code[i] = slot_code[s]
    return t_code, first[:n_users].copy(), table, rep[:used].copy(), longest, slot_code


@njit(cache=True, nogil=True)
def lookup_users(table, rep, longest, r_view, out, hmask, addr, end):  # pragma: no cover - compiled
    """``out[i]``: the slot of the user of row ``i`` (view ``r_view``, data buffers at ``addr`` ..
    ``end``) in the table of :func:`code_users` (and its ``rep``; ``longest``: the bytes of its
    longest id), -1 when it is no truth user (:func:`recode` turns slots into codes). Each row's
    bytes are read once, 8 at a time, for both its hash and its comparison; an id longer than
    every truth id is none (never read)."""
    mask = np.uint64(len(table) - 1)
    most = _words(longest)
    if most <= SLOT_WORDS:  # every truth id whole in its slot: the row's words read once, in blocks
        n = len(r_view)
        xs = np.empty((BLOCK, 6), np.uint64)  # a block's hashes and words; their slots prefetched
        for b0 in range(0, n, BLOCK):
            b1 = min(n, b0 + BLOCK)
            for i in range(b0, b1):
                v0 = r_view[i, 0]
                if np.int64(v0 & _LEN) > longest:
                    xs[i - b0, 0] = EMPTY
                    continue
                h, x0, x1, x2, x3, x4 = _read5(v0, r_view[i, 1], addr, end, 0)
                h &= hmask
                _prefetch(table, np.intp(_slot(h, mask)))
                k = i - b0
                xs[k, 0], xs[k, 1], xs[k, 2], xs[k, 3], xs[k, 4], xs[k, 5] = h, x0, x1, x2, x3, x4
            for i in range(b0, b1):
                k = i - b0
                if xs[k, 0] == EMPTY and np.int64(r_view[i, 0] & _LEN) > longest:
                    out[i] = -1
                    continue
                s = _find5(table, most, r_view[i, 0], xs[k, 1], xs[k, 2], xs[k, 3], xs[k, 4], xs[k, 5], xs[k, 0], mask)
                out[i] = -1 if table[s, 0] == EMPTY else np.int32(s)
        return
    w = np.empty(most, np.uint64)
    for i in range(len(r_view)):
        v0 = r_view[i, 0]
        if np.int64(v0 & _LEN) > longest:
            out[i] = -1
            continue
        h, m = _read(v0, r_view[i, 1], addr, end, 0, w)
        s = _find(table, rep, v0, w, m, h & hmask, mask)
        out[i] = -1 if table[s, 0] == EMPTY else np.int32(s)


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
                r_addr, r_end, r_first, t_addr, t_end, t_first,
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
            while i_row[s] >= 0 and not (i_key[s] == h and (not exact or _same(t_view, t_starts, t_addr, t_end, t_first, t,
                                                                                t_view, t_starts, t_addr, t_end, t_first, i_row[s]))):
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
                    _same(r_view, r_starts, r_addr, r_end, r_first, r, t_view, t_starts, t_addr, t_end, t_first, i_row[s])
                    if i_truth[s] else
                    _same(r_view, r_starts, r_addr, r_end, r_first, r, r_view, r_starts, r_addr, r_end, r_first, i_row[s])))):
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


@njit(cache=True, nogil=True, parallel=True)
def match(rst, rg, tst, tg, relevant, mode, r_view, r_starts, t_view, t_starts, exact, r_addr, r_end, r_first,
          t_addr, t_end, t_first):  # pragma: no cover - compiled
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
    the data buffers at ``r_addr`` .. ``r_end``, ``t_addr`` .. ``t_end``, each chunk's first at
    ``r_first``, ``t_first``), so
    a hash match is confirmed here on the ids' bytes (two items sharing a hash are two items; a
    repeat is a repeated item) and the hits need no other confirmation.

    Returns (status, hit_user, hit_row, hit_t, hit_pos, hit_lo, hit_hi, first_tie, max_pos): the
    hits grouped by user in position order (``hit_row`` / ``hit_t``: recommendation and truth
    row indices, to be confirmed on the ids when not ``exact``); per user, ``first_tie``: the
    first position of a tie group of two or more rows (:data:`NO_TIE`: none) and ``max_pos``: its
    last position. ``status`` != OK: the call is not decided here (no arrays are meaningful)."""
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
                                          t_view, t_starts, exact, r_addr, r_end, r_first, t_addr, t_end, t_first,
                                          hit_user, hit_row, hit_t, hit_pos, hit_lo,
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


@njit(cache=True, nogil=True)
def scatter(codes, row0, g0, g1, lo_bits, fill, out, views, hashes, from_views, hmask, sbits, addr, end):  # pragma: no cover
    """The first radix pass of :func:`receval.kernels._radix` for one segment of rows (``row0``: its first
    row): each row of a code in ``g0`` .. ``g1`` - 1 written at ``fill`` of its bucket (the high
    bits of code - ``g0``) as a (low bits << 32 | row, item hash, score bits) record; the item
    hash from the view (:func:`_hash_id`, ``from_views``; ``addr`` .. ``end``: the data buffers
    of the segment's chunk) or ``hashes``; -0.0 as 0.0."""
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
            out[q, 1] = (_hash_id(views[j, 0], views[j, 1], addr, end, 0) & hmask) if from_views else hashes[j]
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
