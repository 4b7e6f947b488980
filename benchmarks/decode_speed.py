"""Decoding speed: the compiled decoders against their references and the authors' decoder.

Two parts, one run, one machine:

* `kernels`: identical seeded random log-probabilities (16 samples, T = 32, V = 30,000, B = 6,
  L = 10), one sample at a time on one CPU thread: the authors' released length-control decoder
  (Liu, Huang & Mou 2022; `CTCScopeSearchLengthControlDecoder`, read at run time from a snapshot
  of github.com/MANGA-UOFA/NAUS given by --authors-repo, with its defaults: scope 3, max
  marginalisation), our compiled length control, a tensor version (the reference it is checked
  against, labelled "previous" in the results), greedy, and CTC prefix beam search compiled and in
  Python dictionaries (its reference, labelled likewise). Each time
  is the median of PASSES passes over the samples.
  Char-control (a budget of characters, `--chars`) runs on the same samples, its 30,000 words
  taking the lengths of the 30,000 most frequent words of the Gigaword test articles.
* `end_to_end`: a trained checkpoint on Gigaword test sources (their real lengths), model forward
  included, per-sample time at batch 1 and at batch 64 for truncation, length control, beam
  search and char-control (the methods taking turns, PASSES times: the median), with the reference
  decoders in the same run.

Writes results/benchmarks/decode.json.

    NAUS_DATA=../shared/data python -m benchmarks.decode_speed \
        --checkpoint build/gigaword-sample/train/L10/best.pt --authors-repo /path/to/MANGA-UOFA+NAUS/repo

Findings (the JSON's numbers, as read when it was written; Markdown):

## Measured

decoding, truncation vs length control (B = 6), model forward included, one thread (demo checkpoint, Intel, November
27: logits in, vectorised top-k, numba's pool of one): batch 64: 1.28 vs 1.35 ms per sample (1.06×; the two runs
before it: 0.99×, 1.04×); batch 1: 2.06 vs 2.28 ms (1.11×; 1.08×, 1.09×). The day before: 1.10× / 1.29×, with a
second core busy (below) (goal: ≤ 1.1×)

char-control (60 characters) vs word length control, same run: batch 64: 3.04 vs 1.35 ms (2.25×; 2.38× the run
before); batch 1: 4.06 vs 2.28 ms (1.78×; 1.93×) (goal: ≤ 2×)

length control alone vs the authors' decoder (T = 32, V = 30k, batch 1, one thread; each time the median of 5
passes): 0.69 vs 30.93 ms (**44.6×**, Intel, November 27; 43.3× and 37.6× in the two runs before it; the day before
1.20 vs 18.81 ms, 15.6×, one pass each) (goal: ≥ 25×)

## Decoding

The committed gigaword-sample tables timed their students beside other jobs (on the H100, eight
decodings sharing the GPU), so their times are upper bounds; since November 27 the demo's tables
time each decoding alone (the `time_decode` jobs), and the benchmark files were measured with at
most one other light job.

The decoding rows above (`decode.json`) are the last of three runs on this Intel machine (the two
before it, with the decoders of a few commits earlier, same one-thread code path, in the rows'
parentheses): length control at batch 1 lands at 1.08–1.11× truncation, the bar of 1.1× met in
two runs of three, its spread as large as the margin. **What changed on November 27, and a correction:** the
decoders
take logits and each slot's log-sum-exp (no [N, T, V] log-softmax written), return each path's
log-probability from their kernels, and take the slots' best words from a vectorised top-k (one
pass over the slot, 256 lanes); greedy decoding uses the same top-k instead of `torch.max` (a third
of its time at V = 30,000), so truncation, the reference of every ratio, got faster too. Numba's
parallel kernels had started a pool of OpenMP workers as large as the machine (2 here) whatever
`--threads` said, and after the first kernel the idle worker **spun on the other core**: a
"one-thread" run kept 1.5–2 cores busy (measured with `getrusage`), which sped that run up
(char-control by 30%) and would halve the speed of two one-thread pipeline jobs side by side.
`naus --threads N` now sets NUMBA_NUM_THREADS to N (the benchmark does the same for itself), so
one thread is one core: the char-control ratio above (2.25–2.38× at batch 64) is the honest
one-thread figure, against 1.69× the day before with the spinning helper. Every time is the median of 5
passes, the methods taking turns. Same summaries as the previous decoders on every sentence at
both batch sizes (`same_summaries_as_previous`: 1.0). The run of `decode_speed.py` on a GPU is
`decode_gpu.json` (below).

**On a GPU** (one NVIDIA H200, driver 580.159.04, torch 2.11.0+cu130, the same lease, each alone on
the card): `decode_gpu.json` (`benchmarks/decode_speed.py` on the `naus-minilm` L = 10 student, 128
test sources, 8 CPU threads for the dynamic programs, model forward included): truncation 0.136 /
2.30 ms per sentence at batch 64 / 1, length control 0.138 / 2.93 ms (1.01× / 1.27×), beam search
0.159 / 2.86 ms (1.17× / 1.24×), char-control 1.68 / 8.87 ms; the previous tensor and dictionary
decoders 8.3× / 9.2× and 125× / 8.0× truncation; same summaries as them on every sentence. At
batch 1 length control misses the 1.2× aimed at: the batch-1 time is the forward pass's kernel
launches plus one dynamic program on one sentence, which the GPU does not speed up. Kernels alone
(random log-probabilities, one CPU thread of that machine): length control 0.86 ms, beam search
1.00 ms, greedy 0.54 ms. `train_gpu.json` (`benchmarks/train_gpu.py`): the paper-size student
(6 × 512, vocabulary 20,845, batches of 4,096 tokens, 10 s per mode after a warm-up) trains at
100,411 source tokens per second in fp32 and 126,342 with bf16 autocast (1.26×; 2.55 and 2.23 GiB
peak).

**Decoding: compiled dynamic programs.** Length control, CTC prefix beam search and forced
alignment run their slot loops as numba kernels (`naus/decoding.py`) that read only each slot's
B + 1 best words and ε, and the log-probabilities of the words a state can end in: on the CPU
from the model's array in place, from a GPU out of small tables gathered where the model ran and
brought over once per batch. Since November 27 they take **logits and each slot's log-sum-exp**
(`slot_log_norm`, on a CPU one sample at a time) and normalise only what they read, so the decode
path writes no [N, T, V] log-softmax (at batch 64 on the demo model that array's 42 MB cost more in
page faults than its exponentials: log-softmax 25 ms, the log-sum-exps 13 ms per batch); the
kernels return each path's log-probability themselves. On the CPU the slots' best words come from
a compiled top-k (`top_k_slots`, greedy decoding included): one vectorised pass takes the maxima
of 256 interleaved lanes of each slot's vocabulary (an element-wise max of contiguous blocks,
which LLVM vectorises; the max of one block it does not), and only the lanes whose maximum
reaches the (k + 1)-th largest are searched, most entries failing one comparison: about a quarter
of `torch.topk`'s time and a third of `torch.max`'s (tested against `torch.topk`, ties and -inf
included; a GPU keeps `torch.topk`). The previous
tensor and dictionary versions are kept as references in `tests/reference.py`;
the tests compare both on random inputs with ragged lengths and targets (same paths and
scores), keep the brute-force checks (Theorem 1, an exact beam, many tied scores), and
`python -m benchmarks.decode_speed` → `results/benchmarks/decode.json` times them in one run. The
current file (November 2026) is from this Intel Xeon (2 cores, torch threads 1, nothing else
running) with the demo L = 10 checkpoint, the only trained one at hand then; the previous file
(an AMD EPYC, the gigaword-sample checkpoint) is in git history and quoted where it differs:

| one sample, random log-probabilities (T = 32, V = 30,000, B = 6, L = 10) | time (Intel, Nov 27, median of 5 passes) | Intel, Nov 26 | previous (AMD) |
|---|---|---|---|
| the authors' length control (their code, read from MANGA-UOFA/NAUS at run time) | 30.93 ms | 33.93 ms | 29.89 ms |
| ours, previous tensor version | 9.21 ms | 10.10 ms | 7.98 ms |
| **ours, compiled** | **0.69 ms** (44.6× the authors', 13.3× the previous) | 1.35 ms (25.1×) | 0.71 ms (41.9×) |
| char-control within 60 characters, compiled (words of the test articles' lengths) | 3.60 ms (5.2× length control) | 3.95 ms (2.9×) | – |
| greedy + truncation | 0.57 ms (compiled top-1) | 2.62 ms (`torch.argmax`) | 0.92 ms |
| prefix beam search, previous (Python dictionaries) / compiled | 19.23 ms / 0.93 ms | 29.09 ms / 1.52 ms | 39.14 / 0.85 ms |

End to end on the demo L = 10 checkpoint (2 layers x 128, vocabulary 4,678: a forward pass far
cheaper than gigaword-sample's 4 x 256, so every decoder's share is larger), model forward
included, one thread, per sample, 512 test sources (batch 1: the first 200): truncation 2.06 ms
at batch 1 and 1.28 ms at batch 64; length control 2.28 and 1.35 ms (**1.11× and 1.06×**; the
previous tensor decoder 4.31× and 3.57× in the same run); beam search 1.11× and 1.12×;
char-control within 60 characters 4.06 and 3.04 ms, 1.78× and 2.25× word length control (its
slot loop walks 61 cells of characters instead of 11 of words). On the gigaword-sample checkpoint
an earlier run had length control at 0.95× / 1.05× truncation (14–18 ms per sample, mostly the
forward pass). Every (method, batch size) is warmed up once before it is timed (numba loads a
kernel per signature).

`naus summarize` logs its latency: on this CPU the L = 10 checkpoint loads in 0.11 s and decodes one
sentence in 0.37 s on its first call in a process (numba loads its cached kernels, PyTorch warms
up; the whole command, imports included, takes about 5 s); in a running process one sentence
costs about 20 ms (batch 1 above).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch

from naus import decoding
from naus.methods import CTC, METHODS as REGISTRY
from naus.plumbing.files import read_lines
from naus.plumbing.outputs import write_json
from naus.decoding.summarizer import Summarizer
from tests import reference

METHODS = ("truncate", "length-control", "beam", "char-control")
AUTHORS_FILES = ("decoding_algorithms/ctc_decoder_base.py", "decoding_algorithms/ctc_scope_search_length_control.py")


def authors_decoder(repo: str, length: int, beam: int):
    """Their length-control decoder from a git snapshot (a bare repository or a checkout), with a
    stand-in for the one fairseq class it imports (the dictionary: blank 4 and pad 1, as theirs)."""
    root = Path(tempfile.mkdtemp(prefix="naus-authors-"))
    for name in AUTHORS_FILES:
        text = subprocess.run(["git", "-C", repo, "show", f"HEAD:{name}"], check=True, capture_output=True, text=True)
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text.stdout)
    (root / "decoding_algorithms/__init__.py").write_text("")

    class Dictionary:
        def blank(self):
            return 4

        def pad(self):
            return 1

    fairseq = types.ModuleType("fairseq.data.ctc_dictionary")
    fairseq.CTCDictionary = Dictionary
    for name in ("fairseq", "fairseq.data"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["fairseq.data.ctc_dictionary"] = fairseq
    sys.path.insert(0, str(root))
    from decoding_algorithms.ctc_scope_search_length_control import CTCScopeSearchLengthControlDecoder

    parameters = {"force_length": True, "desired_length": length, "use_length_ratio": False, "k": beam,
                  "beam_size": beam, "scope": 3, "marg_criteria": "max", "truncate_summary": False}
    return CTCScopeSearchLengthControlDecoder(Dictionary(), parameters)


PASSES = 5  # each time is the median of this many passes: one pass on a shared 2-core VM varied by 2x


def per_sample(function, samples: list, passes: int = PASSES) -> float:
    """Seconds per sample, the median over `passes` passes, after one warm-up call (compilation, caches)."""
    function(samples[0])
    times = []
    for _ in range(passes):
        start = time.perf_counter()
        for sample in samples:
            function(sample)
        times.append((time.perf_counter() - start) / len(samples))
    return statistics.median(times)


def word_lengths(data: str, vocab: int) -> np.ndarray:
    """Characters of the `vocab` most frequent words of the Gigaword test articles (cycled if fewer)."""
    counts = Counter(w for line in read_lines(Path(data) / "gigaword/test/input.txt") for w in line.split())
    lengths = [len(w.encode()) for w, _ in counts.most_common(vocab)]
    return np.resize(np.array(lengths), vocab)


def kernels(args) -> dict:
    gen = torch.Generator().manual_seed(0)
    samples = [(torch.randn(32, 30_000, generator=gen) * 3).log_softmax(-1) for _ in range(16)]
    length, beam, blank = args.length, args.beam_size, 4
    one = torch.tensor([32])
    chars = word_lengths(args.data, 30_000)
    ours = {
        "greedy + truncate": lambda lp: decoding.truncate(decoding.greedy(lp, blank), length),
        "length control, compiled": lambda lp: decoding.length_control(lp, length, beam, blank),
        "length control, tensors (previous)": lambda lp: reference.length_control_tensors(
            lp[None], one, [length], beam, blank)[0],
        "beam search, compiled": lambda lp: decoding.ctc_beam_search(lp, beam, blank),
        "beam search, Python (previous)": lambda lp: reference.ctc_beam_search_python(lp, beam, blank),
        f"char control ({args.chars} chars), compiled": lambda lp: decoding.char_control_batch(
            lp[None], one, [args.chars], chars, beam, blank)[0],
    }
    times = {name: per_sample(function, samples) for name, function in ours.items()}
    report = {"data": "16 seeded random log-softmax samples, T = 32, V = 30,000, one at a time, one thread",
              "length": length, "chars": args.chars, "beam_size": beam, "seconds_per_sample": {}}
    if args.authors_repo:
        theirs = authors_decoder(args.authors_repo, length, beam)
        times["length control, authors"] = per_sample(lambda lp: theirs.decode(lp[None], one), samples)
        summaries = [theirs.decode(lp[None], one)[0] for lp in samples[:4]]
        assert all(len(s) == length for s in summaries), "the authors' decoder did not return L words"
    report["seconds_per_sample"] = {k: round(v, 6) for k, v in times.items()}
    speedups = {"length control: compiled over tensors": times["length control, tensors (previous)"]
                / times["length control, compiled"],
                "beam search: compiled over Python": times["beam search, Python (previous)"]
                / times["beam search, compiled"],
                "char control over length control (cost)": times[f"char control ({args.chars} chars), compiled"]
                / times["length control, compiled"]}
    if "length control, authors" in times:
        speedups["length control: compiled over the authors'"] = times["length control, authors"] / times[
            "length control, compiled"]
    report["speedup"] = {k: round(v, 1) for k, v in speedups.items()}
    return report


def reference_length_control(batch):
    """The tensor version of length control, as a decoding method (it reads the whole log-softmax)."""
    return reference.length_control_tensors(batch.logits - batch.log_norm[..., None], batch.lengths, batch.targets,
                                            batch.beam_size, batch.blank)


def reference_beam(batch):
    """The dictionary version of CTC beam search, then truncation, as a decoding method."""
    lengths, lp = batch.lengths, batch.logits - batch.log_norm[..., None]
    hyps = [reference.ctc_beam_search_python(lp[i, : lengths[i]], batch.beam_size, batch.blank) for i in range(len(lp))]
    return [decoding.truncate(h, t) for h, t in zip(hyps, batch.targets)]


@contextmanager
def previous_decoders():
    """The registry's length control and beam search replaced by the tensor and dictionary versions, for the
    reference rows."""
    saved = dict(REGISTRY)
    for name, function in (("length-control", "reference_length_control"), ("beam", "reference_beam")):
        REGISTRY[name] = dataclasses.replace(REGISTRY[name], decoders={**REGISTRY[name].decoders,
                                                                       CTC: f"benchmarks.decode_speed:{function}"})
    try:
        yield
    finally:
        REGISTRY.update(saved)


def end_to_end(args) -> dict:
    summarizer = Summarizer.from_checkpoint(args.checkpoint, args.device)
    sources = read_lines(Path(args.data) / "gigaword/test/input.txt")
    sample = [sources[i] for i in random.Random(0).sample(range(len(sources)), args.samples)]
    config = summarizer.model.config

    def timed(items: list[str], method: str, batch: int) -> tuple[float, list]:
        start = time.perf_counter()
        chars = args.chars if method == "char-control" else None
        out = summarizer.summarize(items, length=args.length, method=method, beam_size=args.beam_size,
                                   batch_size=batch, raw=False, chars=chars)
        return (time.perf_counter() - start) / len(items), [r.summary for r in out]

    for method in METHODS:  # warm-up: compilation (each signature) and caches
        timed(sample[:64], method, 64)
        timed(sample[:8], method, 1)
    seconds, same = {}, {}
    for batch, items in ((1, sample[: args.batch1_samples]), (64, sample)):
        runs = {method: [] for method in METHODS}
        for _ in range(PASSES):  # the methods take turns, so a slow spell of the machine hits them alike
            for method in METHODS:
                elapsed, outputs = timed(items, method, batch)
                runs[method].append(elapsed)
        for method in METHODS:
            seconds[f"{method}@batch{batch}"] = statistics.median(runs[method])
            if method in ("length-control", "beam"):
                outputs = timed(items, method, batch)[1]
                with previous_decoders():
                    seconds[f"{method} (previous)@batch{batch}"], previous = timed(items, method, batch)
                same[f"{method}@batch{batch}"] = sum(a == b for a, b in zip(outputs, previous)) / len(items)
        print(batch, {k: round(v * 1000, 2) for k, v in seconds.items() if k.endswith(f"batch{batch}")}, flush=True)
    return {
        "checkpoint": args.checkpoint,
        "model": f"{config.n_layers} layers x {config.d_model}, vocabulary {config.vocab_size}",
        "data": f"{args.samples} seeded-random Gigaword test sources (batch 1: the first {args.batch1_samples}); "
                f"L = {args.length}, char-control within {args.chars} characters",
        "device": (torch.cuda.get_device_name(summarizer.device) if summarizer.device.type == "cuda"
                   else str(summarizer.device)),
        "seconds_per_sample": {k: round(v, 6) for k, v in seconds.items()},
        "over_truncate": {
            f"{method}@batch{b}": round(seconds[f"{method}@batch{b}"] / seconds[f"truncate@batch{b}"], 2)
            for b in (1, 64)
            for method in ("length-control", "beam", "char-control", "length-control (previous)", "beam (previous)")
        },
        "char_control_over_length_control": {
            f"batch{b}": round(seconds[f"char-control@batch{b}"] / seconds[f"length-control@batch{b}"], 2) for b in (1, 64)
        },
        "same_summaries_as_previous": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--data", default=os.environ.get("NAUS_DATA", "../shared/data"))
    parser.add_argument("--authors-repo", help="a git snapshot of MANGA-UOFA/NAUS (bare or checked out)")
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--batch1-samples", type=int, default=200)
    parser.add_argument("--length", type=int, default=10)
    parser.add_argument("--chars", type=int, default=60, help="char-control's budget (about L = 10 words)")
    parser.add_argument("--beam-size", type=int, default=6)
    parser.add_argument("--device")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="results/benchmarks/decode.json")
    args = parser.parse_args()
    if os.environ.get("NUMBA_NUM_THREADS") != str(args.threads):  # as `naus --threads` does: numba starts that many
        # OpenMP workers when first asked, and idle ones spin beside a one-thread timing; read when numba is imported
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks.decode_speed", *sys.argv[1:]],
                  {**os.environ, "NUMBA_NUM_THREADS": str(args.threads)})

    torch.set_num_threads(args.threads)
    report = {"machine": f"{os.cpu_count()} cores, torch threads {args.threads}", "kernels": kernels(args)}
    print(report["kernels"], flush=True)
    report["end_to_end"] = end_to_end(args)
    print(report["end_to_end"]["over_truncate"], report["end_to_end"]["same_summaries_as_previous"])
    write_json(args.out, report)


if __name__ == "__main__":
    main()
