"""What the benchmarks share: the rule a dev study chooses by (the machine each records is `naus.device`'s)."""

from __future__ import annotations

import os
import statistics
import sys

from naus import NausError


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
