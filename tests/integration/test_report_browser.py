"""The HTML report in a real browser: headless chromium loads it offline, with no console errors.

Chromium is driven by the DevTools protocol over a pipe (``tests/integration/_chromium.py``, no
Python package needed). The test checks that the page raised nothing and logged no error, that
it requested nothing but itself, that the expected elements are present, that the relevance
slider and the map re-rank and select exactly as :func:`harmonium.report.data.report_data`
says, and takes a screenshot (kept in ``$HARMONIUM_SCREENSHOT_DIR`` when set). A page with a
deliberate script error is the negative control: the same checks must report it.
Skipped only when no chromium executable is found (CI installs Debian's ``chromium``).
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from harmonium.estimators import LDA
from harmonium.estimators.efh import ReplicatedSoftmax
from harmonium.report.data import report_data
from harmonium.report.html import write_report
from tests.conftest import lda_corpus
from tests.integration._chromium import Browser, find_chromium

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium executable found (apt-get install chromium, "
                                                          "or set HARMONIUM_CHROMIUM)")
N_WORDS = 10


@pytest.fixture(scope="module")
def browser():
    with Browser(CHROMIUM) as b:
        for domain in ("Runtime", "Log", "Page", "Network"):
            b.call(f"{domain}.enable")
        b.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        yield b


def _open(browser, url):
    browser.events.clear()
    browser.call("Page.navigate", url=url)
    browser.wait_for_event("Page.loadEventFired")


def _words(browser):
    return browser.evaluate("Array.from(document.querySelectorAll('#topic-words tbody td.term'))"
                            ".map(function (e) { return e.textContent; })")


def _expected(data, k, lam):
    t = data["topics"][k]
    rows = sorted(t["words"], key=lambda w: (-(lam * w[1] + (1 - lam) * w[2]), w[0]))
    return [data["vocabulary"][w[0]] for w in rows[:data["n_list"]]]


@pytest.fixture(scope="module")
def models():
    corpus, _, _ = lda_corpus(seed=7, n_topics=4, n_words=60, n_docs=160, doc_length=30)
    lda = LDA(4, n_iter=40, random_state=0).fit(corpus)
    rsm = ReplicatedSoftmax(5, n_iter=4, random_state=0).fit(corpus)
    return corpus, {"lda": lda, "rsm": rsm}


@pytest.mark.parametrize("which", ["lda", "rsm"])
def test_report_in_headless_chromium(browser, models, which, tmp_path):
    corpus, ms = models
    model = ms[which]
    path = tmp_path / f"report-{which}.html"
    write_report(model, path, corpus, n_words=N_WORDS, n_examples=3)
    data = report_data(model, corpus, n_words=N_WORDS, n_examples=3)
    url = path.resolve().as_uri()
    _open(browser, url)

    assert browser.evaluate("document.body.getAttribute('data-ready')") == "1"
    K = data["n_topics"]
    counts = browser.evaluate("""({
        circles: document.querySelectorAll('#topic-map .topic-circle').length,
        options: document.querySelectorAll('#topic-select option').length,
        rows: document.querySelectorAll('#topic-words tbody tr').length,
        bars: document.querySelectorAll('#prevalence-chart .prevalence-bar').length,
        docs: document.querySelectorAll('#example-docs .doc').length,
        traces: document.querySelectorAll('#training svg.trace-chart').length,
        diag: document.querySelectorAll('#diagnostics tbody tr').length,
        hidden: document.querySelectorAll('#hidden-weights tbody tr').length
    })""")
    assert counts["circles"] == K and counts["options"] == K and counts["bars"] == K
    assert counts["rows"] == N_WORDS and counts["docs"] == 3
    assert counts["traces"] >= 1 and counts["diag"] == len(data["diagnostics"])
    assert counts["hidden"] == (K if which == "rsm" else 0)

    # the slider re-ranks exactly as the relevance formula on the embedded data says
    assert _words(browser) == _expected(data, 0, 0.6)
    for lam in ("0", "1"):
        browser.evaluate(f"var s = document.getElementById('lambda'); s.value = '{lam}';"
                         "s.dispatchEvent(new Event('input'));")
        assert _words(browser) == _expected(data, 0, float(lam))
        assert browser.evaluate("document.getElementById('lambda-value').textContent") == f"{float(lam):.2f}"
    # clicking a circle on the map selects its topic: title, selector, word list, example documents
    k = K - 1
    browser.evaluate(f"document.querySelector('.topic-circle[data-topic=\"{k}\"]')"
                     ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    assert browser.evaluate("document.getElementById('topic-select').value") == str(k)
    assert browser.evaluate(f"document.querySelector('.topic-circle[data-topic=\"{k}\"]')"
                            ".classList.contains('selected')")
    assert _words(browser) == _expected(data, k, 1.0)
    shown = browser.evaluate("Array.from(document.querySelectorAll('#example-docs .doc .meta'))"
                             ".map(function (e) { return e.textContent.split(' \\u00b7 ')[0]; })")
    assert shown == [e["doc"] for e in data["examples"][k]]

    shot = tmp_path / f"report-{which}.png"
    browser.screenshot(shot)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    keep = os.environ.get("HARMONIUM_SCREENSHOT_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(shot, keep)

    assert browser.errors() == []
    assert browser.requested_urls() == [url]  # offline: nothing but the page itself


def test_the_checks_see_a_broken_page(browser, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><body><div id="x"></div><img src="https://cdn.invalid/a.png">'
                    '<script>console.error("boom"); undefinedFunction();</script></body></html>')
    _open(browser, page.resolve().as_uri())
    errs = browser.errors()
    assert any("boom" in e for e in errs) and any("undefinedFunction" in e for e in errs)
    assert any(u.startswith("https://") for u in browser.requested_urls())
    assert np.isfinite(browser.evaluate("document.querySelectorAll('#x').length"))
