"""Normalise raw English text to the Gigaword convention of Rush et al. (2015).

Lower case, Penn-Treebank tokens (NLTK's Treebank tokenizer, which needs no data files), brackets as -lrb-/-rrb-,
every digit as `#`.
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

from naus import NausError

_BRACKETS = {"(": "-lrb-", ")": "-rrb-", "[": "-lsb-", "]": "-rsb-", "{": "-lcb-", "}": "-rcb-"}
_BRACKET_TOKENS = frozenset(_BRACKETS.values())
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "--"})
_DIGIT = re.compile(r"\d")
# Treebank's pieces of a word a reader reads as part of the word before it (`do n't`, `John 's`, `workers '`).
CLITICS = frozenset({"n't", "'s", "'re", "'ll", "'d", "'m", "'ve", "'"})
# Where one sentence of a line ends and the next starts: `.`, `!` or `?` (closing quotes or brackets after it),
# then a space and a capital or a digit; not after an abbreviation (`Mr.`, `U.S.`, a single letter).
_SENTENCE_END = re.compile(r"(?<=[.!?])([\"')\]]*)\s+(?=[\"'(\[]*[A-Z0-9])")
_ABBREVIATION = re.compile(r"(?:[A-Za-z]\.)+|(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Gen|Sen|Rep|Gov|Lt|Col|Sgt|Capt|Adm|Maj|"
                           r"Inc|Co|Corp|Ltd|Bros|No|vs|Jan|Feb|Mar|Apr|Aug|Sept?|Oct|Nov|Dec|Mt|Ft|Ave)\.")


@contextlib.contextmanager
def nltk_parts(*packages: str):
    """Imports of NLTK's modules in `packages` (and of what imports them) without the packages' `__init__`:
    NLTK's imports scikit-learn and SciPy where they are installed, seconds that every evaluation job would
    pay for a stemmer. NLTK's modules loaded here leave `sys.modules` after, so a later `import nltk` is whole."""
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


@functools.lru_cache(maxsize=1)
def _detokenizer():
    with nltk_parts("nltk.tokenize"):
        from nltk.tokenize.treebank import TreebankWordDetokenizer

    return TreebankWordDetokenizer()


def sentences(text: str) -> list[str]:
    """A line's sentences: Treebank's tokenizer splits the full stop off the end of its input only, so each
    sentence is tokenised on its own (`march.` would be a word no student has seen)."""
    pieces, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        last = text[max(start, text.rfind(" ", start, end.start()) + 1) : end.start()]  # the word it ends
        if _ABBREVIATION.fullmatch(last):
            continue
        pieces.append(text[start : end.end(1)])
        start = end.end()
    return [*pieces, text[start:]]


def source_tokens(text: str, one_sentence: bool = False) -> list[str]:
    """Raw text's PTB tokens as written (case, digits and brackets kept): `normalize`'s tokens, one for one.
    `one_sentence` (a headline) tokenises the text whole: split into sentences, `Ky. company` would end one at `.`."""
    text = " ".join(unicodedata.normalize("NFKC", text).translate(_QUOTES).split())
    if not text:
        return []
    return [token for sentence in ([text] if one_sentence else sentences(text))
            for token in _tokenizer().tokenize(sentence)]


def normal_token(token: str) -> str:
    """A token in the Gigaword convention: lower case, brackets as -lrb- and the like, digits as `#`."""
    return _DIGIT.sub("#", _BRACKETS.get(token, token).lower())


# What raw text may not carry into a summary, a file or a terminal: control characters (C0 but tab, a newline
# within a sentence given to the API included; DEL; C1), each read as a space, and the format characters that change
# what a page or terminal shows (bidirectional overrides and isolates, zero-width characters, the byte order mark,
# the soft hyphen, tags), dropped.
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_SCORED = re.compile(r"[a-z0-9]")  # what ROUGE's tokenizer keeps of a lower-cased text (rouge-score's)


@functools.cache
def _format_characters() -> re.Pattern:
    """Every Unicode format character (category Cf), as one character class."""
    found = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    return re.compile("[" + "".join(re.escape(ch) for ch in found) + "]")


def clean(text: str) -> str:
    """Raw text as naus reads it, wherever it enters (a file's lines, standard input, the Python API): controls as
    spaces and format characters gone (`_CONTROLS`). A lone surrogate (no character) is refused."""
    if text.isascii():
        return _CONTROLS.sub(" ", text) if not text.isprintable() else text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise NausError(f"a lone surrogate U+{ord(text[err.start]):04X} at character {err.start + 1}, no "
                        "character: give text") from None
    return _format_characters().sub("", _CONTROLS.sub(" ", text))


def scorable(reference: str) -> bool:
    """Whether ROUGE finds a word in a reference to score a summary against (a letter or digit of ASCII)."""
    return _SCORED.search(reference.lower()) is not None


def check_references(lines: list[str], name: object) -> list[str]:
    """Reference summaries (of file `name`), refused at their first empty line or line with no word ROUGE scores
    (`scorable`): either would score every summary 0 there, silently."""
    for number, line in enumerate(lines, 1):
        if not line:
            raise NausError(f"{name}: line {number}: an empty reference")
        if not scorable(line):
            raise NausError(f"{name}: line {number}: a reference with no word to score ({line[:40]!r}): no letter "
                            "or digit")
    return lines


def normalize(text: str, one_sentence: bool = False) -> str:
    """Return `text` as one line of lowercased PTB tokens with digits as `#` (`source_tokens`)."""
    return " ".join(normal_token(token) for token in source_tokens(text, one_sentence))


def is_word(token: str) -> bool:
    """Whether a reader counts the token as a word: it holds a letter or a digit (`#`), and is neither
    punctuation alone (brackets, -lrb- and the like, included) nor a clitic (`n't`: part of the word before)."""
    return (token not in _BRACKET_TOKENS and token.lower() not in CLITICS
            and any(ch.isalnum() or ch == "#" for ch in token))


def copy_key(token: str) -> str:
    """A source token as a copy-head student's vocabulary holds it: its normal form, but a number as written,
    so that each number is a word of its own (`25` and `31` are not one `##`) and comes back as itself."""
    normal = normal_token(token)
    return token if "#" in normal and normal != token.lower() else normal


def hosts(tokens: list[str]) -> list[str]:
    """Each token as a headline writes it: a word with the clitics that follow it (`do` + `n't` is `don't`,
    detokenised), a number with the signs Treebank splits off it (`$` + `500` is `$500`, `30` + `%` is `30%`), the
    clitics and signs themselves empty (a headline never writes one alone)."""
    written = list(tokens)
    for k in range(len(tokens) - 1, 0, -1):
        if (tokens[k].lower() in CLITICS or tokens[k] in _AFTER_NUMBER and _is_number(tokens[k - 1])) \
                and written[k - 1] and tokens[k - 1].lower() not in CLITICS:
            written[k - 1], written[k] = _detokenizer().detokenize([tokens[k - 1], written[k]]), ""
    for k in range(len(tokens) - 1):
        if tokens[k] in _BEFORE_NUMBER and written[k + 1] and _is_number(tokens[k + 1]):
            written[k + 1], written[k] = _detokenizer().detokenize([tokens[k], written[k + 1]]), ""
    return written


_BEFORE_NUMBER, _AFTER_NUMBER = frozenset({"$"}), frozenset({"%"})  # the signs Treebank splits off a number


def _is_number(token: str) -> bool:
    return any(ch.isdigit() for ch in token)


def headline(summary: str, tokens: list[str], positions: list[int] | None = None) -> str:
    """A summary in the Gigaword convention written as a headline of its source (`tokens`: `source_tokens`):
    each word as the source wrote it (case, digits, brackets, its clitics: `hosts`), at its `positions` where the
    decoder gave them, else taken in order (the next unused position holding it, else any unused, else any: a
    word written twice), detokenised, a lower-case first word capitalised. A summary word is a normal form or a
    number as written (`copy_key`)."""
    written = hosts(tokens)
    words = [written[p] for p in positions if written[p]] if positions is not None else _as_written(summary, tokens,
                                                                                                    written)
    text = _detokenizer().detokenize(words)
    return text[:1].upper() + text[1:] if words and words[0].islower() else text


def _as_written(summary: str, tokens: list[str], written: list[str]) -> list[str]:
    """Each summary word as `written` at the source position `headline` takes it from."""
    keys = [(normal_token(t), copy_key(t)) for t in tokens]
    used, start, words = [False] * len(tokens), 0, []
    for word in summary.split():
        order = [*range(start, len(keys)), *range(start)]
        at = next((k for k in order if not used[k] and word in keys[k]), None)
        at = next((k for k in order if word in keys[k]), None) if at is None else at
        if at is None:
            words.append(word)
            continue
        used[at], start = True, at + 1
        if written[at]:
            words.append(written[at])
    return words


RUSH_UNKNOWN, GIGAWORD_UNKNOWN = "<unk>", "UNK"  # Rush et al.'s unknown word, and as the literature scores it


def gigaword_line(line: str, separator: str | None = None) -> str:
    """One line of an already-tokenised Rush-format file with `<unk>` as `UNK`, its tokens split on any white space
    (or on `separator` alone: `naus.data.derive` keeps a no-break space inside its token, as the test set does)."""
    return " ".join(GIGAWORD_UNKNOWN if tok == RUSH_UNKNOWN else tok for tok in line.split(separator))


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


# What an editor reads as a word that cannot end a headline or carry one alone: articles, prepositions,
# conjunctions, pronouns, auxiliaries (lower case; with the clitics, `CLITICS`).
FUNCTION_WORDS = frozenset("""a an the of to in on at by for from with as into onto over under about after before
between during against among through toward towards via per than and or but nor so yet if that which who whom whose
what when where while because though although whether this these those it its he she they them his her their we us
our you your i me my is are was were be been being has have had do does did will would shall should can could may
might must not no out""".split())
SCALES = frozenset({"hundred", "thousand", "million", "billion", "trillion"})  # words a number's value goes on in
NUMBER = re.compile(r"[\d#][\d#.,:/-]*")  # a number as Treebank or Gigaword writes it: 2.5, 1,200, 2-1, #.##
MAX_PHRASE = 4  # a longer name or quotation is not a phrase: whole it would fill most of a headline
HEAD = 3  # of a longer run of capitalised words (a title before a name), the name: its last words


def phrases(tokens: list[str]) -> list[tuple[int, int]]:
    """The spans [start, end) of `tokens` a headline keeps whole or not at all, left to right, none overlapping:
    a short quotation's words (between `` and ''), a number or range with the scale and unit words after it
    (`2.5 percent`, `4.2 billion`, `97 to 72`, `40 years`: the next word neither a function word nor a number), and
    a name (two to four capitalised words; of a longer run its last three). Every word of a span is a word a reader
    counts (`is_word`), so a sign Treebank splits off (`$`, `%`) ends one. Names need case: in lower-cased text
    (Gigaword), Title Case or capitals (a function word capitalised after the first) there are none. A hyphenated
    word is one token already."""
    words = [is_word(t) for t in tokens]
    cased = not any(t[:1].isupper() and t.lower() in FUNCTION_WORDS for t in tokens[1:])  # not Title Case, CAPITALS
    capital = [w and t[:1].isupper() and t.lower() not in FUNCTION_WORDS and cased for t, w in zip(tokens, words)]
    spans, k = [], 0
    while k < len(tokens):
        end = _quotation(tokens, words, k) or _quantity(tokens, words, k) or _run(capital, k)
        if end and end - k > 1:
            start = k if tokens[k] != "``" else k + 1
            spans.append((max(start, end - HEAD) if capital[start] and end - start > MAX_PHRASE else start, end))
        k = max(end or 0, k + 1)
    return [(start, end) for start, end in spans if 1 < end - start <= MAX_PHRASE]


def _quotation(tokens: list[str], words: list[bool], k: int) -> int | None:
    """The end of the quotation opening at `k` (its closing mark's index), if it holds only words."""
    if tokens[k] != "``":
        return None
    close = next((j for j in range(k + 1, min(len(tokens), k + MAX_PHRASE + 2)) if tokens[j] == "''"), None)
    return close if close is not None and all(words[k + 1 : close]) else None


def _quantity(tokens: list[str], words: list[bool], k: int) -> int | None:
    """The end of the number at `k` (or range, `97 to 72`) with its scale words and unit."""
    if not words[k] or not NUMBER.fullmatch(tokens[k]):
        return None
    end = k + 3 if k + 2 < len(tokens) and tokens[k + 1] == "to" and NUMBER.fullmatch(tokens[k + 2]) else k + 1
    while end < len(tokens) and tokens[end].lower() in SCALES:
        end += 1
    if (end < len(tokens) and words[end] and tokens[end].lower() not in FUNCTION_WORDS
            and not NUMBER.fullmatch(tokens[end]) and tokens[end][:1].isalpha()):
        end += 1
    return end


def _run(capital: list[bool], k: int) -> int | None:
    """The end of the run of capitalised words starting at `k`."""
    end = k
    while end < len(capital) and capital[end]:
        end += 1
    return end if end > k else None


def dangles(token: str) -> bool:
    """Whether a headline ending on `token` is left hanging: a function word or a clitic."""
    return token.lower() in FUNCTION_WORDS or token.lower() in CLITICS


def phrase_ties(tokens: list[str]) -> list[bool]:
    """For each position, whether the next must follow it in a summary: the decoder's form of `phrases`."""
    tied = [False] * len(tokens)
    for start, end in phrases(tokens):
        tied[start : end - 1] = [True] * (end - 1 - start)
    return tied
