"""Where the search teacher's time goes, and cheaper teachers against the default on the dev split.

1. Profile: the default teacher (`SearchConfig`'s defaults) on the first `--profile-sentences` dev
   sentences, one process on one thread, each stage timed on its own: the hill climbing (stage 1),
   MiniLM's pass over the source (the in-context states), the in-context estimate of every candidate's
   similarity, MiniLM encoding the `rerank_exact` candidates on their own, and the rest.
2. Candidates: the default and each cheaper setting of `CANDIDATES`, in this one run, on the dev split
   at every length (benchmarks.archive.teacher_quality's two one-thread workers, every other sentence each):
   dev ROUGE and seconds per sentence per core.

Writes results/benchmarks/teacher_cost.json.

    python -m benchmarks.archive.teacher_cost --data build/gigaword-sample/data \
        --lm build/gigaword-sample/lm/lm.bin --onnx build/gigaword-sample/similarity/minilm-int8.onnx

Findings (the JSON's numbers, as read when it was written; Markdown):

## Where the teacher's time goes, and cheaper re-rankings (`teacher_cost.json`)

`python -m benchmarks.archive.teacher_cost --data build/gigaword-sample/data --lm build/gigaword-sample/lm/lm.bin
--onnx build/gigaword-sample/similarity/minilm-int8.onnx`, on this repository's 2-core AMD EPYC (Zen 5),
nothing else running, gigaword-sample's dev split (500 pairs).

**Profile** of the default teacher then (1,600 distinct states re-ranked, 60 encoded on their own), one process on
one thread, the first 100 dev sentences, seconds per sentence:

| stage | L = 10 | L = 8 |
|---|---|---|
| hill climbing (stage 1, compiled) | 0.0094 (14%) | 0.0048 (9%) |
| MiniLM over the source (the in-context states) | 0.0034 (5%) | 0.0035 (6%) |
| the in-context estimate of all 1,600 states' similarity | 0.0004 | 0.0004 |
| **MiniLM encoding the 60 chosen states on their own** (ONNX, int8) | **0.0518 (80%)** | **0.0465 (84%)** |
| whole teacher | 0.0650 | 0.0552 |

Alone on a core the teacher costs half what the two-worker measure below says (0.107 / 0.095 s): the two
one-thread workers share the caches and memory bandwidth of a 2-core machine.

**Cheaper re-rankings**, in the same run, two one-thread workers, dev total ROUGE (R-1 + R-2 + R-L) and
seconds per sentence per core:

| re-ranking (states / encoded) | L = 10 | L = 8 |
|---|---|---|
| **1,600 / 60 (the default)** | **85.60**, 0.107 s | **83.91**, 0.095 s |
| 1,600 / 15 | 82.98, 0.056 s | 80.81, 0.042 s |
| 1,600 / 5 | 80.28, 0.043 s | 76.89, 0.030 s |
| 1,600 / 1 (the in-context estimate chooses) | 75.74, 0.039 s | 70.52, 0.023 s |
| 800 / 5 | 79.91, 0.039 s | 77.36, 0.032 s |
| 3,200 / 5 | 80.59, 0.047 s | 76.92, 0.031 s |
| 200 / 15 (the demo's) | 80.99, 0.040 s | 80.24, 0.034 s |

The encoding of each chosen state on its own is what the quality rests on: letting the in-context estimate
choose more of the states costs 2.6–13.4 dev points, so no cheaper setting of these two knobs comes within
0.5 of the default at a third of its cost. A `fast` teacher would need a cheaper exact similarity or a better
pre-filter than the in-context estimate: truncated MiniLM encoders and a re-weighted estimate are measured in
the last section (`teacher_cascade.json`); neither gives one.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import time
from pathlib import Path

import numpy as np

from naus.device import cpu_name
from benchmarks.archive import teacher_quality as quality
from naus.files import read_lines
from naus.outputs import write_json
from naus.settings import PAPER_BUDGET, SearchConfig

DEFAULT = {"rerank_k": SearchConfig.rerank_k, "rerank_exact": SearchConfig.rerank_exact}
# Cheaper re-rankings: fewer states encoded on their own (the in-context estimate choosing more), fewer states.
CANDIDATES = [
    {"rerank_k": 1600, "rerank_exact": 1},
    {"rerank_k": 1600, "rerank_exact": 5},
    {"rerank_k": 1600, "rerank_exact": 15},
    {"rerank_k": 800, "rerank_exact": 5},
    {"rerank_k": 3200, "rerank_exact": 5},
    {"rerank_k": 200, "rerank_exact": 15},
]


def profile(lm_path: str, onnx: str, articles: list[str], length: int) -> dict:
    """Seconds per sentence of each stage of the default teacher, one thread."""
    import torch

    from naus.teacher.lm import LanguageModel
    from naus.teacher.search import HillClimber, Teacher
    from naus.teacher.similarity import ContextualEmbedder

    torch.set_num_threads(1)
    config = SearchConfig(length=length)
    embedder = ContextualEmbedder("cpu", onnx=onnx)
    teacher = Teacher(LanguageModel(lm_path), config, None, embedder)
    climber: HillClimber = teacher.climber
    stages = dict.fromkeys(("climb", "source pass", "estimate", "exact encoding", "whole teacher"), 0.0)
    teacher.summarize([(0, articles[0])])  # warm-up: compiled kernels, the ONNX session
    for index, source in enumerate(articles):
        tick = time.perf_counter()
        cands = climber.search(index, source.split(), config.rerank_k)
        stages["climb"] += time.perf_counter() - tick
        if not cands.words or len(cands.positions) == 0:
            continue
        tick = time.perf_counter()
        context = embedder.source_context(cands.words)
        stages["source pass"] += time.perf_counter() - tick
        tick = time.perf_counter()
        estimate = cands.estimated_similarities(context)
        chosen = np.argsort(-estimate, kind="stable")[: config.rerank_exact]
        stages["estimate"] += time.perf_counter() - tick
        tick = time.perf_counter()
        embedder.encode_group([cands.text(k) for k in chosen])
        stages["exact encoding"] += time.perf_counter() - tick
        tick = time.perf_counter()
        teacher.summarize([(index, source)])
        stages["whole teacher"] += time.perf_counter() - tick
    per_sentence = {stage: round(seconds / len(articles), 5) for stage, seconds in stages.items()}
    per_sentence["rest"] = round(per_sentence["whole teacher"] - sum(v for k, v in per_sentence.items()
                                                                      if k != "whole teacher"), 5)
    return per_sentence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="the profile's data directory (dev/, lm.txt)")
    parser.add_argument("--lm", required=True, help="the profile's KenLM model")
    parser.add_argument("--onnx", required=True, help="the int8 MiniLM the pipeline exports")
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 8])
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--profile-sentences", type=int, default=100)
    parser.add_argument("--work", default="build/benchmarks/archive/teacher_quality", help="the static table is kept here")
    parser.add_argument("--out", default="results/benchmarks/teacher_cost.json")
    args = parser.parse_args()

    data = Path(args.data)
    articles = read_lines(data / "dev" / "article.txt")[: args.sentences]
    titles = read_lines(data / "dev" / "title.txt")[: args.sentences]
    report = {"data": f"dev split of the profile at {data} (first {len(articles)} pairs)",
              "machine": f"{platform.machine()}, {cpu_name()}, {os.cpu_count()} cores",
              "default": DEFAULT,
              "profile": {"sentences": args.profile_sentences, "threads": 1,
                          "lengths": {str(n): profile(args.lm, args.onnx, articles[: args.profile_sentences], n)
                                      for n in args.lengths}}}
    write_json(args.out, report)
    print(report["profile"], flush=True)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    static = quality.build_static(data, Path(args.work), args.onnx)
    lm = {quality.BASELINE["lm"]: args.lm}
    base = {**quality.BASELINE, "budget": SearchConfig.steps_coef / PAPER_BUDGET[0]}
    report["rows"] = []
    context = multiprocessing.get_context("spawn")
    with context.Pool(2, initializer=quality._init_worker, initargs=(lm, args.onnx, static)) as pool:
        pool.map(quality._run, [(base, 10, list(enumerate(articles[k:5:2]))) for k in (0, 1)], chunksize=1)
        for changes in [DEFAULT, *CANDIDATES]:
            for length in args.lengths:
                result = quality.run_split(pool, {**base, **changes}, length, articles, titles)
                report["rows"].append({"settings": changes, "length": length, **result})
                write_json(args.out, report)
                print(report["rows"][-1], flush=True)


if __name__ == "__main__":
    main()
