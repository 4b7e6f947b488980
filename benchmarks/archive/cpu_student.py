"""The student that learns on two CPU cores, chosen on dev: recipes trained on a profile's search output.

Each recipe (`RECIPES`: an architecture and the `naus train` settings that differ from the profile's) trains one
student per length and seed on the pool's search output, as the pipeline trains (`naus --threads 1 train`, two
side by side on two cores), decodes the dev split by length control, and is scored against the dev titles
(R-1 + R-2 + R-L F1, rouge-score). The test set plays no part. `minutes_per_student` is the machine's minutes
per student with `--jobs` students side by side: one job's CPU minutes (one thread: its wall time on a core of
its own, whatever else runs beside the study) / jobs; `job_minutes` is one job's wall time as it ran.
The chosen recipe has the highest mean dev total over the lengths among those within `--budget` minutes per
student. Finished runs are kept under `--work` (named by the recipe's settings) and reused.

Writes results/benchmarks/cpu_student.json.

    python -m benchmarks.archive.cpu_student --build build/gigaword-sample
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.common import cpu_name
from naus import layout
from naus.architectures import ARCHITECTURES
from naus.evaluation.evaluate import evaluate_files
from naus.files import read_json, write_json

# What every recipe starts from: gigaword-sample's student settings when the study ran (its `naus-minilm`
# profile; MiniLM's shape replaces the four of the model's), so a recipe's runs stay what they were.
BASE = {"n_layers": 4, "d_model": 256, "n_heads": 4, "d_ff": 1024, "max_len": 128, "max_steps": 3000,
        "max_tokens": 2048, "lr": 1e-3, "warmup": 100, "min_count": 2, "eval_every": 100, "patience": 10,
        "checkpoint_every": 500}
COPY_TOP = {"max_steps": 1000, "eval_every": 100, "patience": 3, "warmup": 100, "lr": 1e-3}
RECIPES = {
    # the profile's student fully fine-tuned, at the steps a CPU affords in about the copy heads' minutes
    "minilm-60-steps": {"arch": "naus-minilm", "max_steps": 60, "eval_every": 30, "warmup": 20},
    # frozen states, a copy head on a thin top
    "copy-1x128": {"arch": "naus-copy", "n_layers": 1, "d_model": 128, "n_heads": 4, "d_ff": 512, **COPY_TOP},
    "copy-2x128": {"arch": "naus-copy", "n_layers": 2, "d_model": 128, "n_heads": 4, "d_ff": 512, **COPY_TOP},
}
SCORES = ("rouge1", "rouge2", "rougeL")


def cpu_seconds(command: list[str]) -> float:
    """Run `command` to its end (an error if it fails); the CPU seconds it took (user and system)."""
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), command)
    return usage.ru_utime + usage.ru_stime


def run(build: Path, work: Path, name: str, settings: dict, length: int, seed: int) -> dict:
    """One student: trained, its dev split decoded by length control, scored (all kept under `work`)."""
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]
    out = work / f"{name}-{key}" / f"L{length}-s{seed}"
    record = out / "run.json"
    if record.is_file():
        return read_json(record)
    frozen = ARCHITECTURES[settings["arch"]].frozen
    inputs = {k: build / v for k, v in layout.train_inputs(length, frozen).items()}
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in {**inputs, **settings, "seed": seed, "out": out}.items()]
    naus = [sys.executable, "-m", "naus", "-q", "--threads", "1"]
    tick = time.perf_counter()
    cpu = cpu_seconds(naus + ["train", *flags, "--resume", f"--timing={out / 'timing.json'}"])
    wall = time.perf_counter() - tick
    hyp = out / "dev-length-control.txt"
    source = build / layout.STATES_SOURCES["dev"]
    subprocess.run(naus + ["decode", f"--checkpoint={out / 'best.pt'}", f"--input={source}", f"--length={length}",
                           "--method=length-control", f"--out={hyp}",
                           *(["--states", str(build / layout.frozen_states("dev"))] if frozen else [])], check=True)
    scores = evaluate_files(hyp, [build / layout.split_file("dev", "title")])
    history = read_json(out / "history.json", ("history",))["history"]
    result = {"length": length, "seed": seed, "steps": history[-1]["step"],
              "best_dev_loss": min(e["dev_loss"] for e in history if "dev_loss" in e),
              "job_minutes": round(wall / 60, 2), "job_cpu_minutes": round(cpu / 60, 2),
              **{k: round(scores[k], 2) for k in SCORES},
              "total": round(sum(scores[k] for k in SCORES), 2)}
    write_json(record, result)
    return result


def summary(runs: list[dict], jobs: int) -> dict:
    by_length = {}
    for length in sorted({r["length"] for r in runs}):
        totals = [r["total"] for r in runs if r["length"] == length]
        by_length[str(length)] = {"mean": round(statistics.mean(totals), 2),
                                  "sd": round(statistics.stdev(totals), 2) if len(totals) > 1 else None,
                                  "seeds": len(totals)}
    cpu = statistics.mean(r["job_cpu_minutes"] for r in runs)
    return {"dev_total": by_length, "job_minutes": round(statistics.mean(r["job_minutes"] for r in runs), 2),
            "job_cpu_minutes": round(cpu, 2), "minutes_per_student": round(cpu / jobs, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="the profile's build directory, its searches and states made")
    parser.add_argument("--profile", default="gigaword-sample", help="the profile whose searches the build holds")
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 10])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--jobs", type=int, default=2, help="students trained side by side, one thread each")
    parser.add_argument("--budget", type=float, default=2.0, help="minutes per student a chosen recipe may take")
    parser.add_argument("--work", default="build/benchmarks/cpu_student")
    parser.add_argument("--out", default="results/benchmarks/cpu_student.json")
    args = parser.parse_args()
    build, work = Path(args.build), Path(args.work)
    plan = [(name, length, seed) for name in args.recipes for length in args.lengths for seed in args.seeds]
    with ThreadPoolExecutor(args.jobs) as pool:
        done = list(pool.map(lambda job: run(build, work, job[0], {**BASE, **RECIPES[job[0]]}, *job[1:]), plan))
    recipes = {}
    for (name, _, _), result in zip(plan, done):
        recipes.setdefault(name, {"settings": {**BASE, **RECIPES[name]}, "runs": []})["runs"].append(result)
    for entry in recipes.values():
        entry.update(summary(entry["runs"], args.jobs))
    titles = [build / layout.split_file("dev", "title")]
    teacher = {str(n): round(sum(evaluate_files(build / f"{layout.search('dev', n)}.txt", titles)[k] for k in SCORES), 2)
               for n in args.lengths}
    within = [name for name, entry in recipes.items() if entry["minutes_per_student"] <= args.budget]
    chosen = max(within, key=lambda name: statistics.mean(v["mean"] for v in recipes[name]["dev_total"].values()),
                 default=None)
    write_json(args.out, {
        "profile": args.profile, "cpu": cpu_name(), "cores": args.jobs, "split": "dev (500 pool pairs held out)",
        "method": "length control", "metric": "R-1 + R-2 + R-L F1 (rouge-score) against the dev titles",
        "minutes_per_student": "one job's CPU minutes (one thread) / the jobs side by side",
        "budget_minutes_per_student": args.budget, "teacher_dev_total": teacher, "chosen": chosen,
        "chosen_by": "highest mean dev total over the lengths within the budget", "recipes": recipes,
        "job_minutes_total": round(sum(r["job_minutes"] for entry in recipes.values() for r in entry["runs"]), 1)})
    for name, entry in recipes.items():
        print(f"{name:18s} {entry['dev_total']}  {entry['minutes_per_student']} min/student")
    print("teacher", teacher, "chosen:", chosen)


if __name__ == "__main__":
    main()
