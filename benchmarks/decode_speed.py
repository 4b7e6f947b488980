"""Decoding speed end to end (model forward included): truncation vs length control vs beam.

Runs a trained checkpoint on Gigaword test sources (their real lengths), per-sample latency at
batch 1 and throughput at batch 64, on the CPU unless --device says otherwise.
Writes results/benchmarks/decode.json.

    NAUS_DATA=../shared/data python benchmarks/decode_speed.py --checkpoint build/gigaword-sample/train/L10/best.pt
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

import torch

from naus.files import read_lines, write_json
from naus.summarizer import Summarizer


def timed(summarizer: Summarizer, sources: list[str], method: str, batch: int, length: int, beam: int) -> float:
    start = time.perf_counter()
    summarizer.summarize(sources, length=length, method=method, beam_size=beam, batch_size=batch, raw=False)
    return (time.perf_counter() - start) / len(sources)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--data", default=os.environ.get("NAUS_DATA", "../shared/data"))
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--batch1-samples", type=int, default=200)
    parser.add_argument("--length", type=int, default=10)
    parser.add_argument("--beam-size", type=int, default=6)
    parser.add_argument("--device")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--out", default="results/benchmarks/decode.json")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    summarizer = Summarizer.from_checkpoint(args.checkpoint, args.device)
    sources = read_lines(Path(args.data) / "gigaword/test/input.txt")
    sample = [sources[i] for i in random.Random(0).sample(range(len(sources)), args.samples)]
    config = summarizer.model.config
    report = {
        "checkpoint": args.checkpoint,
        "model": f"{config.n_layers} layers x {config.d_model}, vocabulary {config.vocab_size}",
        "data": f"{args.samples} seeded-random Gigaword test sources (batch 1: the first {args.batch1_samples})",
        "device": str(summarizer.device),
        "threads": args.threads,
        "length": args.length,
        "beam_size": args.beam_size,
        "seconds_per_sample": {},
    }
    methods = ("truncate", "length-control", "beam")
    timed(summarizer, sample[:64], "length-control", 64, args.length, args.beam_size)  # warm-up
    for batch, items in ((1, sample[: args.batch1_samples]), (64, sample)):
        for method in methods:
            report["seconds_per_sample"][f"{method}@batch{batch}"] = round(
                timed(summarizer, items, method, batch, args.length, args.beam_size), 5
            )
        print(batch, {k: v for k, v in report["seconds_per_sample"].items() if k.endswith(f"batch{batch}")}, flush=True)
    s = report["seconds_per_sample"]
    report["length_control_over_truncate"] = {
        f"batch{b}": round(s[f"length-control@batch{b}"] / s[f"truncate@batch{b}"], 2) for b in (1, 64)
    }
    write_json(args.out, report)
    print(report["length_control_over_truncate"])


if __name__ == "__main__":
    main()
