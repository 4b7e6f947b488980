"""Headlines an editor keeps: the source-order decoder with phrases whole and a bonus for contiguous spans, on dev.

Each lever is a constraint or a term of the exact dynamic program over source positions (`naus.decoding.source_order`),
measured on gigaword-sample's own students (ten seeds, L = 10 and 8, both generations) against today's source order
and the paper's length control, on dev (500 pool sentences held out; their titles only score) and on fresh news
(`tests/data/news.txt` and `tests/data/fresh_news.txt`: sentences written for this, which no data set holds; no
reference, only faults). For each: dev R-1 / R-2 / R-L and their total (mean ± sd over seeds, the paired gain over
source order ± its sd), and the share of headlines with each mechanical fault (`naus.evaluation.readability`).

The choice (on dev, the last generation: the students the tables and the bundled model use): the levers whose dev
total is within one standard error of source order's (its ten seeds') at both lengths and whose share of headlines
with any fault is lower at both are admitted; of those within one point of the fewest faults (the mean of the two
lengths' shares), the best dev total. None, if none is admitted. Fresh news is reported beside, not chosen on.

    python -m benchmarks.readability --build ../gwrun/build/gigaword-sample     # kept: resumes

Findings (the JSON's numbers, as read when it was written; Markdown): below, once measured.
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.common import one_thread, run_all, total
from naus import layout
from naus.device import cpu_name, isa
from naus.evaluation.evaluate import METRICS
from naus.evaluation.readability import FAULTS, shares
from naus.files import read_json, read_lines
from naus.outputs import write_json, write_lines
from naus.provenance import code_state
from naus.text import source_tokens

ROOT = Path(__file__).resolve().parents[1]
LENGTHS, SEEDS, GENERATIONS = (10, 8), range(10), (1, 2)
NEWS = [ROOT / "tests/data/news.txt", ROOT / "tests/data/fresh_news.txt"]
BASELINE = "source order"
SO = {"method": "source-order"}
WHOLE, CONTENT = {"phrases": "whole"}, {"last_word": "content"}
VARIANTS = {
    BASELINE: SO,
    "length control (the paper's)": {"method": "length-control"},
    "phrases whole": {**SO, **WHOLE},
    "no function word last": {**SO, **CONTENT},
    "phrases whole, no function word last": {**SO, **WHOLE, **CONTENT},
    **{f"adjacency {a}": {**SO, "adjacency": a} for a in (0.5, 1.0, 2.0)},
    **{f"phrases whole, adjacency {a}": {**SO, **WHOLE, "adjacency": a} for a in (0.5, 1.0, 2.0)},
    **{f"phrases whole, no function word last, adjacency {a}": {**SO, **WHOLE, **CONTENT, "adjacency": a}
       for a in (0.5, 1.0)},
}


def decoded(build: Path, name: str, length: int, variant: str, out: Path) -> dict:
    """One student's summaries of dev (scored) and of the fresh news, by one variant (kept: made once)."""
    record = out / f"{variant}.json"
    if record.is_file():
        return read_json(record)
    from naus.decoding.summarizer import Summarizer
    from naus.student.frozen import States

    options = VARIANTS[variant]
    summarizer = Summarizer.from_checkpoint(build / layout.student_checkpoint(name), "cpu")
    dev = read_lines(build / layout.split_file("dev", "article"))
    states = States.load(build / layout.frozen_states("dev"))
    summaries = [r.summary for r in summarizer.summarize(dev, length=length, raw=False, states=states, **options)]
    write_lines(out / f"{variant}.dev.txt", summaries)
    news = [line for path in NEWS for line in read_lines(path)]
    fresh = [r.summary for r in summarizer.summarize(news, length=length, raw=True, headlines=False, **options)]
    write_lines(out / f"{variant}.news.txt", fresh)
    write_json(record, total(out / f"{variant}.dev.txt", build / layout.split_file("dev", "title")))
    return read_json(record)


def with_faults(record: dict, out: Path, variant: str, dev: list[list[str]], news: list[list[str]]) -> dict:
    """A decoding's record with the faults of its summaries (counted here, not kept: the count may change)."""
    return {**record, **{f"{where}_faults": shares([line.split() for line in read_lines(out / f"{variant}.{where}.txt")],
                                                   sources) for where, sources in (("dev", dev), ("news", news))}}


def rows(records: dict[str, list[dict]]) -> dict[str, dict]:
    """Per variant: dev scores (mean ± sd over seeds), the paired gain over source order, faults (mean over seeds)."""
    base = [r["total"] for r in records[BASELINE]]
    out = {}
    for variant, runs in records.items():
        totals = [r["total"] for r in runs]
        gains = [a - b for a, b in zip(totals, base)]
        out[variant] = {
            **{k: round(statistics.mean(r[k] for r in runs), 2) for k in METRICS},
            "dev_totals": totals, "dev_total": round(statistics.mean(totals), 2),
            "dev_sd": round(statistics.stdev(totals), 2), "dev_se": round(statistics.stdev(totals) / len(totals) ** .5, 2),
            "paired_gain": round(statistics.mean(gains), 2), "paired_gain_sd": round(statistics.stdev(gains), 2),
            **{f"{where}_faults": {k: round(statistics.mean(r[f"{where}_faults"][k] for r in runs), 1)
                                   for k in (*FAULTS, "any fault")} for where in ("dev", "news")}}
    return out


def choose(lengths: dict[str, dict]) -> tuple[str | None, dict]:
    """The lever kept (see the module's docstring), and why each was or was not."""
    last = f"generation {GENERATIONS[-1]}"
    verdicts, admitted = {}, {}
    for variant in VARIANTS:
        if variant in (BASELINE, "length control (the paper's)"):
            continue
        within = all(lengths[n][last][variant]["dev_total"] >= lengths[n][last][BASELINE]["dev_total"]
                     - lengths[n][last][BASELINE]["dev_se"] for n in lengths)
        fewer = all(lengths[n][last][variant]["dev_faults"]["any fault"]
                    < lengths[n][last][BASELINE]["dev_faults"]["any fault"] for n in lengths)
        verdicts[variant] = ("kept: " if within and fewer else "not kept: ") + (
            "dev total within one standard error" if within else "dev total lower by more than one standard error") + (
            ", fewer faults at both lengths" if fewer else ", not fewer faults at both lengths")
        if within and fewer:
            admitted[variant] = statistics.mean(lengths[n][last][variant]["dev_faults"]["any fault"] for n in lengths)
    fewest = min(admitted.values(), default=None)
    near = [v for v in admitted if admitted[v] <= fewest + 1.0] if admitted else []
    chosen = max(near, key=lambda v: statistics.mean(lengths[n][last][v]["dev_total"] for n in lengths)) if near \
        else None
    return chosen, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build/gigaword-sample")
    parser.add_argument("--work", type=Path, default=ROOT / "build/readability", help="kept: resumes")
    parser.add_argument("--out", type=Path, default=ROOT / "results/benchmarks/readability.json")
    parser.add_argument("--generations", type=int, nargs="+", default=list(GENERATIONS),
                        help="decode only these generations' students (kept; the JSON is written with all of them)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = [(decoded, args.build, layout.model(n, seed=s, generation=g), n, variant,
             args.work / layout.model(n, seed=s, generation=g))
            for n in LENGTHS for g in GENERATIONS for s in SEEDS for variant in VARIANTS]
    with ProcessPoolExecutor(args.workers, initializer=one_thread) as pool:
        found = run_all(pool, [job for job in jobs if layout.parse_model(job[2]).generation in args.generations])
    if set(args.generations) != set(GENERATIONS):
        return
    dev = [line.split() for line in read_lines(args.build / layout.split_file("dev", "article"))]
    news = [source_tokens(line) for path in NEWS for line in read_lines(path)]
    records: dict = {}
    for (_, _, name, n, variant, out), record in zip(jobs, found):
        record = with_faults(record, out, variant, dev, news)
        generation = layout.parse_model(name).generation
        records.setdefault(str(n), {}).setdefault(f"generation {generation}", {}).setdefault(variant, []).append(record)
    lengths = {n: {g: rows(by_variant) for g, by_variant in by_generation.items()} for n, by_generation in records.items()}
    chosen, verdicts = choose(lengths)
    write_json(args.out, {
        "script": f"benchmarks/readability.py at {code_state()['commit'][:7]}", "profile": "gigaword-sample",
        "made_by": code_state(), "machine": f"{cpu_name()} ({', '.join(isa())}), 2 cores, one thread a decoding",
        "seeds": len(SEEDS), "dev_sentences": len(read_lines(args.build / layout.split_file("dev", "article"))),
        "news_sentences": len(news), "news_files": [str(path.relative_to(ROOT)) for path in NEWS],
        "dev_titles_faults": shares([t.split() for t in read_lines(args.build / layout.split_file("dev", "title"))],
                                    dev),
        "variants": VARIANTS, "lengths": lengths, "verdicts": verdicts, "chosen": chosen,
        "rule": "admitted: the levers whose generation-2 dev total is within one standard error of source order's at "
                "both lengths and whose share of dev headlines with any fault is lower at both; of those within one "
                "point of the fewest faults (mean of the lengths), the best dev total"})
    print(f"chosen: {chosen} -> {args.out}")


if __name__ == "__main__":
    main()
