"""The training recipe chosen on dev: each candidate's dev loss and dev ROUGE of length control.

A GPU lease (an H100: results/benchmarks/dev_sweep.json names it) trained, before the table students, a few
students per candidate recipe (a profile `recipe-<name>`: the profile with one YAML overlay, its search output shared)
and decodes the dev split with each by length control; the pipeline scores them against the dev
titles. This reads their histories and dev metrics, writes every run and each recipe's mean to
results/benchmarks/recipes.json, and prints the recipe with the highest mean dev total ROUGE over
all lengths (the winner per length is recorded too). The test set plays no part.

    python -m benchmarks.archive.recipes --profile gigaword-sample --recipes naus minilm dropout

Findings (the JSON's numbers, as read when it was written; Markdown):

## The training recipe

**The training recipe, chosen on dev** (`recipes.json`, `python -m benchmarks.archive.recipes`, run by
`scripts/gpu-students.sh train` on the GPU machine): per candidate (a YAML overlay of the
profile), the students of L = 8 and 10, seeds 0 and 1, their best dev loss and the dev ROUGE of
length control on the 500 dev pairs; the highest mean dev total wins (`naus-minilm`: 86.05 / 84.98
at L = 8 / 10, against 79.78 / 81.78 for the 4×256 NAUS and 75.56 / 76.06 with dropout 0.3).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from benchmarks.common import choose
from naus import layout
from naus.files import read_json
from naus.outputs import write_json


def total(scores: dict) -> float:
    return scores["rouge1"] + scores["rouge2"] + scores["rougeL"]


def runs_of(recipe: str) -> dict:
    """Each student of recipe-<recipe> with dev metrics: its best dev loss and its dev ROUGE at its length."""
    build, results, runs = Path("build") / f"recipe-{recipe}", Path("results") / f"recipe-{recipe}", {}
    for metrics in sorted(results.glob(f"metrics/{layout.decoded('dev', '*', 'length-control', '*')}.json")):
        model = metrics.parent.name
        student = layout.parse_model(model)
        scores = read_json(metrics, ("rouge1", "rouge2", "rougeL"))
        history = read_json(build / layout.student_dir(model) / "history.json", ("history",))["history"]
        losses = [entry["dev_loss"] for entry in history if "dev_loss" in entry]
        runs[model] = {"length": student.length, "seed": student.seed, "best_dev_loss": min(losses),
                       "steps": history[-1]["step"], **{k: scores[k] for k in ("rouge1", "rouge2", "rougeL")},
                       "total": round(total(scores), 2)}
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="gigaword-sample")
    parser.add_argument("--recipes", nargs="+", required=True, help="names: build/recipe-<name>, with recipe.yaml")
    parser.add_argument("--note", default="", help="where the students were trained (device, run)")
    parser.add_argument("--out", default="results/benchmarks/recipes.json")
    args = parser.parse_args()
    recipes = {name: runs_of(name) for name in args.recipes}
    chosen, summary = choose(recipes)
    overlays = {name: yaml.safe_load((Path("build") / f"recipe-{name}" / "recipe.yaml").read_text()) or {}
                for name in args.recipes}
    write_json(args.out, {"profile": args.profile, "note": args.note, "chosen": chosen, "chosen_by":
                          "highest mean dev total ROUGE (R-1 + R-2 + R-L F1, length control) over the lengths",
                          **summary, "overlays": overlays, "runs": recipes})
    for name, runs in recipes.items():
        print(f"{name:10s} {summary['mean_dev_total'][name]}  " + "  ".join(
            f"{model}: loss {r['best_dev_loss']:.4f} total {r['total']}" for model, r in runs.items()))
    print(chosen)


if __name__ == "__main__":
    main()
