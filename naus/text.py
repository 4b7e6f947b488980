"""Normalise raw English text to the Gigaword convention of Rush et al. (2015).

Lower case, Penn-Treebank tokens (NLTK's Treebank tokenizer, which needs no data files), brackets as -lrb-/-rrb-, every digit as `#`.
Training data, search input and `naus summarize` all pass through `normalize`, so a model
never sees text tokenised differently from what it was trained on.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import re
import sys
import types
import unicodedata

_BRACKETS = {"(": "-lrb-", ")": "-rrb-", "[": "-lsb-", "]": "-rsb-", "{": "-lcb-", "}": "-rcb-"}
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "--"})
_DIGIT = re.compile(r"\d")


@contextlib.contextmanager
def nltk_parts(*packages: str):
    """Imports of NLTK's modules in `packages` (and of what imports them) without the packages' `__init__`:
    NLTK's imports scikit-learn and SciPy where they are installed, 1.2 s that every evaluation job would pay
    for a stemmer. NLTK's modules loaded here leave `sys.modules` after, so a later `import nltk` is whole."""
    if "nltk" in sys.modules:
        yield
        return
    roots = importlib.util.find_spec("nltk").submodule_search_locations
    before = set(sys.modules)
    for package in ("nltk", *packages):
        stub = sys.modules[package] = types.ModuleType(package)
        stub.__path__ = [os.path.join(root, *package.split(".")[1:]) for root in roots]
    try:
        yield
    finally:
        for name in set(sys.modules) - before:
            if name.split(".")[0] == "nltk":
                del sys.modules[name]


@functools.lru_cache(maxsize=1)
def _tokenizer():
    """NLTK's Treebank tokenizer, imported on first use: most commands (the pipeline's decoding of tokenised
    text among them) never normalise raw text."""
    with nltk_parts("nltk.tokenize"):
        from nltk.tokenize.treebank import TreebankWordTokenizer

    return TreebankWordTokenizer()


def normalize(text: str) -> str:
    """Return `text` as one line of lowercased PTB tokens with digits as `#`."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = " ".join(text.split())
    if not text:
        return ""
    tokens = _tokenizer().tokenize(text)
    tokens = [_BRACKETS.get(tok, tok) for tok in tokens]
    return _DIGIT.sub("#", " ".join(tokens).lower())


def gigaword_line(line: str) -> str:
    """Clean one line of an already-tokenised Rush-format file: `<unk>` becomes `UNK`."""
    return " ".join("UNK" if tok == "<unk>" else tok for tok in line.split())


def mask_digits(line: str) -> str:
    """Digits as `#`, the Gigaword convention the LM and the students were trained in (DUC2004 keeps digits)."""
    return _DIGIT.sub("#", line)


def restore_digits(summary: str, source: str) -> str:
    """Undo `mask_digits` in a summary: each masked word takes the digits of the next unused source
    word with the same mask, in order, as the summary's words come from the source."""
    pool = source.split()
    used = [False] * len(pool)
    words = []
    for word in summary.split():
        if "#" in word:
            for i, original in enumerate(pool):
                if not used[i] and mask_digits(original) == word and original != word:
                    used[i] = True
                    word = original
                    break
        words.append(word)
    return " ".join(words)
