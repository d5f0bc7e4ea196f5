"""Training on a real Dask LocalCluster (two worker processes on 127.0.0.1, started here).

* A two-worker AD-LDA run is identical to the same shards run in this process
  (the reference) and to a second run with the same seed (reproducible), and
  its counts satisfy the invariants (n_wk sums over topics to each word's
  frequency: no token lost or counted twice).
* Killing a worker process mid-run: the run resumes from its last checkpoint
  on the workers left and ends bit-identical to an uninterrupted run.
* Corrupting a shard's checkpointed z (a negative control for the invariant
  check) makes resume refuse with a CorpusError.
* Distributed batch VB equals single-process VB up to float summation order;
  online VB on Dask equals its in-process reference.
* Slow tier: held-out perplexity of distributed AD-LDA within 1% of the
  single-process collapsed sampler (8 seeds each, Debian), and an AD-LDA
  whose merges are dropped (negative control) misses.
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from harmonium.corpus import train_test_split  # noqa: E402
from harmonium.corpus.ondisk import build_ondisk_corpus  # noqa: E402
from harmonium.datasets import load_debian  # noqa: E402
from harmonium.errors import CorpusError  # noqa: E402
from harmonium.estimators.lda import LDA  # noqa: E402
from harmonium.inference.mcmc.lda import dask_gibbs  # noqa: E402
from harmonium.io.modelfile import read_model_file, write_model_file  # noqa: E402
from harmonium.parallel.dask_shards import plan_shards  # noqa: E402


def _local_cluster_client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def client():
    yield from _local_cluster_client()


@pytest.fixture
def kill_client():
    """A cluster of its own for a test that kills a worker: after a SIGKILL the nanny's restart can race
    with the cluster's own bookkeeping and leave it one worker short, which must not reach other tests."""
    yield from _local_cluster_client()


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    corpus = load_debian(n_docs=1200).drop_empty()
    path = tmp_path_factory.mktemp("ondisk")
    build_ondisk_corpus([corpus], path, corpus.vocabulary)
    return str(path), corpus


def _adlda(**kw):
    return LDA(n_topics=8, inference="parallel_gibbs", n_iter=kw.pop("n_iter", 12), evaluate_every=4,
               random_state=kw.pop("random_state", 3), **kw)


def test_adlda_on_cluster_is_the_reference_and_reproducible(client, corpus_dir):
    path, corpus = corpus_dir
    ref = _adlda().fit(path, n_shards=2)
    a = _adlda().fit(path, client=client)
    b = _adlda().fit(path, client=client)
    for run in (a, b):
        assert run.dask_stats_["n_shards"] == 2
        np.testing.assert_array_equal(run.n_wk_, ref.n_wk_)
        np.testing.assert_array_equal(run.doc_topic_, ref.doc_topic_)
        np.testing.assert_array_equal(run.topic_word_, ref.topic_word_)
        assert run.trace_["log_joint"] == ref.trace_["log_joint"]
    freq = np.bincount(corpus.tokens().words, minlength=corpus.n_words)
    np.testing.assert_array_equal(a.n_wk_.sum(axis=1), freq)
    assert a.doc_topic_.shape == (corpus.n_docs, 8)
    # the words of every sweep were moved as sparse count changes, not the corpus
    assert max(a.dask_stats_["bytes_sent"]) < a.n_wk_.nbytes * 2 + 100_000
    assert len(a.dask_stats_["peak_rss_bytes"]) == 2


def test_killed_worker_resumes_from_checkpoint(kill_client, corpus_dir, tmp_path):
    path, _ = corpus_dir
    ref = _adlda(n_iter=10).fit(path, n_shards=2)
    pids = kill_client.run(os.getpid)
    killed = []

    def kill_once(it, n_iter, info):
        if it == 5 and not killed:
            victim = sorted(pids)[1]
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)

    est = _adlda(n_iter=10, checkpoint_path=str(tmp_path / "run.hmn"), checkpoint_every=2)
    est.fit(path, client=kill_client, callback=kill_once)
    assert killed and est.dask_stats_["recoveries"] == 1
    np.testing.assert_array_equal(est.n_wk_, ref.n_wk_)
    np.testing.assert_array_equal(est.doc_topic_, ref.doc_topic_)
    assert est.trace_["log_joint"] == ref.trace_["log_joint"]


def test_resume_refuses_corrupted_shard_checkpoint(corpus_dir, tmp_path):
    path, _ = corpus_dir
    ckpt = str(tmp_path / "run.hmn")
    _adlda(n_iter=4, checkpoint_path=ckpt, checkpoint_every=2).fit(path, n_shards=2)
    resumed = _adlda(n_iter=6, checkpoint_path=ckpt, checkpoint_every=2).fit(path, n_shards=2, resume=True)
    assert resumed.n_iter_ == 6
    shard_file = sorted(f for f in os.listdir(ckpt + ".shards"))[0]
    full = os.path.join(ckpt + ".shards", shard_file)
    mf = read_model_file(full)
    manifest, arrays = mf.manifest, mf.arrays
    z = np.array(arrays["z"])
    z[0] = (z[0] + 1) % 8  # one token moved to another topic: the recount no longer matches
    write_model_file(full, cls="ADLDAShard", params=manifest["params"], arrays={**arrays, "z": z},
                     kind="checkpoint", extra=manifest["extra"])
    with pytest.raises(CorpusError, match="counted twice"):
        _adlda(n_iter=8, checkpoint_path=ckpt, checkpoint_every=2).fit(path, n_shards=2, resume=True)


def test_distributed_vb_matches_single_process(client, corpus_dir):
    path, corpus = corpus_dir
    kw = dict(n_topics=8, inference="vb", n_iter=12, evaluate_every=4, random_state=0)
    single = LDA(**kw).fit(corpus)
    dist = LDA(**kw).fit(path, client=client)
    np.testing.assert_allclose(dist.topic_word_posterior_, single.topic_word_posterior_, rtol=1e-9)
    np.testing.assert_allclose(dist.doc_topic_, single.doc_topic_, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dist.trace_["elbo"], single.trace_["elbo"], rtol=1e-10)
    kw = dict(n_topics=8, inference="online_vb", n_iter=2, batch_size=128, random_state=0)
    ref = LDA(**kw).fit(path, n_shards=2)
    online = LDA(**kw).fit(path, client=client)
    np.testing.assert_array_equal(online.topic_word_posterior_, ref.topic_word_posterior_)


def test_client_needs_a_distributed_inference(client, corpus_dir):
    with pytest.raises(Exception, match="parallel_gibbs"):
        LDA(n_topics=4, inference="cvb0").fit(corpus_dir[0], client=client)


# -- slow tier: held-out quality -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def split():
    train, test = train_test_split(load_debian(n_docs=4000), 0.2, random_state=0)
    return train.drop_empty(), test


def _mean_perplexity(split, seeds, **fit_kw):
    train, test = split
    inference = "parallel_gibbs" if fit_kw else "collapsed_gibbs"
    return float(np.mean([LDA(10, n_iter=100, inference=inference, random_state=s).fit(train, **fit_kw)
                          .completion_perplexity(test).perplexity for s in seeds]))


@pytest.mark.slow
def test_distributed_perplexity_within_one_percent(client, split):
    seeds = range(8)
    serial = _mean_perplexity(split, seeds)
    # seeds 1..7 in process: bit-identical to the cluster (test above); seed 0 on the cluster itself
    on_cluster = _mean_perplexity(split, [0], client=client)
    dist = (on_cluster + 7 * _mean_perplexity(split, seeds[1:], n_shards=2)) / 8
    assert abs(dist - serial) / serial < 0.01, (dist, serial)


@pytest.mark.slow
def test_negative_control_unmerged_adlda_misses(split, monkeypatch):
    serial = _mean_perplexity(split, range(4))
    real_step = dask_gibbs.ADLDADriver.step

    def no_merge(self, rng, keep):  # each shard keeps sampling against the initial counts of the others
        n = real_step(self, rng, keep)
        self.merged = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))
        self.merged_k = np.zeros(self.K, dtype=np.int32)
        return n

    monkeypatch.setattr(dask_gibbs.ADLDADriver, "step", no_merge)
    broken = _mean_perplexity(split, range(4), n_shards=2)
    assert abs(broken - serial) / serial > 0.01, (broken, serial)


def test_cli_fit_on_the_cluster_reads_the_ondisk_corpus(client, corpus_dir, tmp_path):
    import json

    from click.testing import CliRunner

    from harmonium.cli.main import cli

    path, corpus = corpus_dir
    out = tmp_path / "m.hmn"
    res = CliRunner().invoke(cli, ["fit", path, "-k", "4", "--n-iter", "4", "--inference", "parallel_gibbs",
                                   "--dask", client.scheduler.address, "--seed", "1", "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output[res.output.index("{"):])
    assert summary["n_docs"] == corpus.n_docs and summary["n_tokens"] == corpus.n_tokens
    ref = LDA(4, inference="parallel_gibbs", n_iter=4, random_state=1).fit(path, n_shards=2)
    from harmonium import load

    np.testing.assert_array_equal(load(str(out)).topic_word_, ref.topic_word_)


def test_data_parallel_cd_merges_statistics_and_matches_in_process(client, corpus_dir):
    from harmonium.inference.learning.cd import reconstruction_error
    from harmonium.inference.learning.cd_dask import fit_cd, shard_statistics
    from harmonium.models.undirected.variants import random_init, replicated_softmax
    from harmonium.parallel.dask_shards import ShardedRun, plan_shards

    path, corpus = corpus_dir
    m0 = random_init(np.random.default_rng(0), replicated_softmax(corpus.n_words, 8))
    x = corpus.counts.astype(m0.dtype)
    lengths = np.asarray(x.sum(axis=1)).ravel().astype(np.float64)
    local = ShardedRun(None, plan_shards(path, 2))
    fitted, _ = fit_cd(local, m0, np.random.default_rng(1), n_steps=30, learning_rate=0.01, batch_rows=50)
    # the shards' sufficient statistics add up to the whole corpus's (the global step's merge)
    full = fitted.statistics((x,), lengths)
    parts = local.map(shard_statistics, [(fitted,)] * 2)
    for k in full:
        np.testing.assert_allclose(parts[0][k] + parts[1][k], full[k], rtol=1e-9, atol=1e-9)
    assert reconstruction_error(fitted, (x,), lengths) < reconstruction_error(m0, (x,), lengths)
    local.close()
    # the cluster runs the same local steps: identical parameters
    ref, _ = fit_cd(ShardedRun(None, plan_shards(path, 2)), m0, np.random.default_rng(1), n_steps=3,
                    learning_rate=0.01, batch_rows=50)
    remote = ShardedRun(client, plan_shards(path, 2))
    got, stats = fit_cd(remote, m0, np.random.default_rng(1), n_steps=3, learning_rate=0.01, batch_rows=50)
    remote.close()
    for k in ref.params:
        np.testing.assert_array_equal(got.params[k], ref.params[k])
    assert stats["bytes_received"][0] > 0


def _init_sleeper(spec):
    return spec.index, None


def _sleep(state, seconds):
    import time

    time.sleep(seconds)
    return state


def test_worker_killed_during_a_local_step_is_detected(kill_client, corpus_dir):
    import sys
    import threading

    import cloudpickle

    from harmonium.parallel.dask_shards import ShardedRun, WorkerLost, plan_shards

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    run = ShardedRun(kill_client, plan_shards(corpus_dir[0], 2))
    run.place(_init_sleeper, [()] * 2)
    pids = kill_client.run(os.getpid)
    victim = run.owners[1]
    outcome = []

    def step():
        try:
            outcome.append(run.map(_sleep, [(3.0,)] * 2))
        except WorkerLost as e:
            outcome.append(e)

    worker = threading.Thread(target=step)
    worker.start()
    threading.Timer(1.0, lambda: os.kill(pids[victim], signal.SIGKILL)).start()
    worker.join(timeout=60)  # without the liveness check the step would wait for the dead worker forever
    assert not worker.is_alive() and isinstance(outcome[0], WorkerLost), outcome
    run.close()


# -- harmoniums: data-parallel CD through the estimators ----------------------------------------------
def _assert_same_fit(a, b):
    for k in b.model_.params:
        np.testing.assert_array_equal(a.model_.params[k], b.model_.params[k], err_msg=k)
    for k, v in b.trace_.items():
        if k != "seconds":
            np.testing.assert_array_equal(a.trace_[k], v, err_msg=k)


def test_harmonium_cd_on_cluster_is_the_reference_and_reproducible(client, corpus_dir):
    from harmonium.estimators.efh import EFH, ReplicatedSoftmax

    path, corpus = corpus_dir
    # CD-1 with the driver's momentum and weight decay (ReplicatedSoftmax defaults: 0.9, 0.001)
    kw = dict(n_hidden=8, n_iter=2, random_state=5)
    ref = ReplicatedSoftmax(**kw).fit(path, n_shards=2)
    a = ReplicatedSoftmax(**kw).fit(path, client=client)
    b = ReplicatedSoftmax(**kw).fit(corpus, client=client)  # an in-memory corpus goes through a temporary directory
    for run in (a, b):
        assert run.dask_stats_["n_shards"] == 2 and run.n_iter_ == 2
        _assert_same_fit(run, ref)
    assert not np.array_equal(ref.model_.params["W:0"], ReplicatedSoftmax(**kw).fit(path, n_shards=1).model_
                              .params["W:0"])  # the result depends on the number of shards, as documented
    # an update moves the parameters out and the learnable statistics back, never documents
    n_batches = -(-max(s.hi - s.lo for s in plan_shards(path, 2)) // 50)
    size = sum(v.nbytes for v in a.model_.params.values())
    assert a.dask_stats_["bytes_sent"][0] <= n_batches * 2 * (size + 1000)
    assert a.dask_stats_["bytes_received"][0] <= n_batches * 2 * (2 * size + 1000)
    # PCD: the persistent chains stay on the workers
    pcd = dict(n_hidden=8, n_iter=2, learning="pcd", weight_decay=0.01, random_state=2)
    _assert_same_fit(EFH(**pcd).fit(path, client=client), EFH(**pcd).fit(path, n_shards=2))


def test_harmonium_cd_on_cluster_learns_like_one_process(client, corpus_dir, monkeypatch):
    from harmonium.estimators import _efh_dask
    from harmonium.estimators.efh import EFH
    from harmonium.inference.learning.cd import pseudo_log_likelihood

    path, corpus = corpus_dir
    x = (corpus.counts > 0).astype(np.float32).tocsr()

    def pll(model):  # the same 20 draws of units for every model (common random numbers)
        return float(np.mean([pseudo_log_likelihood(np.random.default_rng(r), model, (x,)).mean()
                              for r in range(20)]))

    kw = dict(n_hidden=16, n_iter=5, learning="cd", learning_rate=1.0, momentum=0.5, random_state=0)
    dist = EFH(**kw).fit(path, client=client)
    single = EFH(**kw).fit(corpus)
    rec = dist.trace_["reconstruction_error"]
    assert rec[-1] < rec[0] - 0.3, rec
    assert abs(pll(dist.model_) - pll(single.model_)) < 0.75
    # negative controls: the untrained model, and a merge that drops the second shard's statistics
    # (half the gradient), both miss the single-process pseudo-likelihood by more than the tolerance
    assert abs(pll(EFH(**{**kw, "n_iter": 1}).fit(path, n_shards=2).model_) - pll(single.model_)) > 0.75
    real = _efh_dask.merge

    def first_shard_only(outs, names):
        merged, n_b = real(outs, names)
        return real(outs[:1], names)[0], n_b

    monkeypatch.setattr(_efh_dask, "merge", first_shard_only)
    broken = EFH(**kw).fit(path, n_shards=2)
    assert abs(pll(broken.model_) - pll(single.model_)) > 0.75


def test_harmonium_killed_worker_resumes_from_checkpoint(kill_client, corpus_dir, tmp_path):
    from harmonium.estimators.efh import EFH

    path, _ = corpus_dir
    kw = dict(n_hidden=8, n_iter=4, learning="pcd", momentum=0.5, random_state=7)
    ref = EFH(**kw).fit(path, n_shards=2)
    pids = kill_client.run(os.getpid)
    killed = []

    def kill_once(epoch, n_iter, info):
        if epoch == 2 and not killed:
            victim = sorted(pids)[1]
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)

    est = EFH(**kw, checkpoint_path=str(tmp_path / "efh.hmn"), checkpoint_every=1)
    est.fit(path, client=kill_client, callback=kill_once)
    assert killed and est.dask_stats_["recoveries"] == 1
    _assert_same_fit(est, ref)  # parameters, momentum and the workers' PCD chains came back from the checkpoint
    # resume after the driver stopped: the same files, in this process
    again = EFH(**{**kw, "n_iter": 5}, checkpoint_path=str(tmp_path / "efh.hmn")).fit(path, n_shards=2, resume=True)
    _assert_same_fit(again, EFH(**{**kw, "n_iter": 5}).fit(path, n_shards=2))


def test_harmonium_client_refuses_what_it_cannot_do(client, corpus_dir, tmp_path):
    from harmonium.errors import InvalidParameterError, ModelFileError
    from harmonium.estimators.efh import EFH, DualWingHarmonium

    path, corpus = corpus_dir
    with pytest.raises(InvalidParameterError, match="one-wing harmoniums"):
        DualWingHarmonium(n_hidden=4, n_iter=1).fit(corpus, features=np.ones((corpus.n_docs, 2)), client=client)
    with pytest.raises(InvalidParameterError, match="n_shards"):
        EFH(n_hidden=4, n_iter=1).fit(path, n_shards=0)
    ckpt = str(tmp_path / "single.hmn")
    EFH(n_hidden=4, n_iter=1, checkpoint_path=ckpt).fit(corpus)  # a single-process checkpoint
    with pytest.raises(ModelFileError, match="not a checkpoint of this distributed"):
        EFH(n_hidden=4, n_iter=2, checkpoint_path=ckpt).fit(path, client=client, resume=True)


def test_distributed_vb_killed_worker_resumes_without_losing_documents(kill_client, corpus_dir, tmp_path):
    path, corpus = corpus_dir
    kw = dict(n_topics=8, inference="vb", n_iter=8, evaluate_every=4, random_state=1)
    ref = LDA(**kw).fit(path, n_shards=2)
    pids = kill_client.run(os.getpid)
    killed = []

    def kill_once(it, n_iter, info):
        if it == 5 and not killed:
            victim = sorted(pids)[0]
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)

    est = LDA(**kw, checkpoint_path=str(tmp_path / "vb.hmn"), checkpoint_every=2).fit(path, client=kill_client,
                                                                                      callback=kill_once)
    assert killed and est.dask_stats_["recoveries"] == 1
    # resumed from iteration 4 with every shard's gamma: the same run as an uninterrupted one
    np.testing.assert_array_equal(est.topic_word_posterior_, ref.topic_word_posterior_)
    np.testing.assert_array_equal(est.doc_topic_, ref.doc_topic_)
    assert est.trace_["elbo"] == ref.trace_["elbo"]
    # count invariant: the expected counts of each word add up to its frequency (each token once)
    freq = np.bincount(corpus.tokens().words, minlength=corpus.n_words)
    np.testing.assert_allclose(est.topic_word_posterior_.sum(axis=0) - 8 * est.beta_, freq, rtol=1e-9, atol=1e-6)
    assert est.doc_topic_.shape == (corpus.n_docs, 8)
