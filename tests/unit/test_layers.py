"""The import layers of DESIGN.md hold: every module imports only its own layer or below.

cli -> experiments -> report -> estimators -> evaluation -> inference -> models -> (expfam, corpus, io, parallel,
datasets) -> _kernels (with errors, _validation, _version beside it). ``experiments`` builds estimators, scores
them and draws its results with ``report``'s plots, so it sits above both; the CLI calls it.
"""

from __future__ import annotations

import ast
import pathlib

import harmonium

RANK = {
    "_kernels": 0, "errors": 0, "_validation": 0, "_version": 0, "_lazy": 0, "_progress": 0, "_heap": 0,
    "expfam": 1, "corpus": 1, "io": 1, "parallel": 1, "datasets": 1,
    "models": 2, "inference": 3, "evaluation": 4, "estimators": 5, "report": 6, "experiments": 7,
    "cli": 8,
}
ROOT = pathlib.Path(harmonium.__file__).parent


def _imports(path: pathlib.Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "lazy"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value  # harmonium._lazy.lazy("module", ...): a deferred import


def test_imports_go_only_downward():
    bad = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if len(rel.parts) == 1 and rel.stem in ("__init__", "__main__"):
            continue
        own = RANK[rel.parts[0].removesuffix(".py")]
        for mod in _imports(path):
            parts = mod.split(".")
            if parts[0] != "harmonium" or len(parts) < 2:
                continue
            if RANK[parts[1]] > own:
                bad.append(f"{rel} imports {mod}")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_kernels_import_only_numpy_math_numba():
    for path in (ROOT / "_kernels").rglob("*.py"):
        for mod in _imports(path):
            top = mod.split(".")[0]
            assert top in {"numpy", "math", "numba", "harmonium", "__future__"}, f"{path.name} imports {mod}"
            if top == "harmonium":
                assert mod.startswith("harmonium._kernels"), f"{path.name} imports {mod}"


def test_lazy_imports_are_read_as_imports(tmp_path):
    """The deferred imports of harmonium._lazy count for the layer rules (negative control: an upward one)."""
    f = tmp_path / "m.py"
    f.write_text('from harmonium._lazy import lazy\nx = lazy("harmonium.estimators.lda", "LDA")\n')
    assert "harmonium.estimators.lda" in set(_imports(f))


def test_import_harmonium_defers_numba_and_scipy_special():
    """``import harmonium`` and loading the Debian corpus load no numba (about 125 MB resident) and no
    scipy.special (issue 21): the estimators import their kernels on first use."""
    import subprocess
    import sys

    code = ("import sys, harmonium; from harmonium.datasets import load_debian; load_debian(n_docs=20); "
            "bad = [m for m in ('numba', 'llvmlite', 'scipy.special') if m in sys.modules]; print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(ROOT.parent))
    assert out.stdout.strip() == "", f"import harmonium pulled in {out.stdout.strip()}"
