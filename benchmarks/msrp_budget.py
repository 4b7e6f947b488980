"""MSRP at our word budget: its released Gigaword outputs (Hyun et al. 2022) as released and cut at L words, beside
our committed students' rows of Table 2 at the same L.

MSRP's outputs do not keep the budget of L words; ours have exactly L. Each output is checked as the pipeline checks
it (`naus.evaluation.peers.check_output`: its sha256, a line per test sentence), cut at L words as Lead cuts a
source (`naus.evaluation.evaluate.lead`) and scored by our evaluator against the test titles. Table 2's rows are
read from `results/gigaword-sample/tables/table2.csv`. The pipeline shows the same row ("MSRP (rescored), cut at L
words", `decode.cut_peers`) with its paired test against ours once the profile runs with it.

    python -m benchmarks.msrp_budget       # NAUS_DATA: the shared data directory
"""

from __future__ import annotations

import argparse
import csv
import os
from pathlib import Path

from naus.evaluation.evaluate import evaluate_files, lead
from naus.evaluation.peers import GIGAWORD, PEERS, check_output
from naus.outputs import write_json, write_lines

ROWS = ("NAUS length control (ours)", "NAUS length control, generation 3 (ours)")


def total(scores: dict) -> float:
    return round(scores["rouge1"] + scores["rouge2"] + scores["rougeL"], 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("NAUS_DATA", "../shared/data")))
    parser.add_argument("--table", type=Path, default=Path("results/gigaword-sample/tables/table2.csv"))
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/msrp_budget.json"))
    args = parser.parse_args()
    source, titles = args.data / "gigaword/test/input.txt", args.data / "gigaword/test/task1_ref0.txt"
    with open(args.table, newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    work = Path("build/benchmarks/msrp_budget")
    work.mkdir(parents=True, exist_ok=True)
    report = {"data": "Gigaword test set, 1,951 pairs", "table": str(args.table)}
    for (collection, length), (name, _) in sorted(PEERS["msrp"].files.items()):
        if collection != GIGAWORD:
            continue
        lines = check_output("msrp", collection, length, args.data / "published/msrp" / name, source)
        words = [len(line.split()) for line in lines]
        row = {"longer_than_L": sum(n > length for n in words), "exactly_L": sum(n == length for n in words),
               "shorter": sum(n < length for n in words)}
        for kind, outputs in (("as_released", lines), ("cut_at_L", lead(lines, length))):
            path = work / f"msrp-L{length}-{kind}.txt"
            write_lines(path, outputs)
            scores = evaluate_files(path, [titles])
            row[kind] = {**{k: scores[k] for k in ("rouge1", "rouge2", "rougeL", "avg_words")}, "total": total(scores)}
        for label in ROWS:
            found = next(r for r in table if r["L"] == str(length) and r["System"] == label)
            ours = {"rouge1": float(found["R-1"]), "rouge2": float(found["R-2"]), "rougeL": float(found["R-L"])}
            row[label] = {"total": total(ours), "minus_msrp_cut": round(total(ours) - row["cut_at_L"]["total"], 2)}
        report[f"L{length}"] = row
        print(length, row, flush=True)
    write_json(args.out, report)


if __name__ == "__main__":
    main()
