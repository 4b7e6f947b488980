"""How long `make demo` takes from an empty build: the pipeline part of it (set-up done), timed on a fresh clone
of the committed code, with every job's own time by stage from Snakemake's benchmark records.

The clone is of HEAD (commit first: uncommitted changes are not timed), its `build/` and `logs/` empty; it runs
`snakemake --cores all --configfile config/{profile}.yaml` with this interpreter's environment first on PATH, as
`make demo` does after its set-up. Writes results/benchmarks/demo_time.json; the machine's CPU and core count are
recorded beside the times (the budget of 10 minutes is for a plain 2-core AVX2 machine, which may be slower).

    python -m benchmarks.demo_time                  # --results: the run's results/{profile} replace this one's
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.studies.teacher_cost import cpu_name
from naus.files import write_json

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = 600


def stage_seconds(records: Path) -> tuple[dict[str, dict], list[tuple[float, str]]]:
    """Jobs and their summed seconds per stage (a benchmark folder, or a file for the one-job stages), and every
    job's seconds."""
    stages: dict[str, dict] = {}
    jobs = []
    for path in sorted(records.rglob("*.tsv")):
        with open(path) as handle:
            seconds = sum(float(row["s"]) for row in csv.DictReader(handle, delimiter="\t"))
        stage = path.parent.name if path.parent != records else path.stem
        entry = stages.setdefault(stage, {"jobs": 0, "seconds": 0.0})
        entry["jobs"] += 1
        entry["seconds"] = round(entry["seconds"] + seconds, 1)
        jobs.append((round(seconds, 1), str(path.relative_to(records).with_suffix(""))))
    return dict(sorted(stages.items(), key=lambda item: -item[1]["seconds"])), sorted(jobs, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="demo")
    parser.add_argument("--out", type=Path, default=ROOT / "results/benchmarks/demo_time.json")
    parser.add_argument("--results", action="store_true", help="replace results/{profile} with the timed run's: the "
                                                               "committed tables are then the ones timed")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "naus"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        tick = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "all", "--configfile",
                              f"config/{args.profile}.yaml"], cwd=clone, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - tick
        if run.returncode:
            raise SystemExit(f"snakemake failed ({run.returncode}):\n{run.stderr[-3000:]}")
        stages, jobs = stage_seconds(clone / "logs" / args.profile / "benchmark")
        if args.results:
            shutil.rmtree(ROOT / "results" / args.profile, ignore_errors=True)
            shutil.copytree(clone / "results" / args.profile, ROOT / "results" / args.profile)
    write_json(args.out, {
        "profile": args.profile, "commit": commit.strip(), "machine": cpu_name(), "cores": os.cpu_count(),
        "wall_seconds": round(wall, 1), "budget_seconds": BUDGET_SECONDS,
        "job_seconds": round(sum(stage["seconds"] for stage in stages.values()), 1),
        "jobs_benchmarked": len(jobs), "stages": stages,
        "longest_jobs": [{"seconds": seconds, "job": job} for seconds, job in jobs[:10]],
        "note": "the pipeline of `make demo` (set-up done) from an empty build on a fresh clone; job seconds from "
                "Snakemake's benchmark records (jobs without one, such as scoring and merging, are in the wall time "
                "only)"})
    print(f"{args.profile}: {wall:.0f} s on {os.cpu_count()} cores of {cpu_name()}")


if __name__ == "__main__":
    main()
