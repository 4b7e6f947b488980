"""Teacher quality: which change to the search teacher raises dev ROUGE, and at what cost.

Each variant is the teacher this study started from (`BASELINE`, fixed in this file) with some
settings changed (a different language model, a larger re-ranking, more hill
climbing, ...), run through `naus.teacher.search.Teacher` on the dev split at every length asked, by two
one-thread workers on every other sentence each: `s_per_sentence_core` is their wall time x 2 /
sentences. Rows are appended as they finish, so an interrupted run resumes where it stopped; a
row is recomputed only when its variant is not in the file for the same data (the dev file's
SHA-256). The pipeline's teacher (`SearchConfig`'s defaults) is always one of the rows; with
`--test` it is also scored on the test set, once (the choice is made on dev). The rows of the other
teacher experiments (`EXPERIMENTS`, each its own script and JSON) are gathered under `experiments`.

Language models beside the pipeline's (headlines-3: its lm.txt and order) are trained here with
`naus.teacher.lm.train_lm` into `--work`: other orders, a backward model (reversed sentences), and
corpora with the pool's source sentences added (unpaired text the unsupervised setting may use).
Writes results/benchmarks/teacher_quality.json.

    python -m benchmarks.archive.teacher_quality --data build/gigaword-sample/data \
        --onnx build/gigaword-sample/similarity/minilm-int8.onnx [--test]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import time
from pathlib import Path

from naus.evaluation.evaluate import rouge
from naus.files import read_json, read_lines, sha256sum, write_json
from naus.settings import PAPER_BUDGET, LMConfig, SearchConfig

# name: (corpora under the data directory, n-gram order, trained on reversed sentences)
LMS = {
    "headlines-3": (["lm.txt"], 3, False),
    "headlines-4": (["lm.txt"], 4, False),
    "headlines-5": (["lm.txt"], 5, False),
    "headlines+articles-3": (["lm.txt", "pool/article.txt"], 3, False),
    "headlines+articles-4": (["lm.txt", "pool/article.txt"], 4, False),
    "headlines-3-backward": (["lm.txt"], 3, True),
    "headlines-4-backward": (["lm.txt"], 4, True),
}
# The teacher this study started from; every variant is a change to it, so a row keeps its meaning
# whatever the defaults are.
BASELINE = {"lm": "headlines-3", "rerank_k": 200, "rerank_exact": 15, "rerank_gamma": 48.0, "estimate_gamma": 48.0,
            "budget": 1.0, "gamma": 0.0, "backward": None}  # backward: an LM whose SLOR is averaged with the forward one's
# The pipeline's teacher today, from its one definition (`SearchConfig`, `LMConfig`).
PIPELINE = {
    "lm": f"headlines-{LMConfig.order}",
    "rerank_k": SearchConfig.rerank_k,
    "rerank_exact": SearchConfig.rerank_exact,
    "rerank_gamma": SearchConfig.rerank_gamma,
    "estimate_gamma": SearchConfig.estimate_gamma,
    "budget": SearchConfig.steps_coef / PAPER_BUDGET[0],
    "gamma": SearchConfig.gamma,
    "backward": None,
}
# Each alone first, then together where they helped.
VARIANTS = [
    {},
    *({"rerank_exact": m} for m in (30, 60, 0)),
    *({"rerank_k": k, "rerank_exact": m} for k, m in ((400, 30), (800, 60))),
    *({"budget": b} for b in (2.0, 4.0)),
    *({"rerank_gamma": g} for g in (24.0, 96.0)),
    *({"lm": name} for name in LMS if name != BASELINE["lm"] and not LMS[name][2]),
    {"backward": "headlines-3-backward"},
    *({"gamma": g} for g in (6.0, 12.0)),
    # a wider re-ranking (K states, `rerank_exact` of them encoded) was the first to help: its curve
    *({"rerank_k": k, "rerank_exact": m} for k, m in ((800, 30), (800, 120), (1600, 60), (1600, 120), (3200, 120))),
    # around the best of those: the re-ranking weight and the hill-climbing budget again
    *({"rerank_k": 1600, "rerank_exact": 60, "rerank_gamma": g} for g in (24.0, 96.0)),
    {"rerank_k": 1600, "rerank_exact": 60, "budget": 2.0},
    {"rerank_k": 3200, "rerank_exact": 60},
]


# The other teacher experiments, each a script of its own writing results/benchmarks/<name>.json; their rows
# are gathered here too (`experiments`), so that one file holds every variant measured on this dev split.
EXPERIMENTS = ["teacher_cost", "teacher_neural_lm", "teacher_phrase_similarity", "teacher_cascade", "teacher_fast"]
SCORES = ("dev_total", "dev_rouge", "s_per_sentence_core", "total", "rouge")


def experiment_rows(path: Path) -> list[dict]:
    """One row per variant and length of an experiment's JSON: its settings, dev total ROUGE and, where the
    experiment measured it, seconds per sentence per core (the re-scoring experiments did not: None)."""
    found = read_json(path)
    if "rows" in found:  # teacher_cost, teacher_fast: whole teachers run
        rows = [(row["length"], row["settings"], row) for row in found["rows"]]
    else:  # re-scorings of a teacher's recorded states, per length
        rows = [(int(length), {k: v for k, v in row.items() if k not in SCORES}, row)
                for length, part in found["lengths"].items() for row in part["grid"]]
    return [{"length": length, "settings": settings, "dev_total": row.get("dev_total", row.get("total")),
             "s_per_sentence_core": row.get("s_per_sentence_core")} for length, settings, row in rows]


def variant_name(changes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in changes.items()) or "previous default"


def changes_from_baseline(settings: dict) -> dict:
    return {k: v for k, v in settings.items() if BASELINE[k] != v}


def search_config(settings: dict, length: int) -> SearchConfig:
    return SearchConfig(
        length=length, rerank_k=settings["rerank_k"], rerank_exact=settings["rerank_exact"],
        rerank_gamma=settings["rerank_gamma"], estimate_gamma=settings["estimate_gamma"], gamma=settings["gamma"],
        steps_coef=PAPER_BUDGET[0] * settings["budget"], restarts_coef=PAPER_BUDGET[1] * settings["budget"],
    )


def build_lms(data: Path, work: Path, names: set[str]) -> dict[str, str]:
    """Each language model the variants need, trained once into `work` (kept between runs)."""
    from naus.teacher.lm import train_lm

    paths = {}
    for name in sorted(names):
        corpora, order, reverse = LMS[name]
        path = work / f"{name}.bin"
        if not path.exists():
            corpus = work / f"{name}.txt"
            with open(corpus, "w", encoding="utf-8") as out:
                for part in corpora:
                    lines = read_lines(data / part)
                    out.writelines(" ".join(reversed(line.split()) if reverse else line.split()) + "\n"
                                   for line in lines)
            tick = time.perf_counter()
            train_lm(corpus, path, order)
            print(f"trained {name} in {time.perf_counter() - tick:.0f} s", flush=True)
        paths[name] = str(path)
    return paths


_WORKER: dict = {}


def build_static(data: Path, work: Path, onnx: str) -> str:
    """The static word table for the dev sentences (idf from the headline corpus), as the pipeline builds it."""
    from naus.teacher.similarity import ContextualEmbedder, build_static_table

    path = work / "static.npz"
    if not path.exists():
        words = {w for line in read_lines(data / "dev" / "article.txt") for w in line.split()}
        build_static_table(words, read_lines(data / "lm.txt"), path, ContextualEmbedder("cpu", onnx=onnx))
    return str(path)


def _init_worker(lm_paths: dict[str, str], onnx: str, static: str) -> None:
    import torch

    from naus.teacher.similarity import ContextualEmbedder, StaticEmbedder

    torch.set_num_threads(1)
    _WORKER.update(lm_paths=lm_paths, lms={}, embedder=ContextualEmbedder("cpu", onnx=onnx),
                   static=StaticEmbedder(static))


def _lm(name: str):
    from naus.teacher.lm import LanguageModel

    if name not in _WORKER["lms"]:
        _WORKER["lms"][name] = LanguageModel(_WORKER["lm_paths"][name])
    return _WORKER["lms"][name]


def _with_backward(climber, backward) -> None:
    """Stage 1's candidates carry the mean of the forward and the backward LM's ln P and SLOR."""
    import numpy as np

    search = climber.search

    def averaged(index, words, keep=1):
        cands = search(index, words, keep)
        texts = [[cands.words[p] for p in row] for row in cands.positions]
        log_probs = np.array([backward.log_prob(text[::-1]) for text in texts])
        unigrams = np.array([sum(backward.unigram(w) for w in text) for text in texts])
        slors = (log_probs - unigrams) / max(cands.positions.shape[1], 1)
        cands.log_probs, cands.slors = (cands.log_probs + log_probs) / 2, (cands.slors + slors) / 2
        return cands

    climber.search = averaged


def _run(task: tuple[dict, int, list[tuple[int, str]]]) -> list[str]:
    from naus.teacher.search import Teacher

    settings, length, items = task
    static = _WORKER["static"] if settings["gamma"] > 0 else None
    teacher = Teacher(_lm(settings["lm"]), search_config(settings, length), static, _WORKER["embedder"])
    if settings["backward"]:
        _with_backward(teacher.climber, _lm(settings["backward"]))
    return [summary.summary for summary in teacher.summarize(items)]


def run_split(pool, settings: dict, length: int, articles: list[str], titles: list[str]) -> dict:
    """The teacher with `settings` on every sentence (two workers, every other sentence each): ROUGE and cost."""
    items = list(enumerate(articles))
    halves = [items[0::2], items[1::2]]  # interleaved: both workers get the same mix of lengths
    start = time.perf_counter()
    summaries = [""] * len(items)
    for half, part in zip(halves, pool.map(_run, [(settings, length, h) for h in halves], chunksize=1)):
        for (index, _), summary in zip(half, part):
            summaries[index] = summary
    seconds = time.perf_counter() - start
    scores = rouge(summaries, [titles])
    return {
        "rouge": {k: scores[k] for k in ("rouge1", "rouge2", "rougeL")},
        "total": round(scores["rouge1"] + scores["rouge2"] + scores["rougeL"], 2),
        "s_per_sentence_core": round(2 * seconds / len(items), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="the profile's data directory (dev/, test/, pool/, lm.txt)")
    parser.add_argument("--onnx", required=True, help="the int8 MiniLM the pipeline exports")
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 8])
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--test", action="store_true",
                        help="also score the pipeline's teacher on the test set (once: kept when already there)")
    parser.add_argument("--work", default="build/benchmarks/archive/teacher_quality", help="language models trained here")
    parser.add_argument("--out", default="results/benchmarks/teacher_quality.json")
    args = parser.parse_args()

    data, work = Path(args.data), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    articles = read_lines(data / "dev" / "article.txt")[: args.sentences]
    titles = read_lines(data / "dev" / "title.txt")[: args.sentences]
    dev_sha = sha256sum(data / "dev" / "article.txt")
    report = read_json(args.out) if Path(args.out).exists() else {}
    if report.get("dev_sha256") != dev_sha or report.get("sentences") != len(articles):
        report = {"dev_sha256": dev_sha, "sentences": len(articles), "rows": []}
    report.update(
        data=f"dev split of the profile at {data} (first {len(articles)} pairs); scored against its titles",
        machine=f"{platform.machine()}, {os.cpu_count()} cores; two one-thread workers",
        baseline=BASELINE,
        pipeline={"settings": PIPELINE, "variant": variant_name(changes_from_baseline(PIPELINE))},
        lms={name: {"corpora": corpora, "order": order, "backward": reverse} for name, (corpora, order, reverse) in LMS.items()},
    )
    report["experiments"] = {name: {"file": f"results/benchmarks/{name}.json", "rows": experiment_rows(path)}
                             for name in EXPERIMENTS if (path := Path(args.out).parent / f"{name}.json").is_file()}
    write_json(args.out, report)
    done = {(row["variant"], row["length"]) for row in report["rows"]}
    variants = VARIANTS + [changes_from_baseline(PIPELINE)]
    todo = [(changes, length) for changes in variants for length in args.lengths
            if (variant_name(changes), length) not in done]
    tested = report.get("test", {}).get("variant") == report["pipeline"]["variant"]
    needed = {BASELINE["lm"], PIPELINE["lm"]} | {c.get(k) or BASELINE["lm"] for c, _ in todo for k in ("lm", "backward")}
    lm_paths = build_lms(data, work, needed)
    static = build_static(data, work, args.onnx)
    context = multiprocessing.get_context("spawn")
    with context.Pool(2, initializer=_init_worker, initargs=(lm_paths, args.onnx, static)) as pool:
        pool.map(_run, [(BASELINE, 10, list(enumerate(articles[k:5:2]))) for k in (0, 1)], chunksize=1)  # warm-up
        for changes, length in todo:
            result = run_split(pool, {**BASELINE, **changes}, length, articles, titles)
            row = {"variant": variant_name(changes), "changes": changes, "length": length,
                   "dev_rouge": result["rouge"], "dev_total": result["total"],
                   "s_per_sentence_core": result["s_per_sentence_core"]}
            report["rows"].append(row)
            write_json(args.out, report)
            print(row, flush=True)
        if args.test and not tested:  # the chosen teacher, scored once on the test set
            if "test" in report:
                report.setdefault("earlier_defaults_test", []).append(report["test"])
            test_articles, test_titles = (read_lines(data / "test" / f"{side}.txt") for side in ("article", "title"))
            report["test"] = {"variant": report["pipeline"]["variant"], "sentences": len(test_articles),
                              "lengths": {str(n): run_split(pool, PIPELINE, n, test_articles, test_titles)
                                          for n in args.lengths}}
            write_json(args.out, report)
            print("test", report["test"], flush=True)


if __name__ == "__main__":
    main()
