"""Our text inside a format we publish, escaped for it: a source sentence, a system's name or a caption
is text in every one of them, never markup (Gigaword's `#` digits in LaTeX, a `|` in a Markdown row,
a caption's `rerank_k` in reStructuredText)."""

from __future__ import annotations

import re

LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
         "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex(text: str) -> str:
    return "".join(LATEX.get(char, char) for char in text)


def rst(text: str) -> str:
    """No inline markup, reference or substitution of the text's own."""
    return re.sub(r"([\\`*_|])", r"\\\1", text)


def markdown_cell(text: str) -> str:
    """A `|` of the text does not end the cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|")


ESCAPES = {".tex": latex, ".rst": rst, ".md": lambda text: text}  # a caption's text in each file the report writes
