"""harmonium.parallel.threads.BlockRunner: persistent threads, results in order, errors, no leaked threads."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import parallel_gibbs as pg
from harmonium.models.directed.lda import make_model
from harmonium.parallel.threads import BlockRunner
from tests.conftest import lda_corpus

PREFIX = "harmonium-block"


def _block_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(PREFIX)]


def _new(before: set) -> list[threading.Thread]:
    """The block threads alive now that are not in ``before`` (thread objects: an ended thread's ident can be
    reused, and threads of earlier tests may end at any moment, so neither idents nor counts are compared)."""
    return [t for t in _block_threads() if t not in before]


def _gone(before: set, timeout: float = 5.0) -> bool:
    """Whether every block thread not in ``before`` has ended within ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not _new(before):
            return True
        gc.collect()
        time.sleep(0.01)
    return False


def test_results_in_order_and_the_same_threads_every_call():
    runner = BlockRunner(3)
    ran_on = []  # the Thread objects (kept alive here, so two distinct threads never compare equal)

    def block(i):
        ran_on.append((i, threading.current_thread()))
        return i * i

    for _ in range(5):
        assert runner(block, [(1,), (2,), (3,)]) == [1, 4, 9]
    # the caller runs the first block of every call; the others run on the same two persistent threads
    me = threading.current_thread()
    assert [t is me for i, t in ran_on if i == 1] == [True] * 5
    others = {id(t) for i, t in ran_on if i != 1}
    assert id(me) not in others and len(others) <= 2
    assert runner(block, [(5,)]) == [25]
    runner.close()


def test_more_blocks_than_threads_is_one_clear_error():
    runner = BlockRunner(2)
    with pytest.raises(InvalidParameterError, match="3 blocks for 2 threads"):
        runner(lambda i: i, [(0,), (1,), (2,)])
    runner.close()


def test_an_error_in_the_first_block_waits_for_the_others():
    runner = BlockRunner(2)
    done = threading.Event()

    def block(i):
        if i == 0:
            raise RuntimeError("first block failed")
        time.sleep(0.2)
        done.set()
        return i

    with pytest.raises(RuntimeError, match="first block failed"):
        runner(block, [(0,), (1,)])
    assert done.is_set()  # the other block had finished before the error reached the caller
    runner.close()


def test_threads_end_when_the_runner_is_collected():
    before = set(_block_threads())
    runner = BlockRunner(3)
    runner(lambda i: i, [(0,), (1,), (2,)])
    assert _new(before)
    del runner
    assert _gone(before)


def test_word_partitioned_kernel_leaks_no_threads():
    corpus, _, _ = lda_corpus(seed=3, n_docs=60)
    tokens = corpus.tokens()
    model = make_model(4, corpus.n_words, 0.1, 0.05)
    before = set(_block_threads())
    rng = np.random.default_rng(0)
    state = cgs.init(rng, tokens, model)
    kernel = pg.build_kernel(sampler="sparse", n_threads=2, compute_log_joint=False)
    for _ in range(2):
        state, _ = kernel(rng, state, tokens, model)
    assert _new(before)  # the sweep ran on the runner's thread
    del kernel
    assert _gone(before)


def test_worker_arrays_lie_on_cache_lines_of_their_own():
    from harmonium.parallel.threads import WORKER_PAD, worker_array

    arrays = [worker_array(k, dt, 0) for k in (1, 7, 100) for dt in (np.float64, np.int32, np.uint8, np.int16)]
    spans = []
    for a in arrays:
        assert a.flags.c_contiguous and a.ctypes.data % 64 == 0 and not a.any()
        spans.append((a.ctypes.data, a.ctypes.data + a.nbytes))
    # the allocations that hold them: no other array's data within WORKER_PAD bytes of each array's data
    spans.sort()
    assert all(b0 - a1 >= WORKER_PAD for (_, a1), (b0, _) in zip(spans, spans[1:], strict=False))
    assert worker_array((2, 3), np.int64).shape == (2, 3)
