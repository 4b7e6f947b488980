"""What the LM reading the titles of the articles it labels does to the labels: both protocols side by side.

For each protocol of data.lm_titles (`disjoint`: `unsearched`, the default, no title of a searched article in the
LM; `all-titles`: `all`, every pool title, the paper's protocol), everything else gigaword-sample's: its data, its
searched pool (search.pool_limit), the LM's order, the committed teacher (the learned estimate refitted on that
LM). At each length the teacher labels the pool's first `--pool-sentences` articles (all of them searched, so the
disjoint LM holds none of their titles) and dev; each label set is scored against its own articles' titles
beside Lead-L on the same lines. Against its own titles, a label set that the titles steered scores more above
Lead than the same teacher does on dev, where no title reaches the LM: `title_drift` is that difference.
Also the share of the labelled titles that occur as LM lines, beside dev's.

Writes results/benchmarks/lm_titles.json.

    NAUS_DATA=../shared/data python -m benchmarks.archive.lm_titles \
        --onnx build/gigaword-sample/similarity/minilm-int8.onnx

Findings (the JSON's numbers, as read when it was written; Markdown):

## What the LM reading the labelled articles' titles does (`lm_titles.json`)

`python -m benchmarks.archive.lm_titles --onnx build/gigaword-sample/similarity/minilm-int8.onnx`, on a 2-core
AMD EPYC (AVX2 only): gigaword-sample's data, LM order and teacher (the `fast` preset, its learned estimate
refitted on each LM), the pool's first 2,000 articles (all among the 16,842 the profile searches) and dev, at
L = 10 and 8. Total ROUGE (R-1 + R-2 + R-L F1, rouge-score) of each label set against its own articles' titles:

| protocol (`data.lm_titles`) | LM headlines | labelled titles that are LM lines | L | pool labels | Lead on them | dev teacher | Lead on dev | drift |
|---|---|---|---|---|---|---|---|---|
| all-titles (`all`, the paper's) | 65,889 | 1.0 | 10 | 104.03 | 72.5 | 86.52 | 71.72 | 16.73 |
| | | | 8 | 105.86 | 67.83 | 84.85 | 69.0 | 22.18 |
| disjoint (`unsearched`, the default) | 47,940 | 0.0 | 10 | 85.49 | 72.5 | 83.75 | 71.72 | 0.96 |
| | | | 8 | 85.38 | 67.83 | 83.45 | 69.0 | 3.1 |

The drift is (pool labels − Lead) − (dev teacher − Lead on dev): how much nearer its titles a label set sits
than the teacher gets where no title steers it. Under the paper's protocol 0.076 of the dev titles are LM lines
too (copies among the other headlines), which the default leaves out with every copy of a searched title (1,107
lines). The dev teacher of the all-titles row, 86.52 at L = 10, is the committed gigaword-sample teacher's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from naus.device import cpu_name
from naus import layout
from naus.evaluation.evaluate import lead, rouge
from naus.files import read_json, read_lines
from naus.outputs import write_json
from naus.settings import ALL_TITLES, UNSEARCHED, SearchConfig

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "config/gigaword-sample.yaml"
PROTOCOLS = {"disjoint": UNSEARCHED, "all-titles": ALL_TITLES}
LENGTHS = (10, 8)


def naus(*args: str, log: Path) -> None:
    """One `naus` command on one thread, as the workflow's jobs; its output in `log`."""
    with log.open("w") as handle:
        if subprocess.run([sys.executable, "-m", "naus", "--threads", "1", *args], cwd=ROOT, stdout=handle,
                          stderr=subprocess.STDOUT).returncode:
            raise SystemExit(f"failed: naus {' '.join(args)} (see {log})")


def data_command(profile: dict, data_dir: Path, lm_titles: str, out: Path) -> list[str]:
    data = profile["data"]
    return ["data", "gigaword", "--pool-article", str(data_dir / data["pool_article"]),
            "--pool-title", str(data_dir / data["pool_title"]), "--test-article", str(data_dir / data["test_article"]),
            "--test-title", str(data_dir / data["test_title"]), "--extra-headlines",
            *(str(data_dir / p) for p in data.get("extra_headlines", [])), "--select-size", str(data["select_size"]),
            "--lm-titles", lm_titles, "--searched", str(profile["search"]["pool_limit"]), "--out", str(out)]


def scores(hypotheses: list[str], titles: list[str]) -> dict:
    result = rouge(hypotheses, [titles])
    return {"rouge1": result["rouge1"], "rouge2": result["rouge2"], "rougeL": result["rougeL"],
            "total": round(result["rouge1"] + result["rouge2"] + result["rougeL"], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("NAUS_DATA", "../shared/data")))
    parser.add_argument("--onnx", type=Path, required=True, help="MiniLM as int8 ONNX (`naus export-onnx`)")
    parser.add_argument("--pool-sentences", type=int, default=2000, help="pool articles labelled per protocol")
    parser.add_argument("--work", type=Path, default=ROOT / "build/lm_titles", help="kept between runs: resumes")
    parser.add_argument("--out", type=Path, default=ROOT / "results/benchmarks/lm_titles.json")
    args = parser.parse_args()
    profile = yaml.safe_load(PROFILE.read_text())
    for name, lm_titles in PROTOCOLS.items():  # the corpora and LMs, one after the other (each a few seconds)
        work = args.work / name
        work.mkdir(parents=True, exist_ok=True)
        if not (work / layout.LM_MODEL).is_file():
            naus(*data_command(profile, args.data.resolve(), lm_titles, work / layout.DATA), log=work / "data.log")
            (work / layout.LM_MODEL).parent.mkdir(exist_ok=True)
            naus("train-lm", "--corpus", str(work / layout.LM_CORPUS), "--out", str(work / layout.LM_MODEL),
                 log=work / "lm.log")
        for split in ("pool", "dev"):
            limit = args.pool_sentences if split == "pool" else 0
            naus("head", "--input", str(work / layout.split_file(split, "article")), "--lines", str(limit),
                 "--out", str(work / layout.search_source(split)), log=work / f"{split}-source.log")

    def fit(name: str, length: int) -> None:
        work = args.work / name
        if not (work / layout.estimate(length)).is_file():
            naus("fit-estimate", "--input", str(work / layout.search_source("pool")), "--lm", str(work / layout.LM_MODEL),
                 "--length", str(length), "--onnx", str(args.onnx), "--rerank-exact", str(SearchConfig.rerank_exact),
                 "--out", str(work / layout.estimate(length)), log=work / f"estimate-L{length}.log")

    def search(name: str, length: int, split: str) -> None:
        work = args.work / name
        if Path(f"{work / layout.search(split, length)}.jsonl").is_file():
            return
        naus("search", "--input", str(work / layout.search_source(split)), "--lm", str(work / layout.LM_MODEL),
             "--length", str(length), "--onnx", str(args.onnx), "--estimate", str(work / layout.estimate(length)),
             "--rerank-exact", str(SearchConfig.rerank_exact), "--out", f"{work / layout.search(split, length)}.jsonl",
             log=work / f"search-{split}-L{length}.log")

    with ThreadPoolExecutor(2) as pool:  # two one-thread jobs on two cores, as the workflow runs them
        list(pool.map(lambda job: fit(*job), [(n, length) for n in PROTOCOLS for length in LENGTHS]))
        list(pool.map(lambda job: search(*job), [(n, length, split) for n in PROTOCOLS for length in LENGTHS
                                                 for split in ("pool", "dev")]))
    result = {"profile": "gigaword-sample", "machine": cpu_name(), "pool_sentences": args.pool_sentences,
              "teacher": f"naus search's default (the learned estimate, {SearchConfig.rerank_exact} "
                         "states encoded), the estimate fitted on each protocol's LM", "protocols": {}}
    for name, lm_titles in PROTOCOLS.items():
        work = args.work / name
        lm_lines = set(read_lines(work / layout.LM_CORPUS))
        titles = {split: read_lines(work / layout.split_file(split, "title")) for split in ("pool", "dev")}
        titles["pool"] = titles["pool"][: args.pool_sentences]
        stats = read_json(work / layout.DATA_STATS)
        row = {"lm_titles": lm_titles, **{key: stats.get(key, 0) for key in (
                   "lm_headlines", "lm_searched_titles_left_out", "lm_copies_of_searched_titles_left_out")},
               "labelled_titles_that_are_lm_lines": round(sum(t in lm_lines for t in titles["pool"])
                                                          / len(titles["pool"]), 4),
               "dev_titles_that_are_lm_lines": round(sum(t in lm_lines for t in titles["dev"]) / len(titles["dev"]), 4),
               "lengths": {}}
        for length in LENGTHS:
            entry = {}
            for split in ("pool", "dev"):
                records = read_lines(f"{work / layout.search(split, length)}.jsonl")
                labels = [json.loads(line)["summary"] for line in records]
                sources = read_lines(work / layout.search_source(split))
                label, baseline = scores(labels, titles[split]), scores(lead(sources, length), titles[split])
                entry[f"{split}_labels_vs_own_titles"] = label
                entry[f"{split}_lead_vs_own_titles"] = baseline
                entry[f"{split}_title_total"] = label["total"]
                entry[f"{split}_lead_title_total"] = baseline["total"]
            entry["title_drift"] = round((entry["pool_title_total"] - entry["pool_lead_title_total"])
                                         - (entry["dev_title_total"] - entry["dev_lead_title_total"]), 2)
            row["lengths"][str(length)] = entry
        result["protocols"][name] = row
    write_json(args.out, result)
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
