"""ΔR over the teacher per seed, from whatever decodings a (partial) GPU run brought back.

Reads `DECODED/test/{L<n>, L<n>-s<k>}/{method}-<n>.txt`, scores each (rouge-score F1, the
pipeline's evaluator) against the test titles beside the teacher's output for that length, and
writes per seed ΔR and, per (length, method), mean, sd and mean − 2·sd/√seeds (issue 25's bar:
above 0, the student beats its teacher beyond seed noise). For the runs that did not make a
whole table.

    python -m benchmarks.archive.seed_spread --decoded /path/to/build/gigaword-sample/decode \
        --build build/gigaword-sample --out results/benchmarks/seed_spread.json

Findings (the JSON's numbers, as read when it was written; Markdown):

## Seed spread

**Seed spread of the new teacher's students** (`seed_spread.json`, `python -m
benchmarks.archive.seed_spread`): ΔR per seed of whatever decodings a GPU run brought back, with mean, sd
and mean − 2·sd/√n; the README's results section reads it. The current file: the `naus-minilm`
students of the H200 lease of 27 November 2026 whose training finished (L = 10: six or seven
seeds, L = 8: two).
"""

from __future__ import annotations

import argparse
import re
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from naus import layout
from naus.evaluation.evaluate import evaluate_files
from naus.outputs import write_json


def total(scores: dict) -> float:
    return scores["rouge1"] + scores["rouge2"] + scores["rougeL"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decoded", required=True, help="a decode/ folder (test/<model>/<method>-<n>.txt)")
    parser.add_argument("--build", default="build/gigaword-sample", help="the profile's build (teacher, titles)")
    parser.add_argument("--note", default="", help="where the decodings come from (device, run)")
    parser.add_argument("--out", default="results/benchmarks/seed_spread.json")
    args = parser.parse_args()
    build, ref = Path(args.build), str(Path(args.build) / "data/test/title.txt")
    runs = {}
    for path in sorted(Path(args.decoded, "test").glob("*/*.txt")):
        student, name = layout.parse_model(path.parent.name), path.stem
        match = re.fullmatch(r"(truncate|length-control|beam)-(\d+)", name)
        if student.arch == "naus" and student.fraction == 1.0 and match and int(match[2]) == student.length:
            runs[(student.length, match[1], student.seed)] = path
    lengths = sorted({n for n, _, _ in runs})
    files = {("teacher", n): build / f"{layout.search('test', n)}.txt" for n in lengths} | runs
    with ProcessPoolExecutor(2) as pool:
        scores = dict(zip(files, pool.map(evaluate_files, map(str, files.values()), [[ref]] * len(files))))
    rows = {}
    for (n, method), seeds in _grouped(runs).items():
        teacher = total(scores[("teacher", n)])
        delta = {seed: round(total(scores[(n, method, seed)]) - teacher, 2) for seed in seeds}
        values = list(delta.values())
        mean = statistics.mean(values)
        sd = statistics.stdev(values) if len(values) > 1 else float("nan")
        rows[f"L{n} {method}"] = {"teacher_total": round(teacher, 2), "delta_r_by_seed": delta,
                                  "seeds": len(values), "mean": round(mean, 2), "sd": round(sd, 2),
                                  "mean_minus_2se": round(mean - 2 * sd / len(values) ** 0.5, 2)}
    write_json(args.out, {"note": args.note, "reference": ref, "rows": rows})
    for name, row in rows.items():
        print(f"{name:22s} {row}")


def _grouped(runs: dict) -> dict:
    grouped: dict = {}
    for n, method, seed in sorted(runs):
        grouped.setdefault((n, method), []).append(seed)
    return grouped


if __name__ == "__main__":
    main()
