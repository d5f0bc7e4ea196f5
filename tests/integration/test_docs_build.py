"""The documentation site builds with warnings as errors and every cross-reference resolved.

``sphinx -b dummy -W -n --keep-going`` reads every page, runs autodoc/autosummary over the public
API and resolves every reference (nitpicky), without writing HTML. The ``>>>`` examples of the
pages run as doctests. Skipped, with the reason, when Sphinx and its extensions are not installed
(the ``docs`` extra).
"""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _have_sphinx() -> str | None:
    for mod in ("sphinx", "numpydoc", "myst_parser"):
        try:
            __import__(mod)
        except ImportError:
            return mod
    return None


def test_docs_build_without_warnings(tmp_path):
    missing = _have_sphinx()
    if missing:
        pytest.skip(f"the docs build needs {missing} (pip install '.[docs]')")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "dummy", "-W", "-n", "--keep-going", "-q",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "out")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, f"sphinx failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"


PAGES = sorted(p for p in [ROOT / "README.md", *DOCS.rglob("*.md")] if ">>> " in p.read_text())


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_doctests(page, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    res = doctest.testfile(str(page), module_relative=False, optionflags=flags, verbose=False, report=True)
    assert res.attempted > 0
    assert res.failed == 0, f"{res.failed} of {res.attempted} doctests of {page.name} failed (see the output above)"


# Docstring examples shown in the API reference that are cheap enough to run on every test run.
CHEAP_DOCSTRING_MODULES = ["harmonium._progress", "harmonium.evaluation.partition"]


@pytest.mark.parametrize("name", CHEAP_DOCSTRING_MODULES)
def test_docstring_examples(name):
    import importlib

    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
