"""Which of MKL's code branches trains a student to the same bytes on Intel and AMD CPUs, and at what cost: one
small student (the demo's shape and recipe, an AR encoder–decoder on synthetic pairs, so that no build and no MiniLM
state is needed) trained by `naus train` under each branch, twice, its `best.pt` hashed and its run timed. Run it on
machines of both vendors; each run adds this CPU's entry to the JSON, and equal hashes across vendors under a branch
mean that branch is portable for the students.

    python -m benchmarks.mkl_branch --results        # -> results/benchmarks/mkl_branch.json

Why (`portable_fingerprints.py`): naus sets `MKL_CBWR=AVX2`, which MKL heeds on Intel CPUs only; elsewhere it runs
its AUTO branch, so the demo's students differ between an Intel Xeon and the AMD EPYCs that agree with each other.
COMPATIBLE (SSE2 without rcpps/rsqrtps) is the branch to try on both.

Findings (the JSON's numbers, as read when it was written; Markdown):

## An Intel Xeon (5 December 2026)

2 cores of an Intel Xeon (Sapphire Rapids: AVX-512, VNNI, AMX), one thread. Each branch gave the same bytes in both
of its runs, and the two branches gave different bytes (the hashes are in the JSON). COMPATIBLE took 30.44 and
30.02 s against AVX2's 19.15 and 18.71, start-up included: 1.6 times as long. Adopting it would cost the CPU
profiles' students about that much, and change every student's bytes. The AMD half of the comparison has not been
run.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from naus.device import cpu_name, cpu_vendor, isa
from naus.files import read_json, sha256sum
from naus.outputs import write_json

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results/benchmarks/mkl_branch.json"
BRANCHES = ("AVX2", "COMPATIBLE")
REPEATS = 2
WORDS = ("police government stocks president japan minister protesters schools talks trade earnings war the a of on "
         "in said thursday monday as after for with bank rates coast storm court vote city council").split()
# the demo's student shape and recipe (config/demo.yaml), one thread as the workflow trains it
TRAIN = ["--arch", "ar", "--n-layers", "2", "--d-model", "128", "--n-heads", "4", "--d-ff", "512", "--max-len", "128",
         "--dropout", "0.1", "--max-steps", "70", "--max-tokens", "2048", "--lr", "0.001", "--warmup", "30",
         "--min-count", "1", "--eval-every", "50", "--checkpoint-every", "50", "--seed", "0"]


def pairs(folder: Path) -> tuple[Path, Path]:
    """600 seeded source sentences and their 10-word targets (words of the source, in order): the same files on
    every machine."""
    rng = random.Random(0)
    sources = [[rng.choice(WORDS) for _ in range(rng.randint(14, 30))] for _ in range(600)]
    targets = [[s[i] for i in sorted(rng.sample(range(len(s)), 10))] for s in sources]
    source, target = folder / "source.txt", folder / "target.txt"
    source.write_text("".join(" ".join(s) + "\n" for s in sources))
    target.write_text("".join(" ".join(t) + "\n" for t in targets))
    return source, target


def train(branch: str, source: Path, target: Path, out: Path) -> tuple[str, float]:
    """One `naus train` under MKL branch `branch`: the SHA-256 of its best.pt and its wall time."""
    command = [sys.executable, "-m", "naus", "--threads", "1", "train", "--train-source", str(source),
               "--train-target", str(target), *TRAIN, "--out", str(out)]
    tick = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "MKL_CBWR": branch})
    seconds = round(time.perf_counter() - tick, 2)
    if done.returncode:
        raise SystemExit(f"naus train under MKL_CBWR={branch} failed: {done.stderr.strip()[-500:]}")
    return sha256sum(out / "best.pt"), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", action="store_true", help=f"add this CPU's entry to {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args()
    branches = {}
    with tempfile.TemporaryDirectory() as tmp:
        source, target = pairs(Path(tmp))
        for branch in BRANCHES:
            runs = [train(branch, source, target, Path(tmp) / f"{branch}-{k}") for k in range(REPEATS)]
            hashes = sorted({sha for sha, _ in runs})
            branches[branch] = {"sha256": hashes[0] if len(hashes) == 1 else hashes,
                                "same_bytes_each_run": len(hashes) == 1, "seconds": [s for _, s in runs]}
            print(f"MKL_CBWR={branch}: {hashes[0][:16] if len(hashes) == 1 else 'differs run to run'}, "
                  f"{runs[0][1]:.1f} s")
    entry = {"cpu": cpu_name(), "vendor": cpu_vendor(), "isa": isa(), "threads": 1, "branches": branches}
    if args.results:
        previous = read_json(RESULTS) if RESULTS.is_file() else {"runs": []}
        key = ("cpu", "vendor", "isa")
        runs = [run for run in previous["runs"] if [run[k] for k in key] != [entry[k] for k in key]]
        write_json(RESULTS, {"what": "naus train of one AR student (the demo's shape and recipe) on 600 seeded "
                                     "synthetic pairs, under each MKL_CBWR branch, twice; best.pt's SHA-256",
                             "runs": runs + [entry]})


if __name__ == "__main__":
    main()
