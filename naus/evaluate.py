"""ROUGE as the field reports it: rouge-score with stemming, both sides lowercased.

Gigaword: F1 against one reference. DUC2004: recall of the output cut to 75 bytes (on a
UTF-8 character boundary), averaged over the references. Scores are percentages.
"""

from __future__ import annotations

import functools
from pathlib import Path

from naus import NausError
from naus.files import read_lines

METRICS = ("rouge1", "rouge2", "rougeL")


@functools.lru_cache(maxsize=1)
def _scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(METRICS), use_stemmer=True)


def truncate_bytes(text: str, max_bytes: int) -> str:
    """The longest prefix of `text` whose UTF-8 encoding fits in `max_bytes`."""
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


def rouge(
    hypotheses: list[str], references: list[list[str]], metric: str = "f1", max_bytes: int | None = None
) -> dict[str, float]:
    """Corpus ROUGE: the mean over samples of each sample's (reference-averaged) score."""
    if metric not in ("f1", "recall"):
        raise NausError(f"metric must be f1 or recall, got {metric!r}")
    for k, refs in enumerate(references):
        if len(refs) != len(hypotheses):
            raise NausError(f"{len(hypotheses)} hypotheses but {len(refs)} references in reference set {k + 1}")
    if not hypotheses:
        raise NausError("no hypotheses to evaluate")
    field = "fmeasure" if metric == "f1" else "recall"
    totals = dict.fromkeys(METRICS, 0.0)
    empty = 0
    for i, hyp in enumerate(hypotheses):
        hyp = hyp.lower()
        if max_bytes is not None:
            hyp = truncate_bytes(hyp, max_bytes)
        if not hyp.strip():
            empty += 1
            continue
        for refs in references:
            scores = _scorer().score(refs[i].lower(), hyp)
            for name in METRICS:
                totals[name] += getattr(scores[name], field) / len(references)
    n = len(hypotheses)
    result = {name: round(100 * totals[name] / n, 2) for name in METRICS}
    result["avg_words"] = round(sum(len(h.split()) for h in hypotheses) / n, 2)
    result["n"] = n
    result["empty"] = empty
    return result


def evaluate_files(
    hyp: str | Path, refs: list[str | Path], metric: str = "f1", max_bytes: int | None = None
) -> dict[str, float]:
    hypotheses = read_lines(hyp)
    references = [read_lines(r) for r in refs]
    for path, lines in zip(refs, references):
        if len(lines) != len(hypotheses):
            raise NausError(f"{hyp} has {len(hypotheses)} lines but {path} has {len(lines)}")
    return rouge(hypotheses, references, metric, max_bytes)


def lead(sources: list[str], length: int) -> list[str]:
    """The Lead-L baseline: the first L words of each source."""
    return [" ".join(s.split()[:length]) for s in sources]
