"""Does a second generation close the distilled encoders' gap at L = 8? (issue 88: the student at 6 ms a sentence on
plain AVX2 with its dev quality; every encoder distilled to about 0.4 of MiniLM's cost loses about half a point at
L = 8 in the first generation, `student_distilled.py`). The profiles' students are a second generation: each learns
from the first generation's seeds, as one model, where the first learns from the search.

For each encoder's folder under `--work` (its states and first-generation students there, kept by
`student_distilled.py` or `student_layers.py`): the first generation's `--seeds` as one checkpoint (`naus
ensemble`'s), its length-control summaries of the pool and of dev (no title), then a second generation of the same
seeds trained on them as the pipeline trains a later generation (the profile's training settings), decoded by length
control on dev and scored against the dev titles (a choice made on dev). Finished work is kept, reused.

    python -m benchmarks.student_distilled_generations --build build/gigaword-sample --encoders k6 d4-epochs4-ffn384

Writes results/benchmarks/student_distilled_generations.json.

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

`--encoders k6 d4-epochs4-ffn384 pipeline-ffn1536 pipeline` (5 December 2026, 2 cores of an Intel Xeon with AVX-512
and AMX, PyTorch pinned to AVX2; `build/gigaword-sample`, L = 8, seeds 0 to 9, mean ± standard error; the first
generations are those studies' 600-step students, the profile's later-generation settings for the second):

| encoder under the students | first generation | second generation | second-generation seeds below MiniLM's |
|---|---|---|---|
| MiniLM, 6 layers (today's) | 89.43 ± 0.25 | 90.17 ± 0.20 | |
| 4 distilled layers, 384-unit blocks | 88.89 ± 0.23 (−0.54) | 89.35 ± 0.16 (−0.82) | 9 of 10 |
| `naus distil`'s 3 layers, 1,536-unit blocks | 88.53 ± 0.29 (−0.90) | 88.72 ± 0.17 (−1.45) | 10 of 10 |
| `naus distil`'s default: 3 layers, 768-unit blocks | 88.84 ± 0.24 (−0.59) | 89.44 ± 0.16 (−0.73) | 8 of 10 |

A second generation does not close a distilled encoder's gap: it widens it for each of the three. The students on
MiniLM's states gain 0.74 from learning on their first generation's ensemble, those on the distilled encoders' 0.46,
0.19 and 0.60 (the first generation on `naus distil`'s default encoder, folder `pipeline`, made by `student_distilled.py
--pipeline --length 8 --seeds 0 ... 9` in this run). The ensembles'
labels of the pool took under a minute each (57.29 CPU-s for MiniLM's). The profiles keep MiniLM's states.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.common import decode, one_thread, run_all, seed_summary, settings, students_machine, total, train
from benchmarks.student_layers import study_parser
from naus import layout
from naus.files import read_json
from naus.outputs import write_json


def ensemble(members: list[Path], out: Path) -> Path:
    """The members as one checkpoint (kept: made once)."""
    if not out.is_file():
        from naus.student.checkpoint import save_ensemble

        out.parent.mkdir(parents=True, exist_ok=True)
        save_ensemble(members, out)
    return out


def main() -> None:
    parser = study_parser(__doc__)
    parser.add_argument("--encoders", nargs="+", default=["k6", "d4-epochs4-ffn384"],
                        help="folders under --work, the first the one the others are compared with")
    parser.add_argument("--length", type=int, default=8)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/student_distilled_generations.json"))
    args = parser.parse_args()
    from naus.cli import portable_cpu_kernels

    portable_cpu_kernels()  # before the workers start: they inherit the pins
    model, training = settings(args.profile)
    source = {s: args.build / layout.STATES_SOURCES[s] for s in ("pool", "dev")}
    titles = args.build / layout.split_file("dev", "title")
    folders = {name: args.work / name for name in args.encoders}
    first = {(name, seed): folder / f"L{args.length}-s{seed}"
             for name, folder in folders.items() for seed in args.seeds}
    missing = [str(path) for path in first.values() if not (path / "best.pt").is_file()]
    if missing:
        raise SystemExit(f"no first-generation student in {missing[0]} (train it with student_distilled.py or "
                         "student_layers.py and the same --length and --seeds)")
    teachers = {name: ensemble([first[name, seed] / "best.pt" for seed in args.seeds],
                               folder / f"L{args.length}-ens" / "best.pt") for name, folder in folders.items()}
    labels = {(name, s): teachers[name].parent / f"{s}.txt" for name in folders for s in source}
    jobs = {(name, seed): {"source": source["pool"], "target": labels[name, "pool"], "dev_source": source["dev"],
                           "dev_target": labels[name, "dev"], "states": folder / "pool.npz",
                           "dev_states": folder / "dev.npz", "model": model, "train": {**training, "seed": seed},
                           "out": folder / f"L{args.length}-g2-s{seed}"}
            for name, folder in folders.items() for seed in args.seeds}
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"), initializer=one_thread) as pool:
        labelled = dict(zip(labels, run_all(pool, [(decode, teachers[name], source[s], folders[name] / f"{s}.npz",
                                                    args.length, path) for (name, s), path in labels.items()])))
        run_all(pool, [(train, job) for job in jobs.values()])
        run_all(pool, [(decode, job["out"] / "best.pt", source["dev"], job["dev_states"], args.length,
                        job["out"] / "dev.txt") for job in jobs.values()])
    rows = {}
    for name in folders:
        generations = {}
        for generation, students in (("first", {seed: first[name, seed] for seed in args.seeds}),
                                     ("second", {seed: jobs[name, seed]["out"] for seed in args.seeds})):
            seeds = [{**read_json(student / "run.json"), "dev_total": total(student / "dev.txt", titles)["total"]}
                     for student in students.values()]
            generations[generation] = seed_summary(seeds)
        generations["ensemble_labels_cpu_seconds"] = labelled[name, "pool"]["seconds"]
        rows[name] = generations
    base = args.encoders[0]
    for name, row in rows.items():
        for generation in ("first", "second"):
            mine, theirs = row[generation], rows[base][generation]
            mine["dev_total_change"] = round(mine["dev_total"] - theirs["dev_total"], 2)
            mine["seeds_lower"] = sum(a < b for a, b in zip(mine["dev_totals"], theirs["dev_totals"]))
        print(f"{name}: first {row['first']['dev_total']:.2f} ± {row['first']['dev_se']:.2f} "
              f"({row['first']['dev_total_change']:+.2f}), second {row['second']['dev_total']:.2f} ± "
              f"{row['second']['dev_se']:.2f} ({row['second']['dev_total_change']:+.2f})", flush=True)
    write_json(args.out, {**students_machine(),
                          "data": f"{args.build}: the pool's searched sentences at L = {args.length}, "
                                  "the dev split's 500",
                          "recipe": f"first generation as the folders' studies trained it; second: {args.profile}'s "
                                    "training settings on the first's seeds' length-control summaries as one model",
                          "seeds": args.seeds, "metric": "R-1 + R-2 + R-L F1 of length control against the dev titles",
                          "compared_with": base, "encoders": rows})


if __name__ == "__main__":
    main()
