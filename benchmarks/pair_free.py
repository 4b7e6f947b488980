"""How much of the chain's quality is an encoder trained on sentence pairs (issue 118): all-MiniLM-L6-v2, which the
teacher's re-ranking and every CPU student's frozen states read, was trained by its authors on about a billion
sentence pairs, Google's 180,000 sentence compressions among them. Each alternative here saw no sentence pair: word
vectors learned from the profile's unlabelled text alone (`naus.teacher.word_vectors`: the pool's articles and the
LM's headlines, PPMI reduced by SVD), as the teacher's static similarity (the one-stage hill climbing of Schumann et
al., γ chosen on dev) and as the students' frozen states (each word's vector beside a code of its position).

Four chains, each two generations of ten seeds as gigaword-sample trains them (the first 300 steps on the search, the
second 600 on the first's ensemble's length-control summaries; one thread a student, two side by side), at L = 10 and
8: today's (the build's own students, decoded again here), MiniLM's teacher with pair-free states, the pair-free
teacher with MiniLM's states, and both pair-free. Every student is decoded on the dev split by the library's default
decoding and scored against the dev titles (R-1 + R-2 + R-L F1; the test set plays no part); the teacher's dev total
stands beside each. Finished work is kept under `--work`, reused.

    python -m benchmarks.pair_free --build build/gigaword-sample

Writes results/benchmarks/pair_free.json.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import statistics
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from benchmarks.common import decode, on_threads, one_thread, run_all, seed_summary, settings, students_machine, \
    total, train
from naus import layout
from naus.files import read_json, read_lines
from naus.outputs import write_json, write_lines
from naus.student.checkpoint import save_ensemble

LENGTHS = (10, 8)
GAMMAS = (0.0, 4.0, 12.0, 36.0)  # the static similarity's weight in the one-stage search, chosen on dev
SHARDS = 2  # a pool search split in two, one shard a core
SEEDS = tuple(range(10))
MINILM, OURS = "MiniLM (sentence pairs)", "word vectors (no pair)"
CHAINS = {  # name: (teacher's similarity, students' states)
    "today": (MINILM, MINILM),
    "pair-free states": (MINILM, OURS),
    "pair-free teacher": (OURS, MINILM),
    "pair-free": (OURS, OURS),
}


def search(job: dict) -> dict:
    """One shard of a one-stage search with the word vectors' similarity (none at γ = 0), kept once made."""
    record = Path(f"{job['out']}.json")
    if record.is_file():
        return read_json(record)
    from naus.settings import SearchConfig
    from naus.teacher.build import search_file

    config = SearchConfig(length=job["length"], rerank_k=0, gamma=job["gamma"])
    tick = time.process_time()
    count, _ = search_file(job["source"], job["lm"], job["out"], config, shard=job["shard"],
                           static=job["table"] if job["gamma"] > 0 else None)
    write_json(record, {"sentences": count, "cpu_seconds": round(time.process_time() - tick, 1)})
    return read_json(record)


def merged(parts: list[Path], out: Path) -> Path:
    """The shards' summaries in line order, as one text file."""
    records = sorted((json.loads(line) for part in parts for line in read_lines(part)), key=lambda r: r["index"])
    write_lines(out, [r["summary"] for r in records])
    return out


def difference(entry: dict, reference: dict) -> dict:
    """A chain's dev total against today's, with the standard error of the difference (independent seeds)."""
    return {"change": round(entry["dev_total"] - reference["dev_total"], 2),
            "se": round(math.hypot(entry["dev_se"], reference["dev_se"]), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path(layout.profile_dir("build", "gigaword-sample")))
    parser.add_argument("--profile", type=Path, default=Path("config/gigaword-sample.yaml"))
    parser.add_argument("--work", type=Path, default=Path("build/benchmarks/pair_free"))
    parser.add_argument("--out", type=Path, default=Path(layout.benchmark_result("pair_free")))
    args = parser.parse_args()
    on_threads("benchmarks.pair_free", 1)
    build, work = args.build, args.work
    model, training = settings(args.profile)
    first = {**training, **yaml.safe_load(args.profile.read_text())["train"]["first_generation"]}
    source = {s: build / layout.STATES_SOURCES[s] for s in ("pool", "dev")}
    titles, lm = build / layout.split_file("dev", "title"), build / layout.LM_MODEL
    minilm_states = {s: build / layout.frozen_states(s) for s in ("pool", "dev")}

    from naus.teacher.word_vectors import build_word_vectors, word_states

    table = work / "word_vectors.npz"
    text = [build / layout.split_file("pool", "article"), build / layout.LM_CORPUS]
    if not table.is_file():
        work.mkdir(parents=True, exist_ok=True)
        tick = time.process_time()
        words = build_word_vectors([line for path in text for line in read_lines(path)], table)
        write_json(work / "word_vectors.json", {"words": words, "cpu_seconds": round(time.process_time() - tick, 1)})
    our_states = {s: work / f"states/{s}.npz" for s in source}
    for split, path in our_states.items():
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            word_states(read_lines(source[split]), table).save(path)
    states = {MINILM: minilm_states, OURS: our_states}

    (work / "dev").mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context, initializer=one_thread) as pool:
        # the pair-free teacher: γ chosen on dev (mean dev total over the lengths), then the pool searched
        sweep = {(gamma, n): work / f"teacher/g{gamma:g}/dev-L{n}.jsonl" for gamma in GAMMAS for n in LENGTHS}
        for out in sweep.values():
            out.parent.mkdir(parents=True, exist_ok=True)
        made = run_all(pool, [(search, {"source": source["dev"], "lm": lm, "table": table, "length": n, "gamma": g,
                                        "shard": (0, 1), "out": out}) for (g, n), out in sweep.items()])
        teacher_dev = {key: {**total(merged([out], out.with_suffix(".txt")), titles),
                             "s_per_sentence": round(m["cpu_seconds"] / m["sentences"], 4)}
                       for (key, out), m in zip(sweep.items(), made)}
        gamma = max(GAMMAS, key=lambda g: statistics.mean(teacher_dev[g, n]["total"] for n in LENGTHS))
        parts = {n: [work / f"teacher/g{gamma:g}/pool-L{n}.part{i}.jsonl" for i in range(SHARDS)] for n in LENGTHS}
        made = run_all(pool, [(search, {"source": source["pool"], "lm": lm, "table": table, "length": n,
                                        "gamma": gamma, "shard": (i, SHARDS), "out": out})
                              for n in LENGTHS for i, out in enumerate(parts[n])])
        pool_seconds = sum(m["cpu_seconds"] for m in made)
        targets = {MINILM: {n: {s: build / f"{layout.search(s, n)}.txt" for s in source} for n in LENGTHS},
                   OURS: {n: {"pool": merged(parts[n], work / f"teacher/g{gamma:g}/pool-L{n}.txt"),
                              "dev": sweep[gamma, n].with_suffix(".txt")} for n in LENGTHS}}

        def student(chain: str, n: int, generation: int, seed: int) -> Path:
            if chain == "today":  # the build's own students
                return build / layout.student_dir(layout.model(n, seed=seed, generation=generation))
            return work / f"{chain.replace(' ', '-')}/L{n}/g{generation}/s{seed}"

        results: dict = {chain: {} for chain in CHAINS}
        labels = {(chain, n): targets[CHAINS[chain][0]][n] for chain in CHAINS for n in LENGTHS}
        for generation in (1, 2):
            jobs = {(chain, n, seed): {
                "source": source["pool"], "target": labels[chain, n]["pool"], "dev_source": source["dev"],
                "dev_target": labels[chain, n]["dev"], "states": states[CHAINS[chain][1]]["pool"],
                "dev_states": states[CHAINS[chain][1]]["dev"], "model": model,
                "train": {**(first if generation == 1 else training), "seed": seed},
                "out": student(chain, n, generation, seed)} for chain in CHAINS if chain != "today"
                for n in LENGTHS for seed in SEEDS}
            runs = dict(zip(jobs, run_all(pool, [(train, job) for job in jobs.values()])))
            runs.update({(c, n, s): {"cpu_seconds": float("nan")} for c in ("today",) for n in LENGTHS for s in SEEDS})
            every = [(chain, n, seed) for chain in CHAINS for n in LENGTHS for seed in SEEDS]
            scored = run_all(pool, [(decode, student(c, n, generation, s) / "best.pt", source["dev"],
                                     states[CHAINS[c][1]]["dev"], n,
                                     work / f"dev/{c.replace(' ', '-')}-L{n}-g{generation}-s{s}.txt", None)
                                    for c, n, s in every])
            for (chain, n, seed), decoded in zip(every, scored):
                runs[chain, n, seed]["dev_total"] = total(
                    work / f"dev/{chain.replace(' ', '-')}-L{n}-g{generation}-s{seed}.txt", titles)["total"]
            for chain in CHAINS:
                for n in LENGTHS:
                    entry = seed_summary([runs[chain, n, s] for s in SEEDS])
                    if chain == "today":
                        entry.pop("cpu_seconds_per_student")  # trained in the build, not timed here
                    results[chain].setdefault(f"L{n}", {})[f"generation {generation}"] = entry
            if generation == 1:  # the second generation learns from the first's ten seeds as one model
                calls = []
                for chain in CHAINS:
                    for n in LENGTHS:
                        if chain == "today":  # its second generation is the build's
                            continue
                        ensemble = student(chain, n, 1, 0).parent / "ensemble/best.pt"
                        if not ensemble.is_file():
                            ensemble.parent.mkdir(parents=True, exist_ok=True)
                            save_ensemble([student(chain, n, 1, s) / "best.pt" for s in SEEDS], ensemble)
                        labels[chain, n] = {s: ensemble.parent / f"{s}.txt" for s in source}
                        calls += [(decode, ensemble, source[s], states[CHAINS[chain][1]][s], n, labels[chain, n][s])
                                  for s in source]
                run_all(pool, calls)
    reference = results["today"]
    for chain, entry in results.items():
        for n in LENGTHS:
            for generation, row in entry[f"L{n}"].items():
                if chain != "today":
                    row["against_today"] = difference(row, reference[f"L{n}"][generation])
        entry["teacher_dev_total"] = {f"L{n}": (teacher_dev[gamma, n]["total"] if CHAINS[chain][0] == OURS else
                                                total(build / f"{layout.search('dev', n)}.txt", titles)["total"])
                                      for n in LENGTHS}
        entry["teacher"], entry["states"] = CHAINS[chain]
    within = {chain: all(abs(results[chain][f"L{n}"]["generation 2"]["against_today"]["change"]) <=
                         results[chain][f"L{n}"]["generation 2"]["against_today"]["se"]
                         or results[chain][f"L{n}"]["generation 2"]["against_today"]["change"] > 0 for n in LENGTHS)
              for chain in CHAINS if chain != "today"}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    write_json(args.out, {
        "script": f"benchmarks/pair_free.py at {commit} (git show {commit}:benchmarks/pair_free.py)",
        **students_machine(),
        "data": f"{build}: the pool's {len(read_lines(source['pool']))} searched sentences, the dev split's 500",
        "metric": "R-1 + R-2 + R-L F1 against the dev titles, the library's default decoding; mean ± sd, se over "
                  "ten seeds",
        "word_vectors": {**read_json(work / "word_vectors.json"), "text": [str(p) for p in text],
                         "kind": "PPMI of words within 4 of each other, SVD to 320 dimensions "
                                 "(naus.teacher.word_vectors)"},
        "pair_free_teacher": {"search": "one stage (rerank_k 0), SLOR + γ · ln similarity of the word vectors",
                              "gamma_sweep": {f"γ={g:g}, L={n}": v for (g, n), v in teacher_dev.items()},
                              "gamma": gamma, "pool_cpu_seconds": round(pool_seconds, 1)},
        "chains": results,
        "within_one_se_of_today": within,
    })
    for chain, entry in results.items():
        print(chain, entry["teacher_dev_total"], {k: {g: (r["dev_total"], r["dev_se"]) for g, r in v.items()}
                                                  for k, v in entry.items() if k.startswith("L")})


if __name__ == "__main__":
    main()
