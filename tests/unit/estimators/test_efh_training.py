"""The harmoniums' training options: CD-k schedules, validation with early stopping, sparsity; errors.

* Early stopping keeps a copy of the best parameters (a twin that keeps a reference to the live,
  mutated arrays fails) and the estimator restores them: the AIS score of the returned model,
  recomputed through the public ``log_likelihood_documents`` with the validation settings,
  equals ``best_validation_score_`` exactly, and the model of the last epoch (the same run
  retrained without validation for ``n_iter_`` epochs) scores lower.
* Resuming a fit with early stopping from a checkpoint is bit-identical to an uninterrupted fit.
* Every new option refuses a bad value with one error naming it.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.estimators.efh import EFH, GBEFH, ReplicatedSoftmax
from harmonium.inference.learning.early_stopping import EarlyStopping
from harmonium.inference.learning.schedules import gibbs_schedule

FAST = {"n_ais_runs": 5, "n_temperatures": 100, "random_state": 0, "evaluate_every": 1}
STOP = {"n_iter": 40, "learning_rate": 0.05, "momentum": 0.9, "weight_decay": 0.0, "n_gibbs": (1, 3),
        "validation_every": 1, "patience": 2, "validation_ais": (4, 50)}


@pytest.fixture(scope="module")
def split(synthetic):
    c, _, _ = synthetic
    return c[:240], c[240:300]


class _Model:
    def __init__(self):
        self.params = {"W": np.zeros(3)}


@pytest.mark.parametrize("aliasing", [False, True])
def test_early_stopping_keeps_a_copy_of_the_best_parameters(aliasing):
    scores = iter([1.0, 3.0, 2.0, 2.5, 0.5, 9.0])
    stopper = EarlyStopping(lambda m: next(scores), every=1, patience=3)
    if aliasing:  # the broken twin: remembers the live arrays, which training mutates in place
        stopper._copy = lambda params: params
    model = _Model()
    stops = []
    for epoch in range(1, 6):
        model.params["W"][...] = epoch  # one epoch of training, in place
        stops.append(stopper.update(epoch, model))
    assert stops == [False, False, False, False, True]
    assert stopper.best_epoch == 2 and stopper.best_score == 3.0 and stopper.n_bad == 3
    assert np.array_equal(stopper.best_params["W"], np.full(3, 2.0)) != aliasing


def test_early_stopping_restores_the_best_validation_parameters(split):
    train, valid = split
    est = ReplicatedSoftmax(4, **FAST, **STOP).fit(train, validation=valid)
    assert 1 <= est.best_iteration_ < est.n_iter_ < STOP["n_iter"]  # stopped early, after the best
    scores = [v for v in est.trace_["validation_loglik"] if v == v]
    assert len(scores) == est.n_iter_ and est.best_validation_score_ == max(scores)
    assert est.trace_["n_gibbs"][0] == 1 and set(est.trace_["n_gibbs"]) <= {1, 2, 3}

    def rescore(model_est):
        res = model_est.log_likelihood_documents(valid, random_state=0, n_runs=4, n_temperatures=50)
        return float(res.log_likelihood.sum() / res.n_tokens.sum())

    assert rescore(est) == pytest.approx(est.best_validation_score_, rel=1e-12, abs=1e-12)
    # negative control: the parameters of the last epoch (same stream, no validation) score lower
    last = ReplicatedSoftmax(4, **FAST, **{**STOP, "n_iter": est.n_iter_, "patience": None})
    last.fit(train)
    assert rescore(last) < est.best_validation_score_ - 1e-6


def test_resume_with_early_stopping_is_bit_identical(split, tmp_path):
    train, _ = split
    kw = {**FAST, **STOP, "validation_fraction": 0.2}
    full = ReplicatedSoftmax(4, **kw).fit(train)
    path = tmp_path / "ckpt.hmn"
    part = ReplicatedSoftmax(4, **kw, checkpoint_path=path, checkpoint_every=1)
    part.fit(train, callback=lambda it, n, info: it == 2)
    assert part.n_iter_ == 2
    resumed = ReplicatedSoftmax(4, **kw, checkpoint_path=path, checkpoint_every=1).fit(train, resume=True)
    assert resumed.resumed_from_ == 2
    assert (resumed.n_iter_, resumed.best_iteration_) == (full.n_iter_, full.best_iteration_)
    assert resumed.best_validation_score_ == full.best_validation_score_
    for k, v in full.model_.params.items():
        np.testing.assert_array_equal(resumed.model_.params[k], v)
    np.testing.assert_array_equal(resumed.trace_["validation_loglik"], full.trace_["validation_loglik"])
    # a checkpoint of a stopped fit resumes to the same result without training further
    again = ReplicatedSoftmax(4, **kw, checkpoint_path=path, checkpoint_every=1).fit(train, resume=True)
    assert again.n_iter_ == full.n_iter_
    for k, v in full.model_.params.items():
        np.testing.assert_array_equal(again.model_.params[k], v)


@pytest.mark.parametrize("kw", [{"learning": "pcd", "fast_learning_rate": 0.05},
                                {"sparsity_target": 0.05, "sparsity_cost": 1.0, "n_gibbs": (1, 2)}],
                         ids=["fast-pcd", "sparsity"])
def test_resume_keeps_fast_weights_and_hidden_activity(split, tmp_path, kw):
    train, _ = split
    args = {**FAST, "n_iter": 4, "learning_rate": 0.02, **kw}
    full = EFH(5, **args).fit(train)
    path = tmp_path / "ckpt.hmn"
    EFH(5, **args, checkpoint_path=path, checkpoint_every=1).fit(train, callback=lambda it, n, info: it == 2)
    resumed = EFH(5, **args, checkpoint_path=path, checkpoint_every=1).fit(train, resume=True)
    for k, v in full.model_.params.items():
        np.testing.assert_array_equal(resumed.model_.params[k], v)


def test_sparsity_target_lowers_hidden_activity(split):
    train, _ = split
    kw = {**FAST, "n_iter": 8, "learning_rate": 0.02}
    free = EFH(6, **kw).fit(train)
    sparse = EFH(6, **kw, sparsity_target=0.05, sparsity_cost=2.0).fit(train)
    assert sparse.transform(train).mean() < free.transform(train).mean() - 0.05
    assert sparse._state.hidden_q is not None and np.all((sparse._state.hidden_q > 0) & (sparse._state.hidden_q < 1))


def test_gibbs_schedule_stages():
    s = gibbs_schedule((1, 5), 100)
    assert [s(t) for t in (0, 19, 20, 39, 40, 80, 99, 150)] == [1, 1, 2, 2, 3, 5, 5, 5]
    assert [gibbs_schedule(3, 10)(t) for t in (0, 9, 50)] == [3, 3, 3]


@pytest.mark.parametrize("kw,match", [
    ({"n_gibbs": (3, 1)}, "'n_gibbs' parameter of ReplicatedSoftmax must be an int >= 1 or a pair"),
    ({"n_gibbs": (0, 2)}, "'n_gibbs'"),
    ({"n_gibbs": 1.5}, "'n_gibbs'"),
    ({"validation_fraction": 1.0}, "'validation_fraction'"),
    ({"validation_every": 0}, "'validation_every'"),
    ({"patience": 0}, "'patience'"),
    ({"validation_ais": (1, 100)}, "'validation_ais'"),
    ({"validation_ais": 100}, "'validation_ais'"),
    ({"sparsity_target": 1.0}, "'sparsity_target'"),
    ({"sparsity_target": 0.1}, "'sparsity_cost' parameter of ReplicatedSoftmax must be > 0"),
    ({"sparsity_cost": -1.0}, "'sparsity_cost'"),
    ({"sparsity_decay": 1.0}, "'sparsity_decay'"),
    ({"fast_learning_rate": -0.1}, "'fast_learning_rate'"),
    ({"fast_learning_rate": 0.1}, "'fast_learning_rate' parameter of ReplicatedSoftmax needs learning='pcd'"),
    ({"fast_decay": 1.0}, "'fast_decay'"),
])
def test_bad_training_options_get_one_clear_error(split, kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        ReplicatedSoftmax(3, **{**FAST, "n_iter": 1, **kw}).fit(split[0])


def test_option_combinations_refused(split):
    train, valid = split
    with pytest.raises(InvalidParameterError, match="'sparsity_target' parameter of GBEFH needs binary"):
        GBEFH(3, sparsity_target=0.1, sparsity_cost=1.0, **FAST).fit(train)
    with pytest.raises(InvalidParameterError, match="either validation= data or validation_fraction"):
        ReplicatedSoftmax(3, validation_fraction=0.1, **FAST).fit(train, validation=valid)
    with pytest.raises(InvalidParameterError, match="data-parallel CD does not support n_gibbs"):
        ReplicatedSoftmax(3, n_gibbs=(1, 2), **FAST).fit(train, n_shards=2)
