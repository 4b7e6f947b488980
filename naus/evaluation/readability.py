"""Mechanical readability: the faults an editor fixes in a headline without reading its article, counted.

Each fault is read off the summary and its source alone (no reference): a phrase the headline cuts (a number kept
without its unit, or its unit without it; part of a name; part of a short quotation: `naus.text.phrases`, the
spans the source-order decoder keeps whole), a last word that leaves the headline hanging (a function word or a
clitic), a content word said more often than the source says it, and words taken out of the source's order. A
summary word is matched to the source position it was copied from: the next unused one holding it, as
`naus.text.headline` writes it.
"""

from __future__ import annotations

from collections import Counter

from naus.text import FUNCTION_WORDS, NUMBER, copy_key, dangles, is_word, normal_token, phrases

NUMBER_CUT, NAME_CUT, QUOTATION_CUT = "cuts a number from its unit", "cuts a name", "cuts a quotation"
DANGLING, REPEAT, OUT_OF_ORDER = "ends on a function word", "repeats a word", "leaves the source's order"
FAULTS = (NUMBER_CUT, NAME_CUT, QUOTATION_CUT, DANGLING, REPEAT, OUT_OF_ORDER)


def aligned(summary: list[str], source: list[str]) -> list[int]:
    """Each summary word's source position (−1: none holds it): of the unused positions holding it, the next after
    the last match (else the first anywhere), unless a later one is followed by the summary's next word, as a copied
    span is (`to raise` copied from `97 to 72 ... to raise` is the second `to`). Words match in either form a summary
    writes them (the Gigaword convention's, or a number as written)."""
    keys = [(t, normal_token(t), copy_key(t)) for t in source]
    used, start, found = [False] * len(source), 0, []
    for i, word in enumerate(summary):
        order = [k for k in [*range(start, len(source)), *range(start)] if not used[k] and word in keys[k]]
        following = summary[i + 1] if i + 1 < len(summary) else None
        at = next((k for k in order if k + 1 < len(source) and following in keys[k + 1]), None) if following \
            else None
        at = at if at is not None else (order[0] if order else None)
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
