"""Teacher objectives compared on the dev split (never the test set): quality and speed.

Fluency (`perplexity`, the paper's 1/PPL, or `slor`) × similarity (none; `static`: idf-weighted
per-word MiniLM vectors inside the hill climbing, γ = 12 as Schumann et al.; `contextual`:
re-ranking the K best distinct states with whole-sentence MiniLM embeddings, γ_r tuned here).
Writes results/benchmarks/teacher_dev.json; the pipeline's fluency and γ_r come from its best row
(K, the budget and the embedder from teacher_throughput.py).

    python benchmarks/archive/teacher_dev.py --lm build/gigaword-sample/lm/lm.bin \
        --dev build/gigaword-sample/data/dev --headlines build/gigaword-sample/data/lm.txt
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from naus.evaluation.evaluate import lead, rouge
from naus.files import read_lines
from naus.outputs import write_json
from naus.teacher.lm import LanguageModel
from naus.teacher.search import HillClimber, objective
from naus.settings import PAPER_BUDGET, SearchConfig
from naus.teacher.similarity import ContextualEmbedder, StaticEmbedder, build_static_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lm", required=True)
    parser.add_argument("--dev", required=True, help="directory with article.txt and title.txt")
    parser.add_argument("--headlines", required=True, help="idf corpus for the static table")
    parser.add_argument("--length", type=int, default=10)
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--rerank-k", type=int, default=50)
    parser.add_argument("--rerank-gammas", type=float, nargs="+", default=[12, 24, 48, 96])
    parser.add_argument("--out", default="results/benchmarks/teacher_dev.json")
    args = parser.parse_args()

    articles = read_lines(Path(args.dev) / "article.txt")[: args.sentences]
    titles = read_lines(Path(args.dev) / "title.txt")[: args.sentences]
    lm = LanguageModel(args.lm)
    contextual = ContextualEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "static.npz"
        start = time.perf_counter()
        words = build_static_table({w for a in articles for w in a.split()}, read_lines(args.headlines), table, contextual)
        static_build_s = time.perf_counter() - start
        static = StaticEmbedder(table)

    rows = {}

    def record(name: str, summaries: list[str], seconds: float, **extra) -> None:
        scores = rouge(summaries, [titles])
        rows[name] = {**{k: scores[k] for k in ("rouge1", "rouge2", "rougeL")}, "s_per_sentence": round(seconds, 4), **extra}
        print(name, rows[name], flush=True)

    record(f"lead-{args.length}", lead(articles, args.length), 0.0)
    for fluency in ("perplexity", "slor"):
        for gamma in (0.0, 12.0):
            config = SearchConfig(
                length=args.length, fluency=fluency, gamma=gamma, rerank_k=0,
                steps_coef=PAPER_BUDGET[0], restarts_coef=PAPER_BUDGET[1],
            )
            climber = HillClimber(lm, config, static)
            start = time.perf_counter()
            found = [climber.search(i, a.split(), keep=args.rerank_k) for i, a in enumerate(articles)]
            climb_s = (time.perf_counter() - start) / len(articles)
            record(f"{fluency}, static γ={gamma:g}", [c.texts()[0] for c in found], climb_s)
            if gamma:
                continue
            start = time.perf_counter()
            texts = [t for c in found for t in c.texts()]
            vectors = contextual.encode(texts)
            sources = contextual.encode(articles)
            encode_s = (time.perf_counter() - start) / len(articles)
            offset, sims = 0, []
            for k, cands in enumerate(found):
                sims.append((vectors[offset : offset + len(cands.positions)] @ sources[k] + 1) / 2)
                offset += len(cands.positions)
            for gamma_r in args.rerank_gammas:
                picks = []
                for cands, sim in zip(found, sims):
                    scores = objective(cands.log_probs, cands.slors, args.length, fluency == "slor", gamma_r, sim)
                    picks.append(cands.texts()[int(np.argmax(scores))])
                record(f"{fluency} + contextual re-rank K={args.rerank_k} γ_r={gamma_r:g}", picks, climb_s + encode_s)
    write_json(args.out, {
        "data": f"dev split of the gigaword-sample profile, first {len(articles)} pairs, L = {args.length}",
        "machine": f"{os.cpu_count()} CPU cores, device {contextual.device}",
        "static_table": {"words": words, "build_seconds": round(static_build_s, 1)},
        "rows": rows,
    })


if __name__ == "__main__":
    main()
