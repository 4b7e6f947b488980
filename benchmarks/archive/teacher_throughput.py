"""Teacher throughput: where the two-stage teacher's time goes, and faster settings at the same quality.

Every configuration runs the whole teacher (`naus.teacher.search.Teacher`: hill climbing, then
re-ranking) on the same dev sentences as the pipeline runs it: two one-thread workers, each on
every other sentence, so `s_per_sentence_2cores` is the wall time of both halves over the
number of sentences. Dev ROUGE is against the dev titles (never the test set). The first row
is the previous default (`reference`: fp32 MiniLM, K = 50 states all encoded, the full budget,
hill climbing in NumPy arrays as the previous code ran it);
`chosen` is the new default; `speedup` is reference time / chosen time, from this one run.
The curve runs at one length (10); reference, chosen and its neighbours are run at the other
lengths too (`other_lengths`). A profile of reference and chosen on one core breaks each
sentence's time into its parts.
Writes results/benchmarks/teacher.json.

    python benchmarks/archive/teacher_throughput.py --lm build/gigaword-sample/lm/lm.bin \
        --dev build/gigaword-sample/data/dev
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import time
from collections import defaultdict
from pathlib import Path

from naus.evaluation.evaluate import rouge
from naus.files import read_lines, write_json
from naus.settings import PAPER_BUDGET, SearchConfig

# The previous default: its settings, and hill climbing with NumPy arrays (bit-identical to the
# compiled walk, which every other row uses).
REFERENCE = {"rerank_k": 50, "rerank_exact": 0, "budget": 1.0, "backend": "torch", "climb": "arrays"}
CHOSEN = {  # the defaults of `SearchConfig` and of every profile
    "rerank_k": SearchConfig.rerank_k, "rerank_exact": SearchConfig.rerank_exact,
    "budget": SearchConfig.steps_coef / PAPER_BUDGET[0], "backend": "onnx-int8", "climb": "compiled",
}
CONFIG_KEYS = {
    "rerank_k": "distinct hill-climbing states re-ranked with MiniLM",
    "rerank_exact": "states encoded on their own, the best by the in-context estimate (0: all K)",
    "budget": f"hill-climbing steps and restarts as a multiple of the paper's ({PAPER_BUDGET} x S x L^2)",
    "backend": "MiniLM in PyTorch fp32, or in ONNX Runtime with fp32 or int8 weights",
    "climb": "hill climbing compiled with numba, or with NumPy arrays (the previous code; same states)",
}
# The curves: K with every state encoded (today's method), MiniLM in ONNX Runtime (fp32, int8),
# then around the chosen setting: how many states are encoded, how many are estimated, the budget.
PREVIOUS_SETTINGS = {**REFERENCE, "climb": "compiled"}
CURVES = (
    [PREVIOUS_SETTINGS]
    + [{**PREVIOUS_SETTINGS, "rerank_k": k} for k in (5, 10, 20)]
    + [{**PREVIOUS_SETTINGS, "backend": b} for b in ("onnx-fp32", "onnx-int8")]
    + [{**CHOSEN, "rerank_exact": m} for m in (5, 10, 20)]
    + [{**CHOSEN, "rerank_k": k} for k in (50, 100, 400)]
    + [{**CHOSEN, "budget": b} for b in (0.25, 0.5)]
)
# A setting chosen at one length need not hold at another: the neighbours are checked there too.
OTHER_LENGTH_CONFIGS = [REFERENCE, PREVIOUS_SETTINGS, CHOSEN] + [{**CHOSEN, "rerank_exact": m} for m in (10, 20)]
BACKENDS = {"torch": None, "onnx-fp32": False, "onnx-int8": True}  # name: quantize


def search_config(config: dict, length: int) -> SearchConfig:
    return SearchConfig(
        length=length, rerank_k=config["rerank_k"], rerank_exact=config["rerank_exact"],
        steps_coef=PAPER_BUDGET[0] * config["budget"], restarts_coef=PAPER_BUDGET[1] * config["budget"],
    )


_WORKER: dict = {}


def embedders(onnx_dir: Path) -> dict:
    """One embedder per backend, on the threads torch has (one in a worker)."""
    from naus.teacher.similarity import ContextualEmbedder

    return {name: ContextualEmbedder("cpu", onnx=None if quantize is None else onnx_dir / f"{name}.onnx")
            for name, quantize in BACKENDS.items()}


def _init_worker(lm_path: str, onnx_dir: Path) -> None:
    import torch

    from naus.teacher.lm import LanguageModel

    torch.set_num_threads(1)
    _WORKER["lm"] = LanguageModel(lm_path)
    _WORKER["embedders"] = embedders(onnx_dir)


def _run(task: tuple[dict, int, list[tuple[int, str]]]) -> list[str]:
    from naus.teacher.search import Teacher

    config, length, items = task
    embedder = _WORKER["embedders"][config["backend"]]
    teacher = Teacher(_WORKER["lm"], search_config(config, length), contextual=embedder)
    teacher.climber.compiled = config["climb"] == "compiled"
    return [summary.summary for summary in teacher.summarize(items)]


class TimedEmbedder:
    """The embedder with the time of each call kept, for the profile."""

    def __init__(self, embedder, seconds: dict):
        self.embedder, self.seconds = embedder, seconds

    def _timed(self, part: str, tokenize, call):
        """Time the tokenizer alone (`tokenize`), then the embedder's whole `call`, under `part`."""
        tick = time.perf_counter()
        tokens = tokenize()["input_ids"]
        self.seconds["tokenize"] += time.perf_counter() - tick
        self.seconds[f"tokens: {part}"] += sum(len(t) for t in tokens)
        tick = time.perf_counter()
        try:
            return call()
        finally:
            self.seconds[f"MiniLM on the {part}"] += time.perf_counter() - tick

    def source_context(self, words):
        return self._timed(
            "source", lambda: self.embedder.tokenizer([words], is_split_into_words=True, truncation=True),
            lambda: self.embedder.source_context(words),
        )

    def encode_group(self, sentences):
        self.seconds["states re-encoded"] += len(sentences)
        return self._timed(
            "states re-encoded", lambda: self.embedder.tokenizer(sentences, truncation=True),
            lambda: self.embedder.encode_group(sentences),
        )


def profile(lm_path: str, embedder, config: dict, length: int, items: list[tuple[int, str]]) -> dict:
    """Seconds per sentence of each part on one core; the tokenizer is run again outside the model's time."""
    from naus.teacher.lm import LanguageModel
    from naus.teacher.search import Teacher

    seconds: dict = defaultdict(float)
    teacher = Teacher(LanguageModel(lm_path), search_config(config, length), contextual=TimedEmbedder(embedder, seconds))
    teacher.climber.compiled = config["climb"] == "compiled"
    climb = teacher.climber.search

    def timed_climb(*args, **kwargs):
        tick = time.perf_counter()
        try:
            return climb(*args, **kwargs)
        finally:
            seconds["hill climbing (stage 1)"] += time.perf_counter() - tick

    teacher.climber.search = timed_climb
    teacher.summarize(items[:5])  # warm-up
    seconds.clear()
    start = time.perf_counter()
    teacher.summarize(items)
    total = time.perf_counter() - start
    counts = {k: seconds.pop(k) for k in list(seconds) if k.startswith(("tokens", "states"))}
    tokenize = seconds.pop("tokenize")
    parts = {k: v / len(items) for k, v in seconds.items()}
    parts["the rest (estimate, bookkeeping, Python)"] = total / len(items) - sum(parts.values())
    parts["of which tokenizing (measured apart)"] = tokenize / len(items)
    out = {k: round(v, 5) for k, v in parts.items()}
    out["total_s_per_sentence_one_core"] = round(total / len(items), 4)
    out.update({f"{k} per sentence": round(v / len(items), 1) for k, v in counts.items()})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lm", required=True)
    parser.add_argument("--dev", required=True, help="directory with article.txt and title.txt")
    parser.add_argument("--length", type=int, default=10, help="the length of the whole curve")
    parser.add_argument("--other-lengths", type=int, nargs="*", default=[8], help="reference, chosen and fast only")
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--profile-sentences", type=int, default=100)
    parser.add_argument("--out", default="results/benchmarks/teacher.json")
    args = parser.parse_args()

    import tempfile

    import torch

    from naus.teacher.similarity import export_onnx

    onnx_dir = Path(tempfile.mkdtemp(prefix="naus-onnx-"))
    export_seconds = {}
    for name, quantize in BACKENDS.items():
        if quantize is not None:
            tick = time.perf_counter()
            export_onnx(onnx_dir / f"{name}.onnx", quantize=quantize)
            export_seconds[name] = round(time.perf_counter() - tick, 1)
    torch.set_num_threads(1)
    one_core = embedders(onnx_dir)
    articles = read_lines(Path(args.dev) / "article.txt")[: args.sentences]
    titles = read_lines(Path(args.dev) / "title.txt")[: args.sentences]
    items = list(enumerate(articles))
    halves = [items[0::2], items[1::2]]  # interleaved, so both workers get the same mix of lengths
    report = {
        "data": f"dev split of the gigaword-sample profile, first {len(items)} pairs, L = {args.length} "
        f"(and {args.other_lengths} for a few settings)",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores; two one-thread workers, torch CPU",
        "method": "whole teacher per configuration, wall time of two workers on every other sentence each",
        "config_keys": CONFIG_KEYS,
        "onnx_export_seconds": export_seconds,
        "profile": {
            name: profile(args.lm, one_core[config["backend"]], config, args.length, items[: args.profile_sentences])
            for name, config in (("reference", REFERENCE), ("chosen", CHOSEN))
        },
        "configs": [],
    }
    print(report["profile"], flush=True)
    context = multiprocessing.get_context("spawn")
    runs = [(args.length, c) for c in [REFERENCE, CHOSEN, *CURVES]]
    runs += [(length, c) for length in args.other_lengths for c in OTHER_LENGTH_CONFIGS]
    runs = [(length, dict(c)) for length, c in dict.fromkeys((n, tuple(c.items())) for n, c in runs)]  # each once
    with context.Pool(2, initializer=_init_worker, initargs=(args.lm, onnx_dir)) as pool:
        pool.map(_run, [(REFERENCE, args.length, half[:5]) for half in halves], chunksize=1)  # warm-up
        for length, config in runs:
            start = time.perf_counter()
            summaries = [""] * len(items)
            for half, part in zip(halves, pool.map(_run, [(config, length, h) for h in halves], chunksize=1)):
                for (index, _), summary in zip(half, part):
                    summaries[index] = summary
            seconds = (time.perf_counter() - start) / len(items)
            scores = rouge(summaries, [titles])
            row = {
                "length": length,
                "config": config,
                "dev_rouge": {"r1": scores["rouge1"], "r2": scores["rouge2"], "rl": scores["rougeL"]},
                "dev_rouge_total": round(scores["rouge1"] + scores["rouge2"] + scores["rougeL"], 2),
                "s_per_sentence_2cores": round(seconds, 4),
            }
            report["configs"].append(row)
            print(row, flush=True)
    rows = {(r["length"], tuple(sorted(r["config"].items()))): r for r in report["configs"]}
    for length in [args.length, *args.other_lengths]:
        reference, chosen = (rows[(length, tuple(sorted(c.items())))] for c in (REFERENCE, CHOSEN))
        summary = {
            "reference": reference,
            "chosen": chosen,
            "speedup": round(reference["s_per_sentence_2cores"] / chosen["s_per_sentence_2cores"], 2),
            "dev_rouge_total_change": round(chosen["dev_rouge_total"] - reference["dev_rouge_total"], 2),
        }
        if length == args.length:
            report.update(summary)
        else:
            report.setdefault("other_lengths", {})[str(length)] = summary
        print(length, "speedup", summary["speedup"], "quality change", summary["dev_rouge_total_change"])
    write_json(args.out, report)


if __name__ == "__main__":
    main()
