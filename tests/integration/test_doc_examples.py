"""Every ```python block of README.md and docs/**/*.md runs, as written, on a small corpus.

Each block is executed alone in a fresh namespace (so it must be standalone: its own imports and
data) in a temporary working directory, with ``HARMONIUM_EXAMPLE_SCALE`` set so that
``load_debian`` reads only the first packages. A block that cannot run in CI is preceded by the
line ``<!-- example: skip: <reason> -->`` and reported as skipped with that reason.
The full-size runs are timed by benchmarks/doc_examples.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCALE = "400"
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
_SKIP = re.compile(r"<!--\s*example:\s*skip:\s*(.*?)\s*-->\s*$")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def python_blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(line number, code, skip reason or None) of each ```python block of ``path``."""
    text = path.read_text()
    out = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(before)
        out.append((line, m.group(1), skip.group(1) if skip else None))
    return out


CASES = [pytest.param(path, line, code, skip, id=f"{path.relative_to(ROOT)}:{line}")
         for path in doc_files() for line, code, skip in python_blocks(path)]


def test_the_docs_have_examples():
    names = {p.values[0].name for p in CASES}
    assert "README.md" in names and len(CASES) >= 10


def test_the_extractor_finds_blocks_and_skip_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n```python\nx = 1\n```\n<!-- example: skip: needs a cluster -->\n"
                    "```python\ny = 2\n```\n```bash\nls\n```\n")
    assert python_blocks(page) == [(2, "x = 1\n", None), (6, "y = 2\n", "needs a cluster")]


@pytest.mark.parametrize(("path", "line", "code", "skip"), CASES)
def test_doc_example_runs(path, line, code, skip, tmp_path, monkeypatch):
    if skip is not None:
        pytest.skip(f"{path.name}:{line} is marked in the text as not run in CI: {skip}")
    monkeypatch.setenv("HARMONIUM_EXAMPLE_SCALE", SCALE)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{path.name}:{line}", "exec"), {"__name__": "__doc_example__"})
