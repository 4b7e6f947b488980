"""A profile regenerated with another training recipe, set beside its committed results: the run's time and, per
length, generation and method, the test totals of both (R-1 + R-2 + R-L F1, mean ± sd over the seeds).

What a recipe chosen on dev at one length does to the tables at every length: a record of a run, not a choice (the
choice is made on dev: `student_steps.py`).

    python -m benchmarks.regeneration --clone build/gwrun --name steps-300-last-600

Findings (gigaword-sample; 2 cores of an AMD EPYC, Zen 4, PyTorch pinned to AVX2): students at 300 steps, the last
generation 600 (`student_steps.json`'s choice at L = 10), regenerated from an empty build in 8021.7 s against the
committed run's 11460.2. The third generation's length control: 68.12 against 68.19 at L = 10, 66.51 against 67.09
at L = 8 and 63.79 against 64.61 on DUC2004 (L = 13): the recipe holds at the length it was chosen at and loses at
the other two, so it was not kept (`student_steps_L8.json` shows the loss on dev).
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import defaultdict
from pathlib import Path

import yaml

from naus.evaluation.evaluate import METRICS
from naus.files import read_json, write_json

# a seed's decoding: decode/{test|duc}/L{n}[-g{k}][-s{seed}]/{method}, DUC2004's under duc2004/
ROW = re.compile(r"(?:duc2004/)?decode/(?P<split>test|duc)/L(?P<length>\d+)(?:-g(?P<generation>\d+))?(?:-s\d+)?/"
                 r"(?P<method>[a-z-]+-\d+|char-control-c\d+)$")


def rows(metrics: dict) -> dict:
    """Each (split, length, generation, method)'s totals over its seeds."""
    found = defaultdict(list)
    for stem, scores in metrics.items():
        match = ROW.match(stem)
        if match:
            key = (match["split"], int(match["length"]), int(match["generation"] or 1), match["method"])
            found[key].append(sum(scores[k] for k in METRICS))
    return found


def summary(totals: list[float]) -> dict:
    return {"mean": round(statistics.mean(totals), 2), "sd": round(statistics.stdev(totals), 2) if len(totals) > 1
            else None, "seeds": len(totals)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, required=True, help="the run's clone (benchmarks/pipeline_time.py)")
    parser.add_argument("--profile", default="gigaword-sample")
    parser.add_argument("--timing", type=Path, help="the run's timing record (default: the clone's "
                        "results/benchmarks/gigaword_time.json)")
    parser.add_argument("--name", required=True, help="the recipe's name in the output file")
    parser.add_argument("--out", type=Path, help="default: results/benchmarks/regeneration_{name}.json")
    args = parser.parse_args()
    committed = read_json(Path("results") / args.profile / "metrics.json")
    made = read_json(args.clone / "results" / args.profile / "metrics.json")
    timing = read_json(args.timing or args.clone / "results/benchmarks/gigaword_time.json")
    before, after = rows(committed), rows(made)
    table = {}
    for key in sorted(set(before) & set(after)):
        split, length, generation, method = key
        old, new = summary(before[key]), summary(after[key])
        table[f"{split}/L{length}/g{generation}/{method}"] = {
            "committed": old, "regenerated": new, "change": round(new["mean"] - old["mean"], 2)}
    config = yaml.safe_load((args.clone / "config" / f"{args.profile}.yaml").read_text())
    write_json(args.out or Path(f"results/benchmarks/regeneration_{args.name}.json"), {
        "profile": args.profile, "recipe": args.name, "train": config["train"],
        "run": {k: timing.get(k) for k in ("commit", "machine", "isa", "cores", "total_seconds", "job_seconds",
                                            "stages", "runs", "resumed")},
        "committed_run_seconds": read_json(Path("results/benchmarks/gigaword_time.json"))["total_seconds"],
        "metric": "R-1 + R-2 + R-L F1 on the test set (DUC2004: recall at 75 bytes), mean and sd over the seeds",
        "rows": table})
    for name, row in table.items():
        if "/g3/" in name and ("length-control" in name or "char" in name):
            print(f"{name:40s} {row['committed']['mean']:.2f} -> {row['regenerated']['mean']:.2f} ({row['change']:+.2f})")


if __name__ == "__main__":
    main()
