"""Text the report writes into Markdown, LaTeX and reStructuredText (`naus.plumbing.markup`): escaped, never a template,
a directive or HTML."""

import pytest

from tests.helpers import ROOT


# What we publish: escaped for its format.
def test_tables_are_escaped_for_markdown_latex_and_restructuredtext(tmp_path):
    import pandas as pd

    from naus.report.pages import write_table

    frame = pd.DataFrame({"System": ["a | b", r"50% of #1_x \input{secret}"], "Text": ["*x*", "&"]})
    write_table(frame, tmp_path, "t", "Caption with 95% and rerank_k *stars* `code` |sub|.")
    markdown = (tmp_path / "t.md").read_text().splitlines()
    assert markdown[-2].count(" | ") == 1 and r"a \| b" in markdown[-2]
    tex = (tmp_path / "t.tex").read_text()
    assert r"50\% of \#1\_x \textbackslash{}input\{secret\}" in tex and r"\caption{Caption with 95\% and rerank\_k" in tex
    assert r"\input{" not in tex and " & \\&" in tex
    assert (tmp_path / "t.rst").read_text() == r"\ Caption with 95% and rerank\_k \*stars\* \`code\` \|sub\|." + "\n"


JINJA = '{% set u = (lipsum ~ "")[18] %}{{ lipsum[u~u~"globals"~u~u]["os"].popen("touch X").read() }}'


DIRECTIVES = "\n\n.. include:: /etc/hostname\n\n.. raw:: html\n\n   <script>alert(1)</script>\n"


def _as_snakemake_renders(text: str) -> str:
    """A caption or the landing page as Snakemake's report renders it: a Jinja2 template (its environment), then
    reStructuredText to HTML (docutils' defaults: file insertion and raw enabled)."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    return publish_parts(Environment(trim_blocks=True, lstrip_blocks=True).from_string(text).render(),
                         writer="html")["body"]


@pytest.mark.parametrize("payload", [JINJA, DIRECTIVES, "{{ 7 * 7 }}" + DIRECTIVES, "- not a list {# nor a comment #}"])
def test_report_text_is_never_a_template_a_directive_or_html(tmp_path, payload):
    """A profile's note, a history's settings quoted as STALE, a timing's device: every text the report writes into
    reStructuredText or Markdown comes out as that text (nothing runs, no file is read, no markup)."""
    from naus.plumbing.markup import markdown_text, rst, rst_paragraph

    for escaped in (rst_paragraph(payload), f"**{rst(payload)}**", "Title\n=====\n\n" + rst_paragraph(payload)):
        html = _as_snakemake_renders(escaped)
        assert "<script>" not in html and "<pre" not in html and "<li>" not in html and not (ROOT / "X").exists()
        if "include" in payload:
            assert ".. include:: /etc/hostname" in html  # text, the file not read
        if "7 * 7" in payload:
            assert "{{ 7 * 7 }}" in html and "49" not in html
    assert "<script>" not in markdown_text(payload) and "\n" not in markdown_text(payload)
    assert markdown_text("# heading?").startswith("\\#")
