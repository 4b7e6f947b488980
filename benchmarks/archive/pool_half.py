"""How much of the pool a profile searches: the best dev loss of the students that learned from every searched pair
of a build's pool beside those that learned from its first half (Figure 3's 0.5 point, the same seeds), what
gigaword-sample's `search.pool_limit` was chosen on (the dev split, not the test set).

    python -m benchmarks.archive.pool_half --build ../gwrun/build/gigaword-sample --out results/benchmarks/pool_half.json
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from naus import layout
from naus.outputs import write_json
from naus.provenance import read_history


def best_dev_losses(build: Path, length: int, fraction: float, seeds: list[int]) -> list[float]:
    losses = []
    for seed in seeds:
        name = layout.model(length, fraction=fraction, seed=seed)
        history = read_history(build / layout.student_dir(name) / "history.json")
        losses.append(min(entry["dev_loss"] for entry in history["history"] if "dev_loss" in entry))
    return losses


def summary(losses: list[float]) -> dict:
    return {"best_dev_loss": losses, "mean": round(statistics.mean(losses), 4), "sd": round(statistics.stdev(losses), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="a profile's build with the Figure 3 students")
    parser.add_argument("--length", type=int, default=10)
    parser.add_argument("--fraction", type=float, default=0.5)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--note", default="", help="which run made the build (commit, machine)")
    parser.add_argument("--out", default="results/benchmarks/pool_half.json")
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    whole = summary(best_dev_losses(args.build, args.length, 1.0, seeds))
    part = summary(best_dev_losses(args.build, args.length, args.fraction, seeds))
    pairs = len((args.build / layout.search_source("pool")).read_text().splitlines())
    write_json(args.out, {
        "build": str(args.build), "note": args.note, "length": args.length, "seeds": seeds, "pool_pairs": pairs,
        "whole_pool": whole, f"first_{args.fraction}": part,
        "relative_increase": round(part["mean"] / whole["mean"] - 1, 4),
    })
    print(f"best dev loss, L={args.length}: whole pool ({pairs:,} pairs) {whole['mean']} ± {whole['sd']}; "
          f"first {args.fraction:g} {part['mean']} ± {part['sd']} ({part['mean'] / whole['mean'] - 1:+.2%})")


if __name__ == "__main__":
    main()
