"""A fast teacher: a learned estimate chooses the few states encoded on their own. An experiment on the dev split.

The default teacher encodes 180 of its 1,600 states on their own with MiniLM (about 80% of its time):
the in-context estimate that chooses them ranks states poorly (it keeps each word's source context).
Per length, in one process on one thread: the default teacher on the dev split; then for each of
`--fit-sentences`, a `LearnedEstimate` fitted (`naus.teacher.search.fit_estimate`) on that many of the pool's
first sentences (their own states encoded, no titles), and on the dev split the teacher whose learned
estimate (weighted by each of `--estimate-gamma`) chooses the `--exact` N states to encode, every other
setting the default's. Each row: dev ROUGE against the dev titles and the measured seconds per sentence
per core; each fit's cost too (once per profile and length). With `--test`, only the chosen `fast` preset is
run, on the whole test split, scored once (the file's `test` entry).

Writes results/benchmarks/teacher_fast.json.

    python -m benchmarks.archive.teacher_fast --data build/gigaword-sample/data \
        --lm build/gigaword-sample/lm/lm.bin --onnx build/gigaword-sample/similarity/minilm-int8.onnx
"""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.common import cpu_name
from benchmarks.archive.teacher_neural_lm import default_teacher, dev_options
from naus.cli import limit_threads
from naus.evaluation.evaluate import rouge
from naus.files import read_json, read_lines, write_json
from naus.settings import FIT_SENTENCES, FIT_STATES


def run_length(args, length: int) -> dict:
    """The fit, the default teacher and each fast variant at `length`, timed on this process's one thread."""
    from naus.teacher.search import Teacher, fit_estimate

    teacher, embedder = default_teacher(args.lm, args.onnx, length)
    pool = read_lines(Path(args.data) / "pool" / "article.txt")
    articles = read_lines(Path(args.data) / "dev" / "article.txt")[: args.sentences]
    titles = read_lines(Path(args.data) / "dev" / "title.txt")[: args.sentences]

    def scored(settings: dict, chosen) -> dict:
        tick = time.perf_counter()
        picks = [s.summary for s in chosen.summarize(list(enumerate(articles)))]
        seconds = (time.perf_counter() - tick) / len(articles)
        scores = rouge(picks, [titles])
        row = {"settings": settings, "length": length,
               "dev_total": round(sum(scores[m] for m in ("rouge1", "rouge2", "rougeL")), 2),
               "dev_rouge": {m: scores[m] for m in ("rouge1", "rouge2", "rougeL")},
               "s_per_sentence_core": round(seconds, 4)}
        print(length, settings, row["dev_total"], row["s_per_sentence_core"], flush=True)
        return row

    rows = [scored({"estimate": "in-context", "rerank_exact": teacher.config.rerank_exact}, teacher)]
    fits = []
    for sentences in args.fit_sentences:
        tick = time.perf_counter()
        estimate, fitted = fit_estimate(teacher, pool[:sentences], args.states)
        fits.append({"sentences": sentences, "states": fitted, "seconds": round(time.perf_counter() - tick, 1)})
        for exact in args.exact:
            for gamma in args.estimate_gamma:
                config = replace(teacher.config, rerank_exact=exact, estimate_gamma=gamma)
                fast = Teacher(teacher.climber.lm, config, None, embedder, estimate)
                rows.append(scored({"estimate": "learned", "fit_sentences": sentences, "rerank_exact": exact,
                                    "estimate_gamma": gamma}, fast))
    return {"fits": fits, "rows": rows}


def test_length(args, length: int) -> dict:
    """The `fast` preset (its default fit) on the whole test split at `length`: scored once, for what was chosen."""
    from naus.teacher.search import Teacher, fit_estimate
    from naus.settings import TEACHER_PRESETS

    teacher, embedder = default_teacher(args.lm, args.onnx, length)
    preset = {k: v for k, v in TEACHER_PRESETS["fast"].items() if k != "estimator"}
    estimate, _ = fit_estimate(teacher, read_lines(Path(args.data) / "pool" / "article.txt")[:FIT_SENTENCES])
    fast = Teacher(teacher.climber.lm, replace(teacher.config, **preset), None, embedder, estimate)
    articles = read_lines(Path(args.data) / "test" / "article.txt")
    tick = time.perf_counter()
    picks = [s.summary for s in fast.summarize(list(enumerate(articles)))]
    seconds = (time.perf_counter() - tick) / len(articles)
    scores = rouge(picks, [read_lines(Path(args.data) / "test" / "title.txt")])
    return {"rouge": {m: scores[m] for m in ("rouge1", "rouge2", "rougeL")},
            "total": round(sum(scores[m] for m in ("rouge1", "rouge2", "rougeL")), 2),
            "s_per_sentence_core": round(seconds, 4)}


def _worker(job) -> dict:
    args, length = job
    return test_length(args, length) if args.test else run_length(args, length)


def main() -> None:
    parser = dev_options(__doc__.splitlines()[0], "results/benchmarks/teacher_fast.json")
    parser.add_argument("--fit-sentences", type=int, nargs="+", default=[400, FIT_SENTENCES],
                        help="pool sentences an estimate is fitted on (one estimate each)")
    parser.add_argument("--states", type=int, default=FIT_STATES, help="states per fitting sentence encoded on their own")
    parser.add_argument("--exact", type=int, nargs="+", default=[10, 20, 30, 40],
                        help="states the learned estimate chooses for encoding")
    parser.add_argument("--estimate-gamma", type=float, nargs="+", default=[48.0, 96.0, 192.0],
                        help="weights of its ln similarity")
    parser.add_argument("--test", action="store_true", help="only score the fast preset on the test split, into the "
                                                              "existing file's `test` entry")
    args = parser.parse_args()
    limit_threads(1)  # in the workers, as `naus --threads 1` runs a search shard
    with multiprocessing.get_context("spawn").Pool(len(args.lengths)) as pool:
        results = pool.map(_worker, [(args, length) for length in args.lengths])
    if args.test:
        report = read_json(args.out)
        report["test"] = {"preset": "fast", "fit_sentences": FIT_SENTENCES, "machine": cpu_name(),
                          "lengths": {str(length): result for length, result in zip(args.lengths, results)}}
        write_json(args.out, report)
        return
    write_json(args.out, {
        "data": f"{args.data}: the dev split's first {args.sentences} pairs; each estimate fitted on the pool's first "
                f"sentences ({args.states} states each)",
        "machine": cpu_name(), "threads": "one per length, each length in its own process",
        "fits": {str(length): result["fits"] for length, result in zip(args.lengths, results)},
        "rows": [row for result in results for row in result["rows"]]})


if __name__ == "__main__":
    main()
