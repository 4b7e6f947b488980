"""Our text inside a format we publish, escaped for it: a source sentence, a system's name or a caption
is text in every one of them, never markup (Gigaword's `#` digits in LaTeX, a `|` in a Markdown row,
a caption's `rerank_k` in reStructuredText)."""

from __future__ import annotations

import re

LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
         "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex(text: str) -> str:
    return "".join(LATEX.get(char, char) for char in text)


# Snakemake's report renders every caption and its landing page as a Jinja2 template before reStructuredText:
# each brace of our text is written by an expression, so none of it is Jinja2 of its own
JINJA_BRACES = {"{": '{{ "{" }}', "}": '{{ "}" }}'}


def rst(text: str) -> str:
    """Text inside a reStructuredText line: no inline markup, reference or substitution of its own, no Jinja2,
    and no line break (a new line could start a directive, `.. include::` or `.. raw::`)."""
    escaped = re.sub(r"([\\`*_|])", r"\\\1", " ".join(text.split()))
    return "".join(JINJA_BRACES.get(char, char) for char in escaped)


def rst_paragraph(text: str) -> str:
    """Text as a paragraph of its own: what it starts with (`..`, `-`, `1.`, `>>>`) starts no block (an escaped
    space, which reStructuredText drops, comes first)."""
    return "\\ " + rst(text) if text.strip() else ""


def markdown_text(text: str) -> str:
    """Text as one Markdown paragraph: no line break, no HTML (a `<` is written as its entity), and what it starts
    with (`#`, `>`, `-`, `1.`) starts no block."""
    text = " ".join(text.split()).replace("<", "&lt;")
    return "\\" + text if text[:1] in ("#", ">", "-", "+", "*", "=") or re.match(r"\d+[.)] ", text) else text


def markdown_cell(text: str) -> str:
    """A `|` of the text does not end the cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|")


ESCAPES = {".tex": latex, ".rst": rst, ".md": markdown_text}  # a caption's text in each file the report writes
