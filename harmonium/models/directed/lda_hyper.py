"""LDA hyperparameters by maximum evidence: Minka's fixed point for the Dirichlet-multinomial.

Given topic assignments, the document-topic counts n_dk are draws from a
Dirichlet-multinomial (Polya) distribution with parameter alpha, and the
topic-word counts n_wk (column k = topic k) from one with the symmetric
parameter beta. Their log evidence, up to the multinomial coefficients, is

    L(alpha) = sum_d [ log G(alpha_0) - log G(N_d + alpha_0)
                       + sum_k log G(n_dk + alpha_k) - log G(alpha_k) ],   alpha_0 = sum_k alpha_k.

Minka (2000), "Estimating a Dirichlet distribution", sec. "Estimating a Polya
distribution", maximises it by the fixed-point iteration (used for LDA by
Wallach 2008, PhD thesis ch. 2, and by MALLET):

    alpha_k <- alpha_k * sum_d [psi(n_dk + alpha_k) - psi(alpha_k)]
                       / sum_d [psi(N_d + alpha_0) - psi(alpha_0)]                      (A)

and for a symmetric prior over V words shared by K topics:

    beta <- beta * sum_{k,w} [psi(n_wk + beta) - psi(beta)]
                 / (V * sum_k [psi(n_k + V beta) - psi(V beta)])                       (B)

Each update maximises a lower bound on L that touches it at the current value,
so L never decreases along the iteration.

Cost. Zero counts contribute 0 to every sum, and equal counts contribute
equally, so the sums run over the *distinct* (topic, count) pairs with their
multiplicities (the count histograms of Wallach 2008 ch. 2, evaluated with
scipy's digamma instead of the digamma recurrence). Building the histograms
costs O(nnz log nnz) once; an iteration then costs O(#distinct pairs), which is
at most min(nnz, K * max count). Counts may be non-negative reals (e.g. expected
counts from variational inference).
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln

from harmonium._validation import Interval, validate_params
from harmonium.errors import InvalidParameterError
from harmonium.models.directed.lda import doc_topic_cells

_ITER_CONSTRAINTS = {
    "n_iter": [Interval("int", 1, None)],
    "tol": [Interval("real", 0, None)],
    "min_value": [Interval("real", 0, None, closed="neither")],
}


def _check_counts(x, name: str, owner: str, ndim: int) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != ndim or not np.issubdtype(a.dtype, np.number) or not np.all(np.isfinite(a)) or np.any(a < 0):
        kind = "matrix" if ndim == 2 else "vector"
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a {ndim}-D {kind} of finite non-negative counts. "
            f"Got an array of shape {a.shape} and dtype {a.dtype}."
        )
    return a.astype(np.float64, copy=False)


def _histogram(counts: np.ndarray):
    """(column, value, multiplicity) of the distinct non-zero entries of a 2-D count array."""
    rows, cols = np.nonzero(counts)
    return _histogram_of_pairs(cols.astype(np.float64), counts[rows, cols])


def _histogram_of_pairs(cols: np.ndarray, vals: np.ndarray):
    """(column, value, multiplicity) of the distinct (column, value) pairs."""
    pairs = np.column_stack([cols, vals])
    if pairs.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    uniq, mult = np.unique(pairs, axis=0, return_counts=True)
    return uniq[:, 0].astype(np.int64), uniq[:, 1], mult.astype(np.float64)


def _positive_values(values: np.ndarray):
    v = values[values > 0]
    if v.size == 0:
        return np.zeros(0), np.zeros(0)
    uniq, mult = np.unique(v, return_counts=True)
    return uniq, mult.astype(np.float64)


def dirichlet_multinomial_log_evidence(counts, alpha) -> float:
    """sum over rows r of log DM(counts[r] | alpha), without the multinomial coefficients.

    = sum_r [ log G(A) - log G(N_r + A) + sum_c log G(n_rc + a_c) - log G(a_c) ],  A = sum_c a_c.

    Parameters
    ----------
    counts : array (R, C) of non-negative counts
    alpha : float or array (C,) of positive parameters (a float is symmetric)
    """
    n = _check_counts(counts, "counts", "dirichlet_multinomial_log_evidence", 2)
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (n.shape[1],))
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise InvalidParameterError(
            "The 'alpha' parameter of dirichlet_multinomial_log_evidence must be a finite float > 0 "
            f"or an array of {n.shape[1]} such floats. Got {alpha!r}."
        )
    A = a.sum()
    n_r = n.sum(axis=1)
    return float(
        n.shape[0] * gammaln(A) - gammaln(n_r + A).sum() + (gammaln(n + a) - gammaln(a)).sum()
    )


def optimize_alpha(n_dk, alpha, *, n_iter: int = 1000, tol: float = 1e-8, min_value: float = 1e-12,
                   doc_ptr=None, z=None) -> np.ndarray:
    """Asymmetric document-topic prior maximising the Dirichlet-multinomial evidence of ``n_dk``.

    Iterates Minka's fixed point (A) of the module docstring until the largest
    relative change of an alpha_k falls below ``tol`` or ``n_iter`` updates
    were made.

    Parameters
    ----------
    n_dk : array (D, K) or None
        Document-topic counts (non-negative). None: the counts of topic
        assignments ``z`` (N,) over documents ``doc_ptr`` (D + 1), taken one
        document at a time without a D x K table (same result, bit for bit).
    alpha : array (K,)
        Starting value, every entry > 0.
    n_iter : int
        Maximum number of fixed-point updates.
    tol : float
        Stop when max_k |alpha_k' - alpha_k| / alpha_k <= tol.
    min_value : float
        Floor that keeps alpha positive: a topic with no tokens anywhere has
        its evidence maximised as alpha_k -> 0, and the update (A) sends it
        to 0 in one step.

    Returns
    -------
    array (K,)
        The new alpha (a new array; the inputs are not modified). Unchanged
        when there are no tokens at all.
    """
    owner = "optimize_alpha"
    validate_params(owner, {"n_iter": n_iter, "tol": tol, "min_value": min_value}, _ITER_CONSTRAINTS)
    if n_dk is None:
        K = int(np.size(alpha)) if np.ndim(alpha) <= 1 else -1
    else:
        n = _check_counts(n_dk, "n_dk", owner, 2)
        K = n.shape[1]
    a = np.array(alpha, dtype=np.float64, ndmin=1) if np.ndim(alpha) <= 1 else None
    if a is None or a.shape != (K,) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise InvalidParameterError(
            f"The 'alpha' parameter of {owner} must be an array of K = {K} finite floats > 0. Got {alpha!r}."
        )
    if n_dk is None:
        cols, vals = doc_topic_cells(doc_ptr, z, K)
        col, val, mult = _histogram_of_pairs(cols.astype(np.float64), vals)
        lens, lmult = _positive_values(np.diff(doc_ptr).astype(np.float64))
    else:
        col, val, mult = _histogram(n)
        lens, lmult = _positive_values(n.sum(axis=1))
    if lens.size == 0:
        return a
    for _ in range(n_iter):
        a0 = a.sum()
        num = np.bincount(col, weights=mult * (digamma(val + a[col]) - digamma(a[col])), minlength=K)
        den = float((lmult * (digamma(lens + a0) - digamma(a0))).sum())
        new = np.maximum(a * num / den, min_value)
        done = np.max(np.abs(new - a) / a) <= tol
        a = new
        if done:
            break
    return a


def optimize_beta(
    n_wk, n_k, beta: float, *, n_iter: int = 1000, tol: float = 1e-8, min_value: float = 1e-12
) -> float:
    """Symmetric topic-word prior maximising the Dirichlet-multinomial evidence of the topics' word counts.

    Iterates Minka's fixed point (B) of the module docstring until the
    relative change falls below ``tol`` or ``n_iter`` updates were made. The
    evidence maximised is ``dirichlet_multinomial_log_evidence(n_wk.T, beta)``.

    Parameters
    ----------
    n_wk : array (V, K)
        Word-topic counts, word-major (column k = topic k).
    n_k : array (K,)
        Tokens per topic (the column sums of ``n_wk``).
    beta : float
        Starting value, > 0.
    n_iter, tol, min_value
        As in :func:`optimize_alpha`.

    Returns
    -------
    float
        The new beta (unchanged when there are no tokens).
    """
    owner = "optimize_beta"
    validate_params(owner, {"n_iter": n_iter, "tol": tol, "min_value": min_value, "beta": beta},
                    {**_ITER_CONSTRAINTS, "beta": [Interval("real", 0, None, closed="neither")]})
    n = _check_counts(n_wk, "n_wk", owner, 2)
    nk = _check_counts(n_k, "n_k", owner, 1)
    V, K = n.shape
    if nk.shape != (K,):
        raise InvalidParameterError(
            f"The 'n_k' parameter of {owner} must have one entry per topic (K = {K}, the columns of n_wk). "
            f"Got shape {nk.shape}."
        )
    _, val, mult = _histogram(n)
    tot, tmult = _positive_values(nk)
    b = float(beta)
    if tot.size == 0:
        return b
    for _ in range(n_iter):
        num = float((mult * (digamma(val + b) - digamma(b))).sum())
        den = V * float((tmult * (digamma(tot + V * b) - digamma(V * b))).sum())
        new = max(b * num / den, min_value)
        done = abs(new - b) / b <= tol
        b = new
        if done:
            break
    return b


def _inverse_digamma(y: np.ndarray, n_newton: int = 8) -> np.ndarray:
    """x with psi(x) = y, by Minka's (2000, appendix C) initialisation and Newton steps."""
    from scipy.special import polygamma

    y = np.asarray(y, dtype=np.float64)
    x = np.where(y >= -2.22, np.exp(y) + 0.5, -1.0 / (y - digamma(1.0)))
    for _ in range(n_newton):
        x = x - (digamma(x) - y) / polygamma(1, x)
    return x


def dirichlet_from_mean_log(mean_log, alpha, *, n_iter: int = 1000, tol: float = 1e-10,
                            min_value: float = 1e-12) -> np.ndarray:
    """Asymmetric Dirichlet parameter maximising sum_d log Dir(E[log theta_d] | alpha) (the ELBO's alpha terms).

    With ``mean_log[k]`` = (1/D) sum_d E_q[log theta_dk], the alpha terms of the
    LDA ELBO (Blei et al. 2003 appendix A.4.2) are
    D [log G(alpha_0) - sum_k log G(alpha_k) + sum_k (alpha_k - 1) mean_log_k],
    concave in alpha, maximised by Minka's (2000) fixed point
    psi(alpha_k) <- psi(alpha_0) + mean_log_k.
    """
    m = np.asarray(mean_log, dtype=np.float64)
    a = np.array(alpha, dtype=np.float64, ndmin=1)
    if a.shape != m.shape or not np.all(np.isfinite(m)) or np.any(a <= 0):
        raise InvalidParameterError(
            f"dirichlet_from_mean_log needs alpha (> 0) and mean_log (finite) of one shape; got {a.shape}, {m.shape}."
        )
    for _ in range(n_iter):
        new = np.maximum(_inverse_digamma(digamma(a.sum()) + m), min_value)
        done = np.max(np.abs(new - a) / a) <= tol
        a = new
        if done:
            break
    return a


def symmetric_dirichlet_from_log_sum(log_sum: float, n_dists: int, dim: int, eta: float, *,
                                     n_iter: int = 100, tol: float = 1e-10) -> float:
    """Symmetric Dirichlet parameter eta maximising n [log G(dim eta) - dim log G(eta)] + (eta - 1) log_sum.

    ``log_sum`` = sum over the ``n_dists`` distributions and their ``dim``
    components of E_q[log beta_kw] (the ELBO's eta terms for LDA's topics).
    Newton's method on log eta (the objective is concave in eta).
    """
    from scipy.special import polygamma

    x = np.log(float(eta))
    for _ in range(n_iter):
        e = np.exp(x)
        grad = n_dists * dim * (digamma(dim * e) - digamma(e)) + log_sum
        hess = n_dists * dim * (dim * polygamma(1, dim * e) - polygamma(1, e))
        # d/dx = e * grad; d2/dx2 = e * grad + e^2 * hess (hess < 0)
        g1 = e * grad
        g2 = e * grad + e * e * hess
        step = g1 / g2 if g2 < 0 else -np.sign(g1) * 0.5
        x_new = x - np.clip(step, -2.0, 2.0)
        done = abs(x_new - x) <= tol
        x = x_new
        if done:
            break
    return float(np.exp(x))
