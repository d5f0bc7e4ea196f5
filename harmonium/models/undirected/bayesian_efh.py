"""The Bayesian exponential family harmonium (BEFH; seed 000 §§2-3).

The couplings W of every wing get a column-iid Gaussian prior (seed 000 eq. 7)

    p(W) = prod_j N(W_j | mu, Sigma),     Sigma = diag(sigma^2) (default) or a full M x M matrix,

the visible biases theta stay fixed parameters (estimated by maximum likelihood) and lambda = 0
(eq. 8). The posterior over W (eq. 9) is

    p(W | X) ~ p(W) prod_n p*(x_n | W) / Z(W)^N,

and its gradient is the sum of three terms (eq. 14):

* grad log p(W)           = -Sigma^-1 (W_j - mu) per column (eq. 15, diagonal: -(W_ij - mu_i) / sigma_i^2);
* grad log p*(X | W)      = sum_n S_W(x_n), S_W(x) = x E[h | x]^T (eq. 16; X^T X W for GB-EFH);
* -N grad log Z(W)        = -N E_{p(x | W)}[ S_W(x) ] (eq. 17), intractable; estimated by

  - :func:`grad_log_partition_exact` (enumerating every visible state: tiny models, the tests), or
  - :func:`grad_log_partition_brief`, "brief sampling" (§3.2): l block Gibbs sweeps started at the
    data, S_W averaged over the N reconstructions (the CD-l negative phase).

Everything here works on a :class:`~harmonium.models.undirected.efh.Harmonium` of any wings (GB-EFH,
the dual-wing harmonium, ...). W of all wings is handled as one flat vector (:func:`pack`,
:func:`unpack`), wing by wing in row-major order. Functions that take ``model`` read W from its
``params`` (the samplers set it in place with :func:`set_couplings`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from harmonium.errors import InvalidParameterError
from harmonium.models.undirected.efh import Harmonium

__all__ = [
    "GaussianColumnPrior",
    "coupling_names",
    "grad_log_partition_brief",
    "grad_log_partition_exact",
    "grad_log_unnormalized_likelihood",
    "log_unnormalized_likelihood",
    "pack",
    "posterior_model",
    "set_couplings",
    "unpack",
    "visible_distribution",
]


class GaussianColumnPrior:
    """Column-iid Gaussian prior of one wing's couplings, W_j ~ N(mu, Sigma) (seed 000 eq. 7).

    Parameters
    ----------
    mean : float or (M,) array
        mu.
    scale : float or (M,) array, optional
        sigma (standard deviations), Sigma = diag(sigma^2). Default 0.1 (seed 000 §5.1).
    covariance : (M, M) array, optional
        A full covariance instead of ``scale`` ("modulo computational cost ... straightforward", §2).
    n_visible : int
        M.
    """

    def __init__(self, n_visible: int, mean=0.0, scale=0.1, covariance=None):
        self.n_visible = int(n_visible)
        try:
            self.mean = np.broadcast_to(np.asarray(mean, dtype=np.float64), (self.n_visible,)).copy()
            scale = None if covariance is not None else np.broadcast_to(np.asarray(scale, dtype=np.float64),
                                                                         (self.n_visible,)).copy()
        except ValueError as exc:
            raise InvalidParameterError(f"GaussianColumnPrior: 'mean' and 'scale' must be floats or have "
                                        f"{self.n_visible} entries (one per visible unit).") from exc
        if not np.isfinite(self.mean).all():
            raise InvalidParameterError("GaussianColumnPrior: 'mean' must be finite.")
        if covariance is not None:
            cov = np.asarray(covariance, dtype=np.float64)
            if cov.shape != (self.n_visible, self.n_visible) or not np.allclose(cov, cov.T):
                raise InvalidParameterError(f"GaussianColumnPrior: 'covariance' must be a symmetric "
                                            f"({self.n_visible}, {self.n_visible}) matrix; got shape {cov.shape}.")
            try:
                self._chol = np.linalg.cholesky(cov)
            except np.linalg.LinAlgError as exc:
                raise InvalidParameterError("GaussianColumnPrior: 'covariance' must be positive definite.") from exc
            self.covariance = cov
            self.precision = np.linalg.inv(cov)
            self.scale = np.sqrt(np.diag(cov))
            self._logdet = 2.0 * float(np.log(np.diag(self._chol)).sum())
        else:
            s = scale
            if not (np.isfinite(s).all() and (s > 0).all()):
                raise InvalidParameterError("GaussianColumnPrior: 'scale' (sigma) must be finite and > 0.")
            self.covariance = None
            self.precision = None
            self.scale = s
            self._logdet = 2.0 * float(np.log(s).sum())

    @property
    def full(self) -> bool:
        return self.covariance is not None

    def log_density(self, W) -> float:
        """log p(W) = sum_j log N(W_j | mu, Sigma)."""
        R = np.asarray(W, dtype=np.float64) - self.mean[:, None]
        J = R.shape[1]
        if self.full:
            quad = float(np.sum(R * (self.precision @ R)))
        else:
            quad = float(np.sum((R / self.scale[:, None]) ** 2))
        return -0.5 * quad - 0.5 * J * (self._logdet + self.n_visible * np.log(2 * np.pi))

    def grad_log_density(self, W) -> np.ndarray:
        """Seed 000 eq. 15: -(W_ij - mu_i) / sigma_i^2 (or -Sigma^-1 (W_j - mu))."""
        R = np.asarray(W, dtype=np.float64) - self.mean[:, None]
        if self.full:
            return -(self.precision @ R)
        return -R / (self.scale[:, None] ** 2)

    def sample(self, rng: np.random.Generator, n_hidden: int) -> np.ndarray:
        """W ~ p(W), shape (M, n_hidden)."""
        z = rng.standard_normal((self.n_visible, n_hidden))
        if self.full:
            return self.mean[:, None] + self._chol @ z
        return self.mean[:, None] + self.scale[:, None] * z


# -- W as one vector -------------------------------------------------------------------------
def coupling_names(model: Harmonium) -> list[str]:
    return [f"W:{w}" for w in range(len(model.wings))]


def pack(model: Harmonium) -> np.ndarray:
    """All wings' W, flattened and concatenated (float64)."""
    return np.concatenate([np.asarray(model.params[k], dtype=np.float64).ravel() for k in coupling_names(model)])


def unpack(model: Harmonium, vec) -> dict:
    """The flat vector back to {"W:w": (n_w, F)}."""
    vec = np.asarray(vec, dtype=np.float64)
    out, i = {}, 0
    for k in coupling_names(model):
        shape = model.params[k].shape
        n = int(np.prod(shape))
        out[k] = vec[i:i + n].reshape(shape)
        i += n
    if i != vec.size:
        raise InvalidParameterError(f"unpack: the vector has {vec.size} entries; the couplings have {i}.")
    return out


def set_couplings(model: Harmonium, vec) -> None:
    """Set W of every wing from the flat vector (in place)."""
    for k, v in unpack(model, vec).items():
        model.params[k] = np.ascontiguousarray(v, dtype=model.dtype)


def posterior_model(model: Harmonium) -> Harmonium:
    """A float64 copy of ``model`` in which only the couplings are free (theta fixed, lambda = 0 as given)."""
    fixed = set(model.params) - set(coupling_names(model))
    new = Harmonium(model.wings, model.hidden, model.n_hidden, scale_hidden_bias=model.scale_hidden_bias,
                    fixed=fixed, dtype=np.float64)
    for k in new.params:
        new.params[k] = np.array(model.params[k], dtype=np.float64)
    return new


def _flat_stats(model: Harmonium, stats: dict) -> np.ndarray:
    return np.concatenate([np.asarray(stats[k], dtype=np.float64).ravel() for k in coupling_names(model)])


# -- the three gradient terms ----------------------------------------------------------------
def log_unnormalized_likelihood(model: Harmonium, xs, lengths=None) -> float:
    """log p*(X | W) = sum_n log p*(x_n | W) (h summed out)."""
    return float(np.sum(model.log_unnormalized(xs, lengths)))


def grad_log_unnormalized_likelihood(model: Harmonium, xs, lengths=None) -> np.ndarray:
    """Seed 000 eq. 16: sum_n x_n E[h | x_n]^T per wing (X^T X W for GB-EFH), flat."""
    return _flat_stats(model, model.statistics(xs, lengths))


def visible_distribution(model: Harmonium, max_states: int = 1 << 16) -> tuple[tuple, np.ndarray, float]:
    """(every visible state per wing, p(x | W), log Z) by enumeration (all wings enumerable)."""
    n_x = np.prod([w.units.n_states(w.size) if w.units.enumerable else np.inf for w in model.wings])
    if n_x > max_states:
        raise InvalidParameterError(f"visible_distribution: {n_x:.3g} visible states exceed max_states={max_states}; "
                                    "use brief sampling (grad_log_partition_brief) for models this large.")
    wing_states = [w.units.states(w.size) for w in model.wings]
    grids = np.meshgrid(*[np.arange(s.shape[0]) for s in wing_states], indexing="ij")
    combos = np.stack([g.ravel() for g in grids], axis=1)
    xs = tuple(np.ascontiguousarray(ws[combos[:, i]], dtype=np.float64) for i, ws in enumerate(wing_states))
    logp = model.log_unnormalized(xs)
    log_z = float(logsumexp(logp))
    return xs, np.exp(logp - log_z), log_z


def grad_log_partition_exact(model: Harmonium, states=None) -> tuple[np.ndarray, float]:
    """Seed 000 eq. 17 by enumeration: (E_{p(x|W)}[S_W(x)] flat, log Z).

    ``states`` (the visible states tuple of :func:`visible_distribution`) saves re-enumerating them.
    """
    if states is None:
        states, p, log_z = visible_distribution(model)
    else:
        logp = model.log_unnormalized(states)
        log_z = float(logsumexp(logp))
        p = np.exp(logp - log_z)
    return _flat_stats(model, model.statistics(states, weights=p)), log_z


def grad_log_partition_brief(rng: np.random.Generator, model: Harmonium, xs, n_steps: int = 1, lengths=None,
                             *, return_samples: bool = False, sparse: bool | None = None):
    """Brief sampling (seed 000 §3.2): l = ``n_steps`` block Gibbs sweeps from the data.

    h ~ p(h | x_n), x^(1) ~ p(x | h), ... ; then grad log Z ~ (1/N) sum_n S_W(x_n^(l))
    (for GB-EFH (1/N) X_l^T X_l W). Returns the flat estimate (and the reconstructions X_l).
    ``sparse`` (default: when the first wing's data is CSR) draws Bernoulli wings as CSR, which is
    much faster for sparse documents (the same distribution, other random numbers).
    """
    xs = model.as_wings(xs)
    if sparse is None:
        sparse = sp.issparse(xs[0])
    cur = xs
    for _ in range(int(n_steps)):
        cur, _ = model.gibbs_step(rng, cur, lengths, sparse=sparse)
    n = cur[0].shape[0]
    g = _flat_stats(model, model.statistics(cur, lengths)) / n
    return (g, cur) if return_samples else g


def dense_rows(x) -> np.ndarray:
    return x.toarray() if sp.issparse(x) else np.asarray(x, dtype=np.float64)


def as_wings_f64(model: Harmonium, xs: Sequence | np.ndarray) -> tuple:
    """The data as a tuple of float64 wing arrays (CSR kept sparse)."""
    xs = model.as_wings(xs)
    return tuple(x.astype(np.float64) if sp.issparse(x) else np.ascontiguousarray(x, dtype=np.float64) for x in xs)
