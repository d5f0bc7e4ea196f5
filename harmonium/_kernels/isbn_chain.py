"""Compiled collapsed Gibbs sweeps for branch-shaped ISBNs: one or two latent chains joined at one observation.

Seed 002 §4 (eqs. 1-2) for the networks whose factor graph is a path: latent chain A (a_0 -> ... -> a_{m-1})
and optionally chain B (b_0 -> ... -> b_{n-1}), the leaves being the parents of the one observed node x
(HDP, DP mixture, infinite PAM, POM, nested DP; BiHDP and "every branch becomes a PAM"). Nodes are numbered
0..m-1 along A (root first) and m..m+n-1 along B (root first); node b's parent is b - 1 except for the two roots.

Per item i (``sweep``): remove i from all counts; retire the states it leaves empty (an HDP state's weight
returns to tau_u); fill the forward-filtering tables of eq. 1 (``_build``): the forward messages of chain B
mu_b(k) (root to leaf), the observation factor F(x_i | a, b) of eq. 2 against mu of B's leaf, then the upward
messages beta of chain A (leaf to root); draw a_0, a_1 | a_0, ..., the B leaf | A leaf, b_{j} | b_{j+1}
(backward sampling, seed 002 §4); create the NEW states drawn (HDP: tau_new = beta tau_u, beta ~ Beta(1, gamma));
add i back.

The prior term of node b in state k given its parent's state l and its index row r is
(extra[b, k] + N_{k|l,r}) / (alpha_b + N_{l,r}) for an existing state and newmass[b] / (alpha_b + N_{l,r}) for a
new one, with extra = alpha tau_k (HDP), 0 (DP), alpha / K (finite Dirichlet) and newmass = alpha tau_u (HDP),
alpha (DP); a NEW parent state has an empty row (N = 0), which gives the empty-row prior of the Python engine.
F is the Dirichlet-multinomial (Beta-binomial) predictive of eq. 2 without its constant multinomial coefficient.

State layout (all mutated in place; slots instead of labels): ``Cs[b]`` (n_rows_b, parent capacity or 1,
capacity_b) int32 counts N_{k|l,r}, ``Ts[b]`` (n_rows_b, parent capacity or 1) int32 row totals N_{l,r};
``act[b, :K[b]]`` the alive slots in label order (new states are appended with the next label, retired ones
removed in order, so a uniform draw picks the same state as in the Python engine, whose alive list is
sorted) and ``act[b, K[b]:]`` the free ones (a permutation, ``posof`` its inverse);
``used[b, s]`` items in slot s; ``obs[c, a, b]`` the observed counts per category c over (A leaf, B leaf or
0), category-major so that F of one item over the leaf states reads contiguous memory.
Training sweeps of one node, or of a two-node chain, over a Categorical observation skip the dense tables:
``_sweep_one_node`` and ``_sweep_two_nodes`` use the SparseLDA decomposition (Yao, Mimno & McCallum 2009) with
the CDF inverted in position order, so they draw the same states as the dense path (see their docstrings).
Kernels never raise; the Python side (``harmonium.inference.mcmc.isbn.compiled``) validates and grows capacity.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harmonium._kernels.hdp import antoniak
from harmonium._kernels.lda_sparse import list_remove


@njit(cache=True, nogil=True, inline="always")
def _prior_row(Cb, Tb, r, pslot, b, act, K, inf, extra, newmass, alpha, out):
    """out[pos] = prior term of node b at domain position pos (pos == K[b]: NEW) given parent slot ``pslot``
    (-1: a NEW parent, an empty row) and index row r (eq. 1); returns the domain size."""
    Kb = K[b]
    if pslot >= 0:
        inv = 1.0 / (alpha[b] + Tb[r, pslot])
        for kk in range(Kb):
            s = act[b, kk]
            out[kk] = (extra[b, s] + Cb[r, pslot, s]) * inv
    else:
        inv = 1.0 / alpha[b]
        for kk in range(Kb):
            out[kk] = extra[b, act[b, kk]] * inv
    if inf[b]:
        out[Kb] = newmass[b] * inv
        return Kb + 1
    return Kb


@njit(cache=True, nogil=True, inline="always")
def _pred(obs, obs_tot, obs_inv, aslot, bslot, x, okind, n_trials, pa, pa_sum):
    """F(x | x_-i, parents) of eq. 2 (Dirichlet-categorical or Beta-binomial; -1 slot = NEW: the prior predictive).

    ``obs_inv[a, b]`` caches 1 / (pa_sum + obs_tot[a, b]) (no division in the hot loop)."""
    if okind == 0:
        if aslot < 0 or bslot < 0:
            return pa[x] / pa_sum
        return (pa[x] + obs[x, aslot, bslot]) * obs_inv[aslot, bslot]
    s1 = 0.0
    s0 = 0.0
    st = 0.0
    if aslot >= 0 and bslot >= 0:
        s1 = obs[1, aslot, bslot]
        s0 = obs[0, aslot, bslot]
        st = obs_tot[aslot, bslot]
    v = 1.0
    for t in range(x):
        v *= pa[1] + s1 + t
    for t in range(n_trials - x):
        v *= pa[0] + s0 + t
    for t in range(n_trials):
        v /= pa_sum + st + t
    return v


@njit(cache=True, nogil=True, inline="always")
def _normalise(v, n):
    s = 0.0
    for j in range(n):
        s += v[j]
    if s > 0.0:
        inv = 1.0 / s
        for j in range(n):
            v[j] *= inv


@njit(cache=True, nogil=True, inline="always")
def _draw(rng, row, n):
    s = 0.0
    for j in range(n):
        s += row[j]
    u = rng.random() * s
    c = 0.0
    for j in range(n):
        c += row[j]
        if u < c:
            return j
    for j in range(n - 1, -1, -1):  # u == s by rounding: the last position with mass
        if row[j] > 0.0:
            return j
    return n - 1


@njit(cache=True, nogil=True, inline="always")
def _build(i, nA, Cs, Ts, rowidx, z, act, K, inf, extra, newmass, alpha, obs, obs_tot, obs_inv, xv, okind,
           n_trials, pa, pa_sum, P, msg, tmp, full):
    """Fill the backward-sampling tables of item i (already removed): P[b, context position, position].

    Context: the parent's position along A (the root: 0), the A leaf's position for the B leaf, the position
    of b_{j+1} for b_j. Rows are unnormalised. The upward message of an A edge is
    beta_p(l) = (sum_k extra_k beta_b(k) + newmass beta_b(NEW) + sum_k N_{k|l,r} beta_b(k)) / (alpha + N_{l,r}):
    the first two sums are shared by every parent state l and the third is skipped for empty rows, so a
    document-specific child costs O(K_b) per parent state it actually uses. Without ``full`` the A-chain rows
    P[b, l, .] (b > 0) are not stored: ``_sample`` computes the one row of the drawn parent.
    """
    L = z.shape[0]
    x = xv[i]
    if L == 1 and okind == 0:  # one node (HDP, DP mixture): prior term times F in one pass
        Cb = Cs[0]
        r = rowidx[0, i]
        inv = 1.0 / (alpha[0] + Ts[0][r, 0])
        K0 = K[0]
        ax = pa[x]
        for kk in range(K0):
            s = act[0, kk]
            P[0, 0, kk] = (extra[0, s] + Cb[r, 0, s]) * inv * (ax + obs[x, s, 0]) * obs_inv[s, 0]
        if inf[0]:
            P[0, 0, K0] = newmass[0] * inv * ax / pa_sum
        return
    aleaf = nA - 1
    DA = K[aleaf] + inf[aleaf]
    if L > nA:
        b0 = nA
        D0 = _prior_row(Cs[b0], Ts[b0], rowidx[b0, i], 0, b0, act, K, inf, extra, newmass, alpha, msg[b0])
        _normalise(msg[b0], D0)
        for b in range(nA + 1, L):
            p = b - 1
            Dp = K[p] + inf[p]
            Db = K[b] + inf[b]
            Cb = Cs[b]
            Tb = Ts[b]
            r = rowidx[b, i]
            for kk in range(Db):
                msg[b, kk] = 0.0
            for pp in range(Dp):
                pslot = act[p, pp] if pp < K[p] else -1
                _prior_row(Cb, Tb, r, pslot, b, act, K, inf, extra, newmass, alpha, tmp)
                mp = msg[p, pp]
                for kk in range(Db):
                    v = mp * tmp[kk]
                    P[p, kk, pp] = v
                    msg[b, kk] += v
            _normalise(msg[b], Db)
        bl = L - 1
        DB = K[bl] + inf[bl]
        for aa in range(DA):
            aslot = act[aleaf, aa] if aa < K[aleaf] else -1
            s = 0.0
            for kb in range(DB):
                bslot = act[bl, kb] if kb < K[bl] else -1
                v = _pred(obs, obs_tot, obs_inv, aslot, bslot, x, okind, n_trials, pa, pa_sum) * msg[bl, kb]
                P[bl, aa, kb] = v
                s += v
            msg[aleaf, aa] = s
    else:
        for aa in range(DA):
            aslot = act[aleaf, aa] if aa < K[aleaf] else -1
            msg[aleaf, aa] = _pred(obs, obs_tot, obs_inv, aslot, 0, x, okind, n_trials, pa, pa_sum)
    _normalise(msg[aleaf], DA)
    for b in range(nA - 1, 0, -1):
        p = b - 1
        Dp = K[p] + inf[p]
        Kb = K[b]
        Db = Kb + inf[b]
        Cb = Cs[b]
        Tb = Ts[b]
        r = rowidx[b, i]
        sh = 0.0
        for kk in range(Kb):
            sh += extra[b, act[b, kk]] * msg[b, kk]
        if inf[b]:
            sh += newmass[b] * msg[b, Kb]
        for pp in range(Dp):
            if pp < K[p]:
                ps = act[p, pp]
                tot = Tb[r, ps]
                t = sh
                if tot > 0:
                    for kk in range(Kb):
                        c = Cb[r, ps, act[b, kk]]
                        if c != 0:
                            t += c * msg[b, kk]
                msg[p, pp] = t / (alpha[b] + tot)
            else:
                msg[p, pp] = sh / alpha[b]
            if full:
                _prior_row(Cb, Tb, r, act[p, pp] if pp < K[p] else -1, b, act, K, inf, extra, newmass, alpha, tmp)
                for kk in range(Db):
                    P[b, pp, kk] = tmp[kk] * msg[b, kk]
        _normalise(msg[p], Dp)
    D0 = _prior_row(Cs[0], Ts[0], rowidx[0, i], 0, 0, act, K, inf, extra, newmass, alpha, tmp)
    for kk in range(D0):
        P[0, 0, kk] = tmp[kk] * msg[0, kk]


@njit(cache=True, nogil=True, inline="always")
def _sample(rng, i, nA, Cs, Ts, rowidx, act, K, inf, extra, newmass, alpha, P, msg, tmp, pos):
    """Backward sampling from the tables of ``_build`` (A-chain rows computed here for the drawn parent only):
    positions into pos (K[b] = NEW)."""
    L = K.shape[0]
    pos[0] = _draw(rng, P[0, 0], K[0] + inf[0])
    for b in range(1, nA):
        p = b - 1
        D = _prior_row(Cs[b], Ts[b], rowidx[b, i], act[p, pos[p]] if pos[p] < K[p] else -1, b, act, K, inf, extra,
                       newmass, alpha, tmp)
        for kk in range(D):
            tmp[kk] *= msg[b, kk]
        pos[b] = _draw(rng, tmp, D)
    if L > nA:
        pos[L - 1] = _draw(rng, P[L - 1, pos[nA - 1]], K[L - 1] + inf[L - 1])
        for b in range(L - 2, nA - 1, -1):
            pos[b] = _draw(rng, P[b, pos[b + 1]], K[b] + inf[b])


@njit(cache=True, nogil=True, inline="always")
def _move(i, sign, nA, Cs, Ts, rowidx, z, used, upd, track_used, obs, obs_tot, obs_inv, xv, okind, n_trials, pa_sum,
          upd_obs):
    """Add (sign 1) or remove (-1) item i to/from the counts of the nodes with upd[b] (and the observed node)."""
    L = z.shape[0]
    for b in range(L):
        if not upd[b]:
            continue
        s = z[b, i]
        ps = 0 if (b == 0 or b == nA) else z[b - 1, i]
        r = rowidx[b, i]
        Cb = Cs[b]
        Tb = Ts[b]
        Cb[r, ps, s] += sign
        Tb[r, ps] += sign
        if track_used:
            used[b, s] += sign
    if upd_obs:
        a = z[nA - 1, i]
        bb = z[L - 1, i] if L > nA else 0
        x = xv[i]
        if okind == 0:
            obs[x, a, bb] += sign
            obs_tot[a, bb] += sign
        else:
            obs[1, a, bb] += sign * x
            obs[0, a, bb] += sign * (n_trials - x)
            obs_tot[a, bb] += sign * n_trials
        obs_inv[a, bb] = 1.0 / (pa_sum + obs_tot[a, bb])


@njit(cache=True, nogil=True, inline="always")
def _retire(i, z, used, act, posof, K, inf, kind, tau, tau_u, extra, newmass, alpha, rec_pos, rec_tau, rec_tau_u):
    """Retire the states item i left empty (HDP: their weight returns to tau_u); record what revive needs."""
    L = z.shape[0]
    for b in range(L):
        rec_pos[b] = -1
        s = z[b, i]
        if inf[b] and used[b, s] == 0:
            p = posof[b, s]
            rec_pos[b] = p
            for q in range(p, K[b] - 1):  # ordered delete: the alive slots stay in label order
                act[b, q] = act[b, q + 1]
                posof[b, act[b, q]] = q
            act[b, K[b] - 1] = s
            posof[b, s] = K[b] - 1
            K[b] -= 1
            if kind[b] == 0:
                rec_tau[b] = tau[b, s]
                rec_tau_u[b] = tau_u[b]
                tau_u[b] += tau[b, s]
                tau[b, s] = 0.0
                extra[b, s] = 0.0
                newmass[b] = alpha[b] * tau_u[b]


@njit(cache=True, nogil=True, inline="always")
def _revive(z, i, act, posof, K, kind, tau, tau_u, extra, newmass, alpha, rec_pos, rec_tau, rec_tau_u):
    """Undo ``_retire`` exactly (slot order and weights)."""
    L = z.shape[0]
    for b in range(L - 1, -1, -1):
        if rec_pos[b] < 0:
            continue
        s = z[b, i]
        K[b] += 1
        p = rec_pos[b]
        for q in range(K[b] - 1, p, -1):
            act[b, q] = act[b, q - 1]
            posof[b, act[b, q]] = q
        act[b, p] = s
        posof[b, s] = p
        if kind[b] == 0:
            tau[b, s] = rec_tau[b]
            tau_u[b] = rec_tau_u[b]
            extra[b, s] = alpha[b] * tau[b, s]
            newmass[b] = alpha[b] * tau_u[b]


@njit(cache=True, nogil=True)
def add_all(sign, nA, Cs, Ts, rowidx, z, used, upd, obs, obs_tot, obs_inv, xv, okind, n_trials, pa_sum):
    """Count every item (initialisation); mutates the count arrays."""
    for i in range(z.shape[1]):
        _move(i, sign, nA, Cs, Ts, rowidx, z, used, upd, True, obs, obs_tot, obs_inv, xv, okind, n_trials, pa_sum, True)


BLOCK_SHIFT = 3  # the sparse sweeps sum the smooth mass over blocks of 8 positions (4, 8, 16, 32 measured alike)


@njit(cache=True, nogil=True, inline="always")
def _sparse_scratch(b, cap, xv, obs, act, K):
    """The scratch of a sparse sweep over node b (capacity ``cap``), once a call: the block sums, the block
    corrections (all zero), a per-state cache, and the per-category lists of node b's states with n_{x,s} > 0
    (category c owns ``wtop[wptr[c] : wptr[c] + wlen[c]]``, capacity its number of items)."""
    nb = (cap >> BLOCK_SHIFT) + 2
    ncat = obs.shape[0]
    wptr = np.zeros(ncat + 1, dtype=np.int64)
    wtop = np.empty(max(xv.shape[0], 1), dtype=np.int32)
    wlen = np.zeros(ncat, dtype=np.int64)
    for i in range(xv.shape[0]):
        wptr[xv[i] + 1] += 1
    for c in range(ncat):
        wptr[c + 1] += wptr[c]
    for c in range(ncat):
        if wptr[c + 1] > wptr[c]:
            m = 0
            for kk in range(K[b]):
                s = act[b, kk]
                if obs[c, s, 0] > 0:
                    wtop[wptr[c] + m] = s
                    m += 1
            wlen[c] = m
    return np.zeros(nb), np.zeros(nb), np.zeros(cap), wptr, wtop, wlen


@njit(cache=True, nogil=True, inline="always")
def _obs_count(x, s, sign, obs, obs_tot, obs_inv, pa_sum):
    """Move one item of category x into (sign 1) or out of (sign -1) state s's observed counts. Branch-free on
    purpose: an inlined helper with a branch over these arrays measured 30% slower in the one-node sweep."""
    obs[x, s, 0] += sign
    obs_tot[s, 0] += sign
    obs_inv[s, 0] = 1.0 / (pa_sum + obs_tot[s, 0])


@njit(cache=True, nogil=True, inline="always")
def _cache_set(b, s, v, posof, cache, blocks):
    """cache[s] = v with the sum of s's block of node b's positions kept; returns the change (for a total)."""
    dv = v - cache[s]
    blocks[posof[b, s] >> BLOCK_SHIFT] += dv
    cache[s] = v
    return dv


@njit(cache=True, nogil=True, inline="always")
def _new_state(rng, b, act, K, label, next_label, kind, alpha, gamma, tau, tau_u, extra, newmass):
    """Bring node b's first free slot alive (a new label; an HDP node breaks its weight off tau_u); returns it."""
    s = act[b, K[b]]
    K[b] += 1
    label[b, s] = next_label[b]
    next_label[b] += 1
    if kind[b] == 0:
        frac = rng.beta(1.0, gamma[b])
        tau[b, s] = frac * tau_u[b]
        tau_u[b] *= 1.0 - frac
        extra[b, s] = alpha[b] * tau[b, s]
        newmass[b] = alpha[b] * tau_u[b]
    return s


@njit(cache=True, nogil=True, inline="always")
def _block_mass(blk, Kn, r, act, extra, Cb, obs_inv, aval, blocks):
    """aval[s] = (extra_s + N_{s|r}) / (pa_sum + n_s) for the block's states and blocks[blk] their sum."""
    lo = blk << BLOCK_SHIFT
    hi = min(lo + (1 << BLOCK_SHIFT), Kn)
    t = 0.0
    for kk in range(lo, hi):
        s = act[0, kk]
        v = (extra[0, s] + Cb[r, 0, s]) * obs_inv[s, 0]
        aval[s] = v
        t += v
    blocks[blk] = t


@njit(cache=True, nogil=True)
def _sweep_one_node(rng, start, Cs, Ts, rowidx, z, used, act, posof, K, inf, kind, alpha, gamma, tau, tau_u, extra,
                    newmass, label, next_label, obs, obs_tot, obs_inv, xv, pa, pa_sum, rec_pos, rec_tau, rec_tau_u):
    """``sweep`` (training) for one latent node over a Categorical observation (HDP, DP or Dirichlet mixture).

    The conditional of item i in row r with category x is, per position k (state s = act[k]),
    p_k ∝ (extra_s + N_{s|r}) (pa_x + n_{x,s}) / (pa_sum + n_s), NEW: newmass pa_x / pa_sum (eq. 1 with F of
    eq. 2). It splits as pa_x A_s + A_s n_{x,s} with A_s = (extra_s + N_{s|r}) / (pa_sum + n_s): A is cached per
    state and summed over blocks of 8 positions (rebuilt when the row changes, else updated by the change of the
    two terms an item moves), and the second term is nonzero only for the states of category x (per-category
    lists, as the word lists of SparseLDA; Yao, Mimno & McCallum 2009). The draw inverts the CDF in position
    order, as ``_draw`` does over the dense row: the block from the block sums, the position inside it from the
    exact terms. So it draws the same states as the dense sweep (up to the rounding of partial sums) at
    O(K / 8 + 8 + k_x) a item instead of O(K)."""
    N = z.shape[1]
    Cb = Cs[0]
    Tb = Ts[0]
    cap = Cb.shape[2]
    bs = 1 << BLOCK_SHIFT
    blocks, bx, aval, wptr, wtop, wlen = _sparse_scratch(0, cap, xv, obs, act, K)
    cur = -1
    atot = 0.0
    for i in range(start, N):
        if inf[0] and K[0] >= cap:
            return i
        r = rowidx[0, i]
        x = xv[i]
        old = z[0, i]
        Cb[r, 0, old] -= 1
        Tb[r, 0] -= 1
        used[0, old] -= 1
        _obs_count(x, old, -1, obs, obs_tot, obs_inv, pa_sum)
        if obs[x, old, 0] == 0:
            wlen[x] = list_remove(wtop, wptr[x], wlen[x], old)
        rec_pos[0] = -1
        if inf[0] and used[0, old] == 0:
            _retire(i, z, used, act, posof, K, inf, kind, tau, tau_u, extra, newmass, alpha, rec_pos, rec_tau,
                    rec_tau_u)
        Kn = K[0]
        nblk = (Kn + bs - 1) >> BLOCK_SHIFT
        if r != cur or rec_pos[0] >= 0 or (i & 1023) == 0:  # from scratch at every new row, after a retirement
            cur = r                                            # and every 1024 items: no drift
            atot = 0.0
            for blk in range(nblk):
                _block_mass(blk, Kn, r, act, extra, Cb, obs_inv, aval, blocks)
                atot += blocks[blk]
        else:
            atot += _cache_set(0, old, (extra[0, old] + Cb[r, 0, old]) * obs_inv[old, 0], posof, aval, blocks)
        # the draw (bx is all zero between items)
        ax = pa[x]
        base = wptr[x]
        nw = wlen[x]
        tot = 0.0
        for j in range(nw):
            s = wtop[base + j]
            v = aval[s] * obs[x, s, 0]
            bx[posof[0, s] >> BLOCK_SHIFT] += v
            tot += v
        tot += ax * atot
        newm = newmass[0] * ax / pa_sum if inf[0] else 0.0
        u = rng.random() * (tot + newm)
        pos = -1
        acc = 0.0
        for blk in range(nblk):
            t = ax * blocks[blk] + bx[blk]
            if u < acc + t:
                lo = blk << BLOCK_SHIFT
                last = -1
                for kk in range(lo, min(lo + bs, Kn)):
                    s = act[0, kk]
                    v = aval[s] * (ax + obs[x, s, 0])
                    if v > 0.0:
                        last = kk
                        acc += v
                        if u < acc:
                            pos = kk
                            break
                if pos < 0:  # the block's exact terms fell short of its sum by rounding
                    pos = last
                break
            acc += t
        if pos < 0:
            if newm > 0.0:
                pos = Kn
            else:  # u at the total by rounding: the last position with mass
                for kk in range(Kn - 1, -1, -1):
                    if aval[act[0, kk]] > 0.0:
                        pos = kk
                        break
                if pos < 0:
                    pos = Kn - 1
        for j in range(nw):
            bx[posof[0, wtop[base + j]] >> BLOCK_SHIFT] = 0.0
        created = pos >= Kn
        if not created:
            new = act[0, pos]
        else:
            new = _new_state(rng, 0, act, K, label, next_label, kind, alpha, gamma, tau, tau_u, extra, newmass)
        z[0, i] = new
        Cb[r, 0, new] += 1
        Tb[r, 0] += 1
        used[0, new] += 1
        if obs[x, new, 0] == 0:
            wtop[wptr[x] + wlen[x]] = new
            wlen[x] += 1
        _obs_count(x, new, 1, obs, obs_tot, obs_inv, pa_sum)
        if created:
            blk = posof[0, new] >> BLOCK_SHIFT
            atot -= blocks[blk] if blk < nblk else 0.0
            _block_mass(blk, K[0], r, act, extra, Cb, obs_inv, aval, blocks)
            atot += blocks[blk]
        else:
            atot += _cache_set(0, new, (extra[0, new] + Cb[r, 0, new]) * obs_inv[new, 0], posof, aval, blocks)
    return N


@njit(cache=True, nogil=True, inline="always")
def _g_blocks(Kn, act, extra, obs_inv, g, blocks):
    """g[s] = extra_s / (pa_sum + n_s) of node 1 over its alive states and its sums over blocks of positions;
    returns the total."""
    bs = 1 << BLOCK_SHIFT
    tot = 0.0
    for blk in range((Kn + bs - 1) >> BLOCK_SHIFT):
        lo = blk << BLOCK_SHIFT
        t = 0.0
        for kk in range(lo, min(lo + bs, Kn)):
            s = act[1, kk]
            v = extra[1, s] * obs_inv[s, 0]
            g[s] = v
            t += v
        blocks[blk] = t
        tot += t
    return tot


@njit(cache=True, nogil=True)
def _sweep_two_nodes(rng, start, Cs, Ts, rowidx, z, used, act, posof, K, inf, kind, alpha, gamma, tau, tau_u, extra,
                     newmass, label, next_label, obs, obs_tot, obs_inv, xv, pa, pa_sum, tmp, rec_pos, rec_tau,
                     rec_tau_u):
    """``sweep`` (training) for a chain of two latent nodes over a Categorical observation (infinite PAM, POM,
    nested DP, two-level Dirichlet): node 0 (super, state l) -> node 1 (sub, state k) -> x.

    FFBS (seed 002 §4) of ``_build``/``_sample`` without their O(K_0 K_1) tables. With F_k = (pa_x + n_{x,k}) /
    (pa_sum + n_k) and e_k = extra_k of node 1, the message of node 1 to parent state l is
    m(l) = (sh + sum_{k: N_{k|l,r} > 0} N_{k|l,r} F_k) / (alpha_1 + N_{l,r}), sh = sum_k e_k F_k + newmass_1 F_NEW,
    where sh is shared by every l (SparseLDA's decomposition, Yao, Mimno & McCallum 2009, applied to FFBS):
    sh = pa_x E + sum_{k in list(x)} e_k n_{x,k} / (pa_sum + n_k), E = sum_k e_k / (pa_sum + n_k) kept up to
    date, and the second sum runs over the row's nonzero counts (per parent-state lists of the current row). The
    super state is drawn from (extra_l + N_{l|r0}) m(l) (O(K_0)); the sub state given it from
    (e_k + N_{k|l,r}) F_k = pa_x e_k / (pa_sum + n_k) + pa_x N_{k|l,r} / (pa_sum + n_k) + (e_k + N_{k|l,r})
    n_{x,k} / (pa_sum + n_k): the first term summed over blocks of positions, the other two over the row's and the
    category's lists, the CDF inverted in position order as ``_draw`` does (block sums, then the exact terms
    inside the block). Same uniforms, same order, same states as the dense sweep up to the rounding of partial
    sums; O(K_0 + K_1 / 8 + 8 + nnz(rows) + k_x) a item instead of O(K_0 K_1)."""
    N = z.shape[1]
    C0 = Cs[0]
    T0 = Ts[0]
    C1 = Cs[1]
    T1 = Ts[1]
    cap0 = C0.shape[2]
    cap1 = C1.shape[2]
    bs = 1 << BLOCK_SHIFT
    gblk, bx, g, wptr, wtop, wlen = _sparse_scratch(1, cap1, xv, obs, act, K)
    wv = np.zeros(cap1)
    rl = np.zeros((cap0, cap1), dtype=np.int32)
    rlen = np.zeros(cap0, dtype=np.int64)
    E = _g_blocks(K[1], act, extra, obs_inv, g, gblk)
    cur0 = -1
    cur1 = -1
    for i in range(start, N):
        if (inf[0] and K[0] >= cap0) or (inf[1] and K[1] >= cap1):
            return i
        r0 = rowidx[0, i]
        r1 = rowidx[1, i]
        x = xv[i]
        l_old = z[0, i]
        k_old = z[1, i]
        # remove item i
        C0[r0, 0, l_old] -= 1
        T0[r0, 0] -= 1
        used[0, l_old] -= 1
        C1[r1, l_old, k_old] -= 1
        T1[r1, l_old] -= 1
        used[1, k_old] -= 1
        if r1 == cur1 and C1[r1, l_old, k_old] == 0:
            rlen[l_old] = list_remove(rl[l_old], 0, rlen[l_old], k_old)
        _obs_count(x, k_old, -1, obs, obs_tot, obs_inv, pa_sum)
        if obs[x, k_old, 0] == 0:
            wlen[x] = list_remove(wtop, wptr[x], wlen[x], k_old)
        rec_pos[0] = -1
        rec_pos[1] = -1
        if (inf[0] and used[0, l_old] == 0) or (inf[1] and used[1, k_old] == 0):
            _retire(i, z, used, act, posof, K, inf, kind, tau, tau_u, extra, newmass, alpha, rec_pos, rec_tau,
                    rec_tau_u)
        K0 = K[0]
        K1 = K[1]
        if r0 != cur0 or rec_pos[1] >= 0 or (i & 1023) == 0:  # from scratch at every new row, after a
            cur0 = r0                                              # retirement and every 1024 items: no drift
            E = _g_blocks(K1, act, extra, obs_inv, g, gblk)
        else:
            E += _cache_set(1, k_old, extra[1, k_old] * obs_inv[k_old, 0], posof, g, gblk)
        if r1 != cur1:  # the per-parent-state lists of the nonzero counts N_{k|l,r1}
            cur1 = r1
            for ps in range(cap0):
                rlen[ps] = 0
            for pp in range(K0):
                ps = act[0, pp]
                if T1[r1, ps] > 0:
                    m = 0
                    for kk in range(K1):
                        s = act[1, kk]
                        if C1[r1, ps, s] > 0:
                            rl[ps, m] = s
                            m += 1
                    rlen[ps] = m
        # upward message of node 1 and the draw of node 0
        ax = pa[x]
        fnew = ax / pa_sum
        base = wptr[x]
        nw = wlen[x]
        sh = 0.0
        for j in range(nw):
            s = wtop[base + j]
            v = obs[x, s, 0] * obs_inv[s, 0]
            wv[j] = v
            sh += extra[1, s] * v
        sh += ax * E
        if inf[1]:
            sh += newmass[1] * fnew
        m_empty = sh / alpha[1]  # the message to a parent state with an empty row
        for pp in range(K0):
            ps = act[0, pp]
            tot = T1[r1, ps]
            if tot > 0:
                t = sh
                for j in range(rlen[ps]):
                    s = rl[ps, j]
                    t += C1[r1, ps, s] * (ax + obs[x, s, 0]) * obs_inv[s, 0]
                tmp[pp] = (extra[0, ps] + C0[r0, 0, ps]) * (t / (alpha[1] + tot))
            else:
                tmp[pp] = (extra[0, ps] + C0[r0, 0, ps]) * m_empty
        D0 = K0
        if inf[0]:
            tmp[K0] = newmass[0] * m_empty
            D0 = K0 + 1
        p0 = _draw(rng, tmp, D0)
        # the draw of node 1 given the state of node 0
        ps = act[0, p0] if p0 < K0 else -1
        nblk = (K1 + bs - 1) >> BLOCK_SHIFT
        tot = ax * E  # bx is all zero between items
        nr = rlen[ps] if ps >= 0 else 0
        for j in range(nr):
            s = rl[ps, j]
            v = ax * C1[r1, ps, s] * obs_inv[s, 0]
            bx[posof[1, s] >> BLOCK_SHIFT] += v
            tot += v
        for j in range(nw):
            s = wtop[base + j]
            c = C1[r1, ps, s] if ps >= 0 else 0
            v = (extra[1, s] + c) * wv[j]
            bx[posof[1, s] >> BLOCK_SHIFT] += v
            tot += v
        newm = newmass[1] * fnew if inf[1] else 0.0
        u = rng.random() * (tot + newm)
        p1 = -1
        acc = 0.0
        for blk in range(nblk):
            t = ax * gblk[blk] + bx[blk]
            if u < acc + t:
                lo = blk << BLOCK_SHIFT
                last = -1
                for kk in range(lo, min(lo + bs, K1)):
                    s = act[1, kk]
                    c = C1[r1, ps, s] if ps >= 0 else 0
                    v = (extra[1, s] + c) * (ax + obs[x, s, 0]) * obs_inv[s, 0]
                    if v > 0.0:
                        last = kk
                        acc += v
                        if u < acc:
                            p1 = kk
                            break
                if p1 < 0:  # the block's exact terms fell short of its sum by rounding
                    p1 = last
                break
            acc += t
        if p1 < 0:
            if newm > 0.0:
                p1 = K1
            else:  # u at the total by rounding: the last position with mass
                for kk in range(K1 - 1, -1, -1):
                    s = act[1, kk]
                    c = C1[r1, ps, s] if ps >= 0 else 0
                    if extra[1, s] + c > 0.0:
                        p1 = kk
                        break
                if p1 < 0:
                    p1 = K1 - 1
        for j in range(nr):
            bx[posof[1, rl[ps, j]] >> BLOCK_SHIFT] = 0.0
        for j in range(nw):
            bx[posof[1, wtop[base + j]] >> BLOCK_SHIFT] = 0.0
        # new states (node 0 first, as the dense sweep), then add item i back
        created1 = False
        for b in range(2):
            p = p0 if b == 0 else p1
            if p < K[b]:
                z[b, i] = act[b, p]
            else:
                s = _new_state(rng, b, act, K, label, next_label, kind, alpha, gamma, tau, tau_u, extra, newmass)
                z[b, i] = s
                if b == 1:
                    created1 = True
                else:
                    rlen[s] = 0
        l_new = z[0, i]
        k_new = z[1, i]
        C0[r0, 0, l_new] += 1
        T0[r0, 0] += 1
        used[0, l_new] += 1
        if C1[r1, l_new, k_new] == 0:
            rl[l_new, rlen[l_new]] = k_new
            rlen[l_new] += 1
        C1[r1, l_new, k_new] += 1
        T1[r1, l_new] += 1
        used[1, k_new] += 1
        if obs[x, k_new, 0] == 0:
            wtop[wptr[x] + wlen[x]] = k_new
            wlen[x] += 1
        _obs_count(x, k_new, 1, obs, obs_tot, obs_inv, pa_sum)
        if created1:
            E = _g_blocks(K[1], act, extra, obs_inv, g, gblk)
        else:
            E += _cache_set(1, k_new, extra[1, k_new] * obs_inv[k_new, 0], posof, g, gblk)
    return N


@njit(cache=True, nogil=True)
def sweep(rng, start, nA, Cs, Ts, rowidx, z, used, act, posof, K, inf, kind, alpha, gamma, tau, tau_u, extra,
          newmass, label, next_label, obs, obs_tot, obs_inv, xv, okind, n_trials, pa, pa_sum, mode, upd, upd_obs,
          skip_remove, P, msg, tmp, pos, rec_pos, rec_tau, rec_tau_u):
    """Items start.. in order (seed 002 §4); returns N when done, or the item at which a node ran out of free slots
    (mode 0, before touching it: the caller grows the capacity and calls again from there).

    mode 0: training (retire and create states, track ``used``). mode 1: fold-in (no state is created or
    retired; only nodes with ``upd`` and, with ``upd_obs``, the observed counts are updated). ``skip_remove``:
    the items are not in the counts yet (a first, sequential pass).
    """
    L = z.shape[0]
    N = z.shape[1]
    train = mode == 0
    if L == 1 and okind == 0 and train and not skip_remove:
        return _sweep_one_node(rng, start, Cs, Ts, rowidx, z, used, act, posof, K, inf, kind, alpha, gamma, tau, tau_u,
                               extra, newmass, label, next_label, obs, obs_tot, obs_inv, xv, pa, pa_sum, rec_pos,
                               rec_tau, rec_tau_u)
    if L == 2 and nA == 2 and okind == 0 and train and not skip_remove:
        return _sweep_two_nodes(rng, start, Cs, Ts, rowidx, z, used, act, posof, K, inf, kind, alpha, gamma, tau,
                                tau_u, extra, newmass, label, next_label, obs, obs_tot, obs_inv, xv, pa, pa_sum, tmp,
                                rec_pos, rec_tau, rec_tau_u)
    for i in range(start, N):
        if train:
            for b in range(L):
                if inf[b] and K[b] >= Cs[b].shape[2]:
                    return i
        if not skip_remove:
            _move(i, -1, nA, Cs, Ts, rowidx, z, used, upd, train, obs, obs_tot, obs_inv, xv, okind, n_trials, pa_sum,
                  upd_obs)
            if train:
                _retire(i, z, used, act, posof, K, inf, kind, tau, tau_u, extra, newmass, alpha, rec_pos, rec_tau,
                        rec_tau_u)
        _build(i, nA, Cs, Ts, rowidx, z, act, K, inf, extra, newmass, alpha, obs, obs_tot, obs_inv, xv, okind,
               n_trials, pa, pa_sum, P, msg, tmp, False)
        _sample(rng, i, nA, Cs, Ts, rowidx, act, K, inf, extra, newmass, alpha, P, msg, tmp, pos)
        for b in range(L):
            p = pos[b]
            if p < K[b]:
                z[b, i] = act[b, p]
            else:
                z[b, i] = _new_state(rng, b, act, K, label, next_label, kind, alpha, gamma, tau, tau_u, extra,
                                     newmass)
        _move(i, 1, nA, Cs, Ts, rowidx, z, used, upd, train, obs, obs_tot, obs_inv, xv, okind, n_trials, pa_sum,
              upd_obs)
    return N


@njit(cache=True, nogil=True)
def conditional_tables(i, nA, Cs, Ts, rowidx, z, used, act, posof, K, inf, kind, alpha, tau, tau_u, extra, newmass,
                       obs, obs_tot, obs_inv, xv, okind, n_trials, pa, pa_sum, upd, P, msg, tmp, rec_pos, rec_tau,
                       rec_tau_u, dom, D):
    """The tables ``sweep`` samples item i from, into P (rows normalised), the domains' slots into dom (-1: NEW)
    and their sizes into D; the state is left exactly as it was."""
    L = z.shape[0]
    _move(i, -1, nA, Cs, Ts, rowidx, z, used, upd, True, obs, obs_tot, obs_inv, xv, okind, n_trials, pa_sum, True)
    _retire(i, z, used, act, posof, K, inf, kind, tau, tau_u, extra, newmass, alpha, rec_pos, rec_tau, rec_tau_u)
    _build(i, nA, Cs, Ts, rowidx, z, act, K, inf, extra, newmass, alpha, obs, obs_tot, obs_inv, xv, okind, n_trials,
           pa, pa_sum, P, msg, tmp, True)
    for b in range(L):
        D[b] = K[b] + inf[b]
        for kk in range(K[b]):
            dom[b, kk] = act[b, kk]
        if inf[b]:
            dom[b, K[b]] = -1
    for b in range(L):
        if b == 0:
            nctx = 1
        elif b == L - 1 and L > nA:
            nctx = D[nA - 1]
        elif b < nA:
            nctx = D[b - 1]
        else:
            nctx = D[b + 1]
        for c in range(nctx):
            _normalise(P[b, c], D[b])
    _revive(z, i, act, posof, K, kind, tau, tau_u, extra, newmass, alpha, rec_pos, rec_tau, rec_tau_u)
    _move(i, 1, nA, Cs, Ts, rowidx, z, used, upd, True, obs, obs_tot, obs_inv, xv, okind, n_trials, pa_sum, True)


@njit(cache=True, nogil=True)
def table_counts(rng, Cb, Tb, b, pnode, act, K, tables, alpha_tau, S, lengths):
    """Per CPT row of node b (index rows x alive parent slots): with ``tables`` Antoniak counts
    S_{k|l} ~ A[N_{k|l}, alpha tau_k] summed into S[slot] (HDP, seed 002 §4), else the number of states in the
    row (a DP row's CRP tables); row totals N_l > 0 go to ``lengths``. Returns (sum of S, number of rows)."""
    n_rows = Cb.shape[0]
    npar = 1 if pnode < 0 else K[pnode]
    Kb = K[b]
    m = 0
    nl = 0
    for kk in range(Kb):
        S[act[b, kk]] = 0
    for r in range(n_rows):
        for pp in range(npar):
            ps = 0 if pnode < 0 else act[pnode, pp]
            tot = Tb[r, ps]
            if tot <= 0:
                continue
            lengths[nl] = tot
            nl += 1
            for kk in range(Kb):
                s = act[b, kk]
                c = Cb[r, ps, s]
                if c > 0:
                    t = antoniak(rng, c, alpha_tau[s]) if tables else 1
                    S[s] += t
                    m += t
    return m, nl


@njit(cache=True, nogil=True)
def log_joint(nA, Cs, Ts, act, K, inf, kind, alpha, extra, newmass, obs, obs_tot, okind, n_trials, pa, pa_sum):
    """log p(x, z | tau) collapsed (eqs. 1-2 multiplied over items), up to the multinomial coefficients of a
    Binomial x: prod over CPT rows of the rising-factorial ratios of the prior terms, times the
    Dirichlet-multinomial marginal of every observed row."""
    L = K.shape[0]
    lp = 0.0
    for b in range(L):
        pnode = -1 if (b == 0 or b == nA) else b - 1
        Cb = Cs[b]
        Tb = Ts[b]
        npar = 1 if pnode < 0 else K[pnode]
        for r in range(Cb.shape[0]):
            for pp in range(npar):
                ps = 0 if pnode < 0 else act[pnode, pp]
                tot = Tb[r, ps]
                if tot <= 0:
                    continue
                lp -= _lrise(alpha[b], tot)
                for kk in range(K[b]):
                    s = act[b, kk]
                    c = Cb[r, ps, s]
                    if c <= 0:
                        continue
                    if kind[b] == 1:  # DP: alpha for the first item of a state, then 1, 2, ...
                        lp += math.log(alpha[b]) + math.lgamma(c)
                    else:
                        lp += _lrise(extra[b, s], c)
    A = obs.shape[1]
    B = obs.shape[2]
    for a in range(A):
        for bb in range(B):
            if obs_tot[a, bb] <= 0:
                continue
            lp -= _lrise(pa_sum, obs_tot[a, bb])
            for c in range(obs.shape[0]):
                lp += _lrise(pa[c], obs[c, a, bb])
    return lp


@njit(cache=True, nogil=True)
def _lrise(a, n):
    """log of the rising factorial a (a + 1) ... (a + n - 1)."""
    return math.lgamma(a + n) - math.lgamma(a)
