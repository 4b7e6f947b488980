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
from naus.files import read_lines, write_json
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
