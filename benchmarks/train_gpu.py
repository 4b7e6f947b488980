"""The paper-size student's training throughput on a GPU, with and without bf16 autocast.

A 6 x 512 NAUS student (8 heads, 2,048 feed-forward: the paper's, `naus.settings.ModelConfig`'s
defaults) with the gigaword-sample vocabulary's size, trained on random batches shaped like the
paper's (4,096 source tokens: 128 sources of 32 tokens, 10-word targets): forward, CTC loss,
backward, clipping and an AdamW step, as `naus.student.train` does, for `--seconds` in fp32 and then in
bf16 autocast (what `naus train` uses on a GPU), each after a warm-up. Source tokens per second
and peak memory, on the card named in the file. Writes results/benchmarks/train_gpu.json.

    python -m benchmarks.train_gpu --seconds 30
"""

from __future__ import annotations

import argparse
import contextlib
import time

import torch

from naus.plumbing.outputs import write_json
from naus.student.registry import build_model
from naus.settings import ModelConfig

VOCABULARY = 20_845  # gigaword-sample's pool, every word (benchmarks/train_speed.py)


def measure(bf16: bool, seconds: float, device: torch.device, seed: int = 0) -> dict:
    torch.manual_seed(seed)
    model = build_model(ModelConfig(VOCABULARY, max_len=128)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), weight_decay=0.01)
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(4):
        tokens = torch.randint(3, VOCABULARY, (128, 32), generator=generator).to(device)
        lengths = torch.randint(20, 33, (128,), generator=generator).to(device)
        targets = [torch.randint(3, VOCABULARY, (10,), generator=generator).tolist() for _ in range(128)]
        batches.append((tokens, lengths, targets))

    def step(batch) -> None:
        autocast = torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
        with autocast:
            loss, _, _ = model.loss(*batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()

    for batch in batches:  # warm-up: kernels chosen, memory pool filled
        step(batch)
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    steps, tokens, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        batch = batches[steps % len(batches)]
        step(batch)
        steps, tokens = steps + 1, tokens + int(batch[1].sum())
        if device.type == "cuda" and steps % 20 == 0:
            torch.cuda.synchronize()
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None
    return {"steps": steps, "seconds": round(elapsed, 1), "tokens_per_second": round(tokens / elapsed),
            "steps_per_second": round(steps / elapsed, 2), "peak_memory_gib": peak and round(peak, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="of training per mode, after a warm-up")
    parser.add_argument("--out", default="results/benchmarks/train_gpu.json")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    shape = ModelConfig(VOCABULARY)
    report = {"device": name, "torch": torch.__version__,
              "student": f"NAUS {shape.n_layers} x {shape.d_model} ({shape.n_heads} heads, {shape.d_ff} feed-forward), "
                         f"vocabulary {VOCABULARY:,}",
              "batch": "128 sources x 32 tokens (4,096), targets of 10 words; AdamW, clipping",
              "results": {}}
    for mode, bf16 in (("fp32", False), ("bf16 autocast", True)):
        report["results"][mode] = measure(bf16, args.seconds, device)
        print(mode, report["results"][mode], flush=True)
    fp32, bf16 = (report["results"][m]["tokens_per_second"] for m in ("fp32", "bf16 autocast"))
    report["bf16_speedup"] = round(bf16 / fp32, 2)
    write_json(args.out, report)


if __name__ == "__main__":
    main()
