"""Mechanical readability: the faults an editor fixes in a headline without reading its article, counted.

Each fault is read off the summary and its source alone (no reference): a phrase the headline cuts (a number kept
without its unit, or its unit without it; part of a name; part of a short quotation: `naus.text.phrases`, the
spans the source-order decoder keeps whole), a last word that leaves the headline hanging (a function word or a
clitic), a content word said more often than the source says it, and words taken out of the source's order. A
summary word is matched to the source position it was copied from (`aligned`), as `naus.text.headline` writes it.
"""

from __future__ import annotations

from collections import Counter

from naus.text import FUNCTION_WORDS, NUMBER, copy_key, dangles, is_word, normal_token, phrases

NUMBER_CUT, NAME_CUT, QUOTATION_CUT = "cuts a number from its unit", "cuts a name", "cuts a quotation"
DANGLING, REPEAT, OUT_OF_ORDER = "ends on a function word", "repeats a word", "leaves the source's order"
FAULTS = (NUMBER_CUT, NAME_CUT, QUOTATION_CUT, DANGLING, REPEAT, OUT_OF_ORDER)


def aligned(summary: list[str], source: list[str]) -> list[int]:
    """Each summary word's source position (−1: none holds it). A summary that can be read off the source in order is
    aligned exactly: of the increasing positions holding its words, those with the most adjacent pairs, as a copied
    span is (`to raise` copied from `97 to 72 ... to raise` is the second `to`; `### million pounds` said twice is two
    whole spans, not a part of `### million dollars`). Otherwise (a word out of order or not there) each word takes the
    next unused position holding it, else the first anywhere. Words match in either form a summary writes them (the
    Gigaword convention's, or a number as written)."""
    keys = [(t, normal_token(t), copy_key(t)) for t in source]
    holding = [[k for k, key in enumerate(keys) if word in key] for word in summary]
    return _in_order(holding) or _greedy(holding, len(source))


def _in_order(holding: list[list[int]]) -> list[int] | None:
    """The increasing positions, one from each list, with the most adjacent pairs (the earliest of equals); None when
    there are none. A dynamic program over (word, position): a summary's dozen words over a sentence's few dozen."""
    best: list[dict[int, tuple[int, int | None]]] = []  # per word: position -> (adjacent pairs so far, previous)
    for i, positions in enumerate(holding):
        row = {}
        for k in positions:
            if i == 0:
                row[k] = (0, None)
                continue
            options = [(score + (k == j + 1), -j) for j, (score, _) in best[-1].items() if j < k]
            if options:
                score, previous = max(options)
                row[k] = (score, -previous)
        if not row:
            return None
        best.append(row)
    if not best:
        return []
    k = max(best[-1], key=lambda position: (best[-1][position][0], -position))
    found = []
    for row in reversed(best):
        found.append(k)
        k = row[k][1]
    return found[::-1]


def _greedy(holding: list[list[int]], n: int) -> list[int]:
    """Each word the next unused position holding it after the last match (else the first anywhere), unless a later
    one is followed by a position of the summary's next word."""
    used, start, found = [False] * n, 0, []
    for i, positions in enumerate(holding):
        free = [k for k in positions if not used[k]]
        order = [k for k in free if k >= start] + [k for k in free if k < start]
        following = set(holding[i + 1]) if i + 1 < len(holding) else set()
        at = next((k for k in order if k + 1 in following), order[0] if order else None)
        found.append(-1 if at is None else at)
        if at is not None:
            used[at], start = True, at + 1
    return found


def faults(summary: list[str], source: list[str]) -> set[str]:
    """The faults of one summary (its words) of a source (its tokens as written: case shows names)."""
    at = aligned(summary, source)
    kept, found = set(at) - {-1}, set()
    for start, end in phrases(source):
        inside = sum(k in kept for k in range(start, end))
        if 0 < inside < end - start:
            found.add(QUOTATION_CUT if start and source[start - 1] == "``"
                      else NUMBER_CUT if NUMBER.fullmatch(source[start]) else NAME_CUT)
    if summary and dangles(summary[-1]):
        found.add(DANGLING)
    said = Counter(w.lower() for w in summary if is_word(w) and w.lower() not in FUNCTION_WORDS)
    has = Counter(key for t in source for key in {t.lower(), normal_token(t), copy_key(t)})
    if any(n > has[w] for w, n in said.items() if n > 1):
        found.add(REPEAT)
    order = [k for k in at if k >= 0]
    if any(b <= a for a, b in zip(order, order[1:])):
        found.add(OUT_OF_ORDER)
    return found


def shares(summaries: list[list[str]], sources: list[list[str]]) -> dict[str, float]:
    """Per fault, the percentage of summaries that have it, and of those with any ("any fault")."""
    found = [faults(summary, source) for summary, source in zip(summaries, sources, strict=True)]
    n = max(1, len(found))
    return {**{kind: round(100 * sum(kind in f for f in found) / n, 1) for kind in FAULTS},
            "any fault": round(100 * sum(bool(f) for f in found) / n, 1)}
