"""The engine package's entry (harmonium.inference.mcmc.isbn.engine): a declared network -> the sweep that runs it.

1. ``plan`` maps the HDP topic model to the direct-assignment sweep, other branch-shaped networks to the
   compiled engine, everything else to the Python engine;
2. the direct-assignment engine behind the compiled interface has the compiled engine's log joint and item
   conditional on the same state (exact, 1e-10), and its ``update_tau`` takes the same draws from the same
   seed (the shared updates of isbn/hyper.py), with labels that follow the compiled convention;
   (that its chains keep the enumerated HDP posterior, with a broken twin, is in test_isbn_compiled.py);
3. the ``HDP`` estimator, which obtains its init and kernel from ``plan``, gives the numbers it gave before the
   engine package existed (golden values recorded at commit 53e1907 with every parameter explicit).
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium._kernels import hdp as khdp
from harmonium.errors import InvalidParameterError
from harmonium.expfam import Categorical, Dirichlet
from harmonium.inference.mcmc.isbn import engine as isbn_engine
from harmonium.inference.mcmc.isbn import hdp as da
from harmonium.inference.mcmc.isbn.compiled import CompiledISBNSampler, make_sampler
from harmonium.inference.mcmc.isbn.engine import DirectAssignmentEngine, plan
from harmonium.inference.mcmc.isbn.gibbs import ISBNSampler
from harmonium.models.directed import isbn
from harmonium.models.directed import isbn_examples as ex

V = 4


def _asymmetric_hdp():
    return isbn.Network([isbn.Latent("z", isbn.HDP(1.0, 1.0), index=("doc",)),
                         isbn.Observed("w", Categorical, Dirichlet(np.array([0.5, 0.8, 0.3, 0.2])), parents=("z",),
                                       fixed={"n_categories": V})], indices=("doc",))


def _h2dp():
    return isbn.Network([isbn.Latent("z", isbn.H2DP(1.0, 1.0, beta=2.0), index=("book", "chapter")),
                         isbn.Observed("w", Categorical, Dirichlet(np.full(V, 0.5)), parents=("z",),
                                       fixed={"n_categories": V})], indices=("book", "chapter"))


@pytest.mark.parametrize("net, sweep", [
    (ex.hdp(V), "direct_assignment"),
    (_asymmetric_hdp(), "compiled"),
    (ex.infinite_pam(V), "compiled"),
    (ex.pom(), "python"),  # a Gaussian observation: not in the compiled engine
    (ex.bihdp(), "compiled"),
    (ex.nested_dp(2), "compiled"),
    (ex.hdp_random_effects(V), "python"),
    (ex.multimedia(V), "python"),
    (_h2dp(), "python"),
])
def test_plan_maps_each_shape_to_its_sweep(net, sweep):
    p = plan(net)
    assert p.sweep == sweep
    assert p.engine is {"direct_assignment": DirectAssignmentEngine, "compiled": CompiledISBNSampler,
                        "python": ISBNSampler}[sweep]
    if sweep == "direct_assignment":
        assert p.algorithm is da and p.model.n_words == V and p.model.beta == 0.1


def _data(rng, n_docs=5, n=40):
    doc = rng.integers(0, n_docs, n)  # items in no particular order
    return doc, rng.integers(0, V, n)


def _random_state(rng, n, k=4):
    z = rng.choice(np.array([0, 2, 5, 9])[:k], size=n)
    z[0] = 7  # a state that item 0 alone holds (retired when it is removed)
    labels = np.unique(z)
    return z, rng.dirichlet(np.ones(labels.size + 1))


def test_direct_assignment_engine_has_the_compiled_log_joint_and_conditional():
    rng = np.random.default_rng(3)
    net = ex.hdp(V, alpha=1.3, gamma=0.9, beta=0.4)
    for _ in range(3):
        doc, w = _data(rng)
        z, tau = _random_state(rng, doc.size)
        a = make_sampler(net, {"doc": doc}, {"w": w}, init={"z": z}, tau={"z": tau})
        b = CompiledISBNSampler(net, {"doc": doc}, {"w": w}, init={"z": z}, tau={"z": tau})
        assert isinstance(a, DirectAssignmentEngine)
        np.testing.assert_array_equal(a.labels("z"), z)
        np.testing.assert_array_equal(a.states("z"), b.states("z"))
        np.testing.assert_allclose(a.tau("z"), b.tau("z"), rtol=0, atol=1e-15)
        assert np.isclose(a.log_joint(), b.log_joint(), rtol=0, atol=1e-9)
        for i in range(doc.size):
            got = dict(zip(*a.joint_conditional(i), strict=True))
            want = dict(zip(*b.joint_conditional(i), strict=True))
            assert set(got) == set(want)
            assert max(abs(got[k] - want[k]) for k in want) < 1e-10


def test_direct_assignment_update_tau_takes_the_compiled_draws():
    """The two engines share the table counts' order (documents, then states by label), alpha, gamma and the tau
    draw (isbn/hyper.py): from one state and one seed their update_tau agree."""
    rng = np.random.default_rng(4)
    net = ex.hdp(V, alpha=1.3, gamma=0.9, beta=0.4)
    doc, w = _data(rng)
    doc = np.sort(doc)
    z, tau = _random_state(rng, doc.size)
    kw = dict(init={"z": z}, tau={"z": tau}, sample_concentration=True, concentration_prior=(2.0, 1.5))
    a = DirectAssignmentEngine(net, {"doc": doc}, {"w": w}, **kw)
    b = CompiledISBNSampler(net, {"doc": doc}, {"w": w}, **kw)
    ra, rb = np.random.default_rng(9), np.random.default_rng(9)
    for _ in range(3):
        a.update_tau(ra)
        b.update_tau(rb)
        assert a.alpha("z") == b.alpha("z") and a.gamma("z") == b.gamma("z")
        np.testing.assert_allclose(a.tau("z"), b.tau("z"), rtol=1e-12)
    assert a.alpha("z") != 1.3


def test_direct_assignment_labels_follow_the_compiled_convention():
    """Labels survive the sweep's compaction: a token keeps the label of the topic it sits in, topics created in
    the sweep get the next labels in order of creation (never one used before). The reference is computed from
    the z the sweep itself leaves before compaction (recorded by a spy around the plain sweep)."""
    rec = {}

    def spy(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, p, i_start):
        out = khdp.da_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, p, i_start)
        rec["z"], rec["K"] = z.copy(), int(out[0])
        return out

    rng = np.random.default_rng(5)
    doc, w = _data(rng, n=60)
    doc = np.sort(doc)
    e = DirectAssignmentEngine(ex.hdp(V, alpha=3.0, gamma=3.0), {"doc": doc}, {"w": w},
                               init={"z": np.repeat([4, 6], 30)}, capacity=2, sweep=spy)
    next_label, n_retired = 7, 0
    for _ in range(12):
        before = e.states("z")
        e.sweep(rng)
        created = rec["K"] - before.size
        columns = np.concatenate([before, np.arange(next_label, next_label + created)])
        next_label += created
        np.testing.assert_array_equal(e.labels("z"), columns[rec["z"]])
        np.testing.assert_array_equal(e.states("z"), np.unique(e.labels("z")))
        n_retired += int(np.setdiff1d(columns, e.states("z")).size)
        e.update_tau(rng)
    assert next_label > 9 and n_retired > 2  # states were created and retired


def test_engine_errors_name_the_argument():
    rng = np.random.default_rng(6)
    doc, w = _data(rng)
    with pytest.raises(InvalidParameterError, match="HDP topic model only; it has 2 latent and 1 observed nodes"):
        DirectAssignmentEngine(ex.infinite_pam(V), {"doc": doc}, {"w": w})
    with pytest.raises(InvalidParameterError, match="not symmetric"):
        make_sampler(_asymmetric_hdp(), {"doc": doc}, {"w": w}, engine="direct_assignment")
    with pytest.raises(InvalidParameterError, match="sampler= exists in the direct-assignment engine only"):
        make_sampler(ex.infinite_pam(V), {"doc": doc}, {"w": w}, sampler="plain")
    with pytest.raises(InvalidParameterError, match="category 4 > 3"):
        make_sampler(ex.hdp(V), {"doc": doc}, {"w": np.append(w[:-1], 4)})
    with pytest.raises(InvalidParameterError, match=r"tau\['z'\] must be 2 non-negative weights"):
        make_sampler(ex.hdp(V), {"doc": doc}, {"w": w}, tau={"z": np.ones(3)})
    with pytest.raises(InvalidParameterError, match="no values for the data index 'doc'"):
        make_sampler(ex.hdp(V), {}, {"w": w})
    with pytest.raises(InvalidParameterError, match="engine must be"):
        make_sampler(ex.hdp(V), {"doc": doc}, {"w": w}, engine="sparse")


# -- 3. the HDP estimator through the engine: the same numbers as before ----------------------------------------
GOLDEN = {  # split_merge: (K, alpha, gamma, beta, log p(w | z) at the last evaluation, tau_1, K per iteration)
    0: (7, 7.399671527000039, 0.6730504406296891, 0.01, -1003.8568948630453, 0.3256378498706609,
        [5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 7, 6, 7]),
    2: (7, 1.3685907723448305, 1.290727132649222, 2.523420574605842, -1793.5731153331728, 0.24904502213600008,
        [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 7]),
}


@pytest.mark.parametrize("split_merge", [0, 2])
def test_hdp_estimator_gives_the_numbers_it_gave_before_the_engine_package(split_merge):
    from harmonium.estimators.hdp import HDP

    rng = np.random.default_rng(0)
    X = rng.poisson(0.3, size=(40, 30))
    X[:, 0] += 1
    est = HDP(initial_topics=5, doc_concentration=1.0, corpus_concentration=1.0, topic_word_prior=0.01,
              sampler="sparse", sample_concentrations=True, split_merge=split_merge, split_merge_launch=2,
              doc_concentration_prior=(1.0, 1.0), corpus_concentration_prior=(1.0, 1.0),
              sample_topic_word_prior=bool(split_merge), topic_word_hyperprior=(1.0, 1.0), n_iter=15,
              evaluate_every=5, random_state=3).fit(X)
    K, alpha, gamma, beta, loglik, tau_1, trace = GOLDEN[split_merge]
    # The chain must be the same: K and K per iteration exactly. The floats to 1e-12 relative, not bit for bit:
    # the golden was taken on an Intel Xeon, and on an AMD EPYC (Zen 3) beta_ came out one ULP apart (2026-11-28),
    # as the vectorised exp / log that numpy picks depend on the CPU; a different chain moves them by far more.
    assert (est.n_topics_, est.n_topics_trace_.tolist()) == (K, trace)
    got = (est.doc_concentration_, est.corpus_concentration_, est.beta_, est.trace_["log_likelihood"][-1],
           float(est.tau_[0]))
    assert got == pytest.approx((alpha, gamma, beta, loglik, tau_1), rel=1e-12, abs=0)
    assert isbn_engine.plan(ex.hdp(30, beta=0.01)).algorithm is da  # the estimator's sweep is the planned one
