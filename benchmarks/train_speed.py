"""Training throughput on the CPU, before and after, in one run: source tokens per second.

Random batches shaped like the profiles' (64 sources of 32 tokens = 2,048 tokens, 10-word
targets, a few sources too short for their target so that the CTC loss leaves pairs out on
some steps), full forward + loss + backward + AdamW step, at demo and gigaword-sample size
with the vocabularies those profiles build. Compared:
- before: the previous CTC loss, which copied the [B, T, V] log-probabilities of the alignable
  pairs on every step (`ctc_loss_copying` below), one student on both cores (the train rule
  used to take every core);
- after: the loss copies only on a step that leaves a pair out (same values, same gradients:
  tests/test_train.py), one student on one thread, and two students side by side on one
  thread each (what the train rule now does), counted together.
Writes results/benchmarks/train.json.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from contextlib import contextmanager

import torch
import torch.nn.functional as F

import naus.model
from naus.files import write_json
from naus.model import _alignable, build_model
from naus.settings import ModelConfig

SIZES = {  # model size and the vocabulary the profile builds from its pool (min_count 1 / 2)
    "demo": (dict(d_model=128, n_heads=4, n_layers=2, d_ff=512), 10_443),
    "gigaword-sample": (dict(d_model=256, n_heads=4, n_layers=4, d_ff=1024), 20_845),
}


def ctc_loss_copying(log_probs, lengths, targets, blank=0, smoothing=0.1):
    """The loss as it was: the alignable pairs' rows copied out on every step."""
    keep = _alignable(lengths, targets)
    skipped = len(targets) - len(keep)
    if not keep:
        return log_probs.sum() * 0.0, 0, skipped
    index = torch.tensor(keep, device=log_probs.device)
    lp, ln = log_probs.index_select(0, index), lengths.index_select(0, index)
    flat = torch.tensor([tok for i in keep for tok in targets[i]], device=log_probs.device)
    target_lengths = torch.tensor([len(targets[i]) for i in keep], device=log_probs.device)
    nll = F.ctc_loss(lp.transpose(0, 1), flat, ln, target_lengths, blank=blank, reduction="none", zero_infinity=True)
    loss = (nll / target_lengths).mean()
    if smoothing > 0:
        valid = (torch.arange(lp.shape[1], device=lp.device)[None, :] < ln[:, None]).float()
        loss = (1 - smoothing) * loss + smoothing * -(lp.mean(dim=-1) * valid).sum() / valid.sum()
    return loss, len(keep), skipped


@contextmanager
def loss_of(version: str):
    current = naus.model.ctc_loss
    naus.model.ctc_loss = ctc_loss_copying if version == "before" else current
    try:
        yield
    finally:
        naus.model.ctc_loss = current


def measure(size: str, version: str, threads: int, steps: int, seed: int = 0) -> float:
    """Source tokens per second of one student, `threads` intra-op threads."""
    torch.set_num_threads(threads)
    shape, vocab = SIZES[size]
    torch.manual_seed(seed)
    model = build_model(ModelConfig(vocab, max_len=128, **shape))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), weight_decay=0.01)
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(4):
        tokens = torch.randint(3, vocab, (64, 32), generator=generator)
        lengths = torch.randint(20, 33, (64,), generator=generator)
        if len(batches) % 2:
            lengths[0] = 8  # every other batch has a source too short for its target
        targets = [torch.randint(3, vocab, (10,), generator=generator).tolist() for _ in range(64)]
        batches.append((tokens, lengths, targets))

    def step(batch) -> None:
        loss, _, _ = model.loss(*batch)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()

    with loss_of(version):
        for batch in batches:
            step(batch)
        start = time.perf_counter()
        for i in range(steps):
            step(batches[i % len(batches)])
        seconds = time.perf_counter() - start
    return sum(int(batches[i % len(batches)][1].sum()) for i in range(steps)) / seconds


def _worker(args: tuple) -> float:
    return measure(*args)


def side_by_side(size: str, version: str, steps: int, students: int) -> float:
    """Tokens per second of `students` students training at once, one thread each, together."""
    with multiprocessing.get_context("fork").Pool(students) as pool:
        return sum(pool.map(_worker, [(size, version, 1, steps, seed) for seed in range(students)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--out", default="results/benchmarks/train.json")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    report = {"batch": "64 x 32 tokens (2,048), targets of 10 words", "cpu_cores": cores, "steps": args.steps,
              "results": {}}
    for size in args.sizes:
        before = measure(size, "before", cores, args.steps)
        after_one = measure(size, "after", 1, args.steps)
        after_one_all_cores = measure(size, "after", cores, args.steps)
        after = side_by_side(size, "after", args.steps, cores)
        report["results"][size] = {
            "vocabulary": SIZES[size][1],
            f"before: one student, {cores} threads": round(before),
            f"after: one student, {cores} threads": round(after_one_all_cores),
            "after: one student, 1 thread": round(after_one),
            f"after: {cores} students side by side, 1 thread each (together)": round(after),
            "speedup (side by side after / one student before)": round(after / before, 2),
        }
        print(size, report["results"][size], flush=True)
    write_json(args.out, report)


if __name__ == "__main__":
    main()
