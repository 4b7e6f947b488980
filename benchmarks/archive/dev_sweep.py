"""Learning rate and batch size chosen on dev: the sweep's best dev losses beside the profile's own.

A GPU lease (its device is named in results/benchmarks/dev_sweep.json) trained, beside the profile's students, one
L = 10 student per variant (a profile `sweep-<name>` that changes one training key: learning rate or tokens per
batch) with the profile's other settings. This reads their histories and timings and the
profile's own L = 10 student's, and writes the best dev CTC loss (on the dev split's search
output) of each to results/benchmarks/dev_sweep.json.

    python benchmarks/archive/dev_sweep.py --profile gigaword-sample
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from naus import layout
from naus.files import read_json
from naus.outputs import write_json


def summary(build: Path, model: str) -> dict:
    history = read_json(build / layout.student_dir(model) / "history.json", ("history",))["history"]
    timing = read_json(build / layout.train_timing(model), ("seconds", "device"))
    evaluated = [e for e in history if "dev_loss" in e]
    best = min(evaluated, key=lambda e: e["dev_loss"])
    return {"best_dev_loss": round(best["dev_loss"], 4), "best_step": best["step"], "last_step": history[-1]["step"],
            "seconds": round(timing["seconds"], 1), "device": timing["device"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="gigaword-sample")
    parser.add_argument("--length", type=int, default=10)
    parser.add_argument("--out", default="results/benchmarks/dev_sweep.json")
    args = parser.parse_args()
    model = layout.model(args.length)
    train = yaml.safe_load(Path(f"config/{args.profile}.yaml").read_text())["train"]
    runs = {f"profile (lr {train['lr']}, {train['max_tokens']} tokens)": summary(Path("build") / args.profile, model)}
    for build in sorted(Path("build").glob("sweep-*")):
        runs[build.name.removeprefix("sweep-")] = summary(build, model)
    chosen = min(runs, key=lambda name: runs[name]["best_dev_loss"])
    write_json(args.out, {"profile": args.profile, "length": args.length, "runs": runs, "lowest_dev_loss": chosen})
    for name, run in runs.items():
        print(f"{name:40s} {run}")


if __name__ == "__main__":
    main()
