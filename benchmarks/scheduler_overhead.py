"""Snakemake's own CPU time while it schedules many small jobs, with its default job rate limit and with the default
profile's: every metric of a finished gigaword-sample build scored again (570 jobs of a second or less) in a
throwaway copy of a kept clone, this checkout's workflow in it, both settings in the same session.

Snakemake 9 arms a re-evaluation timer at the end of every scheduling pass, for the rate limit's span, and the timer's
pass arms the next; each finished job starts one more such chain, and every pass re-reads the params and input sizes
of every waiting job. The span sets how often those passes come.

    python -m benchmarks.scheduler_overhead --clone build/gwrun4   # -> results/benchmarks/scheduler_overhead.json

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

The 570 scoring jobs of the gigaword-sample build in `gigaword_time.json` (2 cores of an AMD EPYC, Zen 4, nothing
else running; 4 December 2026): under Snakemake's default `100/1s` they took 236.1 s, Snakemake's own process
116.7 CPU-seconds against its jobs' 333.9; under the default profile's `10000/10s`, 188.0 s and 39.9 (jobs 327.4).
Under the default, half a core went to Snakemake itself, a fifth under the profile's. Over the whole profile's run
the same setting took Snakemake from 1153.7 CPU-seconds to 293.8, and the run from 5667.6 s to 4903.3
(`pipeline_time.py`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from benchmarks.pipeline_time import ROOT, git, run
from naus.device import cpu_name, isa
from naus.outputs import write_json

PROFILE = "gigaword-sample"
SNAKEMAKE_DEFAULT = "100/1s"
SCORING_RULES = {"evaluate_test", "evaluate_duc", "stage_evaluate"}


def profile_span() -> str:
    """The default profile's rate limit (the setting measured against Snakemake's own)."""
    return yaml.safe_load((ROOT / "workflow/profiles/default/config.yaml").read_text())["max-jobs-per-timespan"]


def planned_jobs(copy: Path) -> dict[str, int]:
    """The jobs Snakemake would run for every metric (a dry run's job stats)."""
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", f"config/{PROFILE}.yaml", "--",
                           "stage_evaluate"], cwd=copy, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{copy}: the dry run failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    stats = done.stdout.split("Job stats:", 1)[-1].split("total", 1)[0]
    return {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)$", stats, flags=re.M)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, required=True, help=f"a kept clone whose {PROFILE} build is complete "
                                                                  "(benchmarks/pipeline_time.py --clone)")
    args = parser.parse_args()
    if not (args.clone / "build" / PROFILE).is_dir():
        raise SystemExit(f"{args.clone}: no build/{PROFILE} (a finished benchmarks/pipeline_time.py --clone)")
    settings = {"snakemake_default": SNAKEMAKE_DEFAULT, "default_profile": profile_span()}
    records = {}
    with tempfile.TemporaryDirectory(dir=ROOT / "build") as tmp:
        copy = Path(tmp) / "naus"
        shutil.copytree(args.clone, copy, symlinks=True)
        shutil.copytree(ROOT / "workflow", copy / "workflow", dirs_exist_ok=True)
        for name, span in settings.items():
            shutil.rmtree(copy / "results" / PROFILE / "metrics", ignore_errors=True)
            jobs = planned_jobs(copy)
            if set(jobs) - SCORING_RULES:
                raise SystemExit(f"{args.clone}: its build is not complete, more than scoring would run: {jobs}")
            record = run(copy, PROFILE, ["stage_evaluate"], options=("--max-jobs-per-timespan", span))
            own = record["snakemake_cpu_seconds"]
            records[name] = {"max_jobs_per_timespan": span, "jobs": jobs, "seconds": record["seconds"],
                             "snakemake_cpu_seconds": own, "jobs_cpu_seconds": round(record["cpu_seconds"] - own, 1)}
            print(f"{span}: {record['seconds']:.1f} s, Snakemake's own CPU {own:.1f} s")
    write_json(ROOT / "results" / "benchmarks" / "scheduler_overhead.json", {
        "profile": PROFILE, "clone_commit": git("rev-parse", "HEAD", cwd=args.clone),
        "workflow_commit": git("rev-parse", "HEAD", cwd=ROOT), "machine": cpu_name(), "isa": isa(),
        "cores": os.cpu_count(), "runs": records,
        "note": "every metric scored again in a copy of a finished build (one job per metric file), Snakemake with "
                "--cores all; seconds: the invocation's wall time; snakemake_cpu_seconds: Snakemake's own process "
                "(polled every 2 s), jobs_cpu_seconds: its jobs'"})


if __name__ == "__main__":
    main()
