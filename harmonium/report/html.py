"""One self-contained HTML report of a fitted model: ``write_report(model, "report.html")``.

Everything is inline -- CSS, the data (a JSON script element), the charts (SVG drawn here in
Python) and a small script for the interactive parts (topic selection, the relevance slider,
example documents) -- so the file works offline and loads nothing from the network. The numbers
come from :func:`harmonium.report.data.report_data`.
"""

from __future__ import annotations

import html
import json
import math
import os

from harmonium.io import atomic_write_bytes
from harmonium.report.data import report_data

__all__ = ["render_report", "write_report"]

_PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
            "#bab0ac"]

_CSS = """
*{box-sizing:border-box}body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;
background:#fafafa}header{background:#263238;color:#fff;padding:14px 24px}header h1{margin:0;font-size:1.35em}
header p{margin:4px 0 0;opacity:.85;font-size:.9em}nav{padding:6px 24px;background:#eceff1;font-size:.9em}
nav a{margin-right:14px;color:#263238}main{padding:10px 24px 40px}section{background:#fff;border:1px solid #ddd;
border-radius:6px;padding:12px 16px;margin:14px 0}h2{font-size:1.1em;margin:0 0 8px}.row{display:flex;flex-wrap:wrap;
gap:20px}.col{flex:1 1 380px;min-width:320px}.note{color:#666;font-size:.85em}table{border-collapse:collapse;
font-size:.88em}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #eee}th{background:#f3f3f3}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}.bar{height:10px;background:#4e79a7;display:inline-block;
vertical-align:middle}.bar.all{background:#cfd8dc}.barcell{width:170px}
svg text{font-size:11px;fill:#333}.topic-circle{cursor:pointer;fill-opacity:.55;stroke:#263238;
stroke-width:1}.topic-circle.selected{fill:#e15759;fill-opacity:.85;stroke-width:2}.controls{display:flex;gap:16px;
align-items:center;margin-bottom:8px;flex-wrap:wrap}.doc{border-left:3px solid #4e79a7;padding:4px 10px;margin:6px 0;
background:#f7f9fb}.doc .meta{font-size:.8em;color:#555}.chart{display:inline-block;margin:4px 10px 4px 0;
vertical-align:top}code{background:#eee;padding:0 3px;border-radius:3px}header code{background:#37474f;color:#fff}
"""

_JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var state = {topic: 0, lambda: 0.6};
  var sel = document.getElementById("topic-select");
  var slider = document.getElementById("lambda");
  var lamOut = document.getElementById("lambda-value");
  var tbody = document.querySelector("#topic-words tbody");
  var exBox = document.getElementById("example-docs");
  var title = document.getElementById("topic-title");
  function fmt(x, d) { return x.toFixed(d); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function renderWords() {
    var t = D.topics[state.topic], lam = state.lambda;
    var rows = t.words.map(function (w) {
      return {i: w[0], lp: w[1], lift: w[2], r: lam * w[1] + (1 - lam) * w[2]};
    });
    rows.sort(function (a, b) { return b.r - a.r || a.i - b.i; });
    rows = rows.slice(0, D.n_list);
    var maxp = 0;
    rows.forEach(function (r) { maxp = Math.max(maxp, Math.exp(r.lp), D.p_w[r.i]); });
    tbody.textContent = "";
    rows.forEach(function (r, j) {
      var tr = el("tr");
      tr.appendChild(el("td", "num", String(j + 1)));
      tr.appendChild(el("td", "term", D.vocabulary[r.i]));
      var bc = el("td", "barcell");
      var b1 = el("div", "bar all"); b1.style.width = (150 * D.p_w[r.i] / maxp) + "px";
      var b2 = el("div", "bar"); b2.style.width = (150 * Math.exp(r.lp) / maxp) + "px";
      b2.style.display = "block"; b1.style.display = "block";
      bc.appendChild(b2); bc.appendChild(b1); tr.appendChild(bc);
      tr.appendChild(el("td", "num", fmt(Math.exp(r.lp), 4)));
      tr.appendChild(el("td", "num", fmt(r.lift, 2)));
      tr.appendChild(el("td", "num", fmt(r.r, 3)));
      tbody.appendChild(tr);
    });
  }
  function renderExamples() {
    exBox.textContent = "";
    var ex = D.examples[state.topic];
    if (!ex) {
      exBox.appendChild(el("p", "note", "No corpus was given: run harmonium report MODEL --corpus CORPUS " +
                           "to see example documents."));
      return;
    }
    ex.forEach(function (d) {
      var box = el("div", "doc");
      var meta = el("div", "meta", d.doc + (d.label ? " \u00b7 " + d.label : "") + " \u00b7 " + d.n_tokens +
                    " tokens \u00b7 weight " + fmt(d.weight, 3));
      box.appendChild(meta);
      box.appendChild(el("div", "words", d.words.join(" ")));
      exBox.appendChild(box);
    });
  }
  function select(k) {
    state.topic = k;
    sel.value = String(k);
    var t = D.topics[k];
    title.textContent = (D.kind === "harmonium" ? "Hidden unit " : "Topic ") + k + " \u2014 " +
      fmt(100 * t.prevalence, 1) + "% of the corpus \u2014 " + t.top.join(", ");
    var circles = document.querySelectorAll(".topic-circle");
    for (var i = 0; i < circles.length; i++) {
      circles[i].classList.toggle("selected", Number(circles[i].getAttribute("data-topic")) === k);
    }
    renderWords();
    renderExamples();
  }
  D.topics.forEach(function (t) {
    var o = el("option", null,
               (D.kind === "harmonium" ? "unit " : "topic ") + t.id + ": " + t.top.slice(0, 3).join(" "));
    o.value = String(t.id);
    sel.appendChild(o);
  });
  sel.addEventListener("change", function () { select(Number(sel.value)); });
  slider.addEventListener("input", function () {
    state.lambda = Number(slider.value);
    lamOut.textContent = fmt(state.lambda, 2);
    renderWords();
  });
  var circles = document.querySelectorAll(".topic-circle");
  for (var i = 0; i < circles.length; i++) {
    circles[i].addEventListener("click", function (ev) {
      select(Number(ev.currentTarget.getAttribute("data-topic")));
    });
  }
  state.lambda = Number(slider.value);
  lamOut.textContent = fmt(state.lambda, 2);
  select(0);
  document.body.setAttribute("data-ready", "1");
})();
"""


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _num(x, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "&ndash;"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}"


def _map_svg(data: dict, size: int = 420) -> str:
    coords = data["coords"]
    prev = [t["prevalence"] for t in data["topics"]]
    xs = [c[0] for c in coords]
    ys = [c[1] for c in coords]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    pad = 40
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    scale = (size - 2 * pad) / span
    rmax = 34 if len(prev) <= 20 else 22
    out = [f'<svg id="topic-map" width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img" '
           f'aria-label="intertopic distance map">',
           f'<rect x="0" y="0" width="{size}" height="{size}" fill="#fff" stroke="#ddd"/>',
           f'<line x1="{size / 2}" y1="0" x2="{size / 2}" y2="{size}" stroke="#eee"/>',
           f'<line x1="0" y1="{size / 2}" x2="{size}" y2="{size / 2}" stroke="#eee"/>']
    order = sorted(range(len(prev)), key=lambda k: -prev[k])  # big circles first, small ones clickable on top
    for k in order:
        x = size / 2 + (coords[k][0] - cx) * scale
        y = size / 2 - (coords[k][1] - cy) * scale
        r = max(4.0, rmax * math.sqrt(prev[k] / max(prev)))
        out.append(f'<circle class="topic-circle" data-topic="{k}" cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" '
                   f'fill="{_PALETTE[0]}"><title>topic {k}: {_e(", ".join(data["topics"][k]["top"]))} '
                   f'({100 * prev[k]:.1f}%)</title></circle>')
        out.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" pointer-events="none">{k}</text>')
    out.append(f'<text x="6" y="{size - 6}">MDS 1 (Jensen-Shannon)</text>')
    out.append("</svg>")
    return "".join(out)


def _prevalence_svg(data: dict) -> str:
    topics = sorted(data["topics"], key=lambda t: -t["prevalence"])
    h_row, w_bar, left = 18, 320, 60
    height = h_row * len(topics) + 10
    top = max(t["prevalence"] for t in topics) or 1.0
    out = [f'<svg id="prevalence-chart" width="{left + w_bar + 360}" height="{height}" role="img" '
           f'aria-label="topic prevalence">']
    for i, t in enumerate(topics):
        y = 5 + i * h_row
        w = w_bar * t["prevalence"] / top
        out.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">{t["id"]}</text>')
        out.append(f'<rect class="prevalence-bar" data-topic="{t["id"]}" x="{left}" y="{y + 2}" width="{w:.1f}" '
                   f'height="{h_row - 5}" fill="{_PALETTE[0]}"/>')
        out.append(f'<text x="{left + w + 6:.1f}" y="{y + 12}">{100 * t["prevalence"]:.1f}% '
                   f'{_e(" ".join(t["top"][:4]))}</text>')
    out.append("</svg>")
    return "".join(out)


def _line_svg(name: str, xs: list, ys: list, xlabel: str, w: int = 360, h: int = 190) -> str:
    pts = [(x, y) for x, y in zip(xs, ys, strict=False) if y is not None and math.isfinite(y)]
    out = [f'<svg class="trace-chart" data-series="{_e(name)}" width="{w}" height="{h}" role="img" '
           f'aria-label="trace of {_e(name)}">',
           f'<rect x="0" y="0" width="{w}" height="{h}" fill="#fff" stroke="#ddd"/>',
           f'<text x="8" y="14">{_e(name)}</text>']
    if len(pts) >= 1:
        x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
        y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
        if x1 == x0:
            x1 = x0 + 1
        if y1 == y0:
            y1, y0 = y0 + abs(y0) * 0.01 + 1e-9, y0 - abs(y0) * 0.01 - 1e-9
        L, R, T, B = 72, 10, 22, 28

        def sx(x):
            return L + (x - x0) / (x1 - x0) * (w - L - R)

        def sy(y):
            return h - B - (y - y0) / (y1 - y0) * (h - T - B)
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        out.append(f'<polyline fill="none" stroke="{_PALETTE[0]}" stroke-width="1.5" points="{path}"/>')
        if len(pts) <= 40:
            out.extend(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2" fill="{_PALETTE[0]}"/>' for x, y in pts)
        out.append(f'<line x1="{L}" y1="{h - B}" x2="{w - R}" y2="{h - B}" stroke="#999"/>')
        out.append(f'<line x1="{L}" y1="{T}" x2="{L}" y2="{h - B}" stroke="#999"/>')
        out.append(f'<text x="{L - 4}" y="{T + 4}" text-anchor="end">{_num(y1)}</text>')
        out.append(f'<text x="{L - 4}" y="{h - B}" text-anchor="end">{_num(y0)}</text>')
        out.append(f'<text x="{L}" y="{h - 10}">{_num(x0)}</text>')
        out.append(f'<text x="{w - R}" y="{h - 10}" text-anchor="end">{_num(x1)} {_e(xlabel)}</text>')
    else:
        out.append(f'<text x="8" y="{h / 2}">no finite values</text>')
    out.append("</svg>")
    return "".join(out)


def _training(data: dict) -> str:
    tr = data["trace"]
    if not tr["series"]:
        return '<p class="note">The model file holds no training trace.</p>'
    charts = "".join(f'<div class="chart">{_line_svg(k, tr["xs"], v, tr["x"])}</div>' for k, v in tr["series"].items())
    rows = "".join(
        f'<tr><td>{_e(r["series"])}</td><td class="num">{r["n"]}</td><td class="num">{_num(r["last"], 6)}</td>'
        f'<td class="num">{_num(r["mean_second_half"], 6)}</td><td class="num">{_num(r["rhat"], 3)}</td>'
        f'<td class="num">{_num(r["ess_bulk"], 3)}</td></tr>' for r in data["diagnostics"])
    secs = tr.get("seconds")
    return (charts + '<table id="diagnostics"><thead><tr><th>series</th><th class="num">evaluations</th>'
            '<th class="num">last</th><th class="num">mean, 2nd half</th><th class="num">split R&#770;</th>'
            f'<th class="num">bulk ESS</th></tr></thead><tbody>{rows}</tbody></table>'
            '<p class="note">R&#770; and ESS: rank-normalised, of the second half of each recorded series split into '
            'two halves (Vehtari et al. 2021); the series are recorded every few iterations, so these diagnose the '
            'monitored statistic, not every parameter. R&#770; near 1 and a large ESS say the statistic has stopped '
            f'drifting.</p><p class="note">Training time: {_num(secs, 4)} s.</p>')


def _hidden(data: dict) -> str:
    if not data["hidden"]:
        return ""
    rows = "".join(
        f'<tr class="hidden-unit" data-unit="{u["id"]}"><td class="num">{u["id"]}</td><td class="num">'
        f'{u["norm"]:.3g}</td><td>' + ", ".join(f"{_e(w)} ({v:+.2f})" for w, v in u["positive"]) + "</td><td>"
        + ", ".join(f"{_e(w)} ({v:+.2f})" for w, v in u["negative"]) + "</td></tr>" for u in data["hidden"])
    return ('<section id="hidden-units"><h2>Hidden-unit word weights</h2><p class="note">The largest positive and '
            'negative weights W<sub>wk</sub> of each hidden unit on the word wing (a unit switched on raises the '
            'log-odds of its positive words); |W<sub>:k</sub>| is the column norm.</p><table id="hidden-weights">'
            '<thead><tr><th class="num">unit</th><th class="num">|W|</th><th>largest positive weights</th>'
            f'<th>largest negative weights</th></tr></thead><tbody>{rows}</tbody></table></section>')


def render_report(data: dict, *, title: str | None = None) -> str:
    """The HTML text of the report of ``data`` (from :func:`harmonium.report.data.report_data`)."""
    unit = "hidden unit" if data["kind"] == "harmonium" else "topic"
    title = title or f"harmonium report: {data['model']} ({data['n_topics']} {unit}s)"
    params = ", ".join(f"{k}={v}" for k, v in data["params"].items() if k not in ("checkpoint_path",))
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    topic_note = ("phi<sub>k</sub> = softmax(b + W<sub>:k</sub>): the word distribution of one draw when hidden unit k "
                  "alone is on" if data["kind"] == "harmonium" else "phi<sub>k</sub> = p(word | topic k)")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{_CSS}</style></head>
<body>
<header><h1>{_e(title)}</h1><p>{data['n_words']} words &middot; {data['n_topics']} {unit}s &middot;
iterations {_e(data.get('n_iter'))} &middot; <code>{_e(params)}</code></p></header>
<nav><a href="#topics">Topics</a><a href="#prevalence">Prevalence</a><a href="#examples">Example documents</a>
<a href="#training">Training</a>{'<a href="#hidden-units">Hidden units</a>' if data['hidden'] else ''}</nav>
<main>
<section id="topics"><h2>Topics and relevance</h2>
<div class="row"><div class="col" style="flex:0 0 440px"><h3 style="font-size:1em;margin:0 0 4px">Intertopic distance
map</h3>{_map_svg(data)}<p class="note">Jensen-Shannon distances between the {unit}s' word distributions, classical
multidimensional scaling to two dimensions; area proportional to prevalence. Click a circle.</p></div>
<div class="col"><div class="controls"><label>{unit.capitalize()} <select id="topic-select"></select></label>
<label>relevance &lambda; = <span id="lambda-value">0.60</span>
<input id="lambda" type="range" min="0" max="1" step="{data['lambda_step']}" value="0.6"></label></div>
<h3 id="topic-title" style="font-size:1em;margin:4px 0"></h3>
<table id="topic-words"><thead><tr><th class="num">#</th><th>word</th><th>p(w|k) (blue) vs p(w) (grey)</th>
<th class="num">p(w|k)</th><th class="num">log lift</th><th class="num">relevance</th></tr></thead><tbody></tbody>
</table><p class="note">Relevance = &lambda; log p(w|k) + (1 &minus; &lambda;) log(p(w|k) / p(w)) (Sievert &amp; Shirley
2014); &lambda; = 1 ranks by probability, &lambda; = 0 by lift. {topic_note}. Word frequencies p(w) from the
{_e(data['word_freq_source'])}.</p></div></div></section>
<section id="prevalence"><h2>Topic prevalence</h2>{_prevalence_svg(data)}
<p class="note">Share of the corpus: {_e(data['prevalence_source'])}.</p></section>
<section id="examples"><h2>Example documents</h2><p class="note">The documents with the largest weight on the selected
{unit} (theta<sub>dk</sub>{', E[h<sub>k</sub> | x<sub>d</sub>]' if data['kind'] == 'harmonium' else ''}) among
{data['n_example_docs']} documents, with their most frequent words.</p><div id="example-docs"></div></section>
<section id="training"><h2>Training traces and diagnostics</h2>{_training(data)}</section>
{_hidden(data)}
</main>
<script type="application/json" id="report-data">{payload}</script>
<script>{_JS}</script>
</body></html>
"""


def write_report(model, path, corpus=None, *, n_words: int = 30, lambda_step: float = 0.01, n_examples: int = 5,
                 max_example_docs: int = 20000, title: str | None = None):
    """Write the self-contained HTML report of ``model`` to ``path`` (atomically); returns the path.

    Parameters are those of :func:`harmonium.report.data.report_data`.
    """
    data = report_data(model, corpus, n_words=n_words, lambda_step=lambda_step, n_examples=n_examples,
                       max_example_docs=max_example_docs)
    atomic_write_bytes(path, render_report(data, title=title).encode("utf-8"))
    return os.fspath(path)
