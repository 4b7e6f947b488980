"""The teacher's speed on this CPU, and whether batching the re-ranking across sentences can make it faster.

The committed teacher (`naus search`'s: the learned estimate choosing the 20 states encoded on their own) runs on
the first `--sentences` test sentences at each length, one process on one thread, each stage timed where it runs:
hill climbing, MiniLM's pass over the source, the estimate, MiniLM encoding the chosen states (one padded group
per sentence) and the rest. Then, on the groups that run encoded:

- where the group's time goes inside onnxruntime (its own profiler, by operator), and the multiply-accumulates
  per second its int8 matrix products reach;
- the fp32 model against the int8 one on the same groups;
- groups of several sentences with the same padded length encoded as one batch (the cross-sentence batching the
  re-ranking would need), against one call per group: seconds per state, and whether each state's vector keeps
  its bits. Dynamic int8 quantization scales each matrix product's input by the range of the whole batch, so a
  state's vector depends on what it is batched with;
- two `naus --threads 1 search` shards side by side against one alone, as the workflow runs them.

onnxruntime has no setting that pins its kernels to an instruction set (MLAS picks them from CPUID), so the AVX2
numbers are those of an AVX2-only CPU, where one runs this. Writes results/benchmarks/teacher_speed.json.

    python -m benchmarks.teacher_speed --build build/gigaword-sample

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

whole teacher on a plain AVX2 CPU (`teacher_speed.py` → `teacher_speed.json`: 2-core AMD EPYC, AVX2 only, the first
200 test sentences, gigaword-sample's LM and estimate, one thread): L = 10: 0.1023 s a sentence (hill climbing
0.02049, MiniLM's pass over the source 0.01141, the 20 states encoded 0.06827); L = 8: 0.0865 s. Inside onnxruntime
the int8 matrix products are 0.737 of an encoding at 5.97e+10 weight multiply-accumulates a second: the re-ranking
is bound by arithmetic, not by calls. fp32 MiniLM: 0.14383 s (int8 is faster here, without VNNI). Two shards side by
side: 0.1092 and 0.11564 s against 0.10131 alone. Eight sentences' groups of one padded length encoded as one batch:
0.003621 s a state against 0.003563 one call a group, and 0 of 3,040 states keep their bits (dynamic int8
quantization scales each product's input by the whole batch's range; largest change 0.035): batching across
sentences can neither keep the search records nor make them faster (goal: issue 75's 2× re-ranking at the same
bytes: **not reachable this way**)

Cheaper re-rankings on dev (`--choices`, 5 December 2026: 2 cores of an AMD EPYC, Zen 4, one process a length; the
dev split's 500 sentences; AVX2 seconds projected from the AVX2 measurement above, stage by stage, as onnxruntime
cannot be pinned; issue 88's goal: 0.05 s at L = 10 with dev totals no lower):

| encoder's layers, states encoded | L = 10 dev total | projected AVX2 s | L = 8 dev total | projected AVX2 s |
|---|---|---|---|---|
| 6, 20 (today's) | 83.75 | 0.1023 | 83.45 | 0.0865 |
| 6, 10 | 82.78 (−0.97) | 0.0691 | 82.12 (−1.33) | 0.0565 |
| 6, 5 | 82.29 (−1.46) | 0.0559 | 80.56 (−2.89) | 0.0399 |
| 4, 20 | 67.44 (−16.31) | 0.0808 | 64.23 (−19.22) | 0.0632 |
| 3, 20 | 67.76 (−15.99) | 0.0664 | 65.1 (−18.35) | 0.0522 |
| 2, 20 | 67.28 (−16.47) | 0.0539 | 64.76 (−18.69) | 0.0406 |
| 3 distilled, 20 | 82.75 (−1.0) | 0.0655 | 81.76 (−1.69) | 0.0498 |
| 3 distilled, 10 | 81.9 (−1.85) | 0.0483 | 80.54 (−2.91) | 0.0353 |
| 2 distilled (8 epochs), 20 | 82.12 (−1.63) | 0.0542 | 81.07 (−2.38) | 0.0388 |
| 2 distilled (8 epochs), 10 | 81.93 (−1.82) | 0.042 | 81.03 (−2.42) | 0.0288 |
| 3 distilled, 768-unit feed-forward, 20 | 81.53 (−2.22) | 0.0577 | 81.57 (−1.88) | 0.0438 |
| 3 distilled, 768-unit feed-forward, 10 | 80.72 (−3.03) | 0.0433 | 81.72 (−1.73) | 0.032 |

MiniLM's sentence vector needs all six layers (a cut encoder ranks states by another similarity and loses 16 to 19
points), and the climb and the source pass alone take 0.032 of the 0.05. The encoders `student_distilled.py` trained
to give MiniLM's token states (exported with their weights: `export_onnx(weights=...)`) recover most of it but not
all: three layers lose 1.0 and 1.69 at 0.0655 s, two 1.63 and 2.38 at 0.0542 s, three with 768-unit feed-forward
blocks (the student's lead) 2.22 and 1.88 at 0.0577 s. **No choice reaches 0.05 s at L = 10 without a lower dev
total** (the nearest: 3 distilled layers and 10 states, 0.0483 s, 1.85 and 2.91 lower). Not chosen; the teacher stays.
The projections move by a few thousandths from run to run (5 states: 0.0515, 0.0541, 0.0559 in three runs): the
stages' times here are single runs. An encoder distilled on what the teacher compares (sentence vectors of sources and
of their summaries) rather than on token states is untried.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["OMP_NUM_THREADS"] = "1"  # one thread, as each search shard of the workflow

import numpy as np  # noqa: E402

from benchmarks.student_distilled import layers_of  # noqa: E402
from benchmarks.student_layers import WORK  # noqa: E402
from naus.device import cpu_name, isa  # noqa: E402
from naus.pipeline import layout  # noqa: E402
from naus.plumbing.files import read_lines, write_json  # noqa: E402
from naus.settings import SearchConfig  # noqa: E402
from naus.teacher.lm import LanguageModel  # noqa: E402
from naus.teacher.search import Teacher  # noqa: E402
from naus.teacher.similarity import ContextualEmbedder, LearnedEstimate, export_onnx  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results/benchmarks/teacher_speed.json"
HIDDEN, FFN, LAYERS = 384, 1536, 6  # all-MiniLM-L6-v2
MACS_PER_TOKEN = LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)  # the matrix products' weights, once per token
GEMM_OPS = {"DynamicQuantizeMatMul", "MatMulIntegerToFloat", "MatMulInteger", "MatMul", "FusedMatMul", "Gemm"}


def timed_teacher(build: Path, length: int, onnx: Path, sentences: list[str]) -> tuple[dict, list[list[str]]]:
    """Seconds a sentence in each stage of the committed teacher, and the groups it encoded."""
    config = SearchConfig(length=length)  # `naus search`'s teacher
    teacher = Teacher(LanguageModel(build / layout.LM_MODEL), config, contextual=ContextualEmbedder(onnx=onnx),
                      estimate=LearnedEstimate.load(build / layout.estimate(length)))
    seconds, groups = collections.Counter(), []

    def timing(name, call, keep=None):
        def wrapped(*args):
            start = time.perf_counter()
            result = call(*args)
            seconds[name] += time.perf_counter() - start
            if keep is not None:
                keep.append(args[0])
            return result
        return wrapped

    teacher.climber.search = timing("climb", teacher.climber.search)
    teacher.contextual.source_context = timing("source pass", teacher.contextual.source_context)
    teacher.contextual.encode_group = timing("exact encoding", teacher.contextual.encode_group, groups)
    teacher.summarize([(0, sentences[0])])  # warm-up: numba's kernels and onnxruntime's first run
    seconds.clear(), groups.clear()
    start = time.perf_counter()
    records = [s.record() for s in teacher.summarize(list(enumerate(sentences)))]
    total = time.perf_counter() - start
    split = {name: round(value / len(sentences), 5) for name, value in seconds.items()}
    split["rest (estimate, scoring)"] = round((total - sum(seconds.values())) / len(sentences), 5)
    split["whole teacher"] = round(total / len(sentences), 5)
    split["re-ranking share"] = round(1 - seconds["climb"] / total, 3)
    split["records_sha256"] = hashlib.sha256(json.dumps(records).encode()).hexdigest()
    return split, groups


def operator_profile(onnx: Path, groups: list[list[str]]) -> dict:
    """onnxruntime's own time per operator over these groups, and the int8 products' multiply-accumulates a second."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(tempfile.gettempdir()) / "naus-teacher-speed")
    session = onnxruntime.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
    embedder = ContextualEmbedder(onnx=onnx)
    tokens = 0
    for group in groups:
        encodings = embedder.tokenizer.encode_batch(group)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        session.run(None, {"input_ids": ids, "attention_mask": np.array([e.attention_mask for e in encodings])})
        tokens += ids.size
    trace = Path(session.end_profiling())
    by_op = collections.Counter()
    for event in json.loads(trace.read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_op[event["args"]["op_name"]] += event["dur"] * 1e-6
    trace.unlink()
    total, gemm = sum(by_op.values()), sum(v for k, v in by_op.items() if k in GEMM_OPS)
    return {"groups": len(groups), "padded_tokens_per_group": round(tokens / len(groups), 1),
            "seconds_per_group": round(total / len(groups), 5),
            "share_by_operator": {k: round(v / total, 3) for k, v in by_op.most_common(8)},
            "matrix_product_share": round(gemm / total, 3),
            "weight_macs_per_second_in_matrix_products": f"{tokens * MACS_PER_TOKEN / gemm:.3g}"}


def batched_against_alone(onnx: Path, groups: list[list[str]], per_batch: int = 8) -> dict:
    """Groups of one padded length encoded `per_batch` at a time in one call, against one call each."""
    embedder = ContextualEmbedder(onnx=onnx)
    by_length = collections.defaultdict(list)
    for group in groups:
        by_length[len(embedder.tokenizer.encode_batch(group)[0].ids), len(group)].append(group)
    batches = [same[i: i + per_batch] for same in by_length.values() for i in range(0, len(same) - per_batch + 1,
                                                                                     per_batch)]
    alone_s = batched_s = 0.0
    states = equal = 0
    largest = 0.0
    for batch in batches:
        start = time.perf_counter()
        alone = np.concatenate([embedder.encode_group(g) for g in batch])
        alone_s += time.perf_counter() - start
        start = time.perf_counter()
        together = embedder.encode_group([s for g in batch for s in g])
        batched_s += time.perf_counter() - start
        states += len(alone)
        equal += int((alone == together).all(axis=1).sum())
        largest = max(largest, float(np.abs(alone - together).max()))
    return {"batches": len(batches), "groups_per_batch": per_batch, "states": states,
            "seconds_per_state_one_call_per_group": round(alone_s / max(states, 1), 6),
            "seconds_per_state_batched": round(batched_s / max(states, 1), 6),
            "states_with_the_same_bits": equal, "largest_difference": largest}


def side_by_side(build: Path, length: int, onnx: Path, sentences: int) -> dict:
    """Seconds a sentence of one `naus search` shard alone, and of each of two run together."""
    with tempfile.TemporaryDirectory() as tmp:
        def command(shard: int) -> list[str]:
            return [sys.executable, "-m", "naus", "-q", "--threads", "1", "search",
                    "--input", str(build / layout.search_source("test")), "--lm", str(build / layout.LM_MODEL),
                    "--length", str(length), "--onnx", str(onnx), "--estimate", str(build / layout.estimate(length)),
                    "--limit", str(2 * sentences), "--shard", f"{shard}/2", "--out", f"{tmp}/{shard}.jsonl",
                    "--timing", f"{tmp}/{shard}.json", "--restart"]

        def rate(shard: int) -> float:
            timing = json.loads(Path(f"{tmp}/{shard}.json").read_text())
            Path(f"{tmp}/{shard}.jsonl").unlink()
            return round(timing["seconds"] / timing["sentences"], 5)

        subprocess.run(command(0), check=True, cwd=ROOT)
        alone = rate(0)
        both = [subprocess.Popen(command(shard), cwd=ROOT) for shard in (0, 1)]
        if any(p.wait() for p in both):
            raise SystemExit("a side-by-side shard failed")
        return {"sentences_per_shard": sentences, "alone": alone, "side_by_side": [rate(0), rate(1)]}


# (the encoder, states encoded); the first: today's. An encoder is MiniLM's first so many layers, or one that
# `student_distilled.py` trained to imitate MiniLM, by its folder under DISTILLED.
CHOICES = [(6, 20), (6, 10), (6, 5), (4, 20), (3, 20), (2, 20), ("d3", 20), ("d3", 10), ("d2-epochs8", 20),
           ("d2-epochs8", 10), ("d3-epochs4-ffn768", 20), ("d3-epochs4-ffn768", 10)]
DISTILLED = ROOT / WORK


def distilled_layers(encoder: int | str) -> int:
    return encoder if isinstance(encoder, int) else layers_of(DISTILLED / encoder)


def choice_onnx(encoder: int | str, work: Path) -> Path:
    """A choice's encoder as the teacher's int8 ONNX model (exported once)."""
    onnx = work / (f"minilm-{encoder}-layers.onnx" if isinstance(encoder, int) else f"minilm-{encoder}.onnx")
    if not onnx.is_file():
        layers = distilled_layers(encoder)
        export_onnx(onnx, layers=0 if layers == LAYERS else layers,
                    weights=None if isinstance(encoder, int) else DISTILLED / encoder / "encoder.safetensors")
    return onnx


def choice_row(build: Path, length: int, encoder: int | str, exact: int, work: Path) -> dict:
    """One cheaper re-ranking on dev: its encoder for the source pass and the encoded states alike (its estimate
    fitted anew as `naus fit-estimate` fits one) and `exact` states encoded; the dev total against the dev titles and
    the seconds of each stage a sentence on this CPU."""
    from naus.evaluation.evaluate import METRICS, rouge
    from naus.teacher.build import build_teacher

    onnx = choice_onnx(encoder, work)
    dev = read_lines(build / layout.search_source("dev"))
    titles = read_lines(build / layout.split_file("dev", "title"))
    teacher = build_teacher(build / layout.LM_MODEL, length, onnx=onnx,
                            fit_on=read_lines(build / layout.search_source("pool")), rerank_exact=exact)
    seconds = collections.Counter()

    def timing(name, call):
        def wrapped(*args):
            start = time.perf_counter()
            result = call(*args)
            seconds[name] += time.perf_counter() - start
            return result
        return wrapped

    teacher.climber.search = timing("climb", teacher.climber.search)
    teacher.contextual.source_context = timing("source pass", teacher.contextual.source_context)
    teacher.contextual.encode_group = timing("exact encoding", teacher.contextual.encode_group)
    teacher.summarize([(0, dev[0])])  # warm-up
    seconds.clear()
    start = time.perf_counter()
    summaries = [s.summary for s in teacher.summarize(list(enumerate(dev)))]
    whole = time.perf_counter() - start
    scores = rouge(summaries, [titles])
    split = {name: round(value / len(dev), 5) for name, value in seconds.items()}
    split["rest (estimate, scoring)"] = round((whole - sum(seconds.values())) / len(dev), 5)
    return {"length": length, "minilm_layers": distilled_layers(encoder),
            **({"distilled": encoder} if isinstance(encoder, str) else {}), "states_encoded": exact,
            "dev_total": round(sum(scores[k] for k in METRICS), 2), "seconds_here": split}


def choices(build: Path, committed: dict) -> dict:
    """Each choice of CHOICES at L = 10 and 8, one process a length side by side, each stage's AVX2 cost projected
    from the committed AVX2 measurement (`committed`: this JSON's lengths) by its ratio to today's teacher here."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    work = ROOT / "build/benchmarks/teacher_speed"
    work.mkdir(parents=True, exist_ok=True)
    for encoder in dict.fromkeys(encoder for encoder, _ in CHOICES):  # exported once, before the workers read them
        choice_onnx(encoder, work)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        rows = {length: [pool.submit(choice_row, build, length, encoder, exact, work) for encoder, exact in CHOICES]
                for length in (10, 8)}
        rows = {length: [future.result() for future in futures] for length, futures in rows.items()}
    out = {}
    for length, found in rows.items():
        today, avx2 = found[0], committed[str(length)]["int8 (committed)"]
        for row in found:
            row["avx2_projected"] = round(sum(avx2[stage] * row["seconds_here"][stage] / today["seconds_here"][stage]
                                              for stage in today["seconds_here"]), 4)
            row["dev_total_change"] = round(row["dev_total"] - today["dev_total"], 2)
        out[str(length)] = found
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build/gigaword-sample")
    parser.add_argument("--sentences", type=int, default=200, help="test sentences timed at each length")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--choices", action="store_true",
                        help="only the cheaper re-rankings of CHOICES on dev, added to the JSON's AVX2 measurement")
    args = parser.parse_args()
    if args.choices:
        result = json.loads(args.out.read_text())
        result["choices"] = {"data": "the dev split's 500 sentences and titles (R-1 + R-2 + R-L F1); each estimate "
                                     "fitted on the pool's first sentences as `naus fit-estimate` fits one",
                             "machine": {"cpu": cpu_name(), "isa": isa()},
                             "avx2_projected": "each stage's committed AVX2 seconds (lengths) times its ratio to "
                                               "today's teacher on this machine (onnxruntime cannot be pinned)",
                             "rows": choices(args.build, result["lengths"])}
        write_json(args.out, result)
        return
    onnx = args.build / layout.MINILM_ONNX
    sentences = read_lines(args.build / layout.search_source("test"))[: args.sentences]
    result = {"machine": {"cpu": cpu_name(), "isa": isa(), "cores": os.cpu_count()}, "threads": 1,
              "data": f"Gigaword test, the first {len(sentences)} sentences", "lengths": {}}
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "minilm-fp32.onnx"
        export_onnx(fp32, quantize=False)
        for length in (10, 8):
            split, groups = timed_teacher(args.build, length, onnx, sentences)
            row = {"int8 (committed)": split, "operators": operator_profile(onnx, groups),
                   "batched across sentences": batched_against_alone(onnx, groups)}
            if length == 10:
                row["fp32"] = timed_teacher(args.build, length, fp32, sentences)[0]
                row["shards"] = side_by_side(args.build, length, onnx, args.sentences // 2)
            result["lengths"][str(length)] = row
            print(json.dumps(row, indent=1), flush=True)
    write_json(args.out, result)


if __name__ == "__main__":
    main()
