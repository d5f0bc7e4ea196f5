"""The hidden-state CRF (HCRF): what is modelled, its likelihood and the gradient.

Quattoni, Wang, Morency, Collins & Darrell (2007), "Hidden conditional random
fields", PAMI 29(10); seed 004, "Hidden-state CRFs". A sequence (or tree) of
T observations x_t in R^F has one class label y in {0..C-1} and a hidden state
z_t in {0..H-1} at every position. With pyhcrf's parameterisation
(state-feature weights per (class, hidden state), transitions per class) and
start and end weights:

    score(y, z, x) = b_y + sum_t [ theta[y, z_t] . x_t + beta[y, z_t] ]
                         + pi[y, z_root] + sum_{t leaf} eps[y, z_t]
                         + sum_{t != root} A[y, z_parent(t), z_t]

    p(y, z | x) = exp(score(y, z, x)) / Z(x),   Z(x) = sum_y' exp(b_y') Z_y'(x),
    p(y | x) = exp(b_y) Z_y(x) / Z(x),          Z_y(x) = sum_z exp(score(y, z, x) - b_y).

``theta`` (C, H, F) are the state-feature weights, ``beta`` (C, H) the state
biases (Quattoni's theta(y, h) compatibilities), ``pi`` and ``eps`` (C, H) the
start and end weights (on a chain: of z_1 and z_T; they anchor the hidden
states to the ends, as pyhcrf's fixed start and end states do), ``A`` (C, H, H)
the transition weights (Quattoni's theta(y, h, h'); ``A[y, i, j]`` scores a
parent in state i and its child in state j; -inf forbids a transition, e.g.
for the left-to-right topology) and ``b`` (C,) the label bias. The hidden layer
is a chain (``parent[t] = t - 1``) or any tree given by a parent array;
sum-product on it is exact (:mod:`harmonium._kernels.hcrf`).

Training minimises the regularised negative conditional log-likelihood

    L(w) = - sum_n log p(y_n | x_n) + l2 * ||w without b||^2

(pyhcrf's convention for its ``c2``: l2 times the squared norm, not half of
it; the label bias b and forbidden transitions are not penalised). Its
gradient is, per sequence, E_{y, z ~ p(., . | x)}[f] - E_{z ~ p(. | y, x)}[f] + 2 l2 w:
the expected features on the full factor graph minus those on the graph
clamped at the observed label (seed 004), f being what multiplies each weight
in the score (indicators, and x_t for theta).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium._kernels import hcrf as kh
from harmonium.errors import CorpusError
from harmonium.parallel.threads import partition_documents, run_blocks


class HCRFParams(NamedTuple):
    """Weights of an HCRF; see the module docstring for the score they define."""

    state_weights: np.ndarray  # theta (C, H, F)
    state_bias: np.ndarray  # beta (C, H)
    start_weights: np.ndarray  # pi (C, H), at the root
    end_weights: np.ndarray  # eps (C, H), at the leaves
    transition_weights: np.ndarray  # A (C, H, H)
    label_bias: np.ndarray  # b (C,)

    @property
    def shape(self) -> tuple[int, int, int]:
        """(C, H, F)."""
        return self.state_weights.shape


class Sequences(NamedTuple):
    """Sequences stacked for the kernels.

    ``X`` (n_positions, F) float64 rows of all sequences one after the other;
    ``seq_ptr`` (n + 1,) int64, sequence n is ``X[seq_ptr[n]:seq_ptr[n+1]]``;
    ``parent`` (n_positions,) int64 local parent index, -1 at the root, with
    ``parent[t] < t`` and the children of a node numbered consecutively (trees
    are renumbered breadth-first from the root); ``leaf`` (n_positions,) bool,
    positions without children; ``order`` (n_positions,) int64 or None: row k
    of ``X`` is position ``order[k]`` of its sequence as given (None: the
    identity, as for chains).
    """

    X: np.ndarray
    seq_ptr: np.ndarray
    parent: np.ndarray
    leaf: np.ndarray
    order: np.ndarray | None

    @property
    def n_sequences(self) -> int:
        return self.seq_ptr.shape[0] - 1

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


TRANSITIONS = ("full", "left_to_right")


def transition_mask(H: int, kind: str) -> np.ndarray | None:
    """Allowed transitions (H, H) bool, parent state i -> child state j; None when all are.

    ``"full"``: every pair (ergodic). ``"left_to_right"``: j in {i, i + 1}, the
    Bakis topology of speech and gesture HMMs (the child stays or moves one state on).
    """
    if kind == "full":
        return None
    i, j = np.indices((H, H))
    return (j == i) | (j == i + 1)


def n_params(C: int, H: int, F: int) -> int:
    """Length of the flat weight vector (theta, beta, pi, eps, A, b)."""
    return C * H * F + 3 * C * H + C * H * H + C


def pack(params: HCRFParams) -> np.ndarray:
    """The flat weight vector: theta, beta, pi, eps, A, b, each C-ordered."""
    return np.concatenate([np.ravel(a) for a in params])


def unpack(w: np.ndarray, C: int, H: int, F: int) -> HCRFParams:
    """Views of ``w`` (made contiguous float64 first) as :class:`HCRFParams`."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    shapes = [(C, H, F), (C, H), (C, H), (C, H), (C, H, H), (C,)]
    out, a = [], 0
    for shp in shapes:
        size = int(np.prod(shp))
        out.append(w[a:a + size].reshape(shp))
        a += size
    return HCRFParams(*out)


def free_mask(C: int, H: int, F: int, allowed: np.ndarray | None) -> np.ndarray:
    """1.0 for the weights that are free (all but forbidden transitions), 0.0 else."""
    m = np.ones(n_params(C, H, F))
    if allowed is not None:
        unpack(m, C, H, F).transition_weights[:] = allowed
    return m


def penalty_mask(C: int, H: int, F: int, allowed: np.ndarray | None = None) -> np.ndarray:
    """1.0 for the weights the L2 term penalises (free ones but the label bias), 0.0 else."""
    m = free_mask(C, H, F, allowed)
    m[-C:] = 0.0
    return m


def init_params(rng: np.random.Generator, C: int, H: int, F: int, scale: float,
                allowed: np.ndarray | None = None) -> HCRFParams:
    """Free weights drawn i.i.d. N(0, scale^2), the label bias and forbidden transitions 0.

    Random starts break the symmetry between hidden states.
    """
    w = rng.normal(0.0, scale, size=n_params(C, H, F)) * penalty_mask(C, H, F, allowed)
    return unpack(w, C, H, F)


def effective_transitions(A: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
    """A with forbidden transitions at -inf."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    return A if allowed is None else np.where(allowed, A, -np.inf)


# -- data --------------------------------------------------------------------------------------


def _tree_order(par: np.ndarray, n: int, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first order from the root and the renumbered parent array; raises on anything but a tree."""
    T = par.shape[0]
    roots = np.flatnonzero(par == -1)
    if roots.size != 1:
        raise CorpusError(f"parents of sequence {n} must hold exactly one root (-1); found {roots.size} ({where}).")
    bad = np.flatnonzero((par < -1) | (par >= T) | (par == np.arange(T)))
    if bad.size:
        t = int(bad[0])
        raise CorpusError(
            f"parents of sequence {n}: position {t} has parent {int(par[t])}, which is not -1 or another "
            f"position in 0..{T - 1} ({where})."
        )
    children: list[list[int]] = [[] for _ in range(T)]
    for t in range(T):
        if par[t] >= 0:
            children[par[t]].append(t)
    order = [int(roots[0])]
    for node in order:
        order.extend(children[node])
    if len(order) != T:
        raise CorpusError(f"parents of sequence {n} contain a cycle: they do not form a tree ({where}).")
    order_arr = np.asarray(order, dtype=np.int64)
    new_of_old = np.empty(T, dtype=np.int64)
    new_of_old[order_arr] = np.arange(T)
    new_par = np.where(par[order_arr] < 0, -1, new_of_old[np.maximum(par[order_arr], 0)])
    return order_arr, new_par.astype(np.int64)


def as_sequences(X, parents=None, *, where: str, n_features: int | None = None) -> Sequences:
    """Check and stack a list of (T_i, F) arrays (and optional parent arrays) for the kernels.

    Parameters
    ----------
    X : sequence of array_like (T_i, F), or one array (n, T, F)
        The observations; T_i >= 1 may differ between sequences.
    parents : sequence of array_like of int (T_i,), optional
        For tree-structured hidden layers: the parent of each position, -1 at
        the root. None means chains.
    where : str
        Named in error messages, e.g. ``"HCRF.fit"``.
    n_features : int, optional
        The F every sequence must have (a fitted model's).

    Raises
    ------
    CorpusError
        Naming the sequence: not 2-D, empty, a different F, NaN or infinity,
        a parent array that is not a tree or has the wrong length.
    """
    if isinstance(X, np.ndarray) and X.ndim == 3:
        seqs = list(X)
    elif isinstance(X, (list, tuple)) or (isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 1):
        seqs = list(X)
    else:
        raise CorpusError(
            f"{where} expects a list of (T_i, n_features) arrays, one a sequence, or an (n, T, n_features) "
            f"array; got {type(X).__name__}" + (f" with shape {X.shape}" if isinstance(X, np.ndarray) else "") + "."
        )
    if not seqs:
        raise CorpusError(f"{where} got no sequences.")
    arrays = []
    expected = "the fitted model's" if n_features is not None else "sequence 0's"
    for n, x in enumerate(seqs):
        try:
            a = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise CorpusError(f"sequence {n} is not a numeric array ({where}): {exc}") from exc
        if a.ndim != 2:
            raise CorpusError(f"sequence {n} must be 2-D (T, n_features); got shape {a.shape} ({where}).")
        if a.shape[0] < 1:
            raise CorpusError(f"sequence {n} is empty: it needs at least one position ({where}).")
        F = a.shape[1] if n_features is None else n_features
        if a.shape[1] != F or F < 1:
            raise CorpusError(
                f"sequence {n} has {a.shape[1]} features but {expected} has {F} ({where})."
                if F >= 1 else f"sequences need at least one feature; sequence {n} has shape {a.shape} ({where})."
            )
        n_features = F
        if not np.isfinite(a).all():
            t = int(np.flatnonzero(~np.isfinite(a).all(axis=1))[0])
            raise CorpusError(f"sequence {n} holds NaN or infinity at position {t} ({where}).")
        arrays.append(a)
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    seq_ptr = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(lengths, out=seq_ptr[1:])
    if parents is None:
        parent = np.arange(seq_ptr[-1], dtype=np.int64) - np.repeat(seq_ptr[:-1], lengths) - 1
        leaf = np.zeros(seq_ptr[-1], dtype=np.bool_)
        leaf[seq_ptr[1:] - 1] = True
        return Sequences(np.ascontiguousarray(np.concatenate(arrays)), seq_ptr, parent, leaf, None)
    if not isinstance(parents, (list, tuple, np.ndarray)) or len(parents) != len(arrays):
        got = len(parents) if hasattr(parents, "__len__") else type(parents).__name__
        raise CorpusError(f"{where} needs one parent array per sequence: {len(arrays)} sequences, got {got}.")
    rows, pars, orders = [], [], []
    for n, (a, p) in enumerate(zip(arrays, parents, strict=True)):
        p = np.asarray(p)
        if p.ndim != 1 or p.shape[0] != a.shape[0] or (p.size and not np.issubdtype(p.dtype, np.integer)):
            raise CorpusError(
                f"parents of sequence {n} must be {a.shape[0]} integers (one per position); "
                f"got shape {p.shape}, dtype {p.dtype} ({where})."
            )
        order, new_par = _tree_order(p.astype(np.int64), n, where)
        rows.append(a[order])
        pars.append(new_par)
        orders.append(order)
    parent = np.concatenate(pars)
    has_child = np.zeros(seq_ptr[-1], dtype=np.bool_)
    has_child[(np.repeat(seq_ptr[:-1], lengths) + parent)[parent >= 0]] = True
    return Sequences(np.ascontiguousarray(np.concatenate(rows)), seq_ptr, parent, ~has_child, np.concatenate(orders))


def encode_labels(y, classes: np.ndarray, where: str) -> np.ndarray:
    """Indices of ``y`` in ``classes`` (int64); raises on labels the model does not know."""
    y = np.asarray(y)
    idx = np.searchsorted(classes, y)
    idx = np.clip(idx, 0, classes.shape[0] - 1)
    bad = np.flatnonzero(classes[idx] != y)
    if bad.size:
        raise CorpusError(f"label {y[bad[0]].item()!r} of sequence {int(bad[0])} is not one of the classes "
                          f"{classes.tolist()} ({where}).")
    return idx.astype(np.int64)


# -- inference on the hidden layer ------------------------------------------------------------------


class TransitionTables(NamedTuple):
    """exp(A - max) over rows, columns and all entries, per class (see :func:`kh.scaled_transitions`)."""

    e_row: np.ndarray
    row_max: np.ndarray
    e_col: np.ndarray
    col_max: np.ndarray
    e_all: np.ndarray
    all_max: np.ndarray


def transition_tables(A: np.ndarray) -> TransitionTables:
    """The tables of :func:`harmonium._kernels.hcrf.scaled_transitions` for A (C, H, H)."""
    C, H, _ = A.shape
    tabs = TransitionTables(np.empty((C, H, H)), np.empty((C, H)), np.empty((C, H, H)), np.empty((C, H)),
                            np.empty((C, H, H)), np.empty(C))
    kh.scaled_transitions(np.ascontiguousarray(A, dtype=np.float64), *tabs)
    return tabs


def base_potentials(params: HCRFParams, X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(n_positions, H, C) theta[c, h] . x_t + beta[c, h], by one matrix product (class index last)."""
    C, H, F = params.shape
    W = params.state_weights.transpose(1, 0, 2).reshape(H * C, F)
    phi = np.matmul(X, W.T, out=None if out is None else out.reshape(X.shape[0], H * C))
    phi += params.state_bias.T.reshape(1, H * C)
    return phi.reshape(X.shape[0], H, C)


def _blocks(seqs: Sequences, n_jobs: int) -> list[tuple[int, int]]:
    return [b for b in partition_documents(seqs.seq_ptr, n_jobs) if b[1] > b[0]]


class Workspace:
    """Buffers of one size of data, reused across evaluations (fresh large arrays cost page faults).

    ``phi`` (n_positions, H, C) log-potentials shifted to max 0 over h, ``psi = exp(phi)``,
    ``shift`` (n_positions, C), ``gamma`` (n_positions, H, C) weighted node marginals.
    """

    def __init__(self, n_positions: int, C: int, H: int):
        self.phi = np.empty((n_positions, H, C))
        self.psi = np.empty((n_positions, H, C))
        self.shift = np.empty((n_positions, C))
        self.gamma = np.empty((n_positions, H, C))

    def fits(self, n_positions: int, C: int, H: int) -> bool:
        return self.phi.shape == (n_positions, H, C)


def _workspace(work: Workspace | None, seqs: Sequences, C: int, H: int) -> Workspace:
    n = seqs.X.shape[0]
    return work if work is not None and work.fits(n, C, H) else Workspace(n, C, H)


def _prepare(work: Workspace, params: HCRFParams, seqs: Sequences, lo: int, hi: int) -> None:
    """Add start/end weights, shift, exponentiate: rows of sequences lo..hi-1 (numpy's exp is vectorised)."""
    kh.prepare_block(work.phi, seqs.seq_ptr, seqs.leaf, lo, hi, np.ascontiguousarray(params.start_weights.T),
                     np.ascontiguousarray(params.end_weights.T), work.shift)
    rows = slice(seqs.seq_ptr[lo], seqs.seq_ptr[hi])
    np.exp(work.phi[rows], out=work.psi[rows])


def _pairs(A: np.ndarray, tabs: TransitionTables) -> tuple[np.ndarray, np.ndarray]:
    """The transitions (i, j) allowed (finite) for some class, (K, 2), and E[k, c] = e_all[c, i, j]."""
    pairs = np.argwhere(np.isfinite(A).any(axis=0)).astype(np.int64)
    if pairs.shape[0] == 0:  # no transition at all: E = 0 keeps every chain longer than 1 at Z = 0
        pairs = np.zeros((1, 2), dtype=np.int64)
    E = np.ascontiguousarray(tabs.e_all[:, pairs[:, 0], pairs[:, 1]].T)
    return pairs, E


def log_scores(params: HCRFParams, seqs: Sequences, n_jobs: int = 1, work: Workspace | None = None) -> np.ndarray:
    """(n, C) b_c + log Z_c(x_n): the unnormalised log p(c | x_n)."""
    C, H, _ = params.shape
    tabs = transition_tables(params.transition_weights)
    pairs, E = _pairs(params.transition_weights, tabs)
    work = _workspace(work, seqs, C, H)
    base_potentials(params, seqs.X, out=work.phi)
    out = np.empty((seqs.n_sequences, C))

    def block(lo, hi):
        _prepare(work, params, seqs, lo, hi)
        kh.log_scores_block(work.phi, work.psi, work.shift, seqs.seq_ptr, seqs.parent, lo, hi,
                            params.transition_weights, params.label_bias, tabs.e_row, tabs.row_max, pairs, E,
                            tabs.all_max, out)

    run_blocks(block, _blocks(seqs, n_jobs))
    return out


def predict_log_proba(params: HCRFParams, seqs: Sequences, n_jobs: int = 1) -> np.ndarray:
    """(n, C) log p(c | x_n)."""
    s = log_scores(params, seqs, n_jobs)
    m = s.max(axis=1, keepdims=True)
    return s - (m + np.log(np.exp(s - m).sum(axis=1, keepdims=True)))


def neg_log_likelihood_grad(params: HCRFParams, seqs: Sequences, y: np.ndarray, n_jobs: int = 1,
                            work: Workspace | None = None):
    """(- sum_n log p(y_n | x_n), its gradient as an :class:`HCRFParams` of arrays).

    Sequences are split into ``n_jobs`` blocks of about equal length, one a
    thread (the kernel releases the GIL); each block sums into its own
    gradient, and the blocks are added in order, so a result depends on
    ``n_jobs`` only through floating-point rounding. Forbidden transitions
    (-inf) get gradient 0. ``work`` (a :class:`Workspace`) saves reallocating.
    """
    C, H, F = params.shape
    tabs = transition_tables(params.transition_weights)
    pairs, E = _pairs(params.transition_weights, tabs)
    K = pairs.shape[0]
    work = _workspace(work, seqs, C, H)
    base_potentials(params, seqs.X, out=work.phi)
    y = np.ascontiguousarray(y, dtype=np.int64)

    def block(lo, hi):
        _prepare(work, params, seqs, lo, hi)
        g = [np.zeros((H, C)), np.zeros((H, C)), np.zeros((K, C)), np.zeros(C)]
        loss = kh.loss_grad_block(work.phi, work.psi, work.shift, seqs.seq_ptr, seqs.parent, seqs.leaf, y, lo, hi,
                                  params.transition_weights, params.label_bias, *tabs, pairs, E, work.gamma, *g)
        return loss, g

    results = run_blocks(block, _blocks(seqs, n_jobs))
    loss = 0.0
    g_start, g_end, g_pairs, g_lbias = (np.zeros_like(a) for a in results[0][1])
    for part_loss, (gs, ge, gt, gl) in results:
        loss += part_loss
        g_start += gs
        g_end += ge
        g_pairs += gt
        g_lbias += gl
    g_trans = np.zeros((C, H, H))
    g_trans[:, pairs[:, 0], pairs[:, 1]] = g_pairs.T
    gamma2 = work.gamma.reshape(-1, H * C)
    g_theta = (gamma2.T @ seqs.X).reshape(H, C, F).transpose(1, 0, 2)
    g_beta = gamma2.sum(axis=0).reshape(H, C).T
    return loss, HCRFParams(g_theta, g_beta, g_start.T, g_end.T, g_trans, g_lbias)


def objective(w: np.ndarray, seqs: Sequences, y: np.ndarray, C: int, H: int, l2: float,
              allowed: np.ndarray | None = None, n_jobs: int = 1, work: Workspace | None = None):
    """(L(w), dL/dw) of the module docstring, for ``scipy.optimize.minimize(..., jac=True)``.

    ``allowed`` (H, H) bool: the transitions the model may use (None: all);
    the entries of ``w`` for the others are ignored and get gradient 0.
    """
    F = seqs.n_features
    p = unpack(w, C, H, F)
    p = p._replace(transition_weights=effective_transitions(p.transition_weights, allowed))
    loss, grad = neg_log_likelihood_grad(p, seqs, y, n_jobs, work)
    g = pack(grad)
    wm = w * penalty_mask(C, H, F, allowed)
    if l2 > 0:
        loss += l2 * float(wm @ wm)
        g += 2.0 * l2 * wm
    if allowed is not None:
        g *= free_mask(C, H, F, allowed)
    return loss, g


class SequencePosterior(NamedTuple):
    """Exact posterior quantities of one sequence (positions in the order given).

    ``class_proba`` (C,) p(y | x); ``log_z`` (C,) log Z_y(x) (without b_y);
    ``node`` (C, T, H) p(z_t = h | y, x) on the graph clamped at each y;
    ``edge`` (C, T, H, H) p(z_parent(t) = i, z_t = j | y, x), zero at the root.
    The full graph's marginals are the mixtures over ``class_proba``.
    """

    class_proba: np.ndarray
    log_z: np.ndarray
    node: np.ndarray
    edge: np.ndarray


def _posteriors(params: HCRFParams, seqs: Sequences):
    """Yield (n, log_z (C,), node (C, T, H), edge (C, T, H, H)) per sequence, in kernel order, by log-space BP."""
    C, H, F = params.shape
    tabs = transition_tables(params.transition_weights)
    phi_base = base_potentials(params, seqs.X)
    for n in range(seqs.n_sequences):
        a, b = seqs.seq_ptr[n], seqs.seq_ptr[n + 1]
        T = b - a
        par, leaf = seqs.parent[a:b], seqs.leaf[a:b]
        node = np.empty((C, T, H))
        edge = np.empty((C, T, H, H))
        log_z = np.empty(C)
        for c in range(C):
            phi = phi_base[a:b, :, c] + np.where(leaf[:, None], params.end_weights[c], 0.0)
            phi[0] += params.start_weights[c]
            log_z[c] = kh.sum_product(np.ascontiguousarray(phi), params.transition_weights[c],
                                      *(tab[c] for tab in tabs), par, node[c], edge[c])
        yield n, log_z, node, edge


def sequence_posterior(params: HCRFParams, x, parent=None, where: str = "sequence_posterior") -> SequencePosterior:
    """Marginals of one sequence by sum-product, for every clamped class (see :class:`SequencePosterior`)."""
    seqs = as_sequences([x], None if parent is None else [parent], where=where, n_features=params.shape[2])
    _, log_z, node, edge = next(_posteriors(params, seqs))
    if seqs.order is not None:  # back to the positions as given; the root's edge row stays zero
        node_o, edge_o = np.empty_like(node), np.empty_like(edge)
        node_o[:, seqs.order] = node
        edge_o[:, seqs.order] = edge
        node, edge = node_o, edge_o
    s = params.label_bias + log_z
    p = np.exp(s - s.max())
    return SequencePosterior(p / p.sum(), log_z, node, edge)


def expected_features(params: HCRFParams, seqs: Sequences, y: np.ndarray | None = None) -> HCRFParams:
    """Sum over sequences of E[f]: clamped at ``y`` (E_{z ~ p(. | y_n, x_n)}), or on the full graph if y is None.

    The gradient of sum_n log p(y_n | x_n) is ``expected_features(y) - expected_features(None)``
    (seed 004). One sequence at a time by log-space sum-product; for tests and
    diagnostics (training uses the fused :func:`neg_log_likelihood_grad`).
    """
    C, H, F = params.shape
    out = unpack(np.zeros(n_params(C, H, F)), C, H, F)
    for n, log_z, node, edge in _posteriors(params, seqs):
        a, b = seqs.seq_ptr[n], seqs.seq_ptr[n + 1]
        x, leaf = seqs.X[a:b], seqs.leaf[a:b]
        if y is None:
            s = params.label_bias + log_z
            weight = np.exp(s - s.max())
            weight /= weight.sum()
        else:
            weight = np.zeros(C)
            weight[y[n]] = 1.0
        out.label_bias[:] += weight
        out.state_bias[:] += np.einsum("c,cth->ch", weight, node)
        out.state_weights[:] += np.einsum("c,cth,tf->chf", weight, node, x)
        out.start_weights[:] += weight[:, None] * node[:, 0]
        out.end_weights[:] += np.einsum("c,cth->ch", weight, node[:, leaf])
        out.transition_weights[:] += np.einsum("c,ctij->cij", weight, edge)
    return out
