"""Held-out evaluation of infinite PAM (seed 002 §6, Fig. 3a) by document completion.

The model (``isbn_examples.infinite_pam``): super-topic s_ji ~ pi_{s|j}, sub-topic k_ji ~ pi_{k|s,j},
word w_ji ~ phi_{w|k}; both CPTs document specific, each with an HDP prior (alpha^b, tau^b).

For a test document j the observed half is folded in with every global quantity frozen at the training
state (tau^super, tau^sub, alpha, phi): the engine's ``fold_in`` returns labels of the super and sub nodes per
sweep. Its emission proportions over the sub-topics are estimated by the Rao-Blackwellised CPT means of seed
002 footnote 2, E[pi_{z|l}] = (alpha tau_z + N_{z|l}) / (alpha + N_l), combined along the chain:

    theta_{k|j} = sum_s E[pi_{s|j}] E[pi_{k|s,j}]
                = sum_s (alpha1 tau1_s + n_{s|j}) / (alpha1 + n_j) * (alpha2 tau2_k + n_{k|s,j}) / (alpha2 + n_{s|j})

with s over the alive super-states plus the unused one (tau1_u) and k over the alive sub-states plus the
unused one (tau2_u, emitting with the prior mean phi = 1/V), averaged over the kept sweeps. Labels -1 (a state
new to the training run, created during fold-in) are lumped into the unused state: with tau frozen, every new
state shares the unused mass and (sub) the prior-mean word distribution.

Written against the API of ``harmonium.inference.mcmc.isbn.compiled.CompiledISBNSampler``;
:class:`PythonPAMView` gives the plain-Python ``ISBNSampler`` the same read-out API plus a reference fold-in,
for development and tests on tiny data.
"""

from __future__ import annotations

import numpy as np


def label_positions(labels: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """Position of every label in ``alive`` (the order of ``tau[:-1]``); -1 (new) -> len(alive) (unused)."""
    labels = np.asarray(labels, dtype=np.int64)
    alive = np.asarray(alive, dtype=np.int64)
    K = alive.shape[0]
    top = int(max(labels.max(initial=-1), alive.max(initial=-1))) + 1
    lut = np.full(top + 1, -2, dtype=np.int64)  # -2: not alive
    lut[alive] = np.arange(K)
    lut[-1] = K  # label -1 indexes the last slot: the unused state
    pos = lut[labels]
    if np.any(pos == -2) or np.any(labels < -1):
        bad = labels[(pos == -2) | (labels < -1)][:5].tolist()
        raise ValueError(f"labels {bad} are neither alive states nor -1 (alive: {alive[:20].tolist()} ...)")
    return pos


def rao_blackwell_theta(super_pos: np.ndarray, sub_pos: np.ndarray, doc: np.ndarray, n_docs: int,
                        tau_super: np.ndarray, tau_sub: np.ndarray, alpha_super: float, alpha_sub: float
                        ) -> np.ndarray:
    """theta (n_docs, K_sub + 1) of one fold-in sweep (module docstring), the last column the unused sub-state.

    Parameters
    ----------
    super_pos, sub_pos : (N,) int arrays
        Positions of each item's super / sub state in ``tau_super`` / ``tau_sub`` (last position = unused).
    doc : (N,) int array
        Test-document row (0..n_docs-1) of each item.
    tau_super, tau_sub : (K + 1,) arrays
        Global weights, last entry the unused mass.
    """
    tau1 = np.asarray(tau_super, dtype=np.float64)
    tau2 = np.asarray(tau_sub, dtype=np.float64)
    K1, K2 = tau1.shape[0], tau2.shape[0]
    doc = np.asarray(doc, dtype=np.int64)
    s = np.asarray(super_pos, dtype=np.int64)
    k = np.asarray(sub_pos, dtype=np.int64)
    n1 = np.bincount(doc * K1 + s, minlength=n_docs * K1).reshape(n_docs, K1).astype(np.float64)
    n_j = n1.sum(axis=1, keepdims=True)
    e1 = (alpha_super * tau1[None, :] + n1) / (alpha_super + n_j)  # E[pi_{s|j}]
    inv = e1 / (alpha_sub + n1)  # E[pi_{s|j}] / (alpha2 + n_{s|j}): the weight of row (s, j)
    theta = alpha_sub * inv.sum(axis=1, keepdims=True) * tau2[None, :]  # prior part of every row
    theta += np.bincount(doc * K2 + k, weights=inv[doc, s], minlength=n_docs * K2).reshape(n_docs, K2)
    return theta


def theta_from_fold_in(draws: dict, doc: np.ndarray, n_docs: int, engine, *, keep_from: int,
                       super_node: str = "super", sub_node: str = "sub") -> np.ndarray:
    """Average of :func:`rao_blackwell_theta` over the fold-in sweeps ``keep_from`` .. end (rows sum to 1)."""
    alive1, alive2 = np.asarray(engine.states(super_node)), np.asarray(engine.states(sub_node))
    tau1, tau2 = np.asarray(engine.tau(super_node)), np.asarray(engine.tau(sub_node))
    a1, a2 = float(engine.alpha(super_node)), float(engine.alpha(sub_node))
    sup, sub = np.asarray(draws[super_node]), np.asarray(draws[sub_node])
    T = sup.shape[0]
    if not 0 <= keep_from < T:
        raise ValueError(f"keep_from={keep_from} must lie in [0, {T}) (fold-in sweeps)")
    theta = np.zeros((n_docs, alive2.shape[0] + 1))
    for t in range(keep_from, T):
        theta += rao_blackwell_theta(label_positions(sup[t], alive1), label_positions(sub[t], alive2), doc, n_docs,
                                     tau1, tau2, a1, a2)
    theta /= T - keep_from
    return theta / theta.sum(axis=1, keepdims=True)


def topic_word_with_new(counts: np.ndarray, beta: float) -> np.ndarray:
    """(K + 1, V): posterior-mean phi_k = (n_kw + beta) / (n_k + V beta) of the alive states, then the new-state
    row, the prior mean 1/V."""
    counts = np.asarray(counts, dtype=np.float64)
    V = counts.shape[1]
    phi = (counts + beta) / (counts.sum(axis=1, keepdims=True) + V * beta)
    return np.vstack([phi, np.full((1, V), 1.0 / V)])


class PythonPAMView:
    """The read-out API of ``CompiledISBNSampler`` (``states``, ``tau``, ``alpha``, ``gamma``,
    ``observed_counts``, ``fold_in``) over a plain-Python ``ISBNSampler`` running infinite PAM, for development
    and tests on tiny data. ``fold_in`` here is a reference Gibbs sampler of the frozen-globals conditional

        p(s_i, k_i | rest) ∝ (a1 tau1_s + n_{s|j}) (a2 tau2_k + n_{k|s,j}) / (a2 + n_{s|j}) phi_{w_i|k}

    with new states lumped into one unused state per node (label -1); the first sweep adds the items one by one
    (each sees only the items before it), as ``CompiledISBNSampler.fold_in`` does."""

    def __init__(self, sampler, beta: float, super_node: str = "super", sub_node: str = "sub", word_node: str = "w"):
        self.s, self.beta = sampler, float(beta)
        self.b1, self.b2, self.a = super_node, sub_node, word_node

    def step(self, rng):
        self.s.step(rng)

    def n_states(self):
        return self.s.n_states()

    def states(self, b):
        return np.asarray(self.s.lat[b].alive, dtype=np.int64)

    def labels(self, b):
        return np.asarray(self.s.lat[b].z, dtype=np.int64)

    def tau(self, b):
        st = self.s.lat[b]
        return np.array([st.tau[k] for k in st.alive] + [st.tau_u])

    def alpha(self, b):
        return float(self.s.net.node(b).prior.alpha)

    def gamma(self, b):
        return float(self.s.net.node(b).prior.gamma)

    def observed_counts(self):
        ost, alive = self.s.obs[self.a], self.s.lat[self.b2].alive
        V = ost.alpha_w.shape[0]
        out = np.zeros((len(alive), V))
        for r, k in enumerate(alive):
            st = ost.stats.get((k,))
            if st is not None:
                out[r] = st[0]
        return out

    def fold_in(self, index, observed, *, n_sweeps, rng):
        doc = np.asarray(index["doc"], dtype=np.int64)
        w = np.asarray(observed[self.a], dtype=np.int64)
        a1, a2 = self.alpha(self.b1), self.alpha(self.b2)
        t1, t2 = self.tau(self.b1), self.tau(self.b2)
        phi = topic_word_with_new(self.observed_counts(), self.beta)  # the predictive F of a frozen row
        K1, K2 = t1.shape[0], t2.shape[0]
        al1, al2 = np.append(self.states(self.b1), -1), np.append(self.states(self.b2), -1)
        _, j = np.unique(doc, return_inverse=True)
        J = int(j.max()) + 1 if j.size else 0
        n1 = np.zeros((J, K1))
        n2 = np.zeros((J, K1, K2))
        s = np.full(doc.shape[0], -1)
        k = np.full(doc.shape[0], -1)
        out1 = np.empty((n_sweeps, doc.shape[0]), dtype=np.int64)
        out2 = np.empty_like(out1)
        for sweep in range(n_sweeps):  # sweep 0: sequential initialisation (as CompiledISBNSampler.fold_in)
            for i in range(doc.shape[0]):
                d = j[i]
                if s[i] >= 0:
                    n1[d, s[i]] -= 1
                    n2[d, s[i], k[i]] -= 1
                p = ((a1 * t1 + n1[d])[:, None] * (a2 * t2[None, :] + n2[d]) / (a2 + n1[d])[:, None]
                     * phi[:, w[i]][None, :]).ravel()
                c = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))
                s[i], k[i] = divmod(min(c, p.shape[0] - 1), K2)
                n1[d, s[i]] += 1
                n2[d, s[i], k[i]] += 1
            out1[sweep], out2[sweep] = al1[s], al2[k]
        return {self.b1: out1, self.b2: out2}
