"""What a headline costs and where the time goes: the bundled student's decoding at batch 64 and at batch 1 on
two threads, MiniLM's frozen states included, computed by the fp32 PyTorch MiniLM the students learn on, or by the
teacher's int8 ONNX MiniLM (`naus export-onnx`: 7-bit weights, the same bytes on every x86 CPU), the same
quantization with full 8-bit weights (exact only on CPUs with VNNI) or the model unquantised in ONNX Runtime; and
what each kind of states costs in dev quality. A student on a distilled encoder's states (`naus distil`; the bundled
one's shipped beside it) is timed on those alone: MiniLM's states, in any model, are not what it learned on.

One run, one machine. Speed: the first `--samples` Gigaword test articles (tokenised, as Table 1 decodes them),
length control at L = 10, each time the median of PASSES passes after an untimed one, the kinds of states taking
turns in each pass: tokenising, MiniLM, the student's forward and the decoder apart. Quality: the dev split's 500
sentences (its real titles, a choice made on dev), length control at L = 8 and 10, R-1 + R-2 + R-L F1 with each
kind of states. `naus export-onnx --full-range` makes the 8-bit model.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from benchmarks.common import cpu_summarizer, on_threads
from naus.device import cpu_name, isa
from naus.pipeline import layout
from naus.pipeline.bundle import BUNDLED
from naus.evaluation.evaluate import evaluate_files
from naus.plumbing.files import read_lines
from naus.plumbing.outputs import write_json, write_lines

PASSES = 7
SCORES = ("rouge1", "rouge2", "rougeL")


def median_seconds(calls: dict, passes: int = PASSES) -> dict[str, float]:
    """Each call's median time over `passes` after an untimed one, the calls taking turns in every pass (this
    virtual machine's speed drifts within minutes: each kind of states sees the same drift)."""
    for call in calls.values():
        call()
    runs = {name: [] for name in calls}
    for _ in range(passes):
        for name, call in calls.items():
            tick = time.perf_counter()
            call()
            runs[name].append(time.perf_counter() - tick)
    return {name: statistics.median(times) for name, times in runs.items()}


def speed(summarizer, encoders: dict, sentences: list[str], batch: int) -> dict:
    """Per sentence (ms), for each kind of states: MiniLM's states, then the student and its decoder with them."""
    groups = [sentences[k : k + batch] for k in range(0, len(sentences), batch)]
    # MiniLM batches by piece count: at batch 64, the sentences' states together, as Table 1 times them
    encoded = [sentences] if batch > 1 else groups
    states = median_seconds({name: lambda e=encoder: [e.encode(group) for group in encoded]
                             for name, encoder in encoders.items()})
    forward = {name: [] for name in encoders}

    def decode(name, given):
        forward[name].clear()
        for group, rows in zip(groups, given):
            summarizer.summarize(group, length=10, raw=False, states=rows, batch_size=batch)
            forward[name].append(summarizer.last_timing["forward_seconds"])

    calls = {}
    for name, encoder in encoders.items():
        every = encoder.encode(sentences)
        given = [every.take(range(k, min(k + batch, len(sentences)))) for k in range(0, len(sentences), batch)]
        calls[name] = lambda name=name, given=given: decode(name, given)
    decoding = median_seconds(calls)
    n = len(sentences)
    return {name: {"states_ms": round(1000 * states[name] / n, 3),
                   "student_and_decoder_ms": round(1000 * decoding[name] / n, 3),
                   "of_which_forward_ms": round(1000 * sum(forward[name]) / n, 3),
                   "total_ms": round(1000 * (states[name] + decoding[name]) / n, 3)} for name in encoders}


def quality(summarizer, encoder, build: Path, work: Path, name: str) -> dict:
    sources = read_lines(build / layout.DECODE_SOURCES["dev"])
    titles = build / layout.split_file("dev", "title")
    states = encoder.encode(sources)
    out = {}
    for length in (8, 10):
        hyp = work / f"dev-{name}-L{length}.txt"
        write_lines(hyp, [r.summary for r in summarizer.summarize(sources, length=length, raw=False, states=states)])
        scores = evaluate_files(hyp, [titles])
        out[str(length)] = round(sum(scores[k] for k in SCORES), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("build/gigaword-sample"))
    parser.add_argument("--checkpoint", type=Path, default=BUNDLED)
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--batch1-samples", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--encoder", type=Path, help="the distilled encoder the student learned on (`naus distil`; "
                        "default: the one shipped beside the bundled student, where it learned on one)")
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/student_states.json"))
    args = parser.parse_args()
    on_threads("benchmarks.student_states", args.threads)  # onnxruntime's and numba's threads, set at start
    from naus.student.frozen import Encoder
    from naus.teacher.similarity import export_onnx

    summarizer = cpu_summarizer(args.checkpoint, args.threads)
    test = read_lines(args.build / layout.DECODE_SOURCES["test"])
    work = Path("build/benchmarks/student_states")
    work.mkdir(parents=True, exist_ok=True)
    fp32 = work / "minilm-fp32.onnx"
    full_range = work / "minilm-int8-8bit.onnx"
    if not fp32.is_file():
        export_onnx(fp32, quantize=False)
    if not full_range.is_file():
        export_onnx(full_range, reduce_range=False)
    encoders = {"fp32-torch": Encoder(), "fp32-onnx": Encoder(fp32), "int8-onnx": Encoder(args.build / layout.MINILM_ONNX),
                "int8-onnx-8bit": Encoder(full_range)}
    if args.encoder or summarizer.encoder:  # a student on a distilled encoder's states reads those alone
        summarizer.use_encoder(args.encoder or summarizer.encoder)
        encoders = {"fp32-torch": Encoder(top=summarizer.encoder)}
    report = {"machine": f"{cpu_name()} ({', '.join(isa())}), {os.cpu_count()} cores, {args.threads} threads",
              "checkpoint": os.path.relpath(args.checkpoint),
              **({"encoder": os.path.relpath(summarizer.encoder)} if summarizer.encoder else {}), "samples": args.samples, "batch1_samples": args.batch1_samples,
              "passes": PASSES}
    batch64 = speed(summarizer, encoders, test[: args.samples], 64)
    batch1 = speed(summarizer, encoders, test[: args.batch1_samples], 1)
    for name, encoder in encoders.items():
        report[name] = {"batch64": batch64[name], "batch1": batch1[name],
                        "dev_total": quality(summarizer, encoder, args.build, work, name)}
        print(name, report[name], flush=True)
    report["dev_total_change"] = {name: {n: round(report[name]["dev_total"][n] - report["fp32-torch"]["dev_total"][n], 2)
                                         for n in ("8", "10")} for name in encoders}
    write_json(args.out, report)


if __name__ == "__main__":
    main()
