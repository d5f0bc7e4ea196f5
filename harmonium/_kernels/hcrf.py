"""Sum-product on the hidden layer of a hidden-state CRF (numba).

Quattoni et al. (2007); seed 004, "Hidden-state CRFs". For one sequence and one
class c the hidden states z_0..z_{T-1} form a tree given by ``parent`` (local
indices, ``parent[0] == -1`` at the root, ``parent[t] < t``, and the children
of a node numbered consecutively, as breadth-first numbering gives; the chain
is ``parent[t] = t - 1``), with log-potentials ``phi[t, h]`` on the nodes and
``A[i, j]`` on every edge (parent in state i, child in state j):

    log Z = log sum_z exp( sum_t phi[t, z_t] + sum_{t > 0} A[z_parent(t), z_t] ).

Two implementations of the same belief propagation:

* **Log space** (:func:`upward`, :func:`downward`, :func:`sum_product`), the
  reference. The upward pass (leaves to root; for the chain, the backward
  recursion) leaves in ``inside[t]`` the log of the sum over the subtree of t
  with z_t fixed and in ``msg[t]`` the log message from t to its parent; the
  downward pass leaves in ``outside[t]`` the log of the sum over the rest of
  the tree (for the chain, the forward recursion alpha_t - phi_t). Then
  p(z_t = h) = exp(inside + outside - log Z) and p(z_parent(t) = i, z_t = j) =
  exp(outside[p, i] + inside[p, i] - msg[t, i] + A[i, j] + inside[t, j] - log Z).
  Each log-sum-exp is m + log sum_j E[i, j] exp(v_j - m) with E = exp(A - rowmax)
  tabulated once per class (H exponentials a step instead of H^2); an entry
  whose scaled sum falls below 1e-250 is recomputed by a direct log-sum-exp.
  Forbidden transitions (A = -inf) are allowed.
* **Scaled** (:func:`scaled_upward`, :func:`scaled_downward`), used by the
  block kernels for all C classes of a sequence at once (class index last).
  Messages are probability vectors rescaled to max 1, with the logs of the
  scale factors carried (Rabiner 1989's scaling, for trees): a step costs one
  multiply-add per allowed transition (``pairs``: H^2 for an ergodic chain,
  2H - 1 for left-to-right) and a logarithm only when the running product of
  scale factors leaves [1e-50, 1e50]; the marginals normalise themselves, so
  the downward pass needs no transcendental function at all. Every factor is
  <= 1, so nothing overflows; an underflowed term is below 1e-308 and is
  negligible next to a normaliser >= 1e-100. If any normaliser is smaller
  (weights hundreds of nats apart), the pass flags the class and the block
  kernels redo that sequence and class in log space, so results are exact to
  rounding for any weights.

Kernels never allocate inside the loops over time steps, never validate and
never raise; :mod:`harmonium.models.undirected.hcrf` checks shapes and dtypes.
Output arrays are written in place, as each docstring says.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_TINY = 1e-250  # log space: below this a scaled sum is recomputed directly
_TINY_SCALED = 1e-100  # scaled passes: smallest normaliser trusted (see the module docstring)


@njit(cache=True, nogil=True)
def scaled_transitions(trans, e_row, row_max, e_col, col_max, e_all, all_max):
    """Tabulate exp(A - max) for every class, in place (-inf entries give 0).

    ``row_max[c, i] = max_j A[c, i, j]``, ``e_row[c, i, j] = exp(A[c, i, j] - row_max[c, i])``;
    ``col_max`` / ``e_col`` the same over i; ``all_max[c]`` / ``e_all`` over all entries.
    A row, column or class that is entirely -inf gets max -inf and zeros.
    """
    C, H, _ = trans.shape
    for c in range(C):
        am = -np.inf
        for i in range(H):
            rm = -np.inf
            for j in range(H):
                rm = max(rm, trans[c, i, j])
            row_max[c, i] = rm
            am = max(am, rm)
        for j in range(H):
            cm = -np.inf
            for i in range(H):
                cm = max(cm, trans[c, i, j])
            col_max[c, j] = cm
        all_max[c] = am
        for i in range(H):
            for j in range(H):
                a = trans[c, i, j]
                e_row[c, i, j] = 0.0 if a == -np.inf else math.exp(a - row_max[c, i])
                e_col[c, i, j] = 0.0 if a == -np.inf else math.exp(a - col_max[c, j])
                e_all[c, i, j] = 0.0 if a == -np.inf else math.exp(a - am)


@njit(cache=True, nogil=True)
def _logsumexp(v, n):
    m = -np.inf
    for i in range(n):
        m = max(m, v[i])
    if m == -np.inf:
        return m
    s = 0.0
    for i in range(n):
        s += math.exp(v[i] - m)
    return m + math.log(s)


# -- log space ---------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def upward(phi, A, e_row, row_max, parent, T, inside, msg, ev):
    """Log-space leaves-to-root pass; returns log Z. Writes ``inside[:T]``, ``msg[1:T]`` and the buffer ``ev`` (H,).

    ``msg[t, i]`` = log sum_j exp(A[i, j] + inside[t, j]), the message from t to
    its parent in state i, added into ``inside[parent[t]]``.
    """
    H = phi.shape[1]
    for t in range(T):
        for h in range(H):
            inside[t, h] = phi[t, h]
    for t in range(T - 1, 0, -1):
        p = parent[t]
        vmax = -np.inf
        for j in range(H):
            vmax = max(vmax, inside[t, j])
        for j in range(H):
            ev[j] = 0.0 if vmax == -np.inf else math.exp(inside[t, j] - vmax)
        for i in range(H):
            s = 0.0
            for j in range(H):
                s += e_row[i, j] * ev[j]
            if s > _TINY:
                m = vmax + row_max[i] + math.log(s)
            else:
                mx = -np.inf
                for j in range(H):
                    mx = max(mx, A[i, j] + inside[t, j])
                if mx == -np.inf:
                    m = -np.inf
                else:
                    s = 0.0
                    for j in range(H):
                        s += math.exp(A[i, j] + inside[t, j] - mx)
                    m = mx + math.log(s)
            msg[t, i] = m
            inside[p, i] += m
    return _logsumexp(inside[0], H)


@njit(cache=True, nogil=True)
def downward(A, e_col, col_max, e_all, all_max, parent, T, inside, msg, log_z, outside,
             node_w, edge_w, u, eu, ev):
    """Log-space root-to-leaves pass after :func:`upward`; writes ``outside[:T]`` and ADDS marginals, in place.

    ``node_w[t, h] += p(z_t = h)`` for t < T and ``edge_w[i, j] += sum_t p(z_parent(t) = i, z_t = j)``
    (summed over the T - 1 edges). ``u``, ``eu``, ``ev`` are (H,) buffers.
    """
    H = inside.shape[1]
    for h in range(H):
        outside[0, h] = 0.0
    for t in range(1, T):
        p = parent[t]
        # u[i]: everything outside t's subtree with z_p = i (msg = -inf makes inside[p, i] = -inf too)
        umax = -np.inf
        for i in range(H):
            u[i] = -np.inf if msg[t, i] == -np.inf else outside[p, i] + inside[p, i] - msg[t, i]
            umax = max(umax, u[i])
        for i in range(H):
            eu[i] = 0.0 if umax == -np.inf else math.exp(u[i] - umax)
        for j in range(H):
            s = 0.0
            for i in range(H):
                s += e_col[i, j] * eu[i]
            if s > _TINY:
                outside[t, j] = umax + col_max[j] + math.log(s)
            else:
                mx = -np.inf
                for i in range(H):
                    mx = max(mx, A[i, j] + u[i])
                if mx == -np.inf:
                    outside[t, j] = -np.inf
                else:
                    s = 0.0
                    for i in range(H):
                        s += math.exp(A[i, j] + u[i] - mx)
                    outside[t, j] = mx + math.log(s)
        # edge marginal exp(u_i + A_ij + inside[t, j] - log Z) = eu_i e_all_ij ev_j exp(k)
        vmax = -np.inf
        for j in range(H):
            vmax = max(vmax, inside[t, j])
        k = umax + vmax + all_max - log_z
        if k == -np.inf or k != k:
            continue
        if k <= 300.0:
            ek = math.exp(k)
            for j in range(H):
                ev[j] = math.exp(inside[t, j] - vmax) * ek
            for i in range(H):
                for j in range(H):
                    edge_w[i, j] += eu[i] * e_all[i, j] * ev[j]
        else:
            for i in range(H):
                for j in range(H):
                    edge_w[i, j] += math.exp(u[i] + A[i, j] + inside[t, j] - log_z)
    for t in range(T):
        for h in range(H):
            node_w[t, h] += math.exp(inside[t, h] + outside[t, h] - log_z)


@njit(cache=True, nogil=True)
def sum_product(phi, A, e_row, row_max, e_col, col_max, e_all, all_max, parent, node_marg, edge_marg):
    """Exact marginals of one tree for one class, in log space; returns log Z.

    Writes ``node_marg[t, h] = p(z_t = h)`` (T, H) and ``edge_marg[t, i, j] =
    p(z_parent(t) = i, z_t = j)`` (T, H, H; ``edge_marg[0]`` is zero), in place.
    """
    T, H = phi.shape
    inside = np.empty((T, H))
    msg = np.zeros((T, H))
    outside = np.empty((T, H))
    u = np.empty(H)
    eu = np.empty(H)
    ev = np.empty(H)
    log_z = upward(phi, A, e_row, row_max, parent, T, inside, msg, ev)
    node_marg[:] = 0.0
    edge_marg[:] = 0.0
    edge_sum = np.zeros((H, H))
    downward(A, e_col, col_max, e_all, all_max, parent, T, inside, msg, log_z, outside,
             node_marg, edge_sum, u, eu, ev)
    for t in range(1, T):
        p = parent[t]
        for i in range(H):
            if msg[t, i] == -np.inf:
                continue
            ui = outside[p, i] + inside[p, i] - msg[t, i]
            for j in range(H):
                edge_marg[t, i, j] = math.exp(ui + A[i, j] + inside[t, j] - log_z)
    return log_z


# -- scaled, all classes at once ------------------------------------------------------------------
#
# Layout: the class index is last (position, state, class), so that the inner
# loops run over C contiguous numbers and compile to SIMD instructions.


@njit(cache=True, nogil=True)
def scaled_upward(psi, shift, a, T, pairs, E, all_max, parent, ins, lin, acc, msg, mm, mx, ok, log_z):
    """Scaled leaves-to-root pass of one sequence for every class; writes ``log_z`` (C,) and ``ok`` (C,).

    ``psi[a + t, h, c]`` = exp(phi - shift[a + t, c]) with max_h = 1 (:func:`prepare_block`);
    ``E[k, c]`` = exp(A[c, i, j] - all_max[c]) for the allowed transitions (i, j) =
    ``pairs[k]`` (all H^2 pairs for an ergodic chain). Leaves in ``ins[t, :, c]`` the
    inside vector of t scaled to max 1, the true one being ins * exp(lin[t, c]) * acc[t, c]
    (the factor acc in [1e-50, 1e50] saves a logarithm a step), and in ``msg[t, :, c]``
    the message from t to its parent scaled to max 1. ``mm``, ``mx`` are (C,) buffers.
    ``ok[c]`` is False when a normaliser of class c fell below 1e-100; its
    results are then garbage and the caller redoes the class in log space.
    """
    H = ins.shape[1]
    C = ins.shape[2]
    for c in range(C):
        ok[c] = True
    for t in range(T):
        for c in range(C):
            lin[t, c] = shift[a + t, c]
            acc[t, c] = 1.0
        for h in range(H):
            for c in range(C):
                ins[t, h, c] = psi[a + t, h, c]
    for t in range(T - 1, 0, -1):
        p = parent[t]
        for c in range(C):
            mm[c] = 0.0
            mx[c] = 0.0
        for i in range(H):
            for c in range(C):
                msg[t, i, c] = 0.0
        for k in range(pairs.shape[0]):
            i = pairs[k, 0]
            j = pairs[k, 1]
            for c in range(C):
                msg[t, i, c] += E[k, c] * ins[t, j, c]
        for i in range(H):
            for c in range(C):
                mm[c] = max(mm[c], msg[t, i, c])
        for c in range(C):
            if mm[c] < _TINY_SCALED:
                ok[c] = False
                mm[c] = 1.0
            mm[c] = 1.0 / mm[c]
        for i in range(H):
            for c in range(C):
                msg[t, i, c] *= mm[c]
                ins[p, i, c] *= msg[t, i, c]
                mx[c] = max(mx[c], ins[p, i, c])
        for c in range(C):
            if mx[c] < _TINY_SCALED:
                ok[c] = False
                mx[c] = 1.0
        for i in range(H):
            for c in range(C):
                ins[p, i, c] /= mx[c]
        for c in range(C):
            lin[p, c] += lin[t, c] + all_max[c]
            f = acc[p, c] * acc[t, c] * mx[c] / mm[c]  # mm holds 1 / max of the message
            if f < 1e-50 or f > 1e50:
                lin[p, c] += math.log(f)
                f = 1.0
            acc[p, c] = f
    for c in range(C):
        mm[c] = 0.0
    for h in range(H):
        for c in range(C):
            mm[c] += ins[0, h, c]
    for c in range(C):
        if mm[c] < _TINY_SCALED:  # only where a normaliser already failed
            ok[c] = False
            mm[c] = 1.0
        log_z[c] = lin[0, c] + math.log(acc[0, c] * mm[c])


@njit(cache=True, nogil=True)
def scaled_downward(psi, a, T, pairs, E, parent, ins, msg, outs, uv, ab, z, ok, node_w, edge_w):
    """Scaled root-to-leaves pass of one sequence for every class, after :func:`scaled_upward`.

    WRITES ``node_w[t, h, c] = p(z_t = h | c, x)`` for t < T and ``edge_w[k, c] =
    sum_t p(z_parent(t) = i, z_t = j | c, x)`` for (i, j) = ``pairs[k]``. ``outs``
    (T, H, C), ``uv`` (H, C), ``ab`` (K, C), ``z`` (C,) are buffers. The marginals normalise themselves,
    so no transcendental function is needed. Siblings (consecutive children of
    one parent) are found next to t. Sets ``ok[c] = False`` when a normaliser
    fell below 1e-100 (class c's outputs are then garbage).
    """
    H = ins.shape[1]
    C = ins.shape[2]
    K = pairs.shape[0]
    for i in range(H):
        for c in range(C):
            outs[0, i, c] = 1.0
    for k in range(K):
        for c in range(C):
            ab[k, c] = 0.0
    for t in range(1, T):
        p = parent[t]
        # u = outside(p) * psi(p) * the messages of t's siblings
        for i in range(H):
            for c in range(C):
                uv[i, c] = outs[p, i, c] * psi[a + p, i, c]
        s = t - 1
        while s >= 1 and parent[s] == p:
            for i in range(H):
                for c in range(C):
                    uv[i, c] *= msg[s, i, c]
            s -= 1
        s = t + 1
        while s < T and parent[s] == p:
            for i in range(H):
                for c in range(C):
                    uv[i, c] *= msg[s, i, c]
            s += 1
        for c in range(C):
            z[c] = 0.0
        for i in range(H):
            for c in range(C):
                z[c] = max(z[c], uv[i, c])
        for c in range(C):
            if z[c] < _TINY_SCALED:
                ok[c] = False
                z[c] = 1.0
            z[c] = 1.0 / z[c]
        for i in range(H):
            for c in range(C):
                uv[i, c] *= z[c]
        # outside(t) = u E, and sum_ij u_i E_ij ins_j normalises this edge's marginal
        for j in range(H):
            for c in range(C):
                outs[t, j, c] = 0.0
        for k in range(K):
            i = pairs[k, 0]
            j = pairs[k, 1]
            for c in range(C):
                outs[t, j, c] += uv[i, c] * E[k, c]
        for c in range(C):
            z[c] = 0.0
        for j in range(H):
            for c in range(C):
                z[c] += outs[t, j, c] * ins[t, j, c]
        for c in range(C):
            if z[c] < _TINY_SCALED:
                ok[c] = False
                z[c] = 1.0
            z[c] = 1.0 / z[c]
        for k in range(K):
            i = pairs[k, 0]
            j = pairs[k, 1]
            for c in range(C):
                ab[k, c] += uv[i, c] * ins[t, j, c] * z[c]
        # rescale outside(t) to max 1 (outs >= u_i E_ij >= 0; its max bounds z from below)
        for c in range(C):
            z[c] = 0.0
        for j in range(H):
            for c in range(C):
                z[c] = max(z[c], outs[t, j, c])
        for c in range(C):
            if z[c] < _TINY_SCALED:
                ok[c] = False
                z[c] = 1.0
            z[c] = 1.0 / z[c]
        for j in range(H):
            for c in range(C):
                outs[t, j, c] *= z[c]
    for k in range(K):
        for c in range(C):
            edge_w[k, c] = ab[k, c] * E[k, c]
    for t in range(T):
        for c in range(C):
            z[c] = 0.0
        for h in range(H):
            for c in range(C):
                z[c] += ins[t, h, c] * outs[t, h, c]
        for c in range(C):
            if z[c] < _TINY_SCALED:
                ok[c] = False
                z[c] = 1.0
            z[c] = 1.0 / z[c]
        for h in range(H):
            for c in range(C):
                node_w[t, h, c] = ins[t, h, c] * outs[t, h, c] * z[c]


# -- blocks of sequences -------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def prepare_block(phi, seq_ptr, leaf, lo, hi, start, end, shift):
    """Finish and shift the node potentials of sequences lo <= n < hi, in place.

    On entry ``phi[k, h, c]`` = theta[c, h] . x_k + beta[c, h] (n_positions, H, C).
    Adds ``start[h, c]`` at each root (a sequence's first row) and ``end[h, c]`` at
    each leaf, then subtracts the maximum over h, which goes to ``shift[k, c]``:
    afterwards the log-potential is ``phi[k, :, c] + shift[k, c]`` and its maximum
    over h is 0, so that exp(phi) (the caller takes it with numpy) has maximum 1.
    """
    _, H, C = phi.shape
    for n in range(lo, hi):
        root = seq_ptr[n]
        for k in range(root, seq_ptr[n + 1]):
            if k == root:
                for h in range(H):
                    for c in range(C):
                        phi[k, h, c] += start[h, c]
            if leaf[k]:
                for h in range(H):
                    for c in range(C):
                        phi[k, h, c] += end[h, c]
            for c in range(C):
                shift[k, c] = phi[k, 0, c]
            for h in range(1, H):
                for c in range(C):
                    shift[k, c] = max(shift[k, c], phi[k, h, c])
            for h in range(H):
                for c in range(C):
                    phi[k, h, c] -= shift[k, c]


@njit(cache=True, nogil=True)
def _log_potentials(phi, shift, a, T, c, out):
    for t in range(T):
        for h in range(phi.shape[1]):
            out[t, h] = phi[a + t, h, c] + shift[a + t, c]


@njit(cache=True, nogil=True)
def _t_max(seq_ptr, lo, hi):
    t_max = 1
    for n in range(lo, hi):
        t_max = max(t_max, seq_ptr[n + 1] - seq_ptr[n])
    return t_max


@njit(cache=True, nogil=True)
def log_scores_block(phi, psi, shift, seq_ptr, parent, lo, hi, trans, lbias, e_row, row_max, pairs, E, all_max,
                     out):
    """out[n, c] = b_c + log Z_c(x_n) for sequences lo <= n < hi (unnormalised log p(c | x_n)), in place.

    ``phi``, ``shift`` as left by :func:`prepare_block`, ``psi = exp(phi)``;
    ``E[k, c] = exp(trans[c, i, j] - all_max[c])`` for (i, j) = ``pairs[k]``, the
    allowed transitions; ``e_row``, ``row_max`` as
    :func:`scaled_transitions` makes them, for the log-space fallback.
    """
    _, H, C = phi.shape
    t_max = _t_max(seq_ptr, lo, hi)
    ins = np.empty((t_max, H, C))
    msg = np.empty((t_max, H, C))
    lin = np.empty((t_max, C))
    acc = np.empty((t_max, C))
    mm = np.empty(C)
    mx = np.empty(C)
    ok = np.empty(C, dtype=np.bool_)
    log_z = np.empty(C)
    lp = np.empty((t_max, H))
    l_in = np.empty((t_max, H))
    l_msg = np.empty((t_max, H))
    ev = np.empty(H)
    for n in range(lo, hi):
        a = seq_ptr[n]
        T = seq_ptr[n + 1] - a
        par = parent[a:a + T]
        scaled_upward(psi, shift, a, T, pairs, E, all_max, par, ins, lin, acc, msg, mm, mx, ok, log_z)
        for c in range(C):
            if not ok[c]:
                _log_potentials(phi, shift, a, T, c, lp)
                log_z[c] = upward(lp, trans[c], e_row[c], row_max[c], par, T, l_in, l_msg, ev)
            out[n, c] = lbias[c] + log_z[c]


@njit(cache=True, nogil=True)
def loss_grad_block(phi, psi, shift, seq_ptr, parent, leaf, y, lo, hi, trans, lbias,
                    e_row, row_max, e_col, col_max, e_all, all_max, pairs, E,
                    gamma, g_start, g_end, g_trans, g_lbias):
    """Sum over sequences lo <= n < hi of -log p(y_n | x_n); returns it and its gradient pieces, in place.

    ``phi``, ``shift`` as left by :func:`prepare_block`, ``psi = exp(phi)``;
    ``E[k, c] = e_all[c, i, j]`` for (i, j) = ``pairs[k]``, the allowed transitions;
    the other tables as :func:`scaled_transitions` makes them. The gradient of -log p(y | x) is
    E_{y', z ~ p(., . | x)}[f] - E_{z ~ p(. | y, x)}[f] (seed 004): the full
    graph's expected features minus the clamped graph's. The label joins every
    factor, so the full graph's expectation is the mixture
    sum_c p(c | x) E_{z ~ p(. | c, x)}[f] of the clamped ones, and each class's
    statistics enter with weight w_c = p(c | x) - [c == y].

    WRITES ``gamma[k, h, c] = w_c p(z_k = h | c, x)`` for the positions of the block
    (the caller turns it into the gradients of theta and beta with one matrix
    product) and ADDS into ``g_start`` (H, C), ``g_end`` (H, C), ``g_trans`` (K, C)
    (the pairs' transitions) and ``g_lbias`` (C,).
    """
    _, H, C = phi.shape
    t_max = _t_max(seq_ptr, lo, hi)
    ins = np.empty((t_max, H, C))
    msg = np.empty((t_max, H, C))
    outs = np.empty((t_max, H, C))
    lin = np.empty((t_max, C))
    acc = np.empty((t_max, C))
    node_w = np.empty((t_max, H, C))
    K = pairs.shape[0]
    edge_w = np.empty((K, C))
    uv = np.empty((H, C))
    ab = np.empty((K, C))
    mm = np.empty(C)
    mx = np.empty(C)
    ok_up = np.empty(C, dtype=np.bool_)
    ok = np.empty(C, dtype=np.bool_)
    log_z = np.empty(C)
    w = np.empty(C)
    # log-space fallback, one class at a time
    lp = np.empty((t_max, H))
    l_in = np.empty((t_max, H))
    l_msg = np.empty((t_max, H))
    l_out = np.empty((t_max, H))
    l_node = np.empty((t_max, H))
    l_edge = np.empty((H, H))
    u = np.empty(H)
    eu = np.empty(H)
    ev = np.empty(H)
    loss = 0.0
    for n in range(lo, hi):
        a = seq_ptr[n]
        T = seq_ptr[n + 1] - a
        par = parent[a:a + T]
        scaled_upward(psi, shift, a, T, pairs, E, all_max, par, ins, lin, acc, msg, mm, mx, ok_up, log_z)
        for c in range(C):
            ok[c] = ok_up[c]
            if not ok_up[c]:
                _log_potentials(phi, shift, a, T, c, lp)
                log_z[c] = upward(lp, trans[c], e_row[c], row_max[c], par, T, l_in, l_msg, ev)
        scaled_downward(psi, a, T, pairs, E, par, ins, msg, outs, uv, ab, mm, ok, node_w, edge_w)
        # w_c = p(c | x) - [c == y]
        smax = -np.inf
        for c in range(C):
            w[c] = lbias[c] + log_z[c]
            smax = max(smax, w[c])
        lse = 0.0
        for c in range(C):
            lse += math.exp(w[c] - smax)
        lse = smax + math.log(lse)
        yn = y[n]
        loss += lse - w[yn]
        for c in range(C):
            w[c] = math.exp(w[c] - lse)
        w[yn] -= 1.0
        for c in range(C):
            if ok[c]:
                continue
            _log_potentials(phi, shift, a, T, c, lp)
            log_z[c] = upward(lp, trans[c], e_row[c], row_max[c], par, T, l_in, l_msg, ev)
            l_node[:T] = 0.0
            l_edge[:] = 0.0
            downward(trans[c], e_col[c], col_max[c], e_all[c], all_max[c], par, T, l_in, l_msg, log_z[c],
                     l_out, l_node, l_edge, u, eu, ev)
            for t in range(T):
                for h in range(H):
                    node_w[t, h, c] = l_node[t, h]
            for k in range(K):
                edge_w[k, c] = l_edge[pairs[k, 0], pairs[k, 1]]
        for c in range(C):
            g_lbias[c] += w[c]
        for k in range(K):
            for c in range(C):
                g_trans[k, c] += w[c] * edge_w[k, c]
        for h in range(H):
            for c in range(C):
                g_start[h, c] += w[c] * node_w[0, h, c]
        for t in range(T):
            if leaf[a + t]:
                for h in range(H):
                    for c in range(C):
                        g_end[h, c] += w[c] * node_w[t, h, c]
            for h in range(H):
                for c in range(C):
                    gamma[a + t, h, c] = w[c] * node_w[t, h, c]
    return loss
