"""A profile regenerated with another training recipe, set beside its committed results: the run's time and, per
length, generation and method, the test totals of both (R-1 + R-2 + R-L F1, mean ± sd over the seeds).

What a recipe chosen on dev at one length does to the tables at every length: a record of a run, not a choice (the
choice is made on dev: `student_steps.py`).

    python -m benchmarks.regeneration --clone build/gwrun --name steps-300-last-600
    python -m benchmarks.regeneration --clone build/gwrun2 --name first-300-two-generations --base main

Findings (gigaword-sample; 2 cores of an AMD EPYC, Zen 4, PyTorch pinned to AVX2): students at 300 steps, the last
generation 600 (`student_steps.json`'s choice at L = 10), regenerated from an empty build in 8021.7 s against the
committed run's 11460.2. The third generation's length control: 68.12 against 68.19 at L = 10, 66.51 against 67.09
at L = 8 and 63.79 against 64.61 on DUC2004 (L = 13): the recipe holds at the length it was chosen at and loses at
the other two, so it was not kept (`student_steps_L8.json` shows the loss on dev).

Two generations, the first at 300 steps and the second at 600 (chosen on dev at L = 8, 10 and 13:
`student_steps*.json`), regenerated in 6588.7 s: the last generation's length control (the second's against the
committed third's) 68.43 against 68.19 at L = 10 (p 0.011), 66.97 against 67.09 at L = 8 (p 0.19) and 64.61 against
64.61 on DUC2004 (p 0.99): kept, the profile's committed results since.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

import yaml

from benchmarks.pipeline_time import ROOT, git
from naus.evaluation.evaluate import METRICS
from naus.evaluation.significance import unpaired_p_value
from naus.files import read_json
from naus.outputs import write_json

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


def last_generations(found: dict) -> dict:
    """Each (split, length, method)'s seeds in its run's last generation: the students a table's chain ends with."""
    last = {}
    for (split, length, generation, method), totals in sorted(found.items()):
        last[(split, length, method)] = (generation, totals)
    return last


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
    parser.add_argument("--base", default="HEAD", help="the commit whose results are the committed run's (default: "
                                                      "HEAD, before the run's results are committed)")
    args = parser.parse_args()

    def at_base(path: str) -> dict:
        return json.loads(git("show", f"{args.base}:{path}", cwd=ROOT))

    committed = at_base(f"results/{args.profile}/metrics.json")
    made = read_json(args.clone / "results" / args.profile / "metrics.json")
    timing = read_json(args.timing or args.clone / "results/benchmarks/gigaword_time.json")
    before, after = rows(committed), rows(made)
    table = {}
    for key in sorted(set(before) & set(after)):
        split, length, generation, method = key
        old, new = summary(before[key]), summary(after[key])
        table[f"{split}/L{length}/g{generation}/{method}"] = {
            "committed": old, "regenerated": new, "change": round(new["mean"] - old["mean"], 2)}
    chosen = {}
    old_last, new_last = last_generations(before), last_generations(after)
    for key in sorted(set(old_last) & set(new_last)):
        (old_generation, old), (new_generation, new) = old_last[key], new_last[key]
        chosen["{}/L{}/{}".format(*key)] = {
            "committed": {"generation": old_generation, **summary(old)},
            "regenerated": {"generation": new_generation, **summary(new)},
            "change": round(statistics.mean(new) - statistics.mean(old), 2),
            "p": round(unpaired_p_value(new, old), 4)}
    config = yaml.safe_load((args.clone / "config" / f"{args.profile}.yaml").read_text())
    write_json(args.out or Path(f"results/benchmarks/regeneration_{args.name}.json"), {
        "profile": args.profile, "recipe": args.name, "train": config["train"],
        "run": {k: timing.get(k) for k in ("commit", "machine", "isa", "cores", "total_seconds", "job_seconds",
                                            "stages", "runs", "resumed")},
        "committed_run_seconds": at_base("results/benchmarks/gigaword_time.json")["total_seconds"],
        "committed_at": git("rev-parse", args.base, cwd=ROOT),
        "metric": "R-1 + R-2 + R-L F1 on the test set (DUC2004: recall at 75 bytes), mean and sd over the seeds",
        "rows": table, "last_generation": chosen,
        "last_generation_note": "each table's last generation against the committed one's (p: two-sided permutation "
                                "test of the two runs' seed totals, as the tables' p vs other LM)"})
    for name, row in chosen.items():
        print(f"{name:40s} {row['committed']['mean']:.2f} -> {row['regenerated']['mean']:.2f} ({row['change']:+.2f}, "
              f"p {row['p']})")


if __name__ == "__main__":
    main()
