"""A cheaper MiniLM under the CPU student, chosen on dev: first-generation `naus-copy` students at L = 10 on the states
of MiniLM's first k layers instead of all six (issue 88: the student at 6 ms a sentence on plain AVX2, 12.0 today,
MiniLM's states most of it; k layers cost about k/6 of them).

For each k, the pool's and dev's frozen states are computed by the pipeline's encoder (fp32 PyTorch, the portable
AVX2 kernels, one thread) cut to its first k layers; then, for each seed, a student is trained as the pipeline trains
it (gigaword-sample's first-generation recipe, two workers side by side on two cores), decoded by length control on
dev and scored against the dev titles (R-1 + R-2 + R-L F1: a choice made on dev). Finished work is kept under `--work`, reused.

    python -m benchmarks.student_layers --build build/gigaword-sample

Writes results/benchmarks/student_layers.json.

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

`python -m benchmarks.student_layers` (4 December 2026, 2 cores of an AMD EPYC, Zen 4, PyTorch pinned to AVX2;
gigaword-sample's build: the pool's 16,842 searched sentences at L = 10, dev's 500; six seeds, mean ± standard error):

| MiniLM layers | dev total | the pool's states, CPU s |
|---|---|---|
| 6 (today's) | 89.32 ± 0.24 | 166.2 |
| 3 | 87.57 ± 0.52 (−1.75) | 82.8 |
| 2 | 86.02 ± 0.59 (−3.30) | 55.3 |

A student imitates the search better from them (a lower dev loss against its summaries: 1.383 and 1.396 against
1.527) but chooses worse headlines: half of MiniLM's time costs 1.75 on dev, far past the 0.2 issue 88 allows. **Not chosen**: the 6-ms goal
needs another way (a smaller encoder trained once, or an integer path with the same bytes everywhere).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.common import decode, one_thread, run_all, seed_summary, settings, students_machine, total, train
from naus.pipeline import layout
from naus.plumbing.files import read_lines
from naus.plumbing.outputs import write_json

LENGTH = 10
WORK = Path("build/benchmarks/student_layers")  # the states and students these studies keep, reused


def encode(source: Path, layers: int, out: Path, weights: Path | None = None, top: Path | None = None,
           onnx: Path | None = None) -> float:
    """The frozen states of `source` from MiniLM's first `layers` layers, or from an encoder of that many with
    `weights`, or from the pipeline's distilled `top`, or from the ONNX model `onnx` (kept: made once); their CPU
    seconds."""
    record = out.with_suffix(".seconds")
    if not record.is_file():
        from safetensors.torch import load_file

        from naus.student.frozen import Encoder

        encoder = Encoder(onnx, top)
        if weights is not None:
            encoder.model.w = load_file(weights)
        if top is None and onnx is None:
            encoder.model.layers = layers
        tick = time.process_time()
        states = encoder.encode(read_lines(source))
        seconds = time.process_time() - tick
        states.save(out)
        record.write_text(f"{seconds:.1f}\n")
    return float(record.read_text())


def best_dev_loss(student: Path) -> float:
    """A student's lowest loss on dev against the search's summaries (what its training minimises)."""
    history = json.loads((student / "history.json").read_text())["history"]
    return min(entry["dev_loss"] for entry in history if "dev_loss" in entry)


def against(rows: dict[str, dict], base: str) -> None:
    """Each row's dev total and states' time against the `base` row's (added to each row)."""
    for row in rows.values():
        row["dev_total_change"] = round(row["dev_total"] - rows[base]["dev_total"], 2)
        row["states_time_ratio"] = round(row["pool_states_cpu_seconds"] / rows[base]["pool_states_cpu_seconds"], 2)


def study(profile: Path, seeds: list[int]) -> dict:
    """What a study of the students' states trained and scored, for its JSON."""
    return {"recipe": f"{profile}'s student, first generation", "seeds": seeds,
            "metric": "R-1 + R-2 + R-L F1 of length control against the dev titles"}


def show(rows: dict[str, dict]) -> None:
    for name, row in rows.items():
        print(f"{name}: dev {row['dev_total']:.2f} ± {row['dev_se']:.2f} ({row['dev_total_change']:+.2f}), "
              f"states {row['states_time_ratio']}x the time")


def study_parser(doc: str) -> argparse.ArgumentParser:
    """The options every study of the students' states takes: the build it reads, the profile whose student it
    trains and the folder its work is kept in."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path(layout.profile_dir("build", "gigaword-sample")))
    parser.add_argument("--profile", type=Path, default=Path("config/gigaword-sample.yaml"))
    parser.add_argument("--work", type=Path, default=WORK)
    return parser


def main() -> None:
    parser = study_parser(__doc__)
    parser.add_argument("--layers", type=int, nargs="+", default=[6, 3, 2])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(6)))
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/student_layers.json"))
    args = parser.parse_args()
    model, training = settings(args.profile)
    source = {s: args.build / layout.STATES_SOURCES[s] for s in ("pool", "dev")}
    search = {s: args.build / f"{layout.search(s, LENGTH)}.txt" for s in ("pool", "dev")}
    titles = args.build / layout.split_file("dev", "title")
    states = {(k, s): args.work / f"k{k}" / f"{s}.npz" for k in args.layers for s in source}
    for path in states.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    jobs = {(k, seed): {"source": source["pool"], "target": search["pool"], "dev_source": source["dev"],
                        "dev_target": search["dev"], "states": states[k, "pool"], "dev_states": states[k, "dev"],
                        "model": model, "train": {**training, "seed": seed}, "out": args.work / f"k{k}" / f"s{seed}"}
            for k in args.layers for seed in args.seeds}
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"), initializer=one_thread) as pool:
        encoded = dict(zip(states, run_all(pool, [(encode, source[s], k, path) for (k, s), path in states.items()])))
        runs = dict(zip(jobs, run_all(pool, [(train, job) for job in jobs.values()])))
        run_all(pool, [(decode, j["out"] / "best.pt", source["dev"], j["dev_states"], LENGTH, j["out"] / "dev.txt")
                       for j in jobs.values()])
    rows = {}
    for k in args.layers:
        seeds = [{**runs[k, seed], "dev_total": total(jobs[k, seed]["out"] / "dev.txt", titles)["total"]}
                 for seed in args.seeds]
        rows[str(k)] = {**seed_summary(seeds), "pool_states_cpu_seconds": encoded[k, "pool"],
                        "best_dev_loss": round(statistics.mean(best_dev_loss(jobs[k, s]["out"]) for s in args.seeds), 3)}
    against(rows, str(max(args.layers)))
    write_json(args.out, {**students_machine(),
                          "data": f"{args.build}: the pool's searched sentences at L = {LENGTH}, the dev split's 500",
                          **study(args.profile, args.seeds), "layers": rows})
    show({f"{k} layers": row for k, row in rows.items()})


if __name__ == "__main__":
    main()
