"""Training throughput: source tokens per second and peak memory per architecture and model size.

Random token batches of ~4k tokens (Gigaword-like lengths, 10-word targets), full forward +
loss (CTC for NAUS and nar-ctc, cross entropy for ar and nar) + backward + AdamW step.
CPU by default; on a CUDA machine both devices unless --devices says otherwise.
Writes results/benchmarks/train.json.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import torch

from naus.files import write_json
from naus.architectures import ARCHITECTURES
from naus.model import build_model
from naus.settings import ModelConfig

SIZES = {
    "demo": dict(d_model=128, n_heads=4, n_layers=2, d_ff=512),
    "gigaword-sample": dict(d_model=256, n_heads=4, n_layers=4, d_ff=1024),
    "paper": dict(d_model=512, n_heads=8, n_layers=6, d_ff=2048),
}


def measure(size: str, device: torch.device, vocab: int, steps: int, batch: int, time_len: int, arch: str) -> dict:
    torch.manual_seed(0)
    model = build_model(ModelConfig(vocab, max_len=256, arch=arch, **SIZES[size])).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), weight_decay=0.01)
    tokens = torch.randint(3, vocab, (batch, time_len), device=device)
    lengths = torch.full((batch,), time_len, device=device)
    targets = [torch.randint(3, vocab, (10,)).tolist() for _ in range(batch)]
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else torch.autocast("cpu", enabled=False)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()

    def step() -> None:
        with autocast:
            loss, _, _ = model.loss(tokens, lengths, targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()

    step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / steps
    peak = (torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda"
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return {"tokens_per_second": round(batch * time_len / seconds), "seconds_per_step": round(seconds, 4),
            "peak_memory_mib": round(peak), "parameters": sum(p.numel() for p in model.parameters())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, default=30000)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--time", type=int, default=32, help="source tokens per sample (Gigaword mean ~31)")
    parser.add_argument("--archs", nargs="+", default=["naus"], choices=sorted(ARCHITECTURES))
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--devices", nargs="+", help="default: cpu, and cuda when there is one")
    parser.add_argument("--out", default="results/benchmarks/train.json")
    args = parser.parse_args()
    names = args.devices or ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    devices = [torch.device(name) for name in names]
    report = {"batch": f"{args.batch} x {args.time} tokens", "vocab": args.vocab, "cpu_threads": torch.get_num_threads(),
              "cpu_cores": os.cpu_count(), "results": {}}
    for device in devices:
        name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
        for size in args.sizes:
            for arch in args.archs:
                result = measure(size, device, args.vocab, args.steps, args.batch, args.time, arch)
                key = f"{size}@{name}" if arch == "naus" else f"{arch}:{size}@{name}"
                report["results"][key] = result
                print(arch, size, name, result, flush=True)
    write_json(args.out, report)


if __name__ == "__main__":
    main()
