"""The same tuning budget for each of Table 3's architectures (issue 115): the profile's student settings were chosen
on dev for NAUS (`cpu_student.json`), so each architecture on the frozen states (NAUS's copy head, NAR-CTC, AR and
vanilla NAR, each with a copy head) gets the same small search on dev before the test set sees it: the learning rate
from {3e-4, 1e-3 (the profile's), 3e-3}, three seeds each, at L = 10, every other setting the profile's first
generation's (its steps, warm-up, model). Each student is decoded on the dev split by the decoding its Table 3 row
is best known by (CTC: length control; AR: beam search; NAR: its L slots) and scored against the dev titles
(R-1 + R-2 + R-L F1). The choice per architecture, declared before any result was read: the highest mean dev
total, but the profile's rate where the best is not above it by more than the standard error of their difference.
Finished work is kept under `--work`, reused.

    python -m benchmarks.table3_tuning --build build/gigaword-sample

Writes results/benchmarks/table3_tuning.json.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import statistics
import subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.common import decode, one_thread, run_all, seed_summary, settings, students_machine, total, train
from naus.pipeline import layout
from naus.plumbing.outputs import write_json

LENGTH = 10
RATES = (3e-4, 1e-3, 3e-3)
SEEDS = (0, 1, 2)
DECODING = {"naus-copy": "length-control", "nar-ctc-copy": "length-control", "ar-copy": "beam", "nar-copy": "greedy"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, default=Path(layout.profile_dir("build", "gigaword-sample")))
    parser.add_argument("--profile", type=Path, default=Path("config/gigaword-sample.yaml"))
    parser.add_argument("--work", type=Path, default=Path("build/benchmarks/table3_tuning"))
    parser.add_argument("--out", type=Path, default=Path(layout.benchmark_result("table3_tuning")))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    build, work = args.build, args.work
    model, training = settings(args.profile)
    training = {**{k: v for k, v in training.items() if k != "first_generation"}, "max_steps": 300, "warmup": 50,
                "eval_every": 50, "device": "cpu"}  # the first generation's (config train.first_generation)
    source = {s: build / layout.STATES_SOURCES[s] for s in ("pool", "dev")}
    states = {s: build / layout.frozen_states(s) for s in source}
    target = {s: build / f"{layout.search(s, LENGTH)}.txt" for s in source}
    titles = build / layout.split_file("dev", "title")
    runs = [(arch, rate, seed) for arch in DECODING for rate in RATES for seed in SEEDS]

    def folder(arch: str, rate: float, seed: int) -> Path:
        return work / f"{arch}-lr{rate:g}-s{seed}"

    with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=one_thread) as pool:
        trained = run_all(pool, [(train, {
            "arch": arch, "source": source["pool"], "target": target["pool"], "dev_source": source["dev"],
            "dev_target": target["dev"], "states": states["pool"], "dev_states": states["dev"], "model": model,
            "train": {**training, "lr": rate, "seed": seed}, "out": folder(arch, rate, seed)}) for arch, rate, seed in runs])
        run_all(pool, [(decode, folder(*run) / "best.pt", source["dev"], states["dev"], LENGTH,
                        folder(*run) / "dev.txt", DECODING[run[0]]) for run in runs])
    scored = {run: {"dev_total": total(folder(*run) / "dev.txt", titles)["total"], **made}
              for run, made in zip(runs, trained)}
    results, chosen = {}, {}
    for arch in DECODING:
        results[arch] = {f"lr={rate:g}": seed_summary([scored[arch, rate, s] for s in SEEDS]) for rate in RATES}
        best, profile = (results[arch][f"lr={rate:g}"] for rate in (max(RATES, key=lambda rate: results[arch][
            f"lr={rate:g}"]["dev_total"]), training["lr"]))
        clear = best["dev_total"] - profile["dev_total"] > math.hypot(best["dev_se"], profile["dev_se"])
        chosen[arch] = next(r for r in RATES if results[arch][f"lr={r:g}"] is (best if clear else profile))
        print(arch, {k: (v["dev_total"], v["dev_se"]) for k, v in results[arch].items()}, "->", chosen[arch])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    write_json(args.out, {
        "script": f"benchmarks/table3_tuning.py at {commit} (git show {commit}:benchmarks/table3_tuning.py)",
        **students_machine(),
        "data": f"gigaword-sample's pool search output at L = {LENGTH} (the students' training pairs), the dev split's "
                "500 sentences and titles",
        "metric": "R-1 + R-2 + R-L F1 against the dev titles; mean ± sd, se over three seeds",
        "decoding": DECODING,
        "training": {**training, "model": model},
        "architectures": results,
        "chosen_lr": {arch: f"{rate:g}" for arch, rate in chosen.items()},
        "profile_lr_kept": all(rate == training["lr"] for rate in chosen.values()),
        "spread_of_choices": {arch: round(max(r["dev_total"] for r in results[arch].values())
                                          - statistics.mean(r["dev_total"] for r in results[arch].values()), 2)
                              for arch in DECODING},
    })


if __name__ == "__main__":
    main()
