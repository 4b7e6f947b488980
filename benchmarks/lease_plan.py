"""Does a profile fit one GPU lease? Each stage's projected wall time on a node of 16 cores and one GPU,
from unit costs measured here and on the last lease, for the profile as configured and for cuts of it.

What the profile runs is Snakemake's own plan: `snakemake -n --forceall` of the profile (and of each cut,
an overlay config) counts the jobs of every rule. What each costs:

- search: seconds per sentence per core of the committed teacher at L = 8 and 10 (teacher_quality.json's
  `test` entry, measured on this machine's cores), linear in L beyond them; the fit of each learned estimate
  (teacher_default.json, the pipeline's fit); a shard's sentences from the profile's data (stats.json);
- a job's fixed cost (Python, imports, a model loaded; a timing job's and a student's are a decoding job's: a
  demo student's decodings in one process, so an over-estimate; its decodings each timed on the card as below): the median wall time of each rule's jobs in the
  demo profile's Snakemake benchmark records here (logs/demo/benchmark: run `make demo` first), the DUC and
  peer steps and the writing out of each decoding (`decoding`) counted as evaluations;
- scoring: one `naus evaluate` of the Gigaword test set (1,951 pairs), timed here;
- training: the last lease's students (results/{profile}/README.md's training table, its `cuda` rows: minutes
  and steps, most of them run 35 side by side on 16 cores), as seconds per step per student at that
  concurrency (each 2.2x slower than alone, 35/16: the students were CPU-bound, so 16 at once, as the
  gpu-node profile runs them, train as many steps a second in all), times the steps
  a student runs: `train.max_steps`, or where early stopping is configured the last lease's median stopping
  step less the steps its patience waits beyond the best;
- decoding on the card: decode_gpu.json's seconds per sample (batch 64, batch 1) plus the fixed cost.

The cuts tried are the keys of the profile's lease overlay (config/lease-{profile}.yaml), after moving every
search off the node. A stage's wall time is the larger of its longest job and its work spread over its slots (16 cores; for
training, the last lease's 35 at the speed measured with 35). The node's CPUs are taken to be as fast as this machine's
(an assumption: the lease's own times replace it). Writes results/benchmarks/lease_plan.json.

    python -m benchmarks.lease_plan            # NAUS_DATA set: the gigaword-sample profile

Findings (the JSON's numbers, as read when it was written; Markdown):

## Will gigaword-sample fit one GPU lease? (`lease_plan.json`)

`python -m benchmarks.lease_plan` (NAUS_DATA set) counts the jobs of every rule in Snakemake's own dry
run of the profile (and of each cut, an overlay config) and prices them with unit costs measured here
and on the last lease: the committed teacher's seconds per sentence per core at L = 8 and 10
(`teacher_quality.json`'s `test` entry: 0.0357 / 0.0432 s; L = 13 extrapolated to 0.0544 s), the
learned estimate's fit (50.4 s), each kind of job's fixed cost (the demo's Snakemake benchmark
records: a student's decodings in one process 4.3 s, its CPU decoding included, taken for every process that
loads a student), one `naus evaluate` of the test set (0.60 s; each decoding written out counted as one), the
last lease's students (26 `cuda` rows of `results/gigaword-sample/README.md`: 0.112 s a step each with
35 side by side on 16 cores, a median stop at step 1,900, so a best at 900 with patience 10) and
`decode_gpu.json`'s seconds per sample on the H200. A stage's time is the larger of its longest job
and its work spread over 16 cores (training: over the lease's 35). Set-up (wheels, the card) is taken
as 90 s: not yet measured on a node. Budget: 13 minutes of device time; a plan fits at 85% of it.

Rerun of 28 November 2026 after each student's decodings went into one process and the timings into one job
(48 students, 48 decoding jobs for 204 decodings and 1 timing job, where there were 204 decoding and 16 timing
jobs; the demo's benchmark records of its 3-minute run): 13.9 / 8.1 / 6.9 / **6.6 min**, the timed decodings 0.4
min and the decodings 0.3 min where they were 1.5 and 0.6. Before that, with the 20-state teacher (0.0432 s a
sentence at L = 10, was 0.0602) and the demo's benchmark records of its 5-minute run, the plans below; before that
with the teacher whose Softmax is written out and the lighter scorer (this machine, AMD EPYC Zen 5 with AVX2,
AVX-512 and VNNI, 2 cores; the node's cores taken as fast as these),
gigaword-sample as configured, after the workflow stopped timing the decodings no table shows (48 students,
174 decodings, 16 timing jobs, 72 search shards; with the 30-state teacher 17.9 / 10.2 / 8.9 / 8.7 min;
the run before these two changes planned 18.6 / 10.7 / 9.4 / 9.1
min, and with 37 timing jobs 20.4 / 12.5 / 11.2 / 10.8 min):

The cuts after the first are the keys of `config/lease-gigaword-sample.yaml` (the overlay a lease runs with),
in its order.

| plan (each cut adds to those above it) | on the node | longest stage | fits |
|---|---|---|---|
| as configured | 15.2 min | training (4.9 min); the search shards 4.9 min (36,183 pool, dev, test and DUC sentences at 3 lengths) | no |
| every search and learned estimate made here before the lease and carried (1.36 core-hours here: about 41 min on 2 cores) | 9.4 min | training (4.9 min, 1,900 steps a student) | **yes** |
| `train.patience: 5` (students stop 500 steps after their best dev loss, not 1,000) | 8.2 min | training (3.7 min) | **yes** |
| `decode.timing_passes: 1` (batch 1's 200 sentences kept) | **7.9 min** | training (3.7 min; timed decodings 1.5 min) | **yes** |

Rehearsal on the CPU: the demo profile through `--workflow-profile workflow/profiles/gpu-node --cores 2` from a
fresh clone ran all 89 jobs in 3 min 17 s on 28 November (5 `decode_student`, 25 `decoding`, 1 `time_decode`;
before, 140 jobs in 13 min 46 s) and gave the committed demo tables: every column of every table but the times,
and `fingerprints.json`, identical.

What the projection cannot know: how many students side by side train fastest on a 16-core node
(the last lease's 35 ran 2.2× slower each than one alone, 35/16: CPU-bound, so 16 at once should give
the same steps per second), CUDA MPS (not tried), the node's own CPU speed, and the set-up. The
lease's own Snakemake benchmark records (`logs/gigaword-sample/benchmark/`) replace them.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from naus import NausError
from naus.pipeline import tables
from naus.plumbing.files import read_json
from naus.plumbing.outputs import write_json

ROOT = Path(__file__).resolve().parents[1]
CORES, LEASE_SIDE_BY_SIDE = 16, 35
BUDGET = 13 * 60  # device seconds a plan may use: two calls of at most 9 minutes, 13 minutes in all
MARGIN = 0.85  # a plan fits when it needs at most this share of the budget
SETUP_SECONDS = 90  # wheels installed from the carried folder and the card started: not yet measured on a node
SEARCHED_HERE = "every search (and its learned estimate) made here before the lease, carried"


def cuts(lease: Path) -> dict[str, dict]:
    """The plans tried, each adding to those before it: every search made here, then each key of the lease's
    overlay config (config/lease-{profile}.yaml) in its order."""
    overlay = yaml.safe_load(lease.read_text()) if lease.is_file() else {}
    return {SEARCHED_HERE: {}, **{f"{section}.{key}: {value}": {section: {key: value}}
                                  for section, values in overlay.items() for key, value in values.items()}}


def job_counts(profile: Path, overlays: list[Path]) -> dict[str, int]:
    """{rule: jobs} of the profile with `overlays`, from Snakemake's dry run."""
    command = [str(Path(sys.executable).parent / "snakemake"), "-n", "--forceall", "--configfile", str(profile),
               *map(str, overlays)]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    table = out[out.index("Job stats:"):out.index("\ntotal")]
    return {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)$", table, flags=re.M)}


def fixed_costs(records: Path) -> dict[str, float]:
    """The median wall seconds of a kind of job in the demo's benchmark records: by folder for the many
    (search, decode, train), by file for the rest (data, lm, export-onnx, estimate-L8, report, ...)."""
    seconds: dict[str, list[float]] = {}
    for path in sorted(records.rglob("*.tsv")):
        with open(path) as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        kind = path.parent.name if path.parent.name in ("search", "decode", "train") else path.stem
        seconds.setdefault(kind, []).extend(float(row["s"]) for row in rows)
    if not seconds:
        raise SystemExit(f"{records}: no Snakemake benchmark records; run `make demo` first")
    return {kind: statistics.median(values) for kind, values in seconds.items()}


def evaluate_seconds(data: Path) -> float:
    """One `naus evaluate` of the test split's references against themselves, as a rule runs it."""
    titles = data / "test" / "title.txt"
    tick = time.perf_counter()
    subprocess.run([sys.executable, "-m", "naus", "evaluate", "--hyp", str(titles), "--ref", str(titles)],
                   capture_output=True, check=True, cwd=ROOT)
    return time.perf_counter() - tick


def last_lease(readme: Path, patience_steps: int) -> dict:
    """Seconds per step per student side by side, and the steps a student stops at, from the lease's table."""
    rows = re.findall(r"^\| [\w.-]+ \| (\d+) \| [\d.]+ \| ([\d.]+) min \| cuda", readme.read_text(), flags=re.M)
    if not rows:
        raise SystemExit(f"{readme}: no students trained on a GPU in its training table")
    steps = [int(s) for s, _ in rows]
    return {"students": len(rows), "seconds_per_step": statistics.median(60 * float(m) / int(s) for s, m in rows),
            "median_stop": statistics.median(steps), "median_best": statistics.median(steps) - patience_steps}


def search_cost(quality: dict, length: int) -> float:
    """Seconds per sentence per core at `length`: measured at 8 and 10, linear in L elsewhere."""
    measured = {int(n): entry["s_per_sentence_core"] for n, entry in quality["test"]["lengths"].items()}
    (a, ca), (b, cb) = sorted(measured.items())[:2]
    return measured.get(length, ca + (cb - ca) * (length - a) / (b - a))


def plan(config: dict, counts: dict[str, int], units: dict, search_here: bool) -> dict:
    """Each stage's projected wall seconds on the node."""
    sizes, fixed = units["sizes"], units["fixed"]
    search, shards = config["search"], config["search"]["shards"]
    searched = [(split, n) for split in ("pool", "dev", "test") for n in search["lengths"]]
    searched += [(split, config["duc"]["length"]) for split in ("pool", "dev", "duc")] if config["duc"]["length"] else []
    shard_seconds = [sizes[s] / shards * search_cost(units["quality"], n) for s, n in dict.fromkeys(searched)
                     for _ in range(shards)]
    train = config["train"]
    steps = train["max_steps"] if not train.get("patience") else min(
        train["max_steps"], units["lease"]["median_best"] + train["patience"] * train["eval_every"])
    student = steps * units["lease"]["seconds_per_step"] + fixed["decode"]  # a process started, a model built
    decode_samples = sizes["test"] * units["gpu"]["length-control@batch64"]
    students = counts.get("decode_student", 0)  # each decodes its planned decodings (`decoding` jobs) in one process
    timed = config["decode"]["timing_passes"] * decode_samples + config["decode"]["batch1_samples"] * units["gpu"][
        "length-control@batch1"]
    evaluations = sum(counts.get(r, 0) for r in ("evaluate_test", "evaluate_duc", "duc_restore", "peer_output",
                                                  "published_reorder", "lead", "decoding"))

    def spread(jobs: int, seconds: float, slots: int = CORES) -> float:
        return max(seconds, jobs * seconds / slots) if jobs else 0.0

    stages = {
        "set-up (wheels, the card)": SETUP_SECONDS,
        "data, LM, MiniLM export": fixed["data"] + fixed["lm"] + fixed["export-onnx"],
        "learned estimates (fit)": units["fit_seconds"] if counts.get("fit_estimate") and not search_here else 0.0,
        "search shards": 0.0 if search_here else max([max(shard_seconds, default=0.0), sum(shard_seconds) / CORES]),
        "training": spread(counts.get("train", 0), student, LEASE_SIDE_BY_SIDE),
        "decoding": spread(students, fixed["decode"] + counts.get("decoding", 0) / max(students, 1) * decode_samples),
        "timed decodings (one at a time)": counts.get("time_decode", 0) * fixed["decode"]
        + len(tables.spec(config).timed()) * timed,
        "scoring": spread(evaluations, units["evaluate_seconds"]),
        "report": fixed["report"],
    }
    total = sum(stages.values())
    return {"stages_seconds": {k: round(v, 1) for k, v in stages.items()}, "total_seconds": round(total, 1),
            "longest_stage": max(stages, key=stages.get), "student_steps": steps,
            "fits": 0 < total <= MARGIN * BUDGET,  # a negative plan is a wrong unit cost, not a fit
            "searched_here_core_hours": round((sum(shard_seconds) + counts.get("fit_estimate", 0) * units["fit_seconds"])
                                              / 3600, 2) if search_here else 0.0}


def resolved(profile: Path, overlays: list[dict]) -> dict:
    """The profile's configuration as the workflow resolves it (naus.pipeline.schema.resolve)."""
    from naus.pipeline import schema

    config = yaml.safe_load(profile.read_text())
    for overlay in overlays:
        for key, value in overlay.items():
            config[key] = {**config.get(key, {}), **value}
    return schema.resolve(config, yaml.safe_load(schema.SCHEMA_FILE.read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", type=Path, default=ROOT / "config/gigaword-sample.yaml")
    parser.add_argument("--out", type=Path, default=ROOT / "results/benchmarks/lease_plan.json")
    args = parser.parse_args()
    if not os.environ.get("NAUS_DATA"):
        raise SystemExit("set NAUS_DATA to the shared data (the profile's dry run reads its files' names)")
    if not args.profile.is_file():
        raise SystemExit(f"{args.profile}: no such profile")
    try:
        base = resolved(args.profile, [])
    except (NausError, AttributeError, TypeError) as err:  # a list or a scalar where a profile is a mapping
        raise SystemExit(f"{args.profile}: not a profile ({err})") from None
    if not (ROOT / "build" / base["profile"] / "data/stats.json").is_file():
        raise SystemExit(f"build/{base['profile']}/data/stats.json: missing; run the profile's data step first")
    name = base["profile"]
    build = ROOT / "build" / name
    stats = read_json(build / "data/stats.json")
    quality = read_json(ROOT / "results/benchmarks/teacher_quality.json")
    default = read_json(ROOT / "results/benchmarks/teacher_default.json")
    fits = [row["fit"]["seconds"] for row in default["rows"] if row["teacher"] == "learned-30" and row["weights"] == "7-bit"]
    units = {
        "sizes": {"pool": stats["pool_pairs"], "dev": stats["dev_pairs"], "test": stats["test_pairs"], "duc": 500},
        "fixed": fixed_costs(ROOT / "logs/demo/benchmark"),
        "quality": quality, "fit_seconds": max(fits),
        "lease": last_lease(ROOT / f"results/{name}/README.md", base["train"]["patience"] * base["train"]["eval_every"]),
        "gpu": read_json(ROOT / "results/benchmarks/decode_gpu.json")["end_to_end"]["seconds_per_sample"],
        "evaluate_seconds": evaluate_seconds(build / "data"),
    }
    plans, overlays = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for label, overlay in [("as configured", None), *cuts(ROOT / f"config/lease-{name}.yaml").items()]:
            if overlay:
                overlays.append(overlay)
            files = [Path(tmp) / f"cut{k}.yaml" for k in range(len(overlays))]
            for path, extra in zip(files, overlays):
                path.write_text(yaml.safe_dump(extra))
            config = resolved(args.profile, overlays)
            plans[label] = plan(config, job_counts(args.profile, files), units, search_here=overlay is not None)
            print(f"{label}: {plans[label]['total_seconds'] / 60:.1f} min on the node "
                  f"({'fits' if plans[label]['fits'] else 'does not fit'}; longest: {plans[label]['longest_stage']})")
    write_json(args.out, {
        "profile": name, "node": f"{CORES} cores, one GPU; students timed {LEASE_SIDE_BY_SIDE} side by side (the last lease)",
        "budget_seconds": BUDGET, "fits_within": f"{MARGIN:.0%} of the budget",
        "unit_costs": {"search_s_per_sentence_core": {n: round(search_cost(quality, n), 4) for n in (8, 10, 13)},
                       "fit_seconds": units["fit_seconds"], "job_fixed_seconds": units["fixed"],
                       "evaluate_seconds": round(units["evaluate_seconds"], 2), "last_lease": units["lease"],
                       "gpu_decode_s_per_sample": {k: units["gpu"][k] for k in ("length-control@batch64",
                                                                                 "length-control@batch1")},
                       "setup_seconds_assumed": SETUP_SECONDS},
        "plans": plans,
    })


if __name__ == "__main__":
    main()
