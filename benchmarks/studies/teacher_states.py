"""How many states the fast teacher encodes: its cost is MiniLM over the states its learned estimate ranks best
(three quarters of a sentence's time at 30 states), so fewer states buy speed; what do they cost in quality?

The `fast` preset as the pipeline runs it (its estimate fitted once per length as `naus fit-estimate` does, on the
pool's first `FIT_SENTENCES` sentences), with `rerank_exact` of 30 (the preset), 20 and 15, on the dev split and the
select split (held out from the pool, never learned from), one process per length on one thread each, as
`naus --threads 1` runs a search shard. Writes results/benchmarks/teacher_states.json.

    python -m benchmarks.studies.teacher_states --data build/gigaword-sample/data \
        --lm build/gigaword-sample/lm/lm.bin --onnx build/gigaword-sample/similarity/minilm-int8.onnx
"""

from __future__ import annotations

import argparse
import multiprocessing
from pathlib import Path

from benchmarks.studies.teacher_cost import cpu_name
from benchmarks.studies.teacher_default import SPLITS, fitted, scored, teacher_for
from naus.cli import limit_threads
from naus.files import read_lines, sha256sum, write_json
from naus.settings import FIT_SENTENCES, FIT_STATES, TEACHER_PRESETS

STATES = (30, 20, 15)


def run_length(job) -> list[dict]:
    args, length = job
    data = Path(args.data)
    estimate, fit = fitted(args, args.onnx, length, read_lines(data / "pool" / "article.txt")[:FIT_SENTENCES],
                           reference=False)
    splits = {split: [read_lines(data / split / f"{side}.txt") for side in ("article", "title")] for split in SPLITS}
    fast = {k: v for k, v in TEACHER_PRESETS["fast"].items() if k not in ("estimator", "rerank_exact")}
    rows = []
    for states in STATES:
        teacher = teacher_for(args, args.onnx, length, estimate, **fast, rerank_exact=states)
        row = {"length": length, "rerank_exact": states, "fit": fit,
               **{split: scored(teacher, *pairs) for split, pairs in splits.items()}}
        print(row, flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="the profile's data directory (pool/, dev/, select/)")
    parser.add_argument("--lm", required=True, help="the profile's KenLM model")
    parser.add_argument("--onnx", required=True, help="MiniLM as the pipeline exports it (7-bit weights)")
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 8])
    parser.add_argument("--out", default="results/benchmarks/teacher_states.json")
    args = parser.parse_args()
    limit_threads(1)  # before the workers start (and load numpy's BLAS), as `naus --threads 1` runs a search shard
    with multiprocessing.get_context("spawn").Pool(len(args.lengths)) as pool:
        results = pool.map(run_length, [(args, length) for length in args.lengths])
    data = Path(args.data)
    write_json(args.out, {
        "data": {split: f"{data / split}: {len(read_lines(data / split / 'article.txt'))} pairs, sha256 "
                        f"{sha256sum(data / split / 'article.txt')[:12]}" for split in SPLITS},
        "machine": cpu_name(), "threads": "one per length, each length in its own process",
        "fit": {"sentences": FIT_SENTENCES, "states": FIT_STATES},
        "rows": [row for result in results for row in result]})


if __name__ == "__main__":
    main()
