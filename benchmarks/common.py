"""What the benchmarks share: the rule a dev study chooses by, and the workers that train and dev-decode students as
the pipeline does (the machine each records is `naus.device`'s)."""

from __future__ import annotations

import dataclasses
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from naus import NausError
from naus.device import cpu_name, isa
from naus.evaluation.evaluate import METRICS, evaluate_files
from naus.plumbing.files import read_json
from naus.plumbing.outputs import write_json, write_lines
from naus.settings import ModelConfig, TrainConfig



def choose(recipes: dict[str, dict]) -> tuple[str, dict]:
    """The recipe with the highest mean dev total over every length (each length weighs the same), and
    per length its winner; a recipe without a dev score at some length cannot win."""
    lengths = sorted({run["length"] for runs in recipes.values() for run in runs.values()})
    means = {name: {n: statistics.mean(r["total"] for r in runs.values() if r["length"] == n)
                    for n in lengths if any(r["length"] == n for r in runs.values())}
             for name, runs in recipes.items()}
    complete = [name for name in recipes if len(means[name]) == len(lengths)]
    if not lengths or not complete:
        raise NausError(f"no recipe has dev scores at every length {lengths}: nothing to choose from")
    chosen = max(complete, key=lambda name: statistics.mean(means[name].values()))
    per_length = {n: max((name for name in recipes if n in means[name]), key=lambda name: means[name][n])
                  for n in lengths}
    return chosen, {"mean_dev_total": {name: {str(n): round(v, 2) for n, v in m.items()} for name, m in means.items()},
                    "winner_per_length": {str(n): name for n, name in per_length.items()}}


def on_threads(module: str, threads: int) -> None:
    """This benchmark (`python -m module`) run again with onnxruntime's and numba's thread pools at `threads`: each
    is sized once, when it loads."""
    if os.environ.get("NUMBA_NUM_THREADS") != str(threads) or os.environ.get("OMP_NUM_THREADS") != str(threads):
        os.execve(sys.executable, [sys.executable, "-m", module, *sys.argv[1:]],
                  {**os.environ, "OMP_NUM_THREADS": str(threads), "NUMBA_NUM_THREADS": str(threads)})


def cpu_summarizer(checkpoint, threads: int):
    """A student on `threads` CPU threads, its kernels the AVX2 ones every x86 CPU runs (`portable_cpu_kernels`)."""
    import torch

    from naus.cli import portable_cpu_kernels
    from naus.decoding.summarizer import Summarizer

    portable_cpu_kernels()
    torch.set_num_threads(threads)
    return Summarizer.from_checkpoint(checkpoint, "cpu")


def one_thread() -> None:
    """A worker as the pipeline's jobs run: one thread and the portable kernels (refused if they are not the pinned
    AVX2 ones). Importing the worker's task module may have loaded torch already: its threads are set here too."""
    import torch

    from naus.cli import limit_threads, portable_cpu_kernels

    portable_cpu_kernels()
    limit_threads(1)
    torch.set_num_threads(1)
    if torch.backends.cpu.get_cpu_capability() != "AVX2":
        raise SystemExit(f"PyTorch's kernels are {torch.backends.cpu.get_cpu_capability()}, not the pinned AVX2 "
                         "(set ATEN_CPU_CAPABILITY=avx2 before starting)")


def decode(checkpoint: Path, source: Path, states: Path, length: int, out: Path,
           method: str | None = "length-control") -> dict:
    """Length-control summaries of `source` into `out` (or by `method`; None: the library's default decoding), kept:
    made once, with the seconds they took."""
    record = out.with_suffix(".json")
    if record.is_file():
        return read_json(record)
    from naus.decoding.summarizer import Summarizer
    from naus.plumbing.files import read_lines
    from naus.student.frozen import States

    sentences = read_lines(source)
    summarizer = Summarizer.from_checkpoint(checkpoint, "cpu")
    states = States.load(states)
    tick = time.process_time()  # one thread's CPU time: what the worker beside it does not change
    results = summarizer.summarize(sentences, length=length, method=method, raw=False, states=states)
    seconds = time.process_time() - tick
    write_lines(out, [r.summary for r in results])
    write_json(record, {"seconds": round(seconds, 2), "sentences": len(sentences)})
    return read_json(record)


def train(job: dict) -> dict:
    """One student trained as the pipeline trains it (kept: trained once), with its CPU seconds (one thread)."""
    record = job["out"] / "run.json"
    if record.is_file():
        return read_json(record)
    from naus.student.build import train_student

    tick = time.process_time()
    history = train_student(job["source"], job["target"], job["out"], job.get("arch", "naus-copy"), model=job["model"],
                            config=TrainConfig(**job["train"]), dev_source=job["dev_source"],
                            dev_target=job["dev_target"], train_states=job["states"], dev_states=job["dev_states"],
                            fraction=job.get("fraction", 1.0), resume=True)
    steps = history["history"][-1]["step"] if history.get("history") else None
    write_json(record, {"cpu_seconds": round(time.process_time() - tick, 1), "steps": steps})
    return read_json(record)


def run_all(pool: ProcessPoolExecutor, calls: list[tuple]) -> list:
    """The calls (function, arguments...) on the pool's workers, side by side; their results in order."""
    futures = [pool.submit(call[0], *call[1:]) for call in calls]
    return [future.result() for future in futures]


def total(hyp: Path, titles: Path) -> dict:
    scores = evaluate_files(hyp, [titles])
    return {**{k: round(scores[k], 2) for k in METRICS}, "total": round(sum(scores[k] for k in METRICS), 2)}


def settings(profile: Path) -> tuple[dict, dict]:
    """The profile's student: its model settings (the architecture aside) and training settings."""
    config = yaml.safe_load(profile.read_text())
    fields = {kind: {f.name for f in dataclasses.fields(kind)} for kind in (ModelConfig, TrainConfig)}
    model = {k: v for k, v in config["model"].items() if k in fields[ModelConfig] and k != "arch"}
    return model, {k: v for k, v in config["train"].items() if k in fields[TrainConfig]}


def seed_summary(runs: list[dict]) -> dict:
    """Seeds' students (each a dict with its dev total and CPU seconds): the dev totals, their mean ± sd and standard
    error, and the CPU seconds a student."""
    totals = [run["dev_total"] for run in runs]
    return {"dev_totals": totals, "dev_total": round(statistics.mean(totals), 2),
            "dev_sd": round(statistics.stdev(totals), 2), "dev_se": round(statistics.stdev(totals) / len(totals) ** 0.5, 2),
            "cpu_seconds_per_student": round(statistics.mean(run["cpu_seconds"] for run in runs), 1)}


def students_machine() -> dict:
    """Where students were trained side by side, for a study's JSON."""
    return {"machine": f"{cpu_name()} ({', '.join(isa())}), 2 cores, two students side by side",
            "kernels": "PyTorch pinned to AVX2 (naus.cli.portable_cpu_kernels)"}
