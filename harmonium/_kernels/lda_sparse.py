"""SparseLDA bucket sampling for collapsed Gibbs LDA (Yao, Mimno & McCallum 2009, §3.4).

The collapsed conditional (seed 003; ``lda_gibbs.collapsed_conditional``)

    p(z_i = k | z_-i, w) ∝ (alpha_k + n_dk)(n_wk + beta) / (n_k + V beta)

splits, with c_k = 1 / (n_k + V beta), into three buckets

    s = sum_k  alpha_k beta c_k                    (all K topics, rarely entered)
    r = sum_{k: n_dk > 0}  n_dk beta c_k           (the document's topics)
    q = sum_{k: n_wk > 0}  (alpha_k + n_dk) n_wk c_k   (the word's topics)

so that a draw costs O(k_w) plus, when it falls in the r bucket, O(k_d),
instead of O(K). The draw is exact: the three buckets add up to the
conditional term by term. ``s``, ``r`` and the coefficients
(alpha_k + n_dk) c_k are updated incrementally (O(1) a token); r is
recomputed at every document and s every 256 documents so that rounding
cannot drift.

Per-word lists of the topics with n_wk > 0 live in one flat int64 array: word w owns ``wlist[wptr[w] :
wptr[w] + wlen[w]]``, capacity min(K, frequency of w). Each entry packs one (count, topic) pair, ``n_wk
<< bits | k`` with ``bits = topic_bits(K)`` (MALLET's type-topic counts do the same), so the q walk
reads one contiguous array and the sweep never reads the dense (V, K) n_wk, whose rows miss the cache at
large K; it writes n_wk back from the lists when it ends. The s bucket, entered rarely but O(K) each
time, is walked by blocks of about sqrt(K) topics whose masses are kept next to s (``smoothing_blocks``,
``smoothing_pick``). The q walk also finds the token's old topic in the word's list and counts it one
lower there; the entry stays in place through the draw (at count zero it adds nothing to q and cannot be
drawn) and leaves the list, swapped with the last, only if the token moves (one walk of the list a token
instead of two; issue 21). The uniforms come from a xoshiro256+ generator inlined in the sweep
(``xoshiro_next``), seeded by one draw of the numpy Generator per call, so the same Generator state
gives the same sweep. A token that draws its old topic again (most tokens once the chain settles) gets
s, r, c_k, q's coefficient and its smoothing block back as they were before its removal instead of
recomputed (no division); in exact arithmetic that is the same state, in floating point it can differ
from the recomputed one in the last bits, so the same uniforms give the same z as the plain-numpy twin
(tests/kernels/test_lda_sparse_parity.py) except where a uniform falls within rounding of a bucket
boundary.
All functions mutate their array arguments in place.

Document counts: the serial sweep needs only the current document's row of
n_dk. With ``n_dk=None`` it rebuilds that row from the token topics z into a
K-length scratch ``drow`` when it reaches the document (O(N_d), in the same walk
that lists the document's topics) and clears it after (O(k_d)), as
MALLET's ``sampleTopicsForOneDoc`` does; no D x K table is needed. The
word-partitioned sweep visits a document once per word block and keeps the
dense n_dk. The arithmetic is the same either way, so the same uniforms give
the same z.
"""

from __future__ import annotations

import numpy as np
from numba import config as numba_config
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from harmonium._kernels.lda_stats import sort_ascending


@njit(cache=True, nogil=True, inline="always")
def topic_bits(K):
    """The number of low bits that hold a topic in a packed word-list entry: the bit length of K - 1 (at least 1)."""
    b = 1
    while (1 << b) < K:
        b += 1
    return b


@njit(cache=True, nogil=True, inline="always")
def _build_word_list(n_wk, w, wptr, wlist, wlen, bits):
    K = n_wk.shape[1]
    base = wptr[w]
    m = 0
    if wptr[w + 1] > base:
        for k in range(K):
            n = n_wk[w, k]
            if n > 0:
                # insertion into the run wlist[base:base+m], counts descending (ties: topic ascending)
                v = (np.int64(n) << bits) | k
                j = base + m
                while j > base and (wlist[j - 1] >> bits) < n:
                    wlist[j] = wlist[j - 1]
                    j -= 1
                wlist[j] = v
                m += 1
    wlen[w] = m


@njit(cache=True, nogil=True)
def build_word_lists(n_wk, wptr, wlist, wlen):
    """Fill the per-word lists of non-zero topics from the dense counts, largest count first.

    Each entry packs one (count, topic) pair, ``n_wk[w, k] << bits | k`` with ``bits =``
    :func:`topic_bits` (K), in an int64 (MALLET packs its type-topic counts the same way), so the walk
    through the q bucket reads one contiguous array instead of a topic list and a gather into n_wk.
    The order makes that walk's pick stop early (Yao et al. 2009 keep the lists sorted for the same
    reason); it does not affect which topic a uniform maps to in distribution, only how fast it is found.
    """
    bits = topic_bits(n_wk.shape[1])
    for w in range(n_wk.shape[0]):
        _build_word_list(n_wk, w, wptr, wlist, wlen, bits)


@njit(cache=True, nogil=True)
def build_block_word_lists(n_wk, block_words, wptr, wlist, wlen):
    """:func:`build_word_lists` for the words ``block_words`` only (the other words' lists are left as they are)."""
    bits = topic_bits(n_wk.shape[1])
    for j in range(block_words.shape[0]):
        _build_word_list(n_wk, block_words[j], wptr, wlist, wlen, bits)


@njit(cache=True, nogil=True, inline="always")
def _refresh_word_list(n_wk, row_sums, w, wptr, wlist, wlen, bits, mask):
    """Keep (re-sorted) word w's list if it holds exactly the non-zero counts of its row, else rebuild it;
    returns 1 if it was rebuilt (see :func:`refresh_word_lists`)."""
    K = n_wk.shape[1]
    base = wptr[w]
    m = wlen[w]
    ok = 0 <= m <= wptr[w + 1] - base
    total = 0
    if ok:
        for j in range(base, base + m):
            v = wlist[j]
            k = v & mask
            n = v >> bits
            if k >= K or n <= 0 or n_wk[w, k] != n:
                ok = False
                break
            total += n
    if ok and total == row_sums[w]:
        # insertion sort on the key count << bits | (mask - topic), descending
        for j in range(base + 1, base + m):
            v = wlist[j]
            key = (v & ~mask) | (mask - (v & mask))
            i = j
            while i > base and ((wlist[i - 1] & ~mask) | (mask - (wlist[i - 1] & mask))) < key:
                wlist[i] = wlist[i - 1]
                i -= 1
            wlist[i] = v
        return 0
    _build_word_list(n_wk, w, wptr, wlist, wlen, bits)
    return 1


@njit(cache=True, nogil=True)
def refresh_word_lists(n_wk, row_sums, wptr, wlist, wlen):
    """:func:`build_word_lists` at the cost of the lists, not of the (V, K) table; returns how many were rebuilt.

    A word's list is kept when it holds exactly the non-zero counts of its row of ``n_wk``: every entry's
    count equals n_wk and is positive, and the counts add up to ``row_sums[w]``, the row's total (the
    word's frequency), so no other topic can have a count. It is then sorted again into the order
    :func:`build_word_lists` gives (count descending, ties topic ascending); the sweep leaves it nearly
    sorted. Any other list (``wlen`` all zero on the first call, n_wk changed outside the sweep) is rebuilt
    from its row. The serial sweep leaves its lists in step with n_wk, so after the first sweep this reads
    O(sum of k_w) cells of n_wk instead of all V K.
    """
    bits = topic_bits(n_wk.shape[1])
    mask = (np.int64(1) << bits) - 1
    rebuilt = 0
    for w in range(n_wk.shape[0]):
        rebuilt += _refresh_word_list(n_wk, row_sums, w, wptr, wlist, wlen, bits, mask)
    return rebuilt


@njit(cache=True, nogil=True)
def refresh_block_word_lists(n_wk, row_sums, block_words, wptr, wlist, wlen):
    """:func:`refresh_word_lists` for the words ``block_words`` only (the word-partitioned sweep's blocks)."""
    bits = topic_bits(n_wk.shape[1])
    mask = (np.int64(1) << bits) - 1
    rebuilt = 0
    for j in range(block_words.shape[0]):
        rebuilt += _refresh_word_list(n_wk, row_sums, block_words[j], wptr, wlist, wlen, bits, mask)
    return rebuilt


@njit(cache=True, nogil=True, inline="always")
def _u(i):
    """The index i (>= 0) as an unsigned integer, for the sweep's lookups.

    numba indexes with a signed integer through a wraparound (i < 0: i + length), a select of three or four
    instructions a lookup; with an unsigned one it does not. The sweep makes a dozen lookups a token and
    several a word-list entry; without the selects the serial sweep is 1.14-1.29x faster at Debian and PyPI
    K = 100 and Debian K = 1000, with the same z
    (benchmarks/lda/README.md, "Unsigned indices"). Only for indices known to be >= 0: a negative one would
    read outside the array, where a signed one wrapped; under NUMBA_DISABLE_JIT numpy refuses it
    (OverflowError or IndexError), so the plain-Python kernel tests would catch one.
    """
    return np.uint64(i)


@njit(cache=True, nogil=True, inline="always")
def list_remove(lst, base, length, k):
    """Remove value k from lst[base:base+length] (swap with last); returns the new length."""
    for j in range(base, base + length):
        if lst[_u(j)] == k:
            lst[_u(j)] = lst[_u(base + length - 1)]
            return length - 1
    return length


@njit(cache=True, nogil=True, inline="always")
def packed_list_move(lst, base, m, at_old, at, new, one, mask):
    """Finish a token's move from topic old to ``new`` in the packed list ``lst[base : base + m]`` of
    (count << bits | topic) entries (``one`` = 1 << bits, ``mask`` = one - 1), whose entry at ``at_old`` (old's)
    has already been counted one lower: that entry leaves at count zero (swapped with the last), then new's
    entry, at ``at`` (or -1: found by a walk), is counted one higher, or appended. Returns the new length.

    The word lists of the SparseLDA sweep and the document lists of the F+LDA sweep (lda_fplus) both move so.
    """
    if lst[_u(base + at_old)] < one:
        m -= 1
        lst[_u(base + at_old)] = lst[_u(base + m)]
        if at == m:
            at = at_old
    if at < 0:
        at = m
        for j in range(m):
            if (lst[_u(base + j)] & mask) == new:
                at = j
                break
    if at < m:
        lst[_u(base + at)] += one
        return m
    lst[_u(base + m)] = one | new
    return m + 1


@njit(cache=True, nogil=True, inline="always")
def doc_topics(doc_ptr, z, d, in_doc, dtop):
    """List the distinct topics of document d's tokens in ``dtop``, marking them in ``in_doc``; returns how many.

    Branch-free (a branch a token, taken at each topic's first token, is mispredicted about k_d times a
    document): each token's topic is written past the list's end and kept there only when it is new.
    """
    cap = dtop.shape[0]
    dlen = 0
    for i in range(doc_ptr[d], doc_ptr[d + 1]):
        k = z[i]
        if dlen < cap:
            dtop[dlen] = k
        dlen += in_doc[k] == 0
        in_doc[k] = 1
    return dlen


@njit(cache=True, nogil=True)
def refresh_doc_lists(doc_ptr, z, n_dk, d_lo, d_hi, dptr, dlist, dlens, in_doc):
    """Make document d's topic list ``dlist[dptr[d] : dptr[d] + dlens[d]]`` current for d_lo <= d < d_hi,
    in ascending topic order; returns how many were rebuilt.

    A list is kept when its topics are distinct, each has n_dk > 0 and their counts add up to the
    document's length, so that no other topic can have a count (O(k_d)); any other list (``dlens`` zero at
    first) is found again from z as :func:`doc_topics` does (O(N_d)). Either way it is then sorted, so the
    lists a sweep starts from depend on n_dk alone, not on the history of the run (a resumed run draws
    what the uninterrupted one drew). ``dptr`` holds capacities min(N_d, K); ``in_doc`` is all zero on
    entry and exit.
    """
    rebuilt = 0
    for d in range(d_lo, d_hi):
        base = dptr[d]
        m = dlens[d]
        ok = 0 <= m <= dptr[d + 1] - base
        total = 0
        if ok:
            for j in range(base, base + m):
                k = dlist[j]
                if k < 0 or k >= n_dk.shape[1] or in_doc[k] != 0 or n_dk[d, k] <= 0:
                    ok = False
                    break
                in_doc[k] = 1
                total += n_dk[d, k]
            for j in range(base, base + m):
                k = dlist[j]
                if 0 <= k < n_dk.shape[1]:
                    in_doc[k] = 0
        if not (ok and total == doc_ptr[d + 1] - doc_ptr[d]):
            dl = dlist[base:dptr[d + 1]]
            dlens[d] = doc_topics(doc_ptr, z, d, in_doc, dl)
            for j in range(dlens[d]):
                in_doc[dl[j]] = 0
            rebuilt += 1
        sort_ascending(dlist, base, base + dlens[d])  # the sweep leaves a list nearly sorted
    return rebuilt


@njit(cache=True, nogil=True, inline="always")
def word_bucket_pick(u, qbuf, wtop, base, n):
    """The topic of the word bucket (SparseLDA's q) whose cumulative mass ``qbuf[j]`` first exceeds u.

    The bucket's topics are ``wtop[base : base + n]``; the last one when rounding leaves u above them all.
    """
    for j in range(n):
        if u < qbuf[j]:
            return wtop[base + j]
    return wtop[base + n - 1]


@njit(cache=True, nogil=True, inline="always")
def doc_row_bucket_pick(u, row, dtop, dlen, beta, c):
    """The topic of the document bucket (SparseLDA's r: n_dk beta c_k over d's topics ``dtop[:dlen]``, with
    ``row`` = n_dk[d]) at which the running mass first exceeds u; the last on rounding, -1 when the document
    has no topic."""
    acc = 0.0
    for j in range(dlen):
        k = dtop[j]
        acc += row[_u(k)] * beta * c[_u(k)]
        if u < acc:
            return k
    return dtop[dlen - 1] if dlen > 0 else -1


@njit(cache=True, nogil=True, inline="always")
def doc_bucket_pick(u, n_dk, d, dtop, dlen, beta, c):
    """:func:`doc_row_bucket_pick` over document d's row of the (D, K) table ``n_dk`` (the HDP sweep's form)."""
    return doc_row_bucket_pick(u, n_dk[d], dtop, dlen, beta, c)


@njit(cache=True, nogil=True)
def smoothing_blocks(alpha, beta, c, sblk, shift):
    """Fill ``sblk[b]`` with the smoothing mass alpha_k beta c_k of topics b << shift .. (b + 1) << shift; returns s.

    s is summed topic by topic in order, as before the blocks existed, so that it does not depend on ``shift``.
    """
    s = 0.0
    sblk[:] = 0.0
    for k in range(alpha.shape[0]):
        x = alpha[k] * beta * c[k]
        s += x
        sblk[k >> shift] += x
    return s


@njit(cache=True, nogil=True, inline="always")
def smoothing_pick(u, alpha, beta, c, sblk, shift):
    """The topic of the smoothing bucket (SparseLDA's s) at which the running mass alpha_k beta c_k first exceeds u.

    A walk over the block masses ``sblk`` (see :func:`smoothing_blocks`), then inside the block: O(K / B + B)
    for blocks of B = 2**shift topics instead of O(K). The last topic of the block on rounding (the block sums
    are kept incrementally and may differ from the topic-by-topic sums in the last bits).
    """
    K = alpha.shape[0]
    nb = sblk.shape[0]
    acc = 0.0
    b = nb - 1
    for j in range(nb):
        if u < acc + sblk[_u(j)]:
            b = j
            break
        acc += sblk[_u(j)]
    hi = min(K, (b + 1) << shift)
    for k in range(b << shift, hi):
        acc += alpha[_u(k)] * beta * c[_u(k)]
        if u < acc:
            return k
    return hi - 1


def _prefetch_py(arr, i):
    """The pure-Python stand-in for :func:`prefetch` (NUMBA_DISABLE_JIT=1): nothing to do."""


@intrinsic
def _prefetch_llvm(typingctx, arr, i):
    sig = types.void(arr, i)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        ir = cgutils.ir  # llvmlite's IR builder, through numba (this folder imports numpy, math and numba only)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep in all caches, data
        return context.get_dummy_value()

    return sig, codegen


#: ``prefetch(arr, i)``: ask the CPU to bring arr[i] into cache (LLVM's prefetch; no effect on results).
prefetch = _prefetch_py if numba_config.DISABLE_JIT else _prefetch_llvm

#: How many tokens ahead the sweep prefetches the next word's list (and twice as far ahead its entries in ``wptr``
#: and ``wlen``). 4 and 8 against 2 (the list only): 1.02-1.03x faster serial sweeps in one process, the same z
#: (benchmarks/lda/README.md, "F+LDA: the document entries prefetched", last paragraph).
PREFETCH_AHEAD = 4


_SM_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_SM_M1 = np.uint64(0xBF58476D1CE4E5B9)
_SM_M2 = np.uint64(0x94D049BB133111EB)
_TWO_M53 = 1.0 / 9007199254740992.0
_MASK64 = (1 << 64) - 1


@njit(cache=True, nogil=True, inline="always")
def _splitmix64_jit(x):
    x = x + _SM_GAMMA
    y = x
    y = (y ^ (y >> np.uint64(30))) * _SM_M1
    y = (y ^ (y >> np.uint64(27))) * _SM_M2
    return x, y ^ (y >> np.uint64(31))


def _splitmix64_py(x):
    x = (int(x) + 0x9E3779B97F4A7C15) & _MASK64
    y = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    y = ((y ^ (y >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x, y ^ (y >> 31)


@njit(cache=True, nogil=True, inline="always")
def _xoshiro_next_jit(s0, s1, s2, s3):
    u = ((s0 + s3) >> np.uint64(11)) * _TWO_M53
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
    return u, s0, s1, s2, s3


def _xoshiro_next_py(s0, s1, s2, s3):
    u = (((s0 + s3) & _MASK64) >> 11) * _TWO_M53
    t = (s1 << 17) & _MASK64
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = ((s3 << 45) & _MASK64) | (s3 >> 19)
    return u, s0, s1, s2, s3


#: One step of SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number generators"):
#: (next state, output), uint64 (Python ints, masked, under NUMBA_DISABLE_JIT).
splitmix64 = _splitmix64_py if numba_config.DISABLE_JIT else _splitmix64_jit
#: One step of xoshiro256+ (Blackman & Vigna 2021, "Scrambled linear pseudorandom number generators", ACM
#: TOMS 47(4)): (u, s0, s1, s2, s3), u uniform in [0, 1) from the upper 53 bits of s0 + s3, the generator
#: its authors give for floating-point numbers. Inlined in the sweep: a numpy Generator's ``random()`` is a
#: call through a function pointer, about 5 ns a token (issue 21).
xoshiro_next = _xoshiro_next_py if numba_config.DISABLE_JIT else _xoshiro_next_jit


@njit(cache=True, nogil=True)
def xoshiro_seed(rng):
    """The four words of a xoshiro256+ state from one draw of the numpy Generator ``rng``, expanded by
    SplitMix64 as Blackman & Vigna advise (its outputs from one seed are never all zero)."""
    x = np.uint64(rng.integers(0, 9223372036854775807))
    x, s0 = splitmix64(x)
    x, s1 = splitmix64(x)
    x, s2 = splitmix64(x)
    x, s3 = splitmix64(x)
    return s0, s1, s2, s3


@njit(cache=True, nogil=True)
def _sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, order, cell_ptr, block,
           block_words, wptr, wlist, wlen, c, qcoef, qbuf, dtop_s, in_doc, drow, dptr, dlist, dlens):
    """The sweep of :func:`sparse_sweep` (``order``, ``cell_ptr``, ``block_words`` None) and :func:`sparse_sweep_cell`.

    numba compiles one version per argument types and prunes the ``is None`` branches, so the
    serial sweep carries no cell lookups. ``row`` is document d's row of the counts: ``n_dk[d]``, or,
    when ``n_dk`` is None, the scratch ``drow`` (zero on entry and exit, the dtype of n_dk's rows)
    filled from z at the document's start.

    The word-topic counts are read and written in the packed lists only; the dense ``n_wk`` is written
    when an entry leaves its list (count zero) and, at the end, from the lists of the words swept
    (all words, or ``block_words``). Its rows are a cache miss a token at large K, the lists are not.
    """
    K = n_k.shape[0]
    v_beta = beta * n_wk.shape[0]
    for k in range(K):
        c[k] = 1.0 / (n_k[k] + v_beta)
        qcoef[k] = alpha[k] * c[k]
    bits = topic_bits(K)
    one = np.int64(1) << bits
    mask = one - 1
    shift = max(3, (bits + 1) // 2)  # smoothing blocks of about sqrt(K) topics
    sblk = np.empty(((K - 1) >> shift) + 1)
    s = smoothing_blocks(alpha, beta, c, sblk, shift)
    n_changed = 0
    x0, x1, x2, x3 = xoshiro_seed(rng)  # the sweep's uniforms (xoshiro_next), one draw of rng
    # the tokens the look-ahead may reach: the serial sweep's are doc_ptr[d_lo] .. doc_ptr[d_hi] in stream order; a
    # cell sweep's are one run of order, the cells of block ``block`` of documents d_lo .. d_hi - 1
    n_docs = doc_ptr.shape[0] - 1
    stream_end = doc_ptr[d_hi] if cell_ptr is None else cell_ptr[block * n_docs + d_hi]
    for d in range(d_lo, d_hi):
        if (d - d_lo) % 256 == 0:
            s = smoothing_blocks(alpha, beta, c, sblk, shift)
        if cell_ptr is None:
            lo = doc_ptr[d]
            hi = doc_ptr[d + 1]
        else:
            lo = cell_ptr[_u(block * n_docs + d)]
            hi = cell_ptr[_u(block * n_docs + d + 1)]
            if lo == hi:
                continue
        # the document's counts, topic list and q coefficients
        if dlist is None and n_dk is None:
            # one walk over the document's tokens fills its row and lists its topics (first occurrence order)
            dtop = dtop_s
            row = drow
            dlen = 0
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                k = z[_u(i)]
                # branch-free: k is written past the list's end and kept there only when it is new
                if dlen < K:
                    dtop[_u(dlen)] = k
                dlen += row[_u(k)] == 0
                in_doc[_u(k)] = 1
                row[_u(k)] += 1
        else:
            if dlist is None:
                dtop = dtop_s
                dlen = doc_topics(doc_ptr, z, d, in_doc, dtop)
            else:  # the document's list kept between visits (refresh_doc_lists): no walk over its tokens
                dtop = dlist[dptr[d]:dptr[d + 1]]
                dlen = dlens[d]
            if n_dk is None:
                row = drow
                for i in range(doc_ptr[d], doc_ptr[d + 1]):
                    row[_u(z[_u(i)])] += 1
            else:
                row = n_dk[d]
        r = 0.0
        for j in range(dlen):
            kd = _u(dtop[j])
            qcoef[kd] = (alpha[kd] + row[kd]) * c[kd]
            r += row[kd] * beta * c[kd]
        for j0 in range(lo, hi):
            # the word entries (wptr, wlen) of the token 2 PREFETCH_AHEAD ahead, the list of the one PREFETCH_AHEAD
            # ahead; on into the next document (short documents: issue 21), or the next document's cell of the block
            if order is None:
                i = j0
                if j0 + 2 * PREFETCH_AHEAD < stream_end:
                    ahead = words[_u(j0 + 2 * PREFETCH_AHEAD)]
                    prefetch(wptr, ahead)
                    prefetch(wlen, ahead)
                if j0 + PREFETCH_AHEAD < stream_end:
                    prefetch(wlist, wptr[_u(words[_u(j0 + PREFETCH_AHEAD)])])
            else:
                i = order[_u(j0)]
                if j0 + 2 * PREFETCH_AHEAD < stream_end:
                    ahead = words[_u(order[_u(j0 + 2 * PREFETCH_AHEAD)])]
                    prefetch(wptr, ahead)
                    prefetch(wlen, ahead)
                if j0 + PREFETCH_AHEAD < stream_end:
                    prefetch(wlist, wptr[_u(words[_u(order[_u(j0 + PREFETCH_AHEAD)])])])
            w = words[_u(i)]
            old = z[_u(i)]
            # remove the token (what it changes is kept, to be restored if the token draws its topic again)
            s_was = s
            r_was = r
            c_was = c[_u(old)]
            sblk_was = sblk[_u(old >> shift)]
            qcoef_was = qcoef[_u(old)]
            x = alpha[_u(old)] * beta * c[_u(old)]
            s -= x
            r -= row[_u(old)] * beta * c[_u(old)]
            n_k[_u(old)] -= 1
            c[_u(old)] = 1.0 / (n_k[_u(old)] + v_beta)
            y = alpha[_u(old)] * beta * c[_u(old)]
            s += y
            sblk[_u(old >> shift)] += y - x
            row[_u(old)] -= 1
            r += row[_u(old)] * beta * c[_u(old)]
            if row[_u(old)] == 0:
                dlen = list_remove(dtop, 0, dlen, old)
                in_doc[_u(old)] = 0
            qcoef[_u(old)] = (alpha[_u(old)] + row[_u(old)]) * c[_u(old)]
            # the q walk, which also finds old's entry in the word's list and counts it one lower; the entry
            # stays in place (with a zero count it adds nothing to q and cannot be drawn) until the draw is made
            base = wptr[_u(w)]
            m = wlen[_u(w)]
            q = 0.0
            at_old = 0
            for j in range(m):
                v = wlist[_u(base + j)]
                k = v & mask
                n = v >> bits
                if k == old:
                    n -= 1
                    at_old = j
                q += qcoef[_u(k)] * n
                qbuf[_u(j)] = q
            wlist[_u(base + at_old)] -= one
            u, x0, x1, x2, x3 = xoshiro_next(x0, x1, x2, x3)
            u *= s + r + q
            at = -1  # the new topic's position in the word's list, when known
            if u < q:
                at = m - 1
                for j in range(m):
                    if u < qbuf[_u(j)]:
                        at = j
                        break
                new = wlist[_u(base + at)] & mask
            elif u < q + r and dlen > 0:  # (no topic: r is rounding, the draw falls to s)
                new = doc_row_bucket_pick(u - q, row, dtop, dlen, beta, c)
            else:
                new = smoothing_pick(u - (q + r), alpha, beta, c, sblk, shift)
            # add the token back with its new topic
            if new == old:
                # the state before the removal, restored as it was (no division, no rounding)
                s = s_was
                r = r_was
                c[_u(old)] = c_was
                sblk[_u(old >> shift)] = sblk_was
                qcoef[_u(old)] = qcoef_was
                n_k[_u(old)] += 1
                if row[_u(old)] == 0:
                    dtop[_u(dlen)] = old
                    dlen += 1
                    in_doc[_u(old)] = 1
                row[_u(old)] += 1
                wlist[_u(base + at_old)] += one
                continue
            else:
                z[_u(i)] = new
                n_changed += 1
                x = alpha[_u(new)] * beta * c[_u(new)]
                s -= x
                r -= row[_u(new)] * beta * c[_u(new)]
                n_k[_u(new)] += 1
                c[_u(new)] = 1.0 / (n_k[_u(new)] + v_beta)
                y = alpha[_u(new)] * beta * c[_u(new)]
                s += y
                sblk[_u(new >> shift)] += y - x
                if row[_u(new)] == 0:
                    dtop[_u(dlen)] = new
                    dlen += 1
                    in_doc[_u(new)] = 1
                row[_u(new)] += 1
                r += row[_u(new)] * beta * c[_u(new)]
                qcoef[_u(new)] = (alpha[_u(new)] + row[_u(new)]) * c[_u(new)]
            if wlist[_u(base + at_old)] < one:  # old's entry leaves the list at count zero: its dense cell too
                n_wk[w, old] = 0
            wlen[_u(w)] = packed_list_move(wlist, base, m, at_old, at, new, one, mask)
        # restore the document-free coefficients
        for j in range(dlen):
            kd = _u(dtop[j])
            qcoef[kd] = alpha[kd] * c[kd]
            in_doc[kd] = 0
            if n_dk is None:
                row[kd] = 0
        if dlist is not None:
            dlens[d] = dlen
    # the dense counts from the lists (entries that left were zeroed when they left)
    if block_words is None:
        for w in range(n_wk.shape[0]):
            for j in range(wptr[w], wptr[w] + wlen[w]):
                n_wk[w, wlist[j] & mask] = wlist[j] >> bits
    else:
        for jw in range(block_words.shape[0]):
            w = block_words[jw]
            for j in range(wptr[w], wptr[w] + wlen[w]):
                n_wk[w, wlist[j] & mask] = wlist[j] >> bits
    return n_changed


@njit(cache=True, nogil=True)
def sparse_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi,
                 wptr, wlist, wlen, c, qcoef, qbuf, dtop, in_doc, drow):
    """One systematic-scan sweep over documents d_lo..d_hi-1; returns the number of changed z.

    Scratch (length K): ``c``, ``qcoef``, ``qbuf`` float64; ``dtop`` int32;
    ``in_doc`` uint8 (all zero on entry and exit); ``drow`` the document's counts when ``n_dk`` is
    None (zero on entry and exit; with an ``n_dk``, unused but of the dtype of n_dk).
    ``wptr`` (V+1) int64, ``wlist`` int64 (packed entries), ``wlen`` (V) int32 must come from
    :func:`build_word_lists` on the same ``n_wk``; the sweep keeps them and ``n_wk`` in step.
    ``n_dk`` is the (D, K) table, updated in place, or None: each document's counts are then rebuilt
    from ``z`` (module docstring).
    """
    return _sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, None, None, 0, None,
                  wptr, wlist, wlen, c, qcoef, qbuf, dtop, in_doc, drow, None, None, None)


@njit(cache=True, nogil=True)
def sparse_sweep_cell(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, order, cell_ptr,
                      block, block_words, wptr, wlist, wlen, c, qcoef, qbuf, dtop, in_doc, drow,
                      dptr, dlist, dlens):
    """:func:`sparse_sweep` over the tokens of documents d_lo..d_hi-1 whose words lie in word block ``block``.

    Document d's tokens of block b are ``order[cell_ptr[b * D + d] : cell_ptr[b * D + d + 1]]`` (D documents;
    positions in the token stream, in stream order; a block's cells of consecutive documents adjacent, as
    :func:`harmonium.parallel.threads.cell_order` lays them out, so that the look-ahead runs on across
    documents); ``block_words`` are the block's words. Used by the
    word-partitioned parallel sampler (harmonium.inference.mcmc.lda.parallel_gibbs): only the rows of n_wk
    of the block's words are read or written, and only their word lists must be current. Same scratch as
    :func:`sparse_sweep`. With ``dptr``, ``dlist``, ``dlens`` (from :func:`refresh_doc_lists` on the same
    n_dk) each document's topic list is kept between its visits, one a word block, instead of being found
    again by a walk over all its tokens at every visit; without them (None) it is found by the walk.
    """
    return _sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, order, cell_ptr, block,
                  block_words, wptr, wlist, wlen, c, qcoef, qbuf, dtop, in_doc, drow, dptr, dlist, dlens)
