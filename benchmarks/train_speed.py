"""Training throughput on the CPU, before and after, in one run: source tokens per second.

Random batches shaped like the profiles' (64 sources of 32 tokens = 2,048 tokens, 10-word
targets, a few sources too short for their target so that the CTC loss leaves pairs out on
some steps), full forward + loss + backward + AdamW step, at demo and gigaword-sample size
with the vocabularies those profiles build. Compared:
- before: the previous CTC loss, which copied the [B, T, V] log-probabilities of the alignable
  pairs on every step (`ctc_loss_copying` below), one student on both cores (the train rule
  used to take every core);
- after: the loss copies only on a step that leaves a pair out (same values, same gradients:
  tests/unit/test_train.py), one student on one thread, and two students side by side on one
  thread each (what the train rule now does), counted together.
Writes results/benchmarks/train.json.

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

training, source tokens per second, batches of 2,048 tokens, profile vocabularies (`results/benchmarks/train.json`,
one run, best of 3 alternated): demo size: 2,873 before (one student on 2 threads, the copying loss) → 4,502 after
(two students side by side, one thread each; 3,132 for one student on 2 threads); gigaword-sample size: 998 → 1,182
(1,112)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from contextlib import contextmanager

import torch

import naus.student.model
from naus.plumbing.outputs import write_json
from naus.student.model import _alignable
from naus.student.registry import build_model
from naus.settings import ModelConfig

CTC_LOSS = naus.student.model.ctc_loss  # the loss as it is now

SIZES = {  # model size and the vocabulary the profile builds from its pool (min_count 1 / 2)
    "demo": (dict(d_model=128, n_heads=4, n_layers=2, d_ff=512), 10_443),
    "gigaword-sample": (dict(d_model=256, n_heads=4, n_layers=4, d_ff=1024), 20_845),
}


def ctc_loss_copying(log_probs, lengths, targets, blank=0, smoothing=0.1):
    """The loss as it was: the alignable pairs' rows copied out on every step, then scored."""
    keep = _alignable(lengths, targets)
    if not keep:
        return log_probs.sum() * 0.0, 0, len(targets)
    index = torch.tensor(keep, device=log_probs.device)
    loss, used, _ = CTC_LOSS(log_probs.index_select(0, index), lengths.index_select(0, index),
                             [targets[i] for i in keep], blank, smoothing)
    return loss, used, len(targets) - used


@contextmanager
def loss_of(version: str):
    naus.student.model.ctc_loss = ctc_loss_copying if version == "before" else CTC_LOSS
    try:
        yield
    finally:
        naus.student.model.ctc_loss = CTC_LOSS


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
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--out", default="results/benchmarks/train.json")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    report = {"batch": "64 x 32 tokens (2,048), targets of 10 words", "cpu_cores": cores, "steps": args.steps,
              "repeats": f"best of {args.repeats}, alternated", "results": {}}
    for size in args.sizes:
        runs = {"before": [], "after": [], "side by side": []}
        for _ in range(args.repeats):  # alternated, the best of each kept: the order and a passing job matter less
            runs["before"].append(measure(size, "before", cores, args.steps))
            runs["after"].append(measure(size, "after", cores, args.steps))
            runs["side by side"].append(side_by_side(size, "after", args.steps, cores))
        before, after_one_all_cores, after = (max(runs[k]) for k in ("before", "after", "side by side"))
        after_one = measure(size, "after", 1, args.steps)
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
