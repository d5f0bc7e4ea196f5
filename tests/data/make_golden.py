"""Write ``golden_model_v1.hmn``: a tiny model file in format_version 1.

Run once, when a format version is introduced, and commit the output::

    python tests/data/make_golden.py

Golden files are never regenerated for an existing version: they stand for the
files users already have, and ``tests/unit/io/test_modelfile.py`` checks that the
current reader still loads them field by field. The script refuses to overwrite
an existing golden file unless given ``--force``.

The values below are repeated as literals in the test on purpose, so that a
change here cannot silently change what the test expects.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from harmonium.io import FORMAT_VERSION, write_model_file

GOLDEN = Path(__file__).with_name(f"golden_model_v{FORMAT_VERSION}.hmn")


def golden_content() -> dict:
    """The keyword arguments of ``write_model_file`` for the golden file."""
    rng = np.random.Generator(np.random.PCG64(20240607))
    return {
        "cls": "Toy",
        "params": {"n_topics": 2, "doc_topic_prior": 0.5, "topic_word_prior": 0.01,
                   "name": "golden", "flags": [True, False, None]},
        "arrays": {
            "components": np.array([[0.125, 0.25, 0.625], [1 / 3, 1e-300, -2.5e10]],
                                   dtype=np.float64),
            "n_kw": np.array([[1, 2, 3], [4, 5, -6]], dtype=np.int32),
            "doc_lengths": np.array([3, 0, 7, 2**40], dtype=np.int64),
        },
        "vocabulary": ["apple", "pear", "quince"],
        "rng_state": rng.bit_generator.state,
        "trace": {"log_likelihood": [-10.5, -9.25], "n_changed": [5, 2]},
        "kind": "model",
        "extra": {"note": "golden file for format_version 1"},
    }


def main(argv: list[str]) -> int:
    if GOLDEN.exists() and "--force" not in argv:
        print(f"{GOLDEN} exists; golden files are not regenerated (pass --force to overwrite).")
        return 1
    write_model_file(GOLDEN, **golden_content())
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
