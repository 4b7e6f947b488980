"""Our text inside a format we publish, escaped for it: a source sentence, a system's name or a caption
is text in every one of them, never markup (Gigaword's `#` digits in LaTeX, a `|` in a Markdown row,
a caption's `rerank_k` in reStructuredText)."""

from __future__ import annotations

import re
import unicodedata

LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
         "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


# pdflatex reads ASCII: each character the tables write outside it as LaTeX spells it; any other letter as its
# base letter (é as e), and what has none as `?`, so that no input can stop a build
LATEX_SYMBOLS = {"±": r"$\pm$", "Δ": r"$\Delta$", "†": r"$^\dagger$", "‡": r"$^\ddagger$", "×": r"$\times$",
                 "–": "--", "—": "---", "§": r"\S{}", "¶": r"\P{}", "³": r"$^3$", "²": r"$^2$", "·": r"$\cdot$",
                 "→": r"$\rightarrow$", "≤": r"$\leq$", "≥": r"$\geq$", "’": "'", "‘": "`", "“": "``", "”": "''",
                 "\u00a0": "~", "…": r"\ldots{}", "ε": r"$\epsilon$", "γ": r"$\gamma$", "Γ": r"$\Gamma$"}


def latex(text: str) -> str:
    return "".join(LATEX.get(char) or LATEX_SYMBOLS.get(char) or (char if char.isascii() else _ascii(char))
                   for char in text)


def _ascii(char: str) -> str:
    return unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode() or "?"


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
