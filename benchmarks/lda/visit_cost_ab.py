"""What a document visit costs the serial SparseLDA sweep, piece by piece (issue 21, the 2-thread goal).

The word-partitioned sweep on P threads visits each document once a word block, P times a sweep where the
serial sweep visits it once (``parallel_gibbs``); each extra visit repeats the visit's own work. Without an
n_dk table (``LDA``'s default) that work is (``lda_sparse._sweep``):

* ``walk``: one walk over the document's tokens, which fills the row of counts from z and lists its topics;
* ``setup``: the q coefficients (alpha_k + n_dk) c_k of its topics and the r bucket, over its topic list;
* ``restore``: the coefficients put back to alpha_k c_k and the row cleared, over its topic list.

This script prices each piece by doing it twice: it writes a copy of the tree's ``lda_sparse.py`` in which
every visit repeats that piece (the second pass rebuilds the same values, so the chain is the same: the z
hashes printed must be equal), and times it against the tree's kernel, alternating in one process
(``sweep_ab_inprocess``; per-round ratio tree / twice < 1 is the piece's cost as a share of a sweep).

* ``walk``: the walk repeated (the row and the list cleared, then walked again);
* ``setup``: the restore and the setup repeated after the setup.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/visit_cost_ab.py walk 100 30 100 debian
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/visit_cost_ab.py setup 100 30 100 debian

2026-11-29 (tenth session, AMD EPYC VM): results/visit-cost-amd.txt; benchmarks/lda/README.md, "Threads: the
price of a document visit, and four levers that did not pay".
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import alternate, load_base, report, sweeper, warm_state  # noqa: E402

from harmonium._kernels import lda_sparse as tree  # noqa: E402

WALK = """            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                k = z[_u(i)]
                # branch-free: k is written past the list's end and kept there only when it is new
                if dlen < K:
                    dtop[_u(dlen)] = k
                dlen += row[_u(k)] == 0
                in_doc[_u(k)] = 1
                row[_u(k)] += 1
"""
WALK_TWICE = WALK + """            for j in range(dlen):
                row[_u(dtop[j])] = 0
                in_doc[_u(dtop[j])] = 0
            dlen = 0
""" + WALK

SETUP = """        r = 0.0
        for j in range(dlen):
            kd = _u(dtop[j])
            qcoef[kd] = (alpha[kd] + row[kd]) * c[kd]
            r += row[kd] * beta * c[kd]
"""
SETUP_TWICE = SETUP + """        for j in range(dlen):
            kd = _u(dtop[j])
            qcoef[kd] = alpha[kd] * c[kd]
            in_doc[kd] = 0
        r = 0.0
        for j in range(dlen):
            kd = _u(dtop[j])
            in_doc[kd] = 1
            qcoef[kd] = (alpha[kd] + row[kd]) * c[kd]
            r += row[kd] * beta * c[kd]
"""

PIECES = {"walk": (WALK, WALK_TWICE), "setup": (SETUP, SETUP_TWICE)}


def twice(piece: str) -> Path:
    """A copy of the tree's lda_sparse.py whose every visit does ``piece`` twice."""
    once, two = PIECES[piece]
    src = Path(tree.__file__).read_text()
    if src.count(once) != 1:
        raise SystemExit(f"the tree's lda_sparse.py no longer has the {piece} this script repeats; update PIECES")
    path = Path(tempfile.mkdtemp(prefix="visit-cost-")) / f"twice_{piece}.py"
    path.write_text(src.replace(once, two))
    return path


def main(argv) -> None:
    piece, K, warm, rounds = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    corpus = argv[4] if len(argv) > 4 else "debian"
    if piece not in PIECES:
        raise SystemExit(f"piece must be one of {sorted(PIECES)}, not {piece!r}")
    variant = load_base(twice(piece), name=f"twice_{piece}_lda_sparse")
    tokens, model, state = warm_state(corpus, K, warm, doc_counts=False)
    runs = {f"{piece} twice": sweeper(variant, state, tokens, model), "tree": sweeper(tree, state, tokens, model)}
    cpu = alternate(runs, rounds)
    print(f"{corpus}, K = {K}, {warm} warm sweeps, {rounds} rounds; {len(tokens.doc_ptr) - 1} documents, "
          f"{tokens.words.shape[0]} tokens")
    report(runs, cpu)


if __name__ == "__main__":
    main(sys.argv[1:])
