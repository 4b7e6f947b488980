"""Fewer states for the fast teacher: can 20-25 encoded states (what the bar of 0.045 s per sentence allows) keep
the quality of 30, with other weights or a shorter climb?

The fast teacher encodes the `rerank_exact` states that fluency + `estimate_gamma`·ln(learned estimate) ranks
best, then picks fluency + `rerank_gamma`·ln(exact similarity). Both weights were chosen for the in-context
estimate and 180 states (`thorough`). Two grids (`GRIDS`), per length, on the dev split and the select split (held
out from the pool, never learned from): `weights` re-tries both weights at 25 and 20 states beside the 30-state
preset; `restarts` halves the hill climbing's restarts to pay for 25 states. Each estimate is fitted as `naus
fit-estimate` fits it for that row's settings. Stage 1 and the source pass depend only on the climb's settings, so
they run once per sentence and climb and are reused; each row's cost is theirs plus its own re-ranking, on one
thread, one process per length.

Writes results/benchmarks/teacher_fewer_states.json (a run of one grid replaces that grid's rows).

    python -m benchmarks.archive.teacher_fewer_states --data build/gigaword-sample/data \
        --lm build/gigaword-sample/lm/lm.bin --onnx build/gigaword-sample/similarity/minilm-int8.onnx [--grid restarts]
"""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks.archive.teacher_default import (
    FAST, fitted, per_length, scored, split_pairs, study_parser, study_report, teacher_for,
)
from naus.files import read_json, read_lines, write_json
from naus.settings import FIT_SENTENCES, PAPER_BUDGET

# Each row's changes to the `fast` preset, by grid: the weights that choose and pick the states, then a shorter
# climb (half the restarts) that pays for more of them.
GRIDS = {
    "weights": [{"rerank_exact": 30}] + [
        {"rerank_exact": states, "estimate_gamma": estimate} for states in (25, 20) for estimate in (48.0, 96.0, 192.0)
    ] + [{"rerank_exact": 20, "rerank_gamma": rerank} for rerank in (32.0, 64.0)],
    "restarts": [{"rerank_exact": states, "restarts_coef": PAPER_BUDGET[1] / 2} for states in (25, 20)],
}
FIT_KEYS = ("estimate_gamma", "restarts_coef")  # what changes the states an estimate is fitted on


class Memo:
    """Stage 1 and the source pass of each sentence, computed once per split and timed, for every setting."""

    def __init__(self):
        self.store, self.seconds = {}, {}

    def wrap(self, teacher, split: str):
        search, context = teacher.climber.search, teacher.contextual.source_context

        def cached(key, compute):
            if key not in self.store:
                tick = time.perf_counter()
                self.store[key] = compute()
                self.seconds[split] = self.seconds.get(split, 0.0) + time.perf_counter() - tick
            return self.store[key]

        teacher.climber.search = lambda index, words, keep: cached(
            ("search", split, index), lambda: search(index, words, keep))
        teacher.contextual.source_context = lambda words: cached(("context", split, tuple(words)),
                                                                 lambda: context(words))
        return teacher


def run_length(job) -> list[dict]:
    args, length = job
    data = Path(args.data)
    fit_sources = read_lines(data / "pool" / "article.txt")[:FIT_SENTENCES]
    splits = split_pairs(data)
    memos, estimates, rows = {}, {}, []
    for grid_changes in GRIDS[args.grid]:
        changes = {**FAST, **grid_changes}
        fit_changes = {k: changes[k] for k in FIT_KEYS if k in changes}
        key = tuple(fit_changes.items())
        if key not in estimates:
            estimates[key] = fitted(args, args.onnx, length, fit_sources, reference=False, **fit_changes)
        estimate, fit = estimates[key]
        row = {"length": length, **changes, "fit": fit}
        memo = memos.setdefault(changes.get("restarts_coef"), Memo())  # stage 1 depends on the climb's budget
        for split, pairs in splits.items():
            before = memo.seconds.get(split, 0.0)
            teacher = memo.wrap(teacher_for(args, args.onnx, length, estimate, **changes), split)
            tick = time.perf_counter()
            result = scored(teacher, *pairs)
            reranking = time.perf_counter() - tick - (memo.seconds[split] - before)
            result["s_per_sentence_core"] = round((reranking + memo.seconds[split]) / len(pairs[0]), 4)
            row[split] = result
        print(row, flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = study_parser(__doc__.splitlines()[0], "results/benchmarks/teacher_fewer_states.json")
    parser.add_argument("--grid", choices=GRIDS, default="weights", help="the rows to run (each grid's rows replace "
                        "that grid's rows in --out, others are kept)")
    args = parser.parse_args()
    report = study_report(Path(args.data), per_length(run_length, args))
    grids = read_json(args.out).get("grids", {}) if Path(args.out).exists() else {}
    grids[args.grid] = {"changes": GRIDS[args.grid], "rows": report.pop("rows")}
    write_json(args.out, {**report, "grids": grids})


if __name__ == "__main__":
    main()
