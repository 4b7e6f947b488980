"""Search speed: the compiled hill climbing against the array version and a plain loop.

All run the same objective (SLOR fluency, no similarity) at the paper's budget on the same
Gigaword test sentences, on one core, in one process: the compiled walk (the default), the
array version it replaced (`tests/reference.py: climb_arrays`, the same states) and a plain
one-candidate-at-a-time loop scoring with KenLM directly. The whole teacher (hill climbing plus
re-ranking) is timed by teacher_throughput.py.
Writes results/benchmarks/search.json.

    NAUS_DATA=../shared/data python -m benchmarks.search_speed --lm build/gigaword-sample/lm/lm.bin

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

hill climbing at the paper's budget, per sentence per core (compiled): L = 8: 0.0048 s (13,026 scorings); L = 10:
0.0088 s (31,962 scorings, 0.28 µs each; 0.0063 / 0.0138 s before stage 1 ranked only its best rows,
`_best_distinct`) (goal: ≤ 0.2 s)

the same with arrays (previous) / plain one-candidate-at-a-time loop: 0.0203 / 0.0831 s at L = 8, 0.0398 / 0.2226 s
at L = 10 (0.021 / 0.0808 and 0.0407 / 0.2668 on 26 November: the same machine speed)
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from pathlib import Path

import numpy as np

from naus.plumbing.files import read_lines
from naus.plumbing.outputs import write_json
from naus.teacher.lm import LanguageModel
from naus.teacher.search import HillClimber
from naus.settings import PAPER_BUDGET, SearchConfig
from tests.reference import climb_arrays


def plain_hill_climbing(lm: LanguageModel, words: list[str], length: int, config: SearchConfig, seed: int) -> float:
    """The textbook loop: one proposal at a time, each scored by KenLM on the joined string."""
    steps, restarts = config.budget(len(words), length)
    rng = random.Random(seed)
    unigram = [lm.unigram(w) for w in words]

    def slor(positions: list[int]) -> float:
        log_prob = lm.log_prob([words[p] for p in positions])
        return (log_prob - sum(unigram[p] for p in positions)) / length

    best = -np.inf
    for _ in range(restarts):
        chosen = sorted(rng.sample(range(len(words)), length))
        current = slor(chosen)
        for _ in range(steps):
            out = rng.randrange(length)
            into = rng.choice([p for p in range(len(words)) if p not in chosen])
            proposal = sorted(chosen[:out] + chosen[out + 1 :] + [into])
            score = slor(proposal)
            if score >= current:
                chosen, current = proposal, score
        best = max(best, current)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lm", required=True)
    parser.add_argument("--data", default=os.environ.get("NAUS_DATA", "../shared/data"))
    parser.add_argument("--sentences", type=int, default=200, help="sentences for the compiled and array searches")
    parser.add_argument("--plain-sentences", type=int, default=10, help="sentences for the slow reference")
    parser.add_argument("--out", default="results/benchmarks/search.json")
    args = parser.parse_args()

    sources = read_lines(Path(args.data) / "gigaword/test/input.txt")
    sample = random.Random(0).sample(range(len(sources)), args.sentences)
    lm = LanguageModel(args.lm)
    report = {
        "data": f"Gigaword test, {args.sentences} seeded-random sentences (plain reference: the first "
        f"{args.plain_sentences} of them)",
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "lengths": {},
    }
    for length in (8, 10):
        config = SearchConfig(length=length, rerank_k=0, steps_coef=PAPER_BUDGET[0], restarts_coef=PAPER_BUDGET[1])
        climber = HillClimber(lm, config)
        climber.search(0, sources[0].split())  # compiles, or loads the compiled code from the cache
        start = time.perf_counter()
        scorings = sum(climber.search(i, sources[i].split()).scorings for i in sample)
        compiled_s = (time.perf_counter() - start) / len(sample)
        start = time.perf_counter()
        for i in sample:
            climb_arrays(climber, i, sources[i].split())
        arrays_s = (time.perf_counter() - start) / len(sample)
        plain = sample[: args.plain_sentences]
        start = time.perf_counter()
        for i in plain:
            plain_hill_climbing(lm, sources[i].split(), length, config, i)
        plain_s = (time.perf_counter() - start) / len(plain)
        start = time.perf_counter()
        for i in plain:
            climber.search(i, sources[i].split())
        compiled_same_s = (time.perf_counter() - start) / len(plain)
        report["lengths"][str(length)] = {
            "hill_climbing_s_per_sentence_one_core": round(compiled_s, 4),
            "scorings_per_sentence": round(scorings / len(sample)),
            "us_per_scoring": round(compiled_s / (scorings / len(sample)) * 1e6, 2),
            "arrays_s_per_sentence_one_core": round(arrays_s, 4),
            "speedup_over_arrays": round(arrays_s / compiled_s, 1),
            "plain_reference_s_per_sentence_one_core": round(plain_s, 4),
            "compiled_on_the_same_sentences_s": round(compiled_same_s, 4),
            "speedup_over_plain": round(plain_s / compiled_same_s, 1),
        }
        print(length, report["lengths"][str(length)], flush=True)

    write_json(args.out, report)


if __name__ == "__main__":
    main()
