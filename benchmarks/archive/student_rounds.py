"""A stronger student on two CPU cores, chosen on dev: the first generation against its seed ensembles, students of
a second and a third generation (each learning from an earlier one's length-control summaries of the pool instead
of the search's), more steps and a wider top.

It reads a profile's build: the searches, the frozen states and the pipeline's first-generation students (seeds 0-9
at each length). For each recipe and length it records the dev total of each seed (R-1 + R-2 + R-L F1 against the
dev titles, length control at the student's length; an ensemble of k seeds counts as one model, two of them from
disjoint seeds), the minutes a student takes (one thread's CPU minutes, two side by side on two cores; a later
generation's labelling of the pool apart) and the decoding milliseconds a dev sentence (one thread's CPU time,
batch 64, the frozen states given: MiniLM's share is every recipe's alike). The test set plays no part. A later generation's
labels come from no title: its teacher is an earlier student (its dev labels, for choosing its checkpoint, too).
The chosen recipe has the highest mean dev total over the lengths. Finished work is kept under `--work`, reused.

Writes results/benchmarks/student_rounds.json.

    python -m benchmarks.archive.student_rounds --build build/gigaword-sample

Findings (the JSON's numbers, as read when it was written; Markdown):

## A stronger student on two CPU cores, chosen on dev (`student_rounds.json`)

`python -m benchmarks.archive.student_rounds --build ../gwrun/build/gigaword-sample` (2 December 2026, a 2-core
AMD EPYC, Zen 4). It ran on gigaword-sample's build under the disjoint LM: its searches, frozen
states and ten first-generation `naus-copy` students a length.

- **Scoring.** Dev total is R-1 + R-2 + R-L F1 against the 500 dev titles, length control at the student's
  length. The test set plays no part.
- **What "a second generation" is.** Its students learn from the length-control summaries of the pool and of
  dev by an earlier student (or ensemble) instead of the search's. No title reaches those labels; dev's labels
  choose the checkpoint.
- **Two seeds a trained recipe.** An ensemble counts as one model. Ensemble-5 is two ensembles of disjoint
  seeds (0-4, 5-9).
- **Cost columns.** Minutes a student: one thread's CPU minutes, two side by side. Decoding: one thread's CPU
  ms a dev sentence with the frozen states given (MiniLM, every recipe's alike, apart).

| recipe | dev L = 10 | dev L = 8 | min/student | ms/sentence |
|---|---|---|---|---|
| first generation (the pipeline's, 10 seeds) | 89.04 ± 1.01 | 89.43 ± 0.80 | 0.56 | 1.19 |
| 1,200 steps | 88.41 ± 0.23 | 88.79 ± 0.34 | 1.07 | 0.86 |
| 2 × 256 top | 88.63 ± 0.71 | 89.02 ± 1.12 | 2.13 | 3.14 |
| 5 seeds as one model (2 ensembles) | 90.10 ± 0.94 | 90.69 ± 0.45 | — | 4.43 |
| 10 seeds as one model | 89.95 | 90.62 | — | 8.08 |
| second generation, each seed on its own first student's labels | 89.31 ± 0.53 | 88.87 ± 0.16 | 0.56 | 1.08 |
| second generation, on the ten-seed ensemble's labels | 90.48 ± 0.01 | 89.91 ± 0.71 | 0.52 | 0.77 |
| the second generation's seeds as one model | 90.27 | 90.66 | — | 2.5 |
| third generation, on that ensemble's labels | 91.27 ± 0.05 | 89.72 ± 0.34 | 0.51 | 0.73 |

- **The choice.** The third generation has the highest mean over the lengths, 90.50. Next come the second
  generation's ensemble (90.47) and five seeds as one model (90.39; `mean_dev_total`).
- **How sure.** The top four lie within 0.3 of each other, well inside seed noise. Dev is 500 sentences, and a
  first-generation seed's sd is 0.8-1.0. This dev split cannot rank them; what it shows is that each of them
  beats the first generation by about one point.
- **What does not help.** More steps and a wider top are no better than the first generation. A student
  learning from its own seed's summaries is no better either: the gain comes from learning from several seeds
  at once.
- **Labelling cost.** Labelling the pool by ten seeds as one model costs 1.12 CPU minutes a length on two
  cores, once for every seed of the next generation.
- **In the pipeline.** gigaword-sample sets `train.generations: 3`: Tables 2 and 3 show each generation's ten
  seeds by every method, and each later generation learns from the previous one's ten seeds as one model.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


from benchmarks.common import decode, one_thread, run_all, settings, total, train
from naus.device import cpu_name
from naus import layout
from naus.files import read_json
from naus.outputs import write_json

ENSEMBLE_SEEDS = (tuple(range(5)), tuple(range(5, 10)))  # two ensembles of five, of disjoint seeds
# Each recipe that trains: the settings that differ from the profile's, and whose summaries of the pool it learns
# from (None: the search's; "ensemble-10": the first generation's ten seeds as one model; "own": its own seed's
# first-generation student; "second-ensemble": the second generation's seeds as one model).
TRAINED = {
    "steps-1200": ({"max_steps": 1200}, None),
    "top-2x256": ({"n_layers": 2, "d_model": 256, "d_ff": 1024}, None),
    "second-generation": ({}, "ensemble-10"),
    "second-generation-own": ({}, "own"),
    "third-generation": ({}, "second-ensemble"),
}


def ensemble(members: list[Path], out: Path) -> Path:
    from naus.student.checkpoint import save_ensemble

    if not out.is_file():
        save_ensemble(members, out)
    return out


def study(build: Path, work: Path, profile: Path, lengths: list[int], seeds: list[int], pool) -> dict:
    model, training = settings(profile)
    titles = build / layout.split_file("dev", "title")
    split = {s: (build / layout.STATES_SOURCES[s], build / layout.frozen_states(s)) for s in ("pool", "dev")}
    recipes: dict[str, dict] = {}

    def models(length: int, named: dict[str, list[Path]]) -> None:
        """Dev-decode each recipe's models at `length` and record them."""
        plan = [(name, i, path) for name, paths in named.items() for i, path in enumerate(paths)]
        outs = [work / "dev" / f"L{length}" / f"{name}-{i}.txt" for name, i, _ in plan]
        timings = run_all(pool, [(decode, path, *split["dev"], length, out) for (_, _, path), out in zip(plan, outs)])
        for (name, _, _), out, timing in zip(plan, outs, timings):
            entry = recipes.setdefault(name, {}).setdefault(str(length), {})
            entry.setdefault("runs", []).append({**total(out, titles), "ms_per_sentence": round(1000 * timing["seconds"] /
                                                                                   timing["sentences"], 2)})

    labelling: dict[tuple[int, str], float] = {}

    def labels(length: int, teachers: dict[str, Path]) -> dict[str, dict[str, Path]]:
        """Models' length-control summaries of the searched pool and of dev (a later generation's targets), all
        side by side, by the name of the model."""
        outs = {name: {s: work / "labels" / f"L{length}" / name / f"{s}.txt" for s in split} for name in teachers}
        plan = [(name, s) for name in teachers for s in split]
        timings = run_all(pool, [(decode, teachers[name], *split[s], length, outs[name][s]) for name, s in plan])
        for (name, _), timing in zip(plan, timings):
            labelling[(length, name)] = labelling.get((length, name), 0.0) + timing["seconds"]
        return outs

    def trained(name: str, length: int, targets: dict[int, dict[str, Path]], model_over: dict, train_over: dict):
        jobs = [{"source": split["pool"][0], "target": targets[seed]["pool"], "out": work / name / f"L{length}-s{seed}",
                 "model": {**model, **model_over}, "train": {**training, **train_over, "seed": seed},
                 "dev_source": split["dev"][0], "dev_target": targets[seed]["dev"], "states": split["pool"][1],
                 "dev_states": split["dev"][1]} for seed in seeds]
        runs = run_all(pool, [(train, job) for job in jobs])
        recipes.setdefault(name, {}).setdefault(str(length), {})["train"] = runs
        return [job["out"] / "best.pt" for job in jobs]

    for length in lengths:
        first = [build / layout.student_checkpoint(layout.model(length, "naus", None, seed)) for seed in range(10)]
        ens = {k: ensemble([first[s] for s in members], work / "ensembles" / f"L{length}-{'-'.join(map(str, members))}.pt")
               for k, members in enumerate(ENSEMBLE_SEEDS)}
        ens10 = ensemble(first, work / "ensembles" / f"L{length}-all.pt")
        models(length, {"first-generation": first, "ensemble-5": list(ens.values()),
                        "ensemble-10": [ens10]})
        search = {split_: build / f"{layout.search(split_, length)}.txt" for split_ in split}
        made = labels(length, {"ensemble-10": ens10, **{f"first-s{seed}": first[seed] for seed in seeds}})
        by_ensemble, own = made["ensemble-10"], {seed: made[f"first-s{seed}"] for seed in seeds}
        second: list[Path] = []
        for name, (over, source) in TRAINED.items():
            if source == "second-ensemble":
                continue
            targets = {seed: {None: search, "ensemble-10": by_ensemble, "own": own.get(seed)}[source] for seed in seeds}
            over_model = {k: v for k, v in over.items() if k in model}
            students = trained(name, length, targets, over_model, {k: v for k, v in over.items() if k not in model})
            models(length, {name: students})
            if source is not None:
                cost = [labelling[(length, "ensemble-10" if source == "ensemble-10" else f"first-s{seed}")] for seed in seeds]
                recipes[name][str(length)]["labels_seconds"] = round(statistics.mean(cost), 1)
            if name == "second-generation":
                second = students
        second_ensemble = ensemble(second, work / "ensembles" / f"L{length}-second.pt")
        models(length, {"second-generation-ensemble": [second_ensemble]})
        by_second = labels(length, {"second-ensemble": second_ensemble})["second-ensemble"]
        models(length, {"third-generation": trained("third-generation", length, {s: by_second for s in seeds}, {}, {})})
        recipes["third-generation"][str(length)]["labels_seconds"] = round(labelling[(length, "second-ensemble")], 1)
    return recipes


def summary(entry: dict, jobs: int) -> dict:
    """A recipe at one length: its dev totals' mean and sd, minutes a student, decoding ms a sentence."""
    totals = [run["total"] for run in entry["runs"]]
    out = {"dev_total": round(statistics.mean(totals), 2),
           "dev_sd": round(statistics.stdev(totals), 2) if len(totals) > 1 else None, "models": len(totals),
           "ms_per_sentence": round(statistics.mean(run["ms_per_sentence"] for run in entry["runs"]), 2)}
    if "train" in entry:
        out["minutes_per_student"] = round(statistics.mean(r["cpu_seconds"] for r in entry["train"]) / 60 / jobs, 2)
    if "labels_seconds" in entry:  # once for every seed of a recipe whose labels are one model's
        out["labels_minutes"] = round(entry["labels_seconds"] / 60 / jobs, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="the profile's build, its first generation trained")
    parser.add_argument("--profile", type=Path, default=Path("config/gigaword-sample.yaml"))
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 8])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="the seeds of each recipe that trains")
    parser.add_argument("--jobs", type=int, default=2, help="workers side by side, one thread each")
    parser.add_argument("--work", type=Path, default=Path("build/benchmarks/student_rounds"))
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/student_rounds.json"))
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")  # each worker sets its threads before torch loads
    with ProcessPoolExecutor(args.jobs, mp_context=context, initializer=one_thread) as pool:
        recipes = study(args.build, args.work, args.profile, args.lengths, args.seeds, pool)
    titles = args.build / layout.split_file("dev", "title")
    teacher = {str(n): total(args.build / f"{layout.search('dev', n)}.txt", titles)["total"] for n in args.lengths}
    first_minutes = {str(n): round(read_json(args.build / layout.train_timing(layout.model(n)))["seconds"] / 60 / args.jobs, 2)
                     for n in args.lengths}
    table = {name: {n: summary(entry, args.jobs) for n, entry in by_length.items()} for name, by_length in recipes.items()}
    for n, minutes in first_minutes.items():
        table["first-generation"][n]["minutes_per_student"] = minutes
    means = {name: round(statistics.mean(v["dev_total"] for v in by_length.values()), 2)
             for name, by_length in table.items()}
    chosen = max(means, key=means.get)
    write_json(args.out, {
        "profile": args.profile.stem, "cpu": cpu_name(), "cores": args.jobs, "split": "dev (500 pool pairs held out)",
        "method": "length control at the student's length",
        "metric": "R-1 + R-2 + R-L F1 (rouge-score) against the dev titles",
        "minutes_per_student": "one job's CPU minutes (one thread) / the jobs side by side; a later generation's "
                               "labelling of the pool is in labels_minutes",
        "ms_per_sentence": "one thread's CPU milliseconds, batch 64, frozen states given (MiniLM's states, every "
                           "recipe's alike, apart)",
        "teacher_dev_total": teacher, "recipes": table, "chosen": chosen,
        "chosen_by": "the highest mean dev total over the lengths", "seeds": args.seeds,
        "mean_dev_total": means, "runs": recipes})
    for name, by_length in table.items():
        print(f"{name:28s}", "  ".join(f"L{n} {v['dev_total']:.2f} ± {v['dev_sd'] or 0:.2f}" for n, v in by_length.items()))
    print("teacher", teacher, "chosen:", chosen)


if __name__ == "__main__":
    main()
