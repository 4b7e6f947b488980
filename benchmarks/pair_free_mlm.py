"""A contextual encoder without sentence pairs (issue 118's fallback): no encoder pretrained on text alone can be had
from a package registry, so one is pretrained here (`naus.teacher.masked_lm`: masked-language modelling on the
profile's unlabelled text, the pool's articles and the LM's headlines, never a title of a searched article), and
measured where all-MiniLM-L6-v2 serves today: the teacher's re-ranking (today's two-stage search, the encoder's
similarity in MiniLM's place, its learned estimate fitted alike, the re-ranking's γ chosen on dev), the students'
frozen states, and both. The floor it must clear: students on the states of the same encoder untrained (its
initial random weights, frozen), which learn from the search output alone.

Five chains, each two generations of ten seeds as gigaword-sample trains them (the first 300 steps on the search,
the second 600 on the first's ensemble's length-control summaries; one thread a student, two side by side), at
L = 10 and 8: today's (the build's own students, decoded again here), and the four above. Every student is decoded
on the dev split by the library's default decoding and scored against the dev titles (R-1 + R-2 + R-L F1; the test
set plays no part); the teacher's dev total stands beside each. Finished work is kept under `--work`, reused.

    python -m benchmarks.pair_free_mlm --build build/gigaword-sample

Writes results/benchmarks/pair_free_mlm.json.
"""

from __future__ import annotations

import argparse
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
from naus.pipeline import layout
from naus.plumbing.files import read_json, read_lines
from naus.plumbing.outputs import write_json, write_lines
from naus.student.checkpoint import save_ensemble

LENGTHS = (10, 8)
GAMMAS = (12.0, 48.0, 192.0)  # the re-ranking's weight of ln similarity (today's 48 for MiniLM), chosen on dev;
# the estimate's weight is twice it, as today's (96)
SHARDS = 2  # a pool search split in two, one shard a core
SEEDS = tuple(range(10))
MINILM, MLM, UNTRAINED = "MiniLM (sentence pairs)", "masked-LM encoder (no pair)", "the same encoder untrained"
CHAINS = {  # name: (teacher's similarity, students' states)
    "today": (MINILM, MINILM),
    "masked-LM states": (MINILM, MLM),
    "masked-LM teacher": (MLM, MINILM),
    "masked-LM": (MLM, MLM),
    "untrained-encoder states": (MINILM, UNTRAINED),
}


def teacher_config(length: int, gamma: float):
    from naus.settings import DEFAULT_PRESET, TEACHER_PRESETS, SearchConfig

    return SearchConfig(length=length, **{**TEACHER_PRESETS[DEFAULT_PRESET], "rerank_gamma": gamma,
                                          "estimate_gamma": 2 * gamma})


def fit(job: dict) -> dict:
    """The learned estimate of the encoder's re-ranking for (L, γ), fitted on the pool's first sentences as the
    pipeline fits MiniLM's, kept once made."""
    if not job["out"].is_file():
        from naus.settings import FIT_SENTENCES, FIT_STATES
        from naus.teacher.lm import LanguageModel
        from naus.teacher.masked_lm import MaskedLMEmbedder
        from naus.teacher.search import Teacher, fit_estimate

        teacher = Teacher(LanguageModel(job["lm"]), teacher_config(job["length"], job["gamma"]),
                          contextual=MaskedLMEmbedder(job["encoder"]))
        estimate, _ = fit_estimate(teacher, read_lines(job["source"])[:FIT_SENTENCES], FIT_STATES)
        estimate.save(job["out"])
    return {"estimate": str(job["out"])}


def search(job: dict) -> dict:
    """One shard of today's two-stage search with the encoder's re-ranking, kept once made."""
    record = Path(f"{job['out']}.json")
    if record.is_file():
        return read_json(record)
    from naus.teacher.lm import LanguageModel
    from naus.teacher.masked_lm import MaskedLMEmbedder
    from naus.teacher.search import Teacher, label_shard
    from naus.teacher.shards import ResumableOutput
    from naus.teacher.similarity import LearnedEstimate

    sources = read_lines(job["source"])
    config = teacher_config(job["length"], job["gamma"])
    teacher = Teacher(LanguageModel(job["lm"]), config, contextual=MaskedLMEmbedder(job["encoder"]),
                      estimate=LearnedEstimate.load(job["estimate"]))
    tick = time.process_time()
    with ResumableOutput(job["out"], len(sources), job["shard"], {"search": str(config), "encoder": str(job["encoder"]),
                                                                  "estimate": str(job["estimate"])}) as output:
        count, _ = label_shard(teacher, sources, output, 64, f"search {job['out']}")
    write_json(record, {"sentences": count, "cpu_seconds": round(time.process_time() - tick, 1)})
    return read_json(record)


def encode_states(encoder: Path, source: Path, out: Path) -> None:
    """A split's frozen states by the encoder, kept once made."""
    if not out.is_file():
        from naus.student.frozen import MaskedLMStates

        MaskedLMStates(encoder).encode(read_lines(source)).save(out)


def merged(parts: list[Path], out: Path) -> Path:
    """The shards' summaries in line order, as one text file."""
    import json

    records = sorted((json.loads(line) for part in parts for line in read_lines(part)), key=lambda r: r["index"])
    write_lines(out, [r["summary"] for r in records])
    return out


def difference(entry: dict, reference: dict) -> dict:
    """A chain's dev total against today's, with the standard error of the difference (independent seeds)."""
    return {"change": round(entry["dev_total"] - reference["dev_total"], 2),
            "se": round(math.hypot(entry["dev_se"], reference["dev_se"]), 2)}


def encoders(work: Path, text: list[Path]) -> dict:
    """The pretrained encoder (kept once made, with what its run measured) and the same encoder untrained: the
    weights the pretraining started from, its words and settings."""
    import torch

    from naus.settings import MaskedLMConfig
    from naus.teacher.masked_lm import MaskedLM, build_model, pretrain, save

    trained, untrained = work / "mlm.npz", work / "mlm-untrained.npz"
    if not trained.is_file():
        tick = time.process_time()
        record = pretrain([line for path in text for line in read_lines(path)], trained)
        write_json(work / "mlm.json", {**record, "cpu_seconds": round(time.process_time() - tick, 1),
                                       "text": [str(p) for p in text]})
    if not untrained.is_file():
        encoder = MaskedLM(trained)
        words = sorted(encoder.index, key=encoder.index.get)
        torch.manual_seed(encoder.config.seed)  # as `pretrain` seeds it before building the model
        save(untrained, build_model(encoder.config, len(words)), words, encoder.config)
    assert MaskedLMConfig() == MaskedLM(trained).config, "the study measures the default pretraining"
    return {MLM: trained, UNTRAINED: untrained}


def teacher(pool, work: Path, source: dict, lm: Path, encoder: Path, titles: Path) -> tuple[dict, dict, dict]:
    """The encoder's teacher: its estimates fitted, γ chosen on dev (the mean dev total over the lengths), the pool
    searched with it. Returns its summaries of each split by length, the dev sweep and what the pool search cost."""
    base = work / "teacher-mlm"
    estimates = {(g, n): base / f"g{g:g}/estimate-L{n}.npz" for g in GAMMAS for n in LENGTHS}
    for out in estimates.values():
        out.parent.mkdir(parents=True, exist_ok=True)
    run_all(pool, [(fit, {"source": source["pool"], "lm": lm, "encoder": encoder, "length": n, "gamma": g,
                          "out": out}) for (g, n), out in estimates.items()])
    sweep = {(g, n): base / f"g{g:g}/dev-L{n}.jsonl" for g in GAMMAS for n in LENGTHS}
    made = run_all(pool, [(search, {"source": source["dev"], "lm": lm, "encoder": encoder, "length": n, "gamma": g,
                                    "estimate": estimates[g, n], "shard": (0, 1), "out": out})
                          for (g, n), out in sweep.items()])
    teacher_dev = {key: {**total(merged([out], out.with_suffix(".txt")), titles),
                         "s_per_sentence": round(m["cpu_seconds"] / max(m["sentences"], 1), 4)}
                   for (key, out), m in zip(sweep.items(), made)}
    gamma = max(GAMMAS, key=lambda g: statistics.mean(teacher_dev[g, n]["total"] for n in LENGTHS))
    parts = {n: [base / f"g{gamma:g}/pool-L{n}.part{i}.jsonl" for i in range(SHARDS)] for n in LENGTHS}
    made = run_all(pool, [(search, {"source": source["pool"], "lm": lm, "encoder": encoder, "length": n,
                                    "gamma": gamma, "estimate": estimates[gamma, n], "shard": (i, SHARDS), "out": out})
                          for n in LENGTHS for i, out in enumerate(parts[n])])
    summaries = {n: {"pool": merged(parts[n], base / f"g{gamma:g}/pool-L{n}.txt"),
                     "dev": sweep[gamma, n].with_suffix(".txt")} for n in LENGTHS}
    about = {"search": "today's two-stage search, the encoder's mean states re-ranking in MiniLM's place, a learned "
                       "estimate fitted for it alike",
             "gamma_sweep": {f"γ={g:g}, L={n}": v for (g, n), v in teacher_dev.items()}, "gamma": gamma,
             "pool_cpu_seconds": round(sum(m["cpu_seconds"] for m in made), 1)}
    return summaries, {n: teacher_dev[gamma, n]["total"] for n in LENGTHS}, about


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path(layout.profile_dir("build", "gigaword-sample")))
    parser.add_argument("--profile", type=Path, default=Path("config/gigaword-sample.yaml"))
    parser.add_argument("--work", type=Path, default=Path("build/benchmarks/pair_free"))
    parser.add_argument("--out", type=Path, default=Path(layout.benchmark_result("pair_free_mlm")))
    args = parser.parse_args()
    on_threads("benchmarks.pair_free_mlm", 1)
    build, work = args.build, args.work
    model, training = settings(args.profile)
    first = {**training, **yaml.safe_load(args.profile.read_text())["train"]["first_generation"]}
    source = {s: build / layout.STATES_SOURCES[s] for s in ("pool", "dev")}
    titles, lm = build / layout.split_file("dev", "title"), build / layout.LM_MODEL
    text = [build / layout.split_file("pool", "article"), build / layout.LM_CORPUS]
    files = encoders(work, text)
    states = {MINILM: {s: build / layout.frozen_states(s) for s in source}}
    states.update({name: {s: work / f"states/{encoder.stem}-{s}.npz" for s in source} for name, encoder in files.items()})
    targets = {MINILM: {n: {s: build / f"{layout.search(s, n)}.txt" for s in source} for n in LENGTHS}}
    teacher_dev = {MINILM: {n: total(targets[MINILM][n]["dev"], titles)["total"] for n in LENGTHS}}
    (work / "dev").mkdir(parents=True, exist_ok=True)
    (work / "states").mkdir(parents=True, exist_ok=True)

    def student(chain: str, n: int, generation: int, seed: int) -> Path:
        if chain == "today":  # the build's own students
            return build / layout.student_dir(layout.model(n, seed=seed, generation=generation))
        return work / f"{chain.replace(' ', '-')}/L{n}/g{generation}/s{seed}"

    def measured(pool, chains: list[str]) -> dict:
        """Each chain's two generations of ten seeds at each length, trained (kept once made) and scored on dev."""
        results: dict = {chain: {} for chain in chains}
        labels = {(chain, n): targets[CHAINS[chain][0]][n] for chain in chains for n in LENGTHS}
        for generation in (1, 2):
            jobs = {(chain, n, seed): {
                "source": source["pool"], "target": labels[chain, n]["pool"], "dev_source": source["dev"],
                "dev_target": labels[chain, n]["dev"], "states": states[CHAINS[chain][1]]["pool"],
                "dev_states": states[CHAINS[chain][1]]["dev"], "model": model,
                "train": {**(first if generation == 1 else training), "seed": seed},
                "out": student(chain, n, generation, seed)} for chain in chains if chain != "today"
                for n in LENGTHS for seed in SEEDS}
            runs = dict(zip(jobs, run_all(pool, [(train, job) for job in jobs.values()])))
            runs.update({("today", n, s): {"cpu_seconds": float("nan")} for n in LENGTHS for s in SEEDS})
            every = [(chain, n, seed) for chain in chains for n in LENGTHS for seed in SEEDS]
            dev_out = {key: work / f"dev/{key[0].replace(' ', '-')}-L{key[1]}-g{generation}-s{key[2]}.txt"
                       for key in every}
            run_all(pool, [(decode, student(c, n, generation, s) / "best.pt", source["dev"],
                            states[CHAINS[c][1]]["dev"], n, dev_out[c, n, s], None) for c, n, s in every])
            for key in every:
                runs[key]["dev_total"] = total(dev_out[key], titles)["total"]
            for chain in chains:
                for n in LENGTHS:
                    entry = seed_summary([runs[chain, n, s] for s in SEEDS])
                    if chain == "today":
                        entry.pop("cpu_seconds_per_student")  # trained in the build, not timed here
                    results[chain].setdefault(f"L{n}", {})[f"generation {generation}"] = entry
            if generation == 1:  # the second generation learns from the first's ten seeds as one model
                calls = []
                for chain in chains:
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
        for chain, entry in results.items():
            entry["teacher_dev_total"] = {f"L{n}": teacher_dev[CHAINS[chain][0]][n] for n in LENGTHS}
            entry["teacher"], entry["states"] = CHAINS[chain]
        return results

    results, about_teacher = {}, "searched after the chains on MiniLM's teacher"
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context, initializer=one_thread) as pool:
        run_all(pool, [(encode_states, files[name], source[split], path) for name in files
                       for split, path in states[name].items()])
        # first the chains on today's teacher (a result written), then the encoder's teacher and its chains
        results.update(measured(pool, [c for c in CHAINS if CHAINS[c][0] == MINILM]))
        report(args.out, results, about_teacher, work, source)
        targets[MLM], teacher_dev[MLM], about_teacher = teacher(pool, work, source, lm, files[MLM], titles)
        results.update(measured(pool, [c for c in CHAINS if CHAINS[c][0] == MLM]))
        report(args.out, results, about_teacher, work, source)
    for chain, entry in results.items():
        print(chain, entry["teacher_dev_total"], {k: {g: (r["dev_total"], r["dev_se"]) for g, r in v.items()}
                                                  for k, v in entry.items() if k.startswith("L")})


def report(out: Path, results: dict, about_teacher, work: Path, source: dict) -> None:
    """The study's JSON from the chains measured so far (each against today's, the encoder's states against the
    untrained encoder's), with the decision: is a chain within one standard error of today's at both lengths?"""
    reference = results["today"]
    for chain, entry in results.items():
        for n in LENGTHS:
            for generation, row in entry[f"L{n}"].items():
                if chain != "today":
                    row["against_today"] = difference(row, reference[f"L{n}"][generation])
    within = {chain: all(row["against_today"]["change"] >= -row["against_today"]["se"]
                         for row in (results[chain][f"L{n}"]["generation 2"] for n in LENGTHS))
              for chain in results if chain != "today"}
    floor = {f"L{n} generation {g}": difference(results["masked-LM states"][f"L{n}"][f"generation {g}"],
                                               results["untrained-encoder states"][f"L{n}"][f"generation {g}"])
             for n in LENGTHS for g in (1, 2)}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    write_json(out, {
        "script": f"benchmarks/pair_free_mlm.py at {commit} (git show {commit}:benchmarks/pair_free_mlm.py)",
        **students_machine(),
        "data": f"the pool's {len(read_lines(source['pool']))} searched sentences, the dev split's 500",
        "metric": "R-1 + R-2 + R-L F1 against the dev titles, the library's default decoding; mean ± sd, se over "
                  "ten seeds",
        "encoder": {**read_json(work / "mlm.json"), "kind": "masked-language modelling on unlabelled text "
                    "(naus.teacher.masked_lm, naus pretrain-mlm's defaults: 4 layers x 384, whole words)"},
        "encoder_teacher": about_teacher,
        "chains": results,
        "unfinished": [chain for chain in CHAINS if chain not in results],
        "within_one_se_of_today": within,
        "masked_lm_states_over_untrained": floor,
    })


if __name__ == "__main__":
    main()
