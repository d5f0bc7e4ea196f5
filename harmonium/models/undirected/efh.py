"""Exponential family harmoniums (EFH): visible wings and one hidden layer, each an exponential family.

Seed 000 §2 (Welling, Rosen-Zvi & Hinton 2004). The joint over visible wings x = (x_1 .. x_m)
and hidden units h is (seed 000 eq. 1, with one coupled statistic per unit)

    log p*(x, h) = sum_w [ theta_w . x_w + log h_w(x_w) ] + s lambda . h + log h_H(h) + sum_w x_w^T W_w h,

Z = sum_x sum_h p*(x, h), with s = 1, or s = D (the document length) for Replicated Softmax
(seed 001 eq. 5, "hidden biases scaled by D"). The conditionals factorise (eqs. 2-3):

    p(x_w | h) = prod_i ExpFam(x_wi | theta_wi + W_wi h),
    p(h | x)   = prod_j ExpFam(h_j | s lambda_j + sum_w x_w^T W_w[:, j]),

and h is summed out in closed form, giving the unnormalised log-marginal (minus the free energy)

    log p*(x) = sum_w [ theta_w . x_w + log h_w(x_w) ] + sum_j B_j( s lambda_j + sum_w (x_w^T W_w)_j ),

B_j the hidden log-partition. Likewise log p*(h) = s lambda . h + log h_H(h) + sum_w A_w(theta_w + W_w h).
For GB-EFH (eqs. 4-6, Bernoulli words and unit-variance Gaussian hidden units with lambda = 0)
this is theta^T x + x^T W W^T x / 2 (seed 000 eq. 33).

Parameters live in one flat dict, ``params``: ``"W:w"`` (n_w, F) per wing w, ``"v:w:bias"`` (and
``"v:w:log_var"`` for Gaussian wings), ``"h:bias"`` (and ``"h:log_var"``). Wing data ``xs`` is a
tuple with one (B, n_w) array per wing, dense or scipy CSR (documents are sparse: x_w W_w is then
a sparse product). A single-wing model also accepts the bare array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from harmonium._kernels.efh_sparse import csr_gather_rows
from harmonium.errors import InvalidParameterError
from harmonium.models.undirected.units import BernoulliUnits, Units, row_sums, units_from_spec

__all__ = ["Harmonium", "Wing"]


class Wing(NamedTuple):
    """One visible wing: a name, its unit type and its number of units."""

    name: str
    units: Units
    size: int


def _dense(a, dtype=None):
    a = a.toarray() if sp.issparse(a) else np.asarray(a)
    return a if dtype is None else a.astype(dtype, copy=False)


class Harmonium:
    """An exponential family harmonium: wings of visible units, one hidden layer, couplings W per wing.

    Parameters
    ----------
    wings : sequence of Wing or (name, units, size)
        The visible wings; ``units`` is a :class:`~harmonium.models.undirected.units.Units` or a spec.
    hidden : Units or spec
        The hidden unit type.
    n_hidden : int
        F, the number of hidden units.
    params : dict, optional
        Initial parameters (see the module docstring); missing entries get zeros (biases) and
        the unit types' defaults (log-variances).
    scale_hidden_bias : bool, default False
        Multiply the hidden biases by the document length D (Replicated Softmax).
    fixed : iterable of str
        Parameter names learning leaves alone (e.g. ``{"h:bias"}`` for GB-EFH, lambda = 0).
    dtype : numpy dtype, default float64
        Of the parameters and the products (log-partitions are always summed in float64).
    """

    def __init__(self, wings, hidden, n_hidden: int, *, params: dict | None = None, scale_hidden_bias: bool = False,
                 fixed=(), dtype=np.float64):
        self.wings = tuple(w if isinstance(w, Wing) else Wing(str(w[0]), units_from_spec(w[1]), int(w[2]))
                           for w in wings)
        if not self.wings:
            raise InvalidParameterError("Harmonium needs at least one visible wing.")
        names = [w.name for w in self.wings]
        if len(set(names)) != len(names):
            raise InvalidParameterError(f"Harmonium: wing names must be distinct; got {names}.")
        self.hidden = units_from_spec(hidden)
        if self.hidden.needs_lengths:
            raise InvalidParameterError("Harmonium: replicated softmax units cannot be the hidden layer.")
        self.n_hidden = int(n_hidden)
        self.scale_hidden_bias = bool(scale_hidden_bias)
        self.dtype = np.dtype(dtype)
        self.length_wing = next((i for i, w in enumerate(self.wings) if w.units.needs_lengths), None)
        if self.scale_hidden_bias and self.length_wing is None:
            raise InvalidParameterError("Harmonium: scale_hidden_bias needs a replicated softmax wing (the length D).")
        self.fixed = frozenset(fixed)
        self.params = self._default_params()
        for k, v in (params or {}).items():
            if k not in self.params:
                raise InvalidParameterError(f"Harmonium: unknown parameter {k!r}; known: {sorted(self.params)}.")
            v = np.asarray(v, dtype=self.dtype)
            if v.shape != self.params[k].shape:
                raise InvalidParameterError(f"Harmonium: parameter {k!r} must have shape {self.params[k].shape}; "
                                            f"got {v.shape}.")
            self.params[k] = v.copy()
        unknown = self.fixed - set(self.params)
        if unknown:
            raise InvalidParameterError(f"Harmonium: fixed names unknown parameters {sorted(unknown)}.")

    # -- parameters ---------------------------------------------------------------------
    def _default_params(self) -> dict:
        p = {}
        for w, wing in enumerate(self.wings):
            p[f"W:{w}"] = np.zeros((wing.size, self.n_hidden), dtype=self.dtype)
            for k, v in wing.units.init_params(wing.size, self.dtype).items():
                p[f"v:{w}:{k}"] = v
        for k, v in self.hidden.init_params(self.n_hidden, self.dtype).items():
            p[f"h:{k}"] = v
        return p

    def learnable(self) -> list[str]:
        """Names of the parameters learning updates (W of every wing, the unit types' learnable biases)."""
        names = [f"W:{w}" for w in range(len(self.wings))]
        for w, wing in enumerate(self.wings):
            names += [f"v:{w}:{k}" for k in wing.units.learnable()]
        names += [f"h:{k}" for k in self.hidden.learnable()]
        return [n for n in names if n not in self.fixed]

    def W(self, w: int = 0) -> np.ndarray:
        return self.params[f"W:{w}"]

    def visible_params(self, w: int = 0) -> dict:
        pre = f"v:{w}:"
        return {k[len(pre):]: v for k, v in self.params.items() if k.startswith(pre)}

    def hidden_params(self) -> dict:
        return {k[2:]: v for k, v in self.params.items() if k.startswith("h:")}

    def copy(self) -> Harmonium:
        return self.with_params({k: v.copy() for k, v in self.params.items()})

    def with_params(self, params: dict, dtype=None) -> Harmonium:
        """The same architecture with other parameter values (missing entries are copied from this model)."""
        new = Harmonium(self.wings, self.hidden, self.n_hidden, scale_hidden_bias=self.scale_hidden_bias,
                        fixed=self.fixed, dtype=self.dtype if dtype is None else dtype)
        for k in new.params:
            new.params[k] = np.array(params.get(k, self.params[k]), dtype=new.dtype)
        return new

    def __repr__(self) -> str:
        wings = ", ".join(f"{w.name}: {w.size} x {w.units!r}" for w in self.wings)
        return (f"Harmonium([{wings}], hidden={self.n_hidden} x {self.hidden!r}"
                f"{', hidden bias scaled by D' if self.scale_hidden_bias else ''})")

    # -- data ---------------------------------------------------------------------------
    def as_wings(self, xs, where: str = "Harmonium", check: bool = False) -> tuple:
        """``xs`` as a tuple with one (B, n_w) array per wing (optionally validated by the unit types)."""
        if not isinstance(xs, (tuple, list)):
            xs = (xs,)
        if len(xs) != len(self.wings):
            raise InvalidParameterError(f"{where}: the model has {len(self.wings)} wings "
                                        f"({[w.name for w in self.wings]}); got {len(xs)} arrays.")
        out = []
        n_rows = None
        for x, wing in zip(xs, self.wings, strict=True):
            if check:
                x = wing.units.check_data(x, f"{where} (wing {wing.name!r})")
            if x.ndim != 2 or x.shape[1] != wing.size:
                raise InvalidParameterError(f"{where}: wing {wing.name!r} has {wing.size} units; got data of shape "
                                            f"{x.shape}.")
            if n_rows is not None and x.shape[0] != n_rows:
                raise InvalidParameterError(f"{where}: the wings' data have different numbers of rows "
                                            f"({n_rows} and {x.shape[0]}).")
            n_rows = x.shape[0]
            out.append(x.astype(self.dtype) if x.dtype != self.dtype else x)
        return tuple(out)

    def lengths(self, xs) -> np.ndarray | None:
        """D per row (the total count of the replicated softmax wing), or None if the model has none."""
        if self.length_wing is None:
            return None
        xs = self.as_wings(xs)
        return row_sums(xs[self.length_wing])

    def _scale(self, lengths, n_rows):
        if not self.scale_hidden_bias:
            return None
        if lengths is None:
            raise InvalidParameterError("this harmonium scales hidden biases by D: pass the document lengths.")
        return np.asarray(lengths, dtype=np.float64).reshape(n_rows, 1)

    # -- conditionals -------------------------------------------------------------------
    def hidden_input(self, xs) -> np.ndarray:
        """sum_w x_w W_w, shape (B, F) (sparse products for CSR wings)."""
        xs = self.as_wings(xs)
        total = None
        for w, x in enumerate(xs):
            W = self.params[f"W:{w}"]
            if sp.isspmatrix_csr(x) and W.flags.c_contiguous and x.dtype == W.dtype:
                u = np.empty((x.shape[0], W.shape[1]), dtype=W.dtype)
                csr_gather_rows(x.indptr, x.indices, x.data, W, u)
            else:
                u = np.asarray(x @ W)
            total = u if total is None else total + u
        return total

    def hidden_eta(self, xs, lengths=None, hidden_input=None) -> np.ndarray:
        """Natural parameters of p(h | x): s lambda + sum_w x_w W_w."""
        u = self.hidden_input(xs) if hidden_input is None else hidden_input
        lengths = self._lengths_for(xs, lengths)
        scale = self._scale(lengths, u.shape[0])
        bias = self.params["h:bias"]
        return u + (bias if scale is None else (scale * bias).astype(u.dtype))

    def _lengths_for(self, xs, lengths):
        if lengths is None and self.length_wing is not None:
            lengths = self.lengths(xs)
        return lengths

    def visible_eta(self, h, w: int = 0) -> np.ndarray:
        """Natural parameters of p(x_w | h): theta_w + h W_w^T."""
        return np.asarray(h, dtype=self.dtype) @ self.params[f"W:{w}"].T + self.params[f"v:{w}:bias"]

    def mean_h(self, xs, lengths=None) -> np.ndarray:
        """E[h | x] (the latent representation; ``transform`` of the estimators)."""
        return self.hidden.mean(self.hidden_eta(xs, lengths), self.hidden_params())

    def mean_x(self, h, lengths=None) -> tuple:
        """E[x_w | h] for every wing."""
        return tuple(wing.units.mean(self.visible_eta(h, w), self.visible_params(w), lengths)
                     for w, wing in enumerate(self.wings))

    def p_h_given_x(self, xs, lengths=None):
        """p(h | x) as a :mod:`harmonium.expfam` batch of shape (B, F)."""
        return self.hidden.distribution(self.hidden_eta(xs, lengths), self.hidden_params())

    def p_x_given_h(self, h, lengths=None) -> list:
        """p(x_w | h) for every wing, as :mod:`harmonium.expfam` batches."""
        return [wing.units.distribution(self.visible_eta(h, w), self.visible_params(w), lengths)
                for w, wing in enumerate(self.wings)]

    def sample_h(self, rng: np.random.Generator, xs, lengths=None) -> np.ndarray:
        return self.hidden.sample(rng, self.hidden_eta(xs, lengths), self.hidden_params())

    def sample_x(self, rng: np.random.Generator, h, lengths=None, *, sparse: bool = False) -> tuple:
        """x_w ~ p(x_w | h) for every wing; ``sparse`` draws Bernoulli wings as CSR (same draws)."""
        out = []
        for w, wing in enumerate(self.wings):
            eta = self.visible_eta(h, w)
            if sparse and isinstance(wing.units, BernoulliUnits):
                out.append(wing.units.sample_sparse(rng, eta, self.visible_params(w)))
            else:
                out.append(wing.units.sample(rng, eta, self.visible_params(w), lengths))
        return tuple(out)

    def gibbs_step(self, rng: np.random.Generator, xs, lengths=None, *, sparse: bool = False):
        """One block Gibbs sweep: h ~ p(h | x), then x' ~ p(x | h). Returns (x', h)."""
        lengths = self._lengths_for(xs, lengths)
        h = self.sample_h(rng, xs, lengths)
        return self.sample_x(rng, h, lengths, sparse=sparse), h

    # -- energies -----------------------------------------------------------------------
    def visible_terms(self, xs) -> np.ndarray:
        """sum_w [ theta_w . x_w + log h_w(x_w) ] per row (float64)."""
        xs = self.as_wings(xs)
        total = np.zeros(xs[0].shape[0])
        for w, (x, wing) in enumerate(zip(xs, self.wings, strict=True)):
            p = self.visible_params(w)
            total += np.asarray(x @ p["bias"], dtype=np.float64).ravel() + wing.units.log_base(x, p)
        return total

    def log_unnormalized(self, xs, lengths=None) -> np.ndarray:
        """log p*(x) = -F(x), the unnormalised log-marginal of x with h summed out (B,)."""
        lengths = self._lengths_for(xs, lengths)
        eta = self.hidden_eta(xs, lengths)
        return self.visible_terms(xs) + self.hidden.log_partition(eta, self.hidden_params())

    def free_energy(self, xs, lengths=None) -> np.ndarray:
        """F(x) = -log p*(x), so that p(x) = exp(-F(x)) / Z."""
        return -self.log_unnormalized(xs, lengths)

    def log_unnormalized_hidden(self, h, lengths=None) -> np.ndarray:
        """log p*(h) with every wing summed out: s lambda . h + log h_H(h) + sum_w A_w(theta_w + W_w h)."""
        h = np.asarray(h, dtype=np.float64)
        hp = self.hidden_params()
        scale = self._scale(lengths, h.shape[0])
        bias = np.asarray(hp["bias"], dtype=np.float64)
        total = (h @ bias) * (1.0 if scale is None else scale[:, 0]) + self.hidden.log_base(h, hp)
        for w, wing in enumerate(self.wings):
            eta = h @ np.asarray(self.params[f"W:{w}"], dtype=np.float64).T + np.asarray(
                self.params[f"v:{w}:bias"], dtype=np.float64)
            total = total + wing.units.log_partition(eta, self.visible_params(w), lengths)
        return total

    def log_joint_unnormalized(self, xs, h, lengths=None) -> np.ndarray:
        """log p*(x, h) (seed 000 eq. 1)."""
        xs = self.as_wings(xs)
        lengths = self._lengths_for(xs, lengths)
        h = np.asarray(h, dtype=np.float64)
        hp = self.hidden_params()
        scale = self._scale(lengths, h.shape[0])
        bias = np.asarray(hp["bias"], dtype=np.float64)
        total = self.visible_terms(xs) + (h @ bias) * (1.0 if scale is None else scale[:, 0])
        total += self.hidden.log_base(h, hp)
        for w, x in enumerate(xs):
            xw = _dense(x, np.float64)
            total += np.einsum("bi,ij,bj->b", xw, np.asarray(self.params[f"W:{w}"], dtype=np.float64), h)
        return total

    # -- learning statistics ------------------------------------------------------------
    def statistics(self, xs, lengths=None, weights=None) -> dict:
        """sum_b w_b E_{h|x_b}[ d log p*(x_b, h) / d param ] for every learnable parameter.

        The gradient of the mean log-likelihood is ``statistics(data) / B - E_model[statistics(x)]``;
        contrastive divergence replaces the model expectation by reconstructions (see
        :mod:`harmonium.inference.learning.cd`). Hidden units enter through E[h | x]
        (Rao-Blackwellised), which keeps the estimate unbiased and lowers its variance.
        """
        xs = self.as_wings(xs)
        lengths = self._lengths_for(xs, lengths)
        eta = self.hidden_eta(xs, lengths)
        hp = self.hidden_params()
        h_mean = self.hidden.mean(eta, hp)
        h_second = self.hidden.second_moment(eta, hp) if "log_var" in hp else None
        wts = None if weights is None else np.asarray(weights, dtype=self.dtype).reshape(-1, 1)
        hw = h_mean if wts is None else h_mean * wts
        out = {}
        learn = set(self.learnable())
        for w, x in enumerate(xs):
            if f"W:{w}" in learn:
                out[f"W:{w}"] = np.asarray(x.T @ hw)
            vp = self.visible_params(w)
            for k, s in self.wings[w].units.bias_stats(x, vp).items():
                if f"v:{w}:{k}" in learn:
                    out[f"v:{w}:{k}"] = _weighted_colsum(s, wts)
        scale = self._scale(lengths, h_mean.shape[0])
        for k, s in self.hidden.bias_stats(h_mean, hp, h_second).items():
            if f"h:{k}" in learn:
                if k == "bias" and scale is not None:
                    s = s * scale
                out[f"h:{k}"] = _weighted_colsum(s, wts)
        return out


def _weighted_colsum(s, wts):
    if sp.issparse(s):
        if wts is None:
            return np.asarray(s.sum(axis=0)).ravel()
        return np.asarray(s.T @ wts).ravel()
    s = np.asarray(s)
    return s.sum(axis=0) if wts is None else (s * wts).sum(axis=0)


def make_harmonium(wings: Sequence, hidden, n_hidden: int, **kwargs) -> Harmonium:
    """Convenience: ``make_harmonium([("words", "bernoulli", 100)], "bernoulli", 10)``."""
    return Harmonium(wings, hidden, n_hidden, **kwargs)
