"""Fewer training steps for the CPU student, chosen on dev: what a first-generation `naus-copy` student at L = 10
loses in dev quality when it trains for fewer steps than gigaword-sample's 600 (the largest block of the profile's
time: 130 students, gigaword_time.json).

It reads a profile's build (the L = 10 searches of the pool and of dev, the frozen states) and trains, for each
recipe and seed, a student as the pipeline trains it (one thread, the portable kernels; two workers side by side on
two cores, as the workflow runs students); each is decoded by length control on the dev split and scored against the
dev titles (R-1 + R-2 + R-L F1: a choice made on dev; the test set plays no part). Each student's CPU seconds (one
thread) are its cost. Then the recipes of `--chain` run through the profile's generations with ten seeds each (each
generation after the first learning from the previous one's seeds as one model, as the pipeline's do): the dev total
of the last generation is what Tables 2 and 3 show. Finished work is kept under `--work`, reused.

    python -m benchmarks.student_steps --build build/gigaword-sample

Writes results/benchmarks/student_steps.json.

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

`python -m benchmarks.student_steps` (4 December 2026, 2 cores of an AMD EPYC, Zen 4, PyTorch pinned to AVX2;
gigaword-sample's build: the pool's 16,842 searched sentences at L = 10, dev's 500). Dev totals are means ± one
standard error over the seeds; CPU seconds are one thread's, two students side by side.

| recipe | first generation (6 seeds) | CPU s a student |
|---|---|---|
| 600 steps (the profile's before this study) | 89.30 ± 0.37 | 51.3 |
| 400 steps | 89.23 ± 0.23 | 35.0 |
| 300 steps, warm-up 50 | 89.32 ± 0.24 | 27.4 |
| 300 steps, warm-up 50, learning rate 2e-3 | 89.49 ± 0.57 | 27.7 |

Through the profile's three generations, ten seeds each:

| recipe | generation 1 | generation 2 | generation 3 (Tables 2 and 3) |
|---|---|---|---|
| 600 steps | 89.04 ± 0.32 | 90.29 ± 0.13 | 90.84 ± 0.17 |
| 300 steps | 89.42 ± 0.18 | 90.52 ± 0.12 | 90.42 ± 0.17 |

A first or second generation loses nothing at 300 steps, at 0.53 of the time. The third does: 0.42 below the
profile's (1.7 standard errors of the difference), past the 0.3 that issue 88 allows. The chains, ten seeds a
generation, by the recipe of each generation (CPU seconds a student, by generation):

| chain | generation 1 | generation 2 | generation 3 | CPU s |
|---|---|---|---|---|
| 600, 600, 600 (committed) | 89.04 ± 0.32 | 90.29 ± 0.13 | 90.84 ± 0.17 | 52.2, 52.8, 50.8 |
| 300, 300, 600 | 89.42 ± 0.18 | 90.52 ± 0.12 | 90.81 ± 0.16 | 27.7, 27.5, 54.7 |
| 300, 600, 600 | 89.42 ± 0.18 | 90.88 ± 0.14 | 90.71 ± 0.13 | 27.7, 52.5, 50.7 |

`300, 300, 600` was chosen here at L = 10 alone and regenerated the profile (`regeneration.py`): it lost half a
point at L = 8 and on DUC2004 (L = 13), and was not kept. `--length 8` (`student_steps_L8.json`) shows it on dev:

| chain, L = 8 | generation 1 | generation 2 | generation 3 | CPU s |
|---|---|---|---|---|
| 600, 600, 600 (committed) | 89.43 ± 0.25 | 90.19 ± 0.21 | 90.35 ± 0.15 | 54.8, 53.6, 51.3 |
| 300, 300, 600 | 88.74 ± 0.26 | 89.60 ± 0.16 | 89.66 ± 0.12 | 27.6, 27.9, 51.9 |
| 300, 600, 600 | 88.74 ± 0.26 | 90.42 ± 0.12 | 90.20 ± 0.13 | 27.6, 52.8, 48.4 |

At L = 13, DUC2004's length (`--length 13`, `student_steps_L13.json`; the chains this needs):

| chain, L = 13 | generation 1 | generation 2 | generation 3 | CPU s |
|---|---|---|---|---|
| 600, 600, 600 (committed) | 86.61 ± 0.20 | 87.89 ± 0.09 | 87.58 ± 0.13 | 58.0, 58.6, 53.5 |
| 300, 600, 600 | 87.17 ± 0.19 | 88.27 ± 0.11 | 88.39 ± 0.15 | 31.9, 53.1, 51.6 |

**Chosen for the next regeneration: two generations, the first of 300 steps (`train.first_generation`), the second
of 600**: 90.88, 90.42 and 88.27 on dev at L = 10, 8 and 13 against the committed third generation's 90.84, 90.35
and 87.58, for about half the chain's training time and no third generation to label the pool for.

A smaller search (`--seeds --chain half-300-then-600 --out results/benchmarks/student_steps_half.json`, and `_L8`):
the first generation learns from the first half of the searched pool alone (the search's largest cost halved), the
second from its ensemble's labels of the whole pool. The first generation loses nothing (89.40 ± 0.19 at L = 10,
88.85 ± 0.24 at L = 8, against 89.42 and 88.74), the second does: 90.62 ± 0.19 against 90.88 ± 0.14 at L = 10 and
89.51 ± 0.10 against 90.42 ± 0.12 at L = 8. Not chosen (L = 13 was not run).
"""

from __future__ import annotations

import argparse
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from benchmarks.common import decode, one_thread, run_all, seed_summary, settings, students_machine, total, train
from naus import layout
from naus.outputs import write_json
from naus.student.checkpoint import save_ensemble

LENGTH = 10  # the length the recipes were chosen at; --length checks another
# Each recipe: its training settings over the profile's. The first is gigaword-sample's own.
STEPS_600 = {"max_steps": 600, "warmup": 100, "eval_every": 100}
RECIPES = {
    "steps-600": STEPS_600,
    "steps-400": {**STEPS_600, "max_steps": 400},
    "steps-300": {"max_steps": 300, "warmup": 50, "eval_every": 50},
    "steps-300-lr-2e-3": {"max_steps": 300, "warmup": 50, "eval_every": 50, "lr": 2.0e-3},
    "steps-300-half": {"max_steps": 300, "warmup": 50, "eval_every": 50},
}
# A recipe that learns from the first part of the searched pool alone (a smaller search), its later generations
# from its ensemble's labels of the whole pool.
FRACTIONS = {"steps-300-half": 0.5}
# Each chain: the recipe of each generation in turn (the last one repeats). Chains that share their first
# generations share those students (`folder`).
CHAINS = {"steps-600": ["steps-600"], "steps-300": ["steps-300"],
          "steps-300-last-600": ["steps-300", "steps-300", "steps-600"],
          "steps-300-then-600": ["steps-300", "steps-600"], "half-300-then-600": ["steps-300-half", "steps-600"]}


def recipes_of(chain: str, generations: int) -> list[str]:
    named = CHAINS[chain]
    return [named[min(g, len(named) - 1)] for g in range(generations)]


def folder(work: Path, chain: str, generation: int, generations: int) -> Path:
    """Where a chain's generation lives: under the first chain (in CHAINS' order) with the same recipes up to it."""
    prefix = recipes_of(chain, generations)[:generation]
    owner = next(name for name in CHAINS if recipes_of(name, generations)[:generation] == prefix)
    return work / owner


def student(work: Path, generation: int, seed: int) -> Path:
    """A student's folder under its recipe's or chain's (the first generation's where the one-generation comparison
    left it)."""
    return work / (f"s{seed}" if generation == 1 else f"g{generation}/s{seed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path(layout.profile_dir("build", "gigaword-sample")))
    parser.add_argument("--profile", type=Path, default=Path("config/gigaword-sample.yaml"))
    parser.add_argument("--length", type=int, default=LENGTH)
    parser.add_argument("--work", type=Path, help="default: build/benchmarks/student_steps (-L8 at another length)")
    parser.add_argument("--seeds", type=int, nargs="*", default=list(range(6)),
                        help="the first generation's seeds for every recipe (none: the chains alone)")
    parser.add_argument("--chain", nargs="*", default=list(CHAINS), choices=list(CHAINS),
                        help="chains of recipes run through the profile's generations, ten seeds each")
    parser.add_argument("--out", type=Path, help="default: results/benchmarks/student_steps.json (_L8 at L = 8)")
    args = parser.parse_args()
    suffix = "" if args.length == LENGTH else f"_L{args.length}"
    args.work = args.work or Path(f"build/benchmarks/student_steps{suffix.replace('_', '-')}")
    args.out = args.out or Path(f"results/benchmarks/student_steps{suffix}.json")
    length = args.length
    model, training = settings(args.profile)
    generations, chain_seeds = yaml.safe_load(args.profile.read_text())["train"]["generations"], list(range(10))
    build, work = args.build, args.work
    source, states = {s: build / layout.STATES_SOURCES[s] for s in ("pool", "dev")}, \
        {s: build / layout.frozen_states(s) for s in ("pool", "dev")}
    titles = build / layout.split_file("dev", "title")

    def job(recipe: str, where: Path, generation: int, seed: int, targets: dict) -> dict:
        return {"source": source["pool"], "target": targets["pool"], "dev_source": source["dev"],
                "dev_target": targets["dev"], "states": states["pool"], "dev_states": states["dev"], "model": model,
                "train": {**training, **RECIPES[recipe], "seed": seed}, "fraction": FRACTIONS.get(recipe, 1.0),
                "out": student(where, generation, seed)}

    search = {s: build / f"{layout.search(s, length)}.txt" for s in ("pool", "dev")}
    first = {(name, seed): job(name, work / name, 1, seed, search) for name in RECIPES if name not in FRACTIONS
             for seed in args.seeds}
    recipes, chains = {}, {}
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context, initializer=one_thread) as pool:
        def trained(jobs: dict) -> dict:
            """Each job's student trained and its dev summaries scored: its CPU seconds, steps and dev total by key."""
            unique = list({j["out"]: j for j in jobs.values()}.values())  # chains that share a generation share it
            runs = dict(zip((j["out"] for j in unique), run_all(pool, [(train, j) for j in unique])))
            run_all(pool, [(decode, j["out"] / "best.pt", source["dev"], states["dev"], length, j["out"] / "dev.txt")
                           for j in unique])
            return {key: {**runs[j["out"]], "dev_total": total(j["out"] / "dev.txt", titles)["total"]}
                    for key, j in jobs.items()}

        done = trained(first)
        for name, changes in [(n, c) for n, c in RECIPES.items() if n not in FRACTIONS] if args.seeds else ():
            runs = [done[name, seed] for seed in args.seeds]
            recipes[name] = {"changes": changes, **seed_summary(runs), "steps_run": [run["steps"] for run in runs]}
        targets = {name: search for name in args.chain}
        for generation in range(1, generations + 1):
            jobs = {(name, seed): job(recipes_of(name, generations)[generation - 1],
                                      folder(work, name, generation, generations), generation, seed, targets[name])
                    for name in args.chain for seed in chain_seeds}
            done = trained(jobs)
            for name in args.chain:
                runs = [done[name, seed] for seed in chain_seeds]
                members = [jobs[name, seed]["out"] / "best.pt" for seed in chain_seeds]
                ensemble = folder(work, name, generation, generations) / f"ensemble-g{generation}"
                ensemble.mkdir(parents=True, exist_ok=True)
                if not (ensemble / "best.pt").is_file():
                    save_ensemble(members, ensemble / "best.pt")
                # the next generation's labels (the pool's and dev's), or the last one's dev summaries alone
                labels = {s: ensemble / f"{s}.txt" for s in (("pool", "dev") if generation < generations else ("dev",))}
                made = run_all(pool, [(decode, ensemble / "best.pt", source[s], states[s], length, labels[s])
                                      for s in labels])
                chains.setdefault(name, {"recipes": recipes_of(name, generations)})[f"generation {generation}"] = {
                    **seed_summary(runs),
                    "ensemble_dev_total": total(labels["dev"], titles)["total"],
                    "ensemble_labels_cpu_seconds": round(sum(m["seconds"] for m in made), 1)}
                targets[name] = labels  # the next generation learns from this one's ten seeds as one model
    for entry in recipes.values():
        base = recipes["steps-600"]
        entry["dev_total_change"] = round(entry["dev_total"] - base["dev_total"], 2)
        entry["time_ratio"] = round(entry["cpu_seconds_per_student"] / base["cpu_seconds_per_student"], 2)
    write_json(args.out, {**students_machine(),
                          "data": f"{build}: the pool's searched sentences at L = {length}, the dev split's 500",
                          "length": length, "method": "length control",
                          "metric": "R-1 + R-2 + R-L F1 against the dev titles",
                          "first_generation": {"seeds": args.seeds, "recipes": recipes},
                          "generations": {"seeds": chain_seeds, "labels": "each generation after the first learns "
                                          "from the previous one's ten seeds as one model (its length-control "
                                          "summaries of the pool and of dev)", "recipes": chains}})
    for name, entry in recipes.items():
        print(f"{name:20s} dev {entry['dev_total']:.2f} ± {entry['dev_se']:.2f} (change {entry['dev_total_change']:+.2f})"
              f"  {entry['cpu_seconds_per_student']:.1f} CPU s a student ({entry['time_ratio']}×)")
    for name, chain in chains.items():
        for generation, entry in ((k, v) for k, v in chain.items() if k.startswith("generation")):
            print(f"{name:20s} {generation}: dev {entry['dev_total']:.2f} ± {entry['dev_se']:.2f}, its ensemble "
                  f"{entry['ensemble_dev_total']:.2f}, {entry['cpu_seconds_per_student']:.1f} CPU s a student")


if __name__ == "__main__":
    main()
