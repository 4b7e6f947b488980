"""The paper profile at full size on one machine: its own steps on a synthetic Gigaword of at least
3.8M distinct pairs, each step timed and its peak memory measured.

The corpus. Copy k of each real pool pair (k = 0 is the pair itself) keeps the pair's length and
word order, with each word replaced, with probability 0.2, by a word drawn from the pool's unigram
distribution (articles from the articles', titles from the titles'); an article made twice is
drawn again, so every line is distinct and the length distribution is the pool's. The real test
set and DUC2004 stay as they are.

The steps are the workflow's rules, run by Snakemake (`--allowed-rules`) on `config/paper.yaml`
with the data directory pointed at the synthetic release, in a work directory, one stage at a
time: data; lm; search (the profile's shard plan, `--searched` whole shards of the pool at L = 10
run two at a time); merge (the profile's number of shard files, made full size from the searched
ones, merged by the rule); vocab (the training sources' vocabulary alone, as `naus train` builds
it); train (every pair loaded, `--steps` steps of the paper's 6 x 512 student on this CPU); decode
(the 1,951 test sentences, length control, as the rule does). Peak memory is the largest resident
set of the stage's processes (`wait4`: Snakemake, its jobs and their children), so a stage stays
within a node's memory if that number does.

Writes results/benchmarks/scale.json: the corpus, and per stage seconds, peak GB, output size and
the projected cost of the whole paper run.

    NAUS_DATA=../shared/data python -m benchmarks.scale --work /tmp/scale

Findings (the JSON's numbers, as read when it was written; Markdown):

## What the paper profile costs

Measured, not guessed: `python -m benchmarks.scale --work DIR` (→ `results/benchmarks/scale.json`)
makes a synthetic Rush-format release of **3.8M distinct pairs** from the real pool (each pool pair
copied with every word swapped, with probability 0.2, for a word drawn from the pool's unigram
distribution: the real length distribution, no repeated line; the real test set and DUC2004), then
runs the paper profile's own rules on it with Snakemake, one stage at a time, each under a
peak-memory measurement (`wait4`: the largest resident set of the stage's processes). One run on
this machine (2-core Intel Xeon, 24 GiB), 3.8M pairs, committed code of 9f7006f, 16 minutes of stages (plus 57 s to
make the corpus):

| stage | what ran | seconds | peak memory | output |
|---|---|---|---|---|
| data | `naus data gigaword`: 3,800,000 pairs read, cleaned, split (3,797,999 pool, 2,000 dev) | 31 | 2.76 GB | 914 MB |
| lm | `naus train-lm`: 3-gram KenLM on the 3,797,999 pool headlines | 26 | 1.17 GB | 312 MB |
| search | `naus search`: 2 whole pool shards of 512 at L = 10 (7,417 + 7,418 sentences), two one-core jobs at once, MiniLM export included | 244 | 1.98 GB | 3 MB |
| merge | `naus merge`: the profile's 512 shard files, full size (made from the 2 searched), 3.8M records | 27 | 0.37 GB | 885 MB |
| vocab | the training sources' vocabulary, as `naus train` builds it | 15 | 0.71 GB | – |
| train | `naus train`: every pair loaded, the paper's 6 × 512 student, 100 steps of 4,096 tokens on 2 threads | 569 | 6.52 GB | 569 MB |
| decode | `naus decode`: the 1,951 test sentences, length control, batch 64, and 500 at batch 1 | 59 | 2.14 GB | 119 kB |

Every stage stays under 8 GB at full size. What had to change for that, all with the small
profiles' outputs unchanged: `naus merge` streams shard by shard (it held every record before);
training keeps token ids in flat int32 arrays with offsets, read line by line from both files
(Python lists of ints would have taken several GB), and counts the vocabulary as it reads; the
paper profile gives `lmplz` an absolute 4 GB (`lm.memory: "4G"`: "50%" of a large node is far
beyond 8 GB).

**Projected cost of the whole run** (this CPU's rates; `projection` in the JSON):
- search: 0.0307 s per sentence per core at L = 10 (the two shards), 27.1 / 32.4 / 52.3 core-hours at L = 8 / 10 /
13 (L = 8 and 13 scaled by gigaword-sample's measured per-length rates), **111.8 core-hours** in all (measured with
the teacher before November 2026; the default re-ranking now encodes 180 of 1,600 states, 0.20 / 0.23 s per sentence
per core at L = 8 / 10 on gigaword-sample's test set on this repository's AMD EPYC, about 0.37 at L = 13 by the same
per-length ratio, so about 850 core-hours for 3.8M sentences at the three lengths; `search.preset: fast` takes
0.17–0.18 of the default's time per sentence (`teacher_fast.json`, measured side by side at L = 8 and 10): about 150
core-hours, plus a 7.5-minute fit per length);
- merge: 27 s per length, 0.86 GB of records per length;
- data 31 s, LM 26 s, decoding 59 s a run (CPU);
- training: 5.09 s a step on 2 CPU threads, 141.5 hours per student at 100k steps; on an NVIDIA H200 with bf16
autocast 0.032 s a step (126k tokens/s, `results/benchmarks/train_gpu.json`), about 0.9 hours per student.

**On a cluster** with N CPU cores for the search and M GPUs: the search's 112 core-hours
spread over 512 shards × 3 lengths (plus dev, test and DUC2004: under 1% more), so about
112 / N hours of wall time for N ≤ 1,536, each shard a one-core job of at most 6
minutes at L = 13 on this CPU. The twelve students (three lengths, three training sizes, six Table
4 encoder–decoders) need a GPU each: on this CPU the paper's student takes 5.09 s a step,
142 hours for the profile's 100k steps, so the CPU is no option; on one NVIDIA H200 it trains at
126,342 source tokens per second with bf16 autocast (100,411 in fp32, 1.26×; batches of 4,096
tokens, alone on the card, `results/benchmarks/train_gpu.json`), so 100k steps take about 0.9
GPU-hours and the twelve students about 11 on that card. Disk: the release and
the corpus step about 2 GB, each length's merged search output 0.86 GB (×3, plus the shard
files until merged), a student's directory 0.56 GB (`last.pt` with the optimizer and
`best.pt`; ×12), decodings a few MB: about 15 GB in `build/paper` and the same again in the DVC
cache after `dvc commit` (hard links or copies, by the cache type). The SLURM profile's memory and
run time per rule (`workflow/profiles/slurm/config.yaml`) come from these numbers, with margin.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from naus.pipeline import layout
from naus.plumbing.files import read_lines
from naus.plumbing.outputs import write_json
from naus.settings import SearchConfig, TrainConfig

ROOT = Path(__file__).resolve().parents[1]
PAPER = yaml.safe_load((ROOT / "config/paper.yaml").read_text())
LENGTH = 10  # the length searched and trained here; the others are projected from gigaword-sample's rates
# Search seconds per sentence per core at each length relative to L = 10, from the gigaword-sample pool run.
LENGTH_COST = {8: 0.041 / 0.049, 10: 1.0, 13: 0.079 / 0.049}


def synthesize(pool: Path, test: Path, duc: Path, out: Path, pairs: int, seed: int = 0) -> dict:
    """The synthetic release under `out` (Rush layout, as config/paper.yaml names its files)."""
    articles, titles = read_lines(pool / "article.txt"), read_lines(pool / "title.txt")
    rng = np.random.default_rng(seed)
    sides = []
    for lines in (articles, titles):
        words = sorted({w for line in lines for w in line.split()})
        index = {w: i for i, w in enumerate(words)}
        ids = [np.array([index[w] for w in line.split()], dtype=np.int64) for line in lines]
        counts = np.bincount(np.concatenate(ids), minlength=len(words)).astype(np.float64)
        sides.append((np.array(words, dtype=object), ids, np.cumsum(counts / counts.sum())))
    train = out / PAPER["data"]["pool_article"]
    train.parent.mkdir(parents=True, exist_ok=True)
    seen: set[int] = set()
    made = 0
    with open(train, "w", encoding="utf-8") as article_out, \
            open(out / PAPER["data"]["pool_title"], "w", encoding="utf-8") as title_out:
        copy = 0
        while made < pairs:
            for i in range(len(articles)):
                if made == pairs:
                    break
                while True:
                    article = _variant(sides[0], i, rng, copy)
                    if hash(article) not in seen:
                        break
                seen.add(hash(article))
                article_out.write(article + "\n")
                title_out.write(_variant(sides[1], i, rng, copy) + "\n")
                made += 1
            copy += 1
    for key, source in (("test_article", test / "input.txt"), ("test_title", test / "task1_ref0.txt")):
        (out / PAPER["data"][key]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, out / PAPER["data"][key])
    shutil.copytree(duc, out / PAPER["data"]["duc_dir"], dirs_exist_ok=True)
    return {"pairs": made, "copies_of_each_pool_pair": copy, "pool_pairs": len(articles),
            "article_words_mean": round(float(np.mean([len(x) for x in sides[0][1]])), 2),
            "bytes": sum(p.stat().st_size for p in train.parent.iterdir())}


def _variant(side, i: int, rng: np.random.Generator, copy: int) -> str:
    words, ids, cumulative = side
    line = ids[i]
    if copy:
        swap = rng.random(len(line)) < 0.2
        line = np.where(swap, np.searchsorted(cumulative, rng.random(len(line))), line)
    return " ".join(words[line])


class Stages:
    """The workflow's rules on the synthetic release, one measured stage at a time."""

    def __init__(self, work: Path, config: Path, cores: int):
        self.work, self.config, self.cores = work, config, cores
        self.build = work / "build" / PAPER["profile"]
        self.report: dict[str, dict] = {}

    def snakemake(self, name: str, targets: list[str], rules: list[str], output: list[Path],
                  *extra: str) -> dict:
        targets = [str(Path(t).relative_to(self.work)) for t in targets]  # the rules' outputs are relative
        command = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(self.work),
                   "--configfile", str(self.config), "--cores", str(self.cores), *extra, "--allowed-rules", *rules,
                   "--forcerun", *rules, "--", *targets]  # forced: a stage run again is measured again
        return self.measure(name, command, output)

    def measure(self, name: str, command: list[str], output: list[Path]) -> dict:
        """Run one stage; its seconds, the peak resident memory of all its processes, its output size."""
        started = time.perf_counter()
        with open(self.work / f"{name}.log", "w") as log:
            child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=self.work,
                                     env={**os.environ, "PYTHONPATH": str(ROOT)})
            _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"stage {name} failed: see {self.work / (name + '.log')}")
        stage = {"seconds": round(seconds, 1), "peak_gb": round(usage.ru_maxrss / 2**20, 2),
                 "output_bytes": sum(_size(p) for p in output)}
        self.report[name] = stage
        print(f"{name}: {stage}", flush=True)
        return stage


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def fabricate_shards(build: Path, split: str, searched: list[int], shards: int, total: int) -> None:
    """The profile's `shards` shard files of a full-size search, from the shards actually searched:
    their records in turn, renumbered, with the provenance and timing files the rules leave."""
    records, seconds, sentences = [], 0.0, 0
    for shard in searched:
        part = build / f"{layout.search_part(split, LENGTH, shard)}.jsonl"
        records += [json.loads(line) for line in part.read_text(encoding="utf-8").splitlines()]
        timing = json.loads((build / layout.search_timing(split, LENGTH, shard)).read_text())
        seconds, sentences = seconds + timing["seconds"], sentences + timing["sentences"]
    provenance = json.loads((build / f"{layout.search_part(split, LENGTH, searched[0])}.jsonl.provenance.json").read_text())
    for shard in range(shards):
        if shard in searched:
            continue
        indices = range(total * shard // shards, total * (shard + 1) // shards)
        part = build / f"{layout.search_part(split, LENGTH, shard)}.jsonl"
        with open(part, "w", encoding="utf-8") as handle:
            for k, index in enumerate(indices):
                handle.write(json.dumps({**records[k % len(records)], "index": index}, ensure_ascii=False) + "\n")
        write_json(f"{part}.provenance.json", {**provenance, "shard": [shard, shards]})
        write_json(build / layout.search_timing(split, LENGTH, shard),
                   {"sentences": len(indices), "seconds": round(seconds / sentences * len(indices), 3)})


STAGES = ("data", "lm", "search", "merge", "vocab", "train", "decode")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NAUS_DATA"), help="the shared data (default: $NAUS_DATA)")
    parser.add_argument("--work", type=Path, required=True, help="a scratch directory (tens of GB)")
    parser.add_argument("--pairs", type=int, default=3_800_000)
    parser.add_argument("--searched", type=int, default=2, help="whole pool shards searched (two at a time)")
    parser.add_argument("--steps", type=int, default=200, help="training steps of the paper's student")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES),
                        help="run these stages again in an existing --work (the others' numbers are kept)")
    parser.add_argument("--out", default="results/benchmarks/scale.json")
    args = parser.parse_args()
    if not args.data:
        raise SystemExit("give --data or set NAUS_DATA")
    data, work = Path(args.data), args.work
    if set(args.stages) == set(STAGES) and (work / "build").exists():
        raise SystemExit(f"{work} holds an earlier run: Snakemake would find its outputs and measure nothing; "
                         "remove it, or rerun some --stages")
    work.mkdir(parents=True, exist_ok=True)
    previous = json.loads(Path(args.out).read_text()) if set(args.stages) != set(STAGES) else {}
    corpus = previous.get("corpus")
    if corpus is None:
        started = time.perf_counter()
        corpus = synthesize(data / "gigaword/pool", data / "gigaword/test", data / "duc2004", work / "release", args.pairs)
        corpus["seconds_to_make"] = round(time.perf_counter() - started, 1)
    print("corpus:", corpus, flush=True)

    config = {**PAPER, "data": {**PAPER["data"], "data_dir": str(work / "release")},
              "train": {**PAPER.get("train", {}), "max_steps": args.steps, "eval_every": args.steps,
                        "checkpoint_every": args.steps}}
    config_path = work / "paper-scale.yaml"
    config_path.write_text(yaml.safe_dump(config))
    stages = Stages(work, config_path, args.cores)
    stages.report = previous.get("stages", {})
    build, shards = stages.build, PAPER["search"]["shards"]
    searched = list(range(args.searched))
    merged = build / layout.search("pool", LENGTH)
    student = build / layout.student_dir(layout.model(LENGTH))
    decoded = build / layout.decoded("test", layout.model(LENGTH), "length-control", LENGTH)
    vocab_probe = ("import sys; from naus.plumbing.files import iter_parallel; from naus.student.vocab import Vocab; "  # as `naus train`
                   f"print(len(Vocab.build((s for s, in iter_parallel(sys.argv[1])), {TrainConfig().min_count})))")

    def counts() -> dict:
        return json.loads((build / "data/stats.json").read_text())

    run = {
        "data": lambda: stages.snakemake("data", [f"{build}/data/stats.json"], ["data_gigaword"], [build / "data"]),
        "lm": lambda: stages.snakemake("lm", [f"{build}/lm/lm.bin"], ["train_lm"], [build / "lm"]),
        "search": lambda: stages.snakemake(
            "search", [f"{build}/{layout.search_part('pool', LENGTH, s)}.jsonl" for s in searched],
            ["search_source", "export_onnx", "search_shard"],
            [build / f"{layout.search_part('pool', LENGTH, s)}.jsonl" for s in searched]),
        "merge": lambda: (fabricate_shards(build, "pool", searched, shards, counts()["pool_pairs"]),
                          stages.snakemake("merge", [f"{merged}.jsonl"], ["search_merge"],
                                           [Path(f"{merged}.jsonl"), Path(f"{merged}.txt")]),
                          _fake_dev_search(build, counts()["dev_pairs"])),
        "vocab": lambda: stages.measure("vocab", [sys.executable, "-c", vocab_probe, str(build / "search/pool/source.txt")],
                                        []),
        "train": lambda: shutil.rmtree(student, ignore_errors=True) or stages.snakemake("train", [f"{student}/best.pt"], ["search_source", "train"], [student],
                                          "--set-threads", f"train={args.cores}"),
        "decode": lambda: stages.snakemake("decode", [f"{decoded}.txt"], ["decode"], [Path(f"{decoded}.txt")]),
    }
    for name in STAGES:
        if name in args.stages:
            run[name]()
    write_json(args.out, {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                   f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB",
        "corpus": corpus, "data_counts": counts(), "stages": {name: stages.report[name] for name in STAGES},
        "projection": project(stages, build, counts(), shards, args.steps),
    })


def _fake_dev_search(build: Path, dev_pairs: int) -> None:
    """The dev split's search output the train rule reads (its search, 2,000 sentences in 512 shards,
    is not what this benchmark measures): the pool's first summaries."""
    summaries = (build / f"{layout.search('pool', LENGTH)}.txt").read_text(encoding="utf-8").splitlines()[:dev_pairs]
    stem = build / layout.search("dev", LENGTH)
    (stem.parent).mkdir(parents=True, exist_ok=True)
    Path(f"{stem}.txt").write_text("".join(s + "\n" for s in summaries), encoding="utf-8")
    Path(f"{stem}.jsonl").write_text("".join(json.dumps({"index": i, "summary": s}) + "\n"
                                             for i, s in enumerate(summaries)), encoding="utf-8")


def project(stages: Stages, build: Path, counts: dict, shards: int, steps: int) -> dict:
    """The whole paper run at the measured rates: core-hours per stage on this CPU."""
    report = stages.report
    timing = [json.loads((build / layout.search_timing("pool", LENGTH, s)).read_text()) for s in range(2)]
    per_sentence = sum(t["seconds"] for t in timing) / sum(t["sentences"] for t in timing)
    searched = counts["pool_pairs"] + counts["dev_pairs"]
    search_hours = {f"L{n}": round(per_sentence * LENGTH_COST[n] * searched / 3600, 1) for n in PAPER["search"]["lengths"]}
    train_timing = json.loads((build / layout.train_timing(layout.model(LENGTH))).read_text())
    seconds_per_step = train_timing["seconds"] / train_timing["steps"]
    students = len(PAPER["search"]["lengths"]) + len(PAPER["train"]["fractions"]) + 3 * len(PAPER["analysis"]["lengths"])
    return {
        "search_seconds_per_sentence_per_core_L10": round(per_sentence, 4),
        "search_core_hours": search_hours,
        "search_core_hours_total": round(sum(search_hours.values()), 1),
        "search_wall_hours_with_one_core_per_shard": round(sum(search_hours.values()) / shards, 2),
        "train_cpu_seconds_per_step_paper_model": round(seconds_per_step, 2),
        "train_cpu_hours_per_student_at_the_profile_budget": round(seconds_per_step * TrainConfig().max_steps / 3600, 1),
        "students": students,
        "train_gpu": "unknown: no GPU was at hand for this run",
        "merge_seconds_per_length": report["merge"]["seconds"],
        "search_output_gb_per_length": round(report["merge"]["output_bytes"] / 2**30, 2),
        "steps_run": steps,
        "search_budget": {"steps_coef": SearchConfig().steps_coef, "restarts_coef": SearchConfig().restarts_coef},
    }


if __name__ == "__main__":
    main()
