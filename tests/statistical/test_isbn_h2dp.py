"""H2DP stacks (seed 002 §5, eq. 3): pi_{z|k,j} ~ DP(alpha, rho_{.|k}), rho_{.|k} ~ DP(beta, tau), for words i in
chapters j of books k.

Fast tier (deterministic): after an eq. 3 update of (rho, tau), the engine's FFBS conditional of every item
equals brute force from the closed-form joint p(z, w | rho, tau), alone and under a latent parent; an
engine that uses tau in place of the book's rho (a one-level HDP) fails. The eq. 3 update keeps tau and
every rho_{.|k} on the simplex over the used states plus the unused mass, and rho follows the book's counts.
Slow tier: without data, engine chains (z by FFBS, then eq. 3) keep the partition law of the
three-level Chinese restaurant franchise (chi-square against 100,000 forward draws); an eq. 3 step
that forgets the book level fails. (This test found that a new state's rho in the book of the item
that created it must be drawn size-biased, Beta(beta tau_k + 1, beta tau_u).)
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.expfam import Categorical, Dirichlet
from harmonium.inference.mcmc.isbn import gibbs as ig
from harmonium.models.directed import isbn

from . import _isbn_brute as bf

BOOK = np.array([0, 0, 0, 0, 1, 1, 1, 1])
CHAPTER = np.array([0, 0, 1, 1, 2, 2, 3, 3])
N = BOOK.size
R = np.random.default_rng(31)
W = R.integers(0, 3, N)
IDX = {"book": BOOK, "chapter": CHAPTER}


def _w(parent):
    return isbn.Observed("w", Categorical, Dirichlet(np.full(3, 0.4)), parents=(parent,), fixed={"n_categories": 3})


NETS = {
    "alone": isbn.Network([isbn.Latent("z", isbn.H2DP(1.2, 1.0, beta=0.8), index=("book", "chapter")), _w("z")],
                          indices=("book", "chapter")),
    "under_parent": isbn.Network([isbn.Latent("s", isbn.HDP(1.0, 1.3), index=("chapter",)),
                                  isbn.Latent("z", isbn.H2DP(0.9, 1.1, beta=1.5), parents=("s",),
                                              index=("book", "chapter")), _w("z")], indices=("book", "chapter")),
}
INIT = {"s": R.integers(0, 2, N), "z": np.array([0, 1, 1, 2, 0, 2, 2, 3])}


class OneLevel(ig.ISBNSampler):
    """Uses tau where the book's rho belongs (drops the middle level of the stack)."""

    def _prior_term(self, node, st, row, k):
        if isinstance(node.prior, isbn.H2DP):
            pr, n_row = node.prior, st.totals.get(row, 0)
            n_k = st.counts.get(row, {}).get(k, 0) if k != ig.NEW else 0
            return (pr.alpha * (st.tau_u if k == ig.NEW else st.tau[k]) + n_k) / (pr.alpha + n_row)
        return super()._prior_term(node, st, row, k)


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (OneLevel, False)])
@pytest.mark.parametrize("name", list(NETS))
def test_h2dp_conditional_is_brute_force(name, cls, ok):
    net = NETS[name]
    e = cls(net, IDX, {"w": W}, init={b: INIT[b] for b in net.topological_order()})
    e.update_tau(np.random.default_rng(2))  # eq. 3: rho_{.|book} now differs from tau and between books
    assert not np.isclose(e.lat["z"].rho[0][0], e.lat["z"].rho[1][0])
    tau = bf.tau_dicts(e)
    z = {b: e.lat[b].z.copy() for b in e.order}
    agree = [bf.agrees(e, i, bf.conditional(net, e.order, z, IDX, {"w": W}, tau, i)) for i in range(N)]
    assert all(agree) == ok


def test_eq3_update_stays_on_the_simplex_and_follows_the_books():
    e = ig.ISBNSampler(NETS["alone"], IDX, {"w": W}, init={"z": np.array([0, 0, 0, 0, 1, 1, 1, 1])})
    rng = np.random.default_rng(5)
    mass0 = []
    for _ in range(300):
        e.update_tau(rng)
        st = e.lat["z"]
        assert np.isclose(sum(st.tau.values()) + st.tau_u, 1.0)
        for g in (0, 1):
            assert np.isclose(sum(st.rho[g].values()) + st.rho_u[g], 1.0)
            assert all(v >= 0 for v in st.rho[g].values())
        mass0.append((st.rho[0][0], st.rho[1][0]))
    m = np.mean(mass0, axis=0)
    assert m[0] > 0.5 > m[1]  # state 0 is book 0's, state 1 book 1's


def test_sweeps_run_and_h2dp_needs_two_indices():
    e = ig.ISBNSampler(NETS["under_parent"], IDX, {"w": W}, init=INIT)
    rng = np.random.default_rng(1)
    for _ in range(5):
        e.step(rng)
    st = e.lat["z"]
    assert set(st.rho[0]) == set(st.alive) == set(st.tau)
    with pytest.raises(InvalidParameterError, match="an H2DP prior needs index=\\(outer, inner, ...\\)"):
        isbn.Network([isbn.Latent("z", isbn.H2DP(1.0, 1.0), index=("book",)), _w("z")], indices=("book",)).validate()


# -- slow: the whole H2DP chain (z by FFBS, eq. 3 update) keeps the prior's partition law ------------------
SB, SC = np.array([0, 0, 1, 1]), np.array([0, 1, 2, 2])  # book 0: chapters 0, 1 (a word each); book 1: chapter 2
AL, BE, GA = 1.0, 0.7, 1.5


def _canon(z):
    seen = {}
    return tuple(seen.setdefault(int(k), len(seen)) for k in z)


def _franchise(rng):
    """One draw of z from the three-level Chinese restaurant franchise (pi ~ DP(AL, rho_book), rho ~ DP(BE, tau),
    tau ~ GEM(GA))."""
    dishes_global = []  # number of book tables serving each dish
    book_tables = {0: [], 1: []}  # dish of each book table, counts of chapter tables at it
    chap_tables = {}
    z = []
    for b, c in zip(SB, SC, strict=True):
        tabs = chap_tables.setdefault(int(c), [])  # [dish, customers]
        w = np.array([t[1] for t in tabs] + [AL], dtype=float)
        j = rng.choice(len(w), p=w / w.sum())
        if j < len(tabs):
            tabs[j][1] += 1
            z.append(tabs[j][0])
            continue
        bt = book_tables[int(b)]  # [dish, chapter tables]
        w = np.array([t[1] for t in bt] + [BE], dtype=float)
        m = rng.choice(len(w), p=w / w.sum())
        if m < len(bt):
            bt[m][1] += 1
            dish = bt[m][0]
        else:
            w = np.array(dishes_global + [GA], dtype=float)
            d = rng.choice(len(w), p=w / w.sum())
            if d == len(dishes_global):
                dishes_global.append(0)
            dishes_global[d] += 1
            bt.append([d, 1])
            dish = d
        tabs.append([dish, 1])
        z.append(dish)
    return _canon(z)


class FlatRho(ig.ISBNSampler):
    """An eq. 3 step that forgets the book level: rho_{.|k} := tau after the update."""

    def _update_h2dp(self, node, st, rng):
        super()._update_h2dp(node, st, rng)
        for g in st.rho:
            st.rho[g], st.rho_u[g] = dict(st.tau), st.tau_u


@pytest.mark.slow
@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (FlatRho, False)])
def test_h2dp_chains_keep_the_franchise_prior(cls, ok):
    from .test_hdp_exact import chi2_pvalue

    net = isbn.Network([isbn.Latent("z", isbn.H2DP(AL, GA, beta=BE), index=("book", "chapter")),
                        isbn.Observed("w", Categorical, Dirichlet(np.ones(1)), parents=("z",),
                                      fixed={"n_categories": 1})], indices=("book", "chapter"))
    rng = np.random.default_rng(44)
    ref = [_franchise(rng) for _ in range(100_000)]
    codes = sorted(set(ref))
    where = {c: j for j, c in enumerate(codes)}
    target = np.bincount([where[c] for c in ref], minlength=len(codes)) / len(ref)
    out = np.zeros(len(codes))
    for _ in range(800):
        e = cls(net, {"book": SB, "chapter": SC}, {"w": np.zeros(4, dtype=np.int64)},
                init={"z": np.array(_franchise(rng))})
        for _ in range(12):
            e.step(rng)
        out[where[_canon(e.lat["z"].z)]] += 1
    pv = chi2_pvalue(out, target)
    assert (pv > 1e-3) == ok, (pv, out, target * 800)
