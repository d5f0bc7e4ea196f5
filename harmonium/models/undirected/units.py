"""Unit types of an exponential family harmonium: one exponential family per layer of units.

Seed 000, eqs. 1-3: every unit's conditional given the other layer is an exponential
family whose natural parameter is shifted by the couplings,

    p(x_i | h) = h_i(x_i) exp{ eta_i T(x_i) - A_i(eta_i) },   eta_i = theta_i + sum_j W_ij g_j(h_j),

with T the *coupled* sufficient statistic (here always x_i itself). A layer of ``n`` units is
described by a :class:`Units` object and a dict of parameter arrays (``"bias"``: the natural
parameters theta, shape (n,); Gaussians also ``"log_var"``). ``eta`` below is the full natural
parameter bias + input, shape (B, n).

Every unit type maps to a family of :mod:`harmonium.expfam` (``distribution``); the vectorised
``log_partition``, ``mean``, ``sample`` and ``log_base`` used in the hot loops are checked
against those families in tests/unit/models/test_efh_units.py.

=====================  ===========================  ==================================  ===============
unit type              expfam family                A(eta) per unit / group              log h(x)
=====================  ===========================  ==================================  ===============
BernoulliUnits         Bernoulli                    log(1 + e^eta)                      0
BinomialUnits(N)       Binomial(N)                  N log(1 + e^eta)                    log C(N, x)
PoissonUnits           Poisson                      e^eta                               -log x!
GaussianUnits          Gaussian (mu, var)           var eta^2 / 2 + log(var) / 2        -x^2/(2 var) - log(2 pi)/2
SoftmaxUnits           Categorical (one-hot)        logsumexp(eta)                      0
ReplicatedSoftmaxUnits Multinomial(D) (sequences)   D logsumexp(eta)                    0
RatePoissonUnits       Multinomial(D) / Poisson     D logsumexp(eta)                    0
=====================  ===========================  ==================================  ===============

Gaussian units carry a variance: fixed (``learn_variance=False``, unit variance by default, as
the hidden layer of GB-EFH, seed 000 eq. 5) or learned through ``log_var``. Their natural
parameters are (eta, -1 / (2 var)); only the first is coupled.

Replicated softmax units (seed 001 eq. 5) are one softmax over the n words, drawn D times, D
the document length; x is the count vector. The probability is that of the word *sequence*
(no multinomial coefficient), the quantity LDA's held-out likelihood also measures.
Rate-adapting Poisson units (Gehler et al. 2006) have the same energy; their CD reconstructions
draw Poisson counts with rates D softmax(eta) (``reconstruct``), as in the paper.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy import special

from harmonium._kernels.efh_sampling import sample_bernoulli_csr, sample_softmax_tokens
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.expfam import Bernoulli, Binomial, Categorical, Gaussian, Multinomial, Poisson

__all__ = [
    "BernoulliUnits",
    "BinomialUnits",
    "GaussianUnits",
    "PoissonUnits",
    "RatePoissonUnits",
    "ReplicatedSoftmaxUnits",
    "SoftmaxUnits",
    "Units",
    "units_from_spec",
]

_LOG2PI = math.log(2.0 * math.pi)


def row_sums(x) -> np.ndarray:
    """Per-row sums of a dense or sparse (B, n) array, float64 (B,)."""
    if sp.issparse(x):
        return np.asarray(x.sum(axis=1), dtype=np.float64).ravel()
    return np.asarray(x, dtype=np.float64).sum(axis=1)


def _map_data(x, fn):
    """fn applied to the stored entries of a sparse x (fn(0) must be 0), or to every entry of a dense x."""
    if sp.issparse(x):
        x = x.tocsr()
        return sp.csr_matrix((fn(np.asarray(x.data, dtype=np.float64)), x.indices, x.indptr), shape=x.shape)
    return fn(np.asarray(x, dtype=np.float64))


def _softplus(eta):
    return np.logaddexp(0.0, eta)


class Units:
    """A layer's exponential family (abstract). Subclasses are immutable and JSON-describable (``spec``)."""

    #: name used in specs and model files
    kind = "units"
    #: the layer's states can be listed (for exact partition functions)
    enumerable = False
    #: one group over the whole layer (softmax types) rather than independent units
    grouped = False
    #: the layer's conditional needs a per-row count D (replicated softmax)
    needs_lengths = False
    #: data must be non-negative integers (counts) / 0-1
    integer_data = True

    # -- description -------------------------------------------------------------
    def spec(self) -> dict:
        return {"type": self.kind}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.spec().items() if k != "type")
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Units) and self.spec() == other.spec()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.spec().items())))

    def init_params(self, n: int, dtype=np.float64) -> dict:
        return {"bias": np.zeros(n, dtype=dtype)}

    def learnable(self) -> tuple[str, ...]:
        return ("bias",)

    # -- conditionals (eta = bias + input, shape (B, n)) ---------------------------
    def log_partition(self, eta, params, lengths=None) -> np.ndarray:
        """sum over the layer of A(eta), per row: shape (B,), float64."""
        raise NotImplementedError

    def mean(self, eta, params, lengths=None) -> np.ndarray:
        """E[x | eta], shape (B, n)."""
        raise NotImplementedError

    def second_moment(self, eta, params, lengths=None) -> np.ndarray:
        """E[x^2 | eta] (only Gaussians need it, for the variance gradient)."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, eta, params, lengths=None):
        """x ~ p(x | eta): dense (B, n) or scipy CSR (sparse unit types)."""
        raise NotImplementedError

    def reconstruct(self, rng: np.random.Generator, eta, params, lengths=None):
        """The visible draw of a CD reconstruction (``sample`` except for rate-adapting Poisson units)."""
        return self.sample(rng, eta, params, lengths)

    def distribution(self, eta, params, lengths=None):
        """The conditional as a :mod:`harmonium.expfam` batch of shape (B, n) (or (B,) for groups)."""
        raise NotImplementedError

    # -- the data side -----------------------------------------------------------
    def log_base(self, x, params) -> np.ndarray:
        """Per row: sum of log h(x_i) plus the uncoupled natural terms (Gaussian -x^2 / (2 var)); (B,)."""
        return np.zeros(x.shape[0])

    def bias_stats(self, x_mean, params, x_second=None) -> dict:
        """d log p*(x, .) / d param per row and unit, for each learnable parameter, at x (or E[x], E[x^2])."""
        return {"bias": x_mean}

    def base_bias(self, mean, params) -> np.ndarray:
        """The bias whose unit mean is ``mean`` (n,): the base-rate model of AIS (Salakhutdinov & Murray 2008)."""
        raise NotImplementedError

    def states(self, n: int, lengths=None) -> np.ndarray:
        """Every state of a layer of n units, (S, n), for enumeration."""
        raise InvalidParameterError(f"{type(self).__name__} layers cannot be enumerated.")

    def n_states(self, n: int) -> float:
        return math.inf

    def log_states_weight(self, states, params) -> np.ndarray:
        """log h(x) of listed states (for enumeration); default: log_base."""
        return self.log_base(states, params)

    def check_data(self, x, where: str):
        """Validate and convert the data of this layer (dense float or CSR)."""
        return x


# -- binary and count units ----------------------------------------------------------
def _check_counts(x, where, what, upper=None):
    if sp.issparse(x):
        x = sp.csr_matrix(x, dtype=np.float64)
        vals = x.data
    else:
        x = np.asarray(x, dtype=np.float64)
        vals = x
    bad = ~np.isfinite(vals) | (vals < 0) | (vals != np.round(vals))
    if upper is not None:
        bad |= vals > upper
    if bad.any():
        if sp.issparse(x):
            e = int(np.flatnonzero(bad)[0])
            row = int(np.searchsorted(x.indptr, e, side="right") - 1)
            col, val = int(x.indices[e]), float(x.data[e])
        else:
            row, col = (int(v) for v in np.argwhere(bad)[0])
            val = float(x[row, col])
        raise CorpusError(f"{where}: {what} expected; got {val!r} for unit {col} in document {row}.")
    return x


class BernoulliUnits(Units):
    """Binary units, p(x_i = 1 | eta) = sigmoid(eta_i) (:class:`~harmonium.expfam.Bernoulli`)."""

    kind = "bernoulli"
    enumerable = True

    def log_partition(self, eta, params, lengths=None):
        return _softplus(np.asarray(eta, dtype=np.float64)).sum(axis=1)

    def mean(self, eta, params, lengths=None):
        return special.expit(eta)

    def sample(self, rng, eta, params, lengths=None):
        eta = np.asarray(eta)
        return (rng.random(eta.shape) < special.expit(eta)).astype(eta.dtype)

    #: logit above which a unit gets its own uniform in :meth:`sample_sparse` (below: thinned)
    sparse_threshold = -3.0

    def sample_sparse(self, rng, eta, params, lengths=None):
        """A draw from the same distribution as CSR, by thinning the low-probability units (sparse layers)."""
        eta = np.ascontiguousarray(eta)
        n_rows, n = eta.shape
        indptr = np.empty(n_rows + 1, dtype=np.int64)
        indices = np.empty(n_rows * n, dtype=np.int32)
        work = np.empty(3 * n, dtype=np.int64)
        nnz = sample_bernoulli_csr(rng, eta, self.sparse_threshold, indptr, indices, work)
        data = np.ones(nnz, dtype=eta.dtype)
        return sp.csr_matrix((data, indices[:nnz].copy(), indptr), shape=eta.shape)

    def distribution(self, eta, params, lengths=None):
        return Bernoulli.from_logits(np.asarray(eta, dtype=np.float64))

    def base_bias(self, mean, params):
        m = np.clip(np.asarray(mean, dtype=np.float64), 1e-6, 1 - 1e-6)
        return np.log(m) - np.log1p(-m)

    def n_states(self, n):
        return 2.0 ** n

    def states(self, n, lengths=None):
        codes = np.arange(2 ** n)[:, None]
        return ((codes >> np.arange(n)[::-1]) & 1).astype(np.float64)

    def check_data(self, x, where):
        return _check_counts(x, where, "0/1 values", upper=1)


class BinomialUnits(Units):
    """Count units in {0..N}, x_i ~ Binomial(N, sigmoid(eta_i)) (:class:`~harmonium.expfam.Binomial`)."""

    kind = "binomial"
    enumerable = True

    def __init__(self, n_trials: int = 1):
        if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 1:
            raise InvalidParameterError(f"BinomialUnits: 'n_trials' must be an int >= 1. Got {n_trials!r}.")
        self.n_trials = int(n_trials)

    def spec(self):
        return {"type": self.kind, "n_trials": self.n_trials}

    def log_partition(self, eta, params, lengths=None):
        return self.n_trials * _softplus(np.asarray(eta, dtype=np.float64)).sum(axis=1)

    def mean(self, eta, params, lengths=None):
        return self.n_trials * special.expit(eta)

    def sample(self, rng, eta, params, lengths=None):
        eta = np.asarray(eta)
        return rng.binomial(self.n_trials, special.expit(np.asarray(eta, dtype=np.float64))).astype(eta.dtype)

    def distribution(self, eta, params, lengths=None):
        eta = np.asarray(eta, dtype=np.float64)
        return Binomial.from_logits(np.full(eta.shape, self.n_trials), eta)

    def log_base(self, x, params):
        N = float(self.n_trials)
        lc = _map_data(x, lambda v: special.gammaln(N + 1) - special.gammaln(v + 1) - special.gammaln(N - v + 1))
        return row_sums(lc)

    def base_bias(self, mean, params):
        return BernoulliUnits().base_bias(np.asarray(mean) / self.n_trials, params)

    def n_states(self, n):
        return float(self.n_trials + 1) ** n

    def states(self, n, lengths=None):
        grids = np.meshgrid(*([np.arange(self.n_trials + 1)] * n), indexing="ij")
        return np.stack([g.ravel() for g in grids], axis=1).astype(np.float64)

    def check_data(self, x, where):
        return _check_counts(x, where, f"integer counts in [0, {self.n_trials}]", upper=self.n_trials)


class PoissonUnits(Units):
    """Count units, x_i ~ Poisson(exp(eta_i)) (:class:`~harmonium.expfam.Poisson`).

    The joint is normalisable only if sum_i exp(theta_i + W_i g(h)) stays integrable over h:
    use bounded hidden units (Bernoulli, Binomial) with Poisson visibles.
    """

    kind = "poisson"

    def log_partition(self, eta, params, lengths=None):
        return np.exp(np.asarray(eta, dtype=np.float64)).sum(axis=1)

    def mean(self, eta, params, lengths=None):
        return np.exp(eta)

    def sample(self, rng, eta, params, lengths=None):
        eta = np.asarray(eta)
        return rng.poisson(np.exp(np.asarray(eta, dtype=np.float64))).astype(eta.dtype)

    def distribution(self, eta, params, lengths=None):
        return Poisson(np.exp(np.asarray(eta, dtype=np.float64)))

    def log_base(self, x, params):
        return row_sums(_map_data(x, lambda v: -special.gammaln(v + 1.0)))

    def base_bias(self, mean, params):
        return np.log(np.maximum(np.asarray(mean, dtype=np.float64), 1e-6))

    def check_data(self, x, where):
        return _check_counts(x, where, "non-negative integer counts")


class GaussianUnits(Units):
    """Real units, x_i ~ N(var_i eta_i, var_i) (:class:`~harmonium.expfam.Gaussian`).

    Natural parameters (eta_i, -1 / (2 var_i)); the coupling shifts eta_i only. With
    ``learn_variance`` the parameter ``log_var`` is learned too; otherwise the variance stays
    at ``variance`` (1 = the unit variance of GB-EFH, seed 000 eq. 5).
    """

    kind = "gaussian"
    integer_data = False

    def __init__(self, variance: float = 1.0, learn_variance: bool = False):
        if isinstance(variance, bool) or not isinstance(variance, (int, float, np.floating, np.integer)) \
                or not np.isfinite(variance) or variance <= 0:
            raise InvalidParameterError(f"GaussianUnits: 'variance' must be a finite float > 0. Got {variance!r}.")
        self.variance = float(variance)
        self.learn_variance = bool(learn_variance)

    def spec(self):
        return {"type": self.kind, "variance": self.variance, "learn_variance": self.learn_variance}

    def init_params(self, n, dtype=np.float64):
        return {"bias": np.zeros(n, dtype=dtype), "log_var": np.full(n, math.log(self.variance), dtype=dtype)}

    def learnable(self):
        return ("bias", "log_var") if self.learn_variance else ("bias",)

    @staticmethod
    def _var(params):
        return np.exp(np.asarray(params["log_var"], dtype=np.float64))

    def log_partition(self, eta, params, lengths=None):
        var = self._var(params)
        eta = np.asarray(eta, dtype=np.float64)
        return (0.5 * var * eta * eta).sum(axis=1) + 0.5 * np.log(var).sum()

    def mean(self, eta, params, lengths=None):
        return np.exp(params["log_var"]) * eta

    def second_moment(self, eta, params, lengths=None):
        var = np.exp(params["log_var"])
        m = var * eta
        return var + m * m

    def sample(self, rng, eta, params, lengths=None):
        eta = np.asarray(eta)
        var = np.exp(params["log_var"])
        return (var * eta + np.sqrt(var) * rng.standard_normal(eta.shape)).astype(eta.dtype)

    def distribution(self, eta, params, lengths=None):
        var = self._var(params)
        eta = np.asarray(eta, dtype=np.float64)
        return Gaussian(var * eta, np.broadcast_to(var, eta.shape))

    def log_base(self, x, params):
        x = x.toarray() if sp.issparse(x) else np.asarray(x, dtype=np.float64)
        inv = np.exp(-np.asarray(params["log_var"], dtype=np.float64))
        return -0.5 * (x * x) @ inv - 0.5 * _LOG2PI * x.shape[1]

    def bias_stats(self, x_mean, params, x_second=None):
        out = {"bias": x_mean}
        if self.learn_variance:
            if x_second is None:
                x_second = x_mean * x_mean
            # d/d log_var of -x^2 / (2 var)
            out["log_var"] = 0.5 * x_second * np.exp(-params["log_var"])
        return out

    def base_bias(self, mean, params):
        return np.asarray(mean, dtype=np.float64) / self._var(params)

    def check_data(self, x, where):
        x = x.toarray() if sp.issparse(x) else np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or not np.isfinite(x).all():
            raise CorpusError(f"{where}: Gaussian units need a finite 2-D real array; got shape {x.shape}"
                              + ("" if x.ndim != 2 else " with non-finite values") + ".")
        return x


# -- softmax groups ----------------------------------------------------------------------
def _logsumexp_rows(eta):
    eta = np.asarray(eta, dtype=np.float64)
    m = eta.max(axis=1)
    return m + np.log(np.exp(eta - m[:, None]).sum(axis=1))


def _softmax_rows(eta):
    e = np.exp(eta - eta.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class SoftmaxUnits(Units):
    """One softmax group over the layer: x is one-hot (:class:`~harmonium.expfam.Categorical`)."""

    kind = "softmax"
    enumerable = True
    grouped = True

    def log_partition(self, eta, params, lengths=None):
        return _logsumexp_rows(eta)

    def mean(self, eta, params, lengths=None):
        return _softmax_rows(np.asarray(eta))

    def sample(self, rng, eta, params, lengths=None):
        eta = np.asarray(eta)
        lengths = np.ones(eta.shape[0], dtype=np.int64)
        return ReplicatedSoftmaxUnits.draw(rng, eta, lengths).toarray().astype(eta.dtype)

    def distribution(self, eta, params, lengths=None):
        return Categorical.from_logits(np.asarray(eta, dtype=np.float64))

    def base_bias(self, mean, params):
        m = np.maximum(np.asarray(mean, dtype=np.float64), 1e-6)
        return np.log(m / m.sum())

    def n_states(self, n):
        return float(n)

    def states(self, n, lengths=None):
        return np.eye(n)

    def check_data(self, x, where):
        x = _check_counts(x, where, "one-hot rows", upper=1)
        bad = np.flatnonzero(row_sums(x) != 1)
        if bad.size:
            raise CorpusError(f"{where}: softmax units need exactly one active unit per row; document {bad[0]} "
                              f"has {row_sums(x)[bad[0]]:g}.")
        return x


class ReplicatedSoftmaxUnits(Units):
    """D draws from one softmax over the layer; x is the count vector, D = x.sum() (seed 001 eq. 5).

    ``A = D logsumexp(eta)``, the log-normaliser of the D-word sequence. The document length D
    of each row is passed as ``lengths`` and is preserved by sampling.
    """

    kind = "replicated_softmax"
    grouped = True
    needs_lengths = True

    @staticmethod
    def _lengths(eta, lengths):
        if lengths is None:
            raise InvalidParameterError("replicated softmax units need the document lengths D.")
        return np.asarray(lengths, dtype=np.float64)

    def log_partition(self, eta, params, lengths=None):
        return self._lengths(eta, lengths) * _logsumexp_rows(eta)

    def mean(self, eta, params, lengths=None):
        return self._lengths(eta, lengths)[:, None] * _softmax_rows(np.asarray(eta))

    @staticmethod
    def draw(rng, eta, lengths):
        """CSR counts with lengths[b] softmax(eta[b]) draws in row b (duplicates summed)."""
        eta = np.ascontiguousarray(eta)
        lengths = np.asarray(lengths, dtype=np.int64)
        ptr = np.zeros(eta.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        words = np.empty(ptr[-1], dtype=np.int32)
        cdf = np.empty(eta.shape[1], dtype=np.float64)
        sample_softmax_tokens(rng, eta, lengths, ptr, words, cdf)
        x = sp.csr_matrix((np.ones(words.shape[0], dtype=eta.dtype), words, ptr), shape=eta.shape)
        x.sum_duplicates()
        return x

    def sample(self, rng, eta, params, lengths=None):
        return self.draw(rng, eta, np.rint(self._lengths(eta, lengths)).astype(np.int64))

    def distribution(self, eta, params, lengths=None):
        n = np.rint(self._lengths(eta, lengths)).astype(np.int64)
        return Multinomial.from_logits(n, np.asarray(eta, dtype=np.float64))

    def base_bias(self, mean, params):
        return SoftmaxUnits().base_bias(mean, params)

    def check_data(self, x, where):
        return _check_counts(x, where, "non-negative integer counts")


class RatePoissonUnits(ReplicatedSoftmaxUnits):
    """Rate-adapting Poisson units (Gehler, Holub & Welling 2006).

    Given h and the document length D, the counts are Poisson with rates
    lambda_i = D softmax(eta)_i, so the expected length is D whatever h is. The energy, free
    energy and partition function are those of the proper model conditioned on D (a
    multinomial given D, as :class:`ReplicatedSoftmaxUnits`, but without scaling the hidden
    biases by D); only the CD reconstructions draw Poisson counts (``reconstruct``), as the
    paper does.
    """

    kind = "rate_poisson"

    def reconstruct(self, rng, eta, params, lengths=None):
        rates = self.mean(eta, params, lengths)
        return sp.csr_matrix(rng.poisson(rates).astype(np.asarray(eta).dtype))


_KINDS = {
    cls.kind: cls
    for cls in (BernoulliUnits, BinomialUnits, PoissonUnits, GaussianUnits, SoftmaxUnits, ReplicatedSoftmaxUnits,
                RatePoissonUnits)
}


def units_from_spec(spec, where: str = "EFH") -> Units:
    """A :class:`Units` from itself, a type name (``"bernoulli"``) or a dict ``{"type": ..., **options}``."""
    if isinstance(spec, Units):
        return spec
    if isinstance(spec, str):
        spec = {"type": spec}
    if isinstance(spec, dict) and isinstance(spec.get("type"), str) and spec["type"] in _KINDS:
        opts = {k: v for k, v in spec.items() if k != "type"}
        try:
            return _KINDS[spec["type"]](**opts)
        except TypeError as exc:
            raise InvalidParameterError(f"{where}: bad options for unit type {spec['type']!r}: {exc}.") from exc
    raise InvalidParameterError(
        f"{where}: a unit type must be a Units object, one of {sorted(_KINDS)} or a dict with a 'type' key. "
        f"Got {spec!r}."
    )
