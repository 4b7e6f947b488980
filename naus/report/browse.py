"""One static page holding every test sentence with every system's output and its ROUGE: pick two
systems and sort by their difference, filter by a word. Self-contained (data, script and style
inline), so it opens from `file://` with no server and no network. The page's state lives in its
address (`#a=1&b=2&sort=diff&q=word`), so a view can be shared, and tested in a headless browser."""

from __future__ import annotations

import html
import json
from pathlib import Path

from naus.plumbing.outputs import atomic_open

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font: 14px sans-serif; margin: 1em; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; }}
th {{ background: #eee; position: sticky; top: 0; }}
.score {{ color: #666; font-size: 12px; }} .picked {{ background: #f4f8ff; }} #controls > * {{ margin-right: 1em; }}
</style></head><body>
<h1>{title}</h1>
<p>{note}</p>
<div id="controls">
<label>A <select id="a"></select></label> <label>B <select id="b"></select></label>
<button id="sort">sort by A &minus; B</button> <button id="order">test-set order</button>
<input id="q" placeholder="filter by a word"> <span id="count"></span>
</div>
<table><thead id="head"></thead><tbody id="rows"></tbody></table>
<script type="application/json" id="data">{data}</script>
<script>
const data = JSON.parse(document.getElementById("data").textContent);
const $ = (id) => document.getElementById(id);
const esc = (s) => s.replace(/[&<>"]/g, (c) => ({{"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}})[c]);
function state() {{
  const s = {{a: 0, b: Math.min(1, data.systems.length - 1), sort: "index", q: ""}};
  for (const part of location.hash.slice(1).split("&")) {{
    const [k, v] = part.split("=");
    if (k in s) s[k] = k === "q" || k === "sort" ? decodeURIComponent(v || "") : Number(v);
  }}
  return s;
}}
function render() {{
  const s = state();
  $("a").value = s.a; $("b").value = s.b; $("q").value = s.q;
  const word = s.q.trim().toLowerCase();
  let rows = data.rows.filter((r) => !word
    || [r[1], r[2], ...r[3]].some((t) => t.toLowerCase().split(/\\s+/).includes(word)));
  if (s.sort === "diff") rows = rows.slice().sort((x, y) =>
    (y[4][s.a] - y[4][s.b]) - (x[4][s.a] - x[4][s.b]) || x[0] - y[0]);
  $("head").innerHTML = "<tr><th>#</th><th>source</th><th>reference</th>" + data.systems.map((name, i) =>
    `<th class="${{i === s.a || i === s.b ? "picked" : ""}}">${{esc(name)}}</th>`).join("") +
    "<th>A &minus; B</th></tr>";
  $("rows").innerHTML = rows.map((r) => `<tr class="row" data-index="${{r[0]}}"><td>${{r[0]}}</td>` +
    `<td>${{esc(r[1])}}</td><td>${{esc(r[2])}}</td>` +
    r[3].map((t, i) => `<td class="${{i === s.a || i === s.b ? "picked" : ""}}">${{esc(t)}} ` +
    `<span class="score">${{r[4][i].toFixed(1)}}</span></td>`).join("") +
    `<td>${{(r[4][s.a] - r[4][s.b]).toFixed(1)}}</td></tr>`).join("");
  $("count").textContent = `${{rows.length}} of ${{data.rows.length}} sentences`;
}}
function go(change) {{
  const s = Object.assign(state(), change);
  location.hash = `a=${{s.a}}&b=${{s.b}}&sort=${{s.sort}}&q=${{encodeURIComponent(s.q)}}`;
}}
for (const id of ["a", "b"]) {{
  $(id).innerHTML = data.systems.map((name, i) => `<option value="${{i}}">${{esc(name)}}</option>`).join("");
  $(id).onchange = () => go({{[id]: Number($(id).value)}});
}}
$("sort").onclick = () => go({{sort: "diff"}});
$("order").onclick = () => go({{sort: "index"}});
$("q").onchange = () => go({{q: $("q").value}});
window.onhashchange = render;
render();
</script></body></html>
"""


def write_browser(out: Path, title: str, note: str, sources: list[str], references: list[str],
                  systems: dict[str, tuple[list[str], list[float]]]) -> None:
    """The page for `systems` ({label: (one output per sentence, its score per sentence)}), aligned
    with `sources` and `references` line by line (sentence numbers from 1)."""
    for label, (outputs, scores) in systems.items():
        if not len(outputs) == len(scores) == len(sources) == len(references):
            raise ValueError(f"{label}: {len(outputs)} outputs and {len(scores)} scores for {len(sources)} sentences")
    rows = [[i + 1, source, reference, [outputs[i] for outputs, _ in systems.values()],
             [round(float(scores[i]), 1) for _, scores in systems.values()]]
            for i, (source, reference) in enumerate(zip(sources, references))]
    data = json.dumps({"systems": list(systems), "rows": rows}, ensure_ascii=False, separators=(",", ":"))
    # no `<` in the script element: `</script>` and `<!--` in a text end or hide nothing
    with atomic_open(out) as handle:
        handle.write(PAGE.format(title=html.escape(title), note=html.escape(note), data=data.replace("<", "\\u003c")))
