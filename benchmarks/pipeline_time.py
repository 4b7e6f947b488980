"""How long a profile's pipeline takes from an empty build (set-up done), timed on a fresh clone of the committed
code, with every job's own time by stage from Snakemake's benchmark records.

The clone is of HEAD (commit first: uncommitted changes are not timed), its `build/` and `logs/` empty; it runs
`snakemake --cores all --configfile config/{profile}.yaml` with this interpreter's environment first on PATH, as
`make demo` does after its set-up. The machine's CPU and core count are recorded beside the times (the budgets are
for a plain 2-core AVX2 machine, which may be slower).

A long profile runs in a clone that stays (`--clone DIR`): run the same command again after a stop and it pulls
HEAD into the clone and continues where the pipeline stopped; `--targets` runs part of it (say, `stage_search`
while the rest is still being written). Each invocation's wall time is kept in the clone, and `total_seconds` is
their sum.

    python -m benchmarks.pipeline_time --results                     # make demo's pipeline -> demo_time.json
    python -m benchmarks.pipeline_time --profile gigaword-sample --clone ../gwrun --results
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import cpu_name
from naus.files import write_json

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = {"demo": 600, "gigaword-sample": 9000}
RECORD = {"demo": "demo_time.json", "gigaword-sample": "gigaword_time.json"}


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


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=cwd, check=True).stdout.strip()


def prepare(clone: Path) -> None:
    """A fresh clone of HEAD, or an existing one (a resumed run) brought to HEAD: its build is kept."""
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    else:
        git("pull", "-q", "--ff-only", str(ROOT), "HEAD", cwd=clone)
    if git("rev-parse", "HEAD", cwd=clone) != git("rev-parse", "HEAD", cwd=ROOT):
        raise SystemExit(f"{clone}: not at this checkout's HEAD after the pull")


def run(clone: Path, profile: str, targets: list[str], stop_after: float | None = None) -> dict:
    """One Snakemake invocation in the clone, its log beside the pipeline's; returns its record. With `stop_after`
    seconds, Snakemake and its jobs are stopped then (SIGTERM to its process group: Snakemake alone would wait for
    its running jobs, a search shard's minutes; naus keeps finished work) and the invocation recorded as stopped, so that
    a run cut short by a session's end still counts its time; the same command continues it."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    logs = clone / "logs" / profile
    logs.mkdir(parents=True, exist_ok=True)
    runs_file = logs / "timed_runs.json"
    runs = json.loads(runs_file.read_text()) if runs_file.exists() else []
    log = logs / f"timed_run_{len(runs)}.log"
    shutil.rmtree(clone / ".snakemake" / "locks", ignore_errors=True)  # a stopped run's lock (one run at a time)
    tick = time.perf_counter()
    with open(log, "w") as out:
        snakemake = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "all", "--rerun-incomplete",
                                      "--configfile", f"config/{profile}.yaml", "--", *targets],
                                     cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code, stopped = snakemake.wait(timeout=stop_after), False
        except subprocess.TimeoutExpired:
            os.killpg(snakemake.pid, signal.SIGTERM)
            code, stopped = snakemake.wait(), True
    record = {"commit": git("rev-parse", "HEAD", cwd=clone), "targets": targets or ["all"],
              "seconds": round(time.perf_counter() - tick, 1), "exit": code, **({"stopped": True} if stopped else {})}
    write_json(runs_file, [*runs, record])
    if stopped:
        raise SystemExit(f"stopped after {stop_after:.0f} s as asked; the same command continues (its log: {log})")
    if code:
        raise SystemExit(f"snakemake failed ({code}); its log: {log}")
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="demo", choices=sorted(BUDGET_SECONDS))
    parser.add_argument("--clone", type=Path, help="run in this clone and keep it (resumable); default: a "
                                                   "temporary one")
    parser.add_argument("--targets", nargs="*", default=[], help="only these Snakemake targets (default: all); "
                                                                 "nothing is recorded until a run of all")
    parser.add_argument("--stop-after", type=float, help="stop Snakemake after this many seconds, its time "
                                                          "recorded (a long profile run across sessions)")
    parser.add_argument("--results", action="store_true", help="replace results/{profile} with the timed run's: the "
                                                               "committed tables are then the ones timed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone = (args.clone or Path(tmp) / "naus").resolve()
        prepare(clone)
        run(clone, args.profile, args.targets, args.stop_after)
        if args.targets:
            print(f"{args.profile}: {', '.join(args.targets)} done; run again without --targets to finish")
            return
        runs = json.loads((clone / "logs" / args.profile / "timed_runs.json").read_text())
        stages, jobs = stage_seconds(clone / "logs" / args.profile / "benchmark")
        if args.results:
            shutil.rmtree(ROOT / "results" / args.profile, ignore_errors=True)
            shutil.copytree(clone / "results" / args.profile, ROOT / "results" / args.profile)
    total = round(sum(r["seconds"] for r in runs), 1)
    write_json(ROOT / "results" / "benchmarks" / RECORD[args.profile], {
        "profile": args.profile, "commit": runs[-1]["commit"], "machine": cpu_name(), "cores": os.cpu_count(),
        "total_seconds": total, "budget_seconds": BUDGET_SECONDS[args.profile], "runs": runs,
        "job_seconds": round(sum(stage["seconds"] for stage in stages.values()), 1),
        "jobs_benchmarked": len(jobs), "stages": stages,
        "longest_jobs": [{"seconds": seconds, "job": job} for seconds, job in jobs[:10]],
        "note": "the profile's pipeline (set-up done) from an empty build on a fresh clone; total_seconds sums the "
                "wall time of each invocation (runs); job seconds from Snakemake's benchmark records (jobs without "
                "one, such as scoring and merging, are in the wall time only)"})
    print(f"{args.profile}: {total:.0f} s on {os.cpu_count()} cores of {cpu_name()}")


if __name__ == "__main__":
    main()
