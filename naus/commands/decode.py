"""Decoding with a student: a file or standard input (`decode`, `summarize`), the pipeline's decodings of a build
one after another in one process (`decode-all`, then `unbundle`), and their times (`time`)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time

from naus import NausError
from naus.pipeline import layout
from naus.commands import DEVICE, ENCODER, IN, OUT, command, count, output_file, target

log = logging.getLogger("naus")


def register(sub) -> None:
    from naus.methods import LENGTH_CONTROL, METHODS, default_help
    from naus.settings import DecodeConfig

    evaluator_form = ("--raw", {"action": "store_true", "dest": "evaluator_form",
                                "help": "write summaries in the evaluator's form, as `naus decode` does (lower case, "
                                        "PTB tokens, digits as #, punctuation may be one of the L words); default: "
                                        "headlines, the source's words as it wrote them"})
    for name, about in (("decode", "decode a file of (tokenised) sentences with a checkpoint"),
                        ("summarize", "headlines for raw sentences (stdin or a file)")):
        command(sub, name, decode, about,
                ("--checkpoint", {"help": "a student's best.pt (`naus train`) or its directory (default: the bundled "
                                          "Gigaword student, naus/models/MODEL_CARD.md)"}),
                ("--input", {"default": "-", "help": "one sentence per line; - reads stdin"}),
                ("--out", {"type": output_file, "default": "-", "help": "- writes stdout"}),
                target(False, None, chars=True),
                ("--method", {"choices": list(METHODS), "help": default_help()}),
                ("--jsonl", {"action": "store_true", "help": "JSON lines with summary, length and log-probability"}),
                ("--keep-unk", {"action": "store_true", "help": "keep each <unk> as decoded (default: the source "
                                                                "word it stands for)"}),
                ("--timing", {"type": output_file, "help": "also time the decoding again (--timing-passes) and "
                                                           "write seconds per sample to this JSON file"}),
                ("--provenance", {"type": output_file, "help": "write the sha256 of the input, the checkpoint and "
                                                               "the summaries to this JSON file"}),
                ("--states", {"help": "the input's frozen states (`naus encode-states`) for a naus-copy student "
                                      "(default: computed here)"}),
                ("--minilm-onnx", {"help": "compute them with this MiniLM (`naus export-onnx`: int8, about twice as "
                                           "fast; `naus export-onnx --full-range`: at the fp32 states' dev quality; "
                                           "default: the fp32 MiniLM students learn on)"}),
                ENCODER,
                *([evaluator_form] if name == "summarize" else []),
                DEVICE, settings=(DecodeConfig,), raw=name == "summarize")
    example = layout.Decoded("test", layout.model(10), LENGTH_CONTROL.name, "10")
    named = (f"its name as naus.pipeline.layout gives it (e.g. {example.stem}), its method, its target (10 words, r0.5 "
             "of the source, c75 characters) and its beam, as the pipeline's plan (naus.pipeline.plan) gives them")
    command(sub, "decode-all", decode_all, "one student's decodings of one file, one after another in one process, "
            "into one JSON file (`naus unbundle` writes each out)",
            ("--checkpoint", {**IN, "help": "the student's best.pt"}),
            ("--source", {**IN, "help": "the sentences the decodings' split names, one per line"}),
            ("--states", {"help": "their frozen states (`naus encode-states`), for a student that reads them"}),
            ("--decoding", {"nargs": 4, "action": "append", "required": True, "metavar": ("STEM", "METHOD", "TARGET",
                                                                                         "BEAM"),
                            "help": f"once per decoding: {named}"}),
            ("--out", OUT), DEVICE,
            settings=((DecodeConfig, ("min_length", "batch_size", "phrases", "last_word", "adjacency")),))
    command(sub, "unbundle", unbundle, "one decoding of a `naus decode-all` file, as `naus decode --provenance` "
            "writes it", ("--bundle", {**IN, "help": "the `naus decode-all` file"}),
            ("--stem", {**IN, "help": "the decoding to write, as naus.pipeline.layout names it"}), ("--out", OUT),
            ("--provenance", {**OUT, "help": "what made it (the input's, the student's and the summaries' sha256)"}))
    decoding = ("--decoding", {
        "nargs": "+", "action": "append", "required": True,
        "metavar": "STEM METHOD TARGET BEAM CHECKPOINT SOURCE OUT [STATES]",
        "help": f"once per decoding: {named}; then its best.pt, the sentences it decodes, the JSON file its time is "
                "written to and, for a student on frozen states, their file"})
    command(sub, "time", time_decodings, "time decodings the way the tables show them, one after another in one "
            "process", decoding, ENCODER, DEVICE,
            settings=((DecodeConfig, ("min_length", "batch_size", "phrases", "last_word", "adjacency",
                                      "batch1_samples", "timing_passes")),))
    command(sub, "compile", compile_decoders, "compile every decoder and the hill climb once (numba keeps them beside "
            "their modules): `make setup` does, so that a pipeline's first searches and decodings do not, each in its "
            "own process")


def compile_decoders(args: argparse.Namespace) -> None:
    """Every decoding method of the bundled student, and the teacher's hill climb: each kernel compiled for the types
    they use, in processes side by side on the cores this one may use (numba compiles on one thread: 26 s in one)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from naus.methods import METHODS
    from naus.teacher.similarity import cores

    tick, tasks = time.perf_counter(), ["the hill climb", *METHODS]
    with ProcessPoolExecutor(min(cores(), len(tasks)), mp_context=multiprocessing.get_context("spawn")) as pool:
        for task, seconds in zip(tasks, pool.map(_compile, tasks)):
            log.info("%s compiled in %.1f s", task, seconds)
    log.info("%d decoders and the hill climb compiled in %.1f s", len(METHODS), time.perf_counter() - tick)


COMPILE_NEWS = ["Police arrested five protesters in Cherbourg on Thursday after they tried to block a train.",
                "The central bank left interest rates unchanged at 2.5 percent on Wednesday."]
# a bigram LM whose every word but `police` is unknown: enough for the climb's kernels, built without lmplz
COMPILE_LM = "\n".join(["\\data\\", "ngram 1=4", "ngram 2=2", "", "\\1-grams:", "-1.0\t<unk>\t0", "-99\t<s>\t-0.3",
                        "-1.0\t</s>\t0", "-0.5\tpolice\t-0.3", "", "\\2-grams:", "-0.2\t<s> police",
                        "-0.2\tpolice </s>", "", "\\end\\", ""])


def _compile(task: str) -> float:
    """One task of `naus compile` (a decoding method, or the hill climb) run once, in a process of its own."""
    tick = time.perf_counter()
    if task == "the hill climb":
        import tempfile
        from pathlib import Path

        from naus.plumbing.files import sha256sum
        from naus.settings import SearchConfig
        from naus.teacher.lm import LanguageModel, checksum_path
        from naus.teacher.search import HillClimber

        with tempfile.TemporaryDirectory() as tmp:
            arpa = Path(tmp, "lm.arpa")
            arpa.write_text(COMPILE_LM)
            checksum_path(arpa).write_text(sha256sum(arpa) + "\n")
            words = COMPILE_NEWS[0].lower().split()  # C(15, 4) subsets: more than the budget, so the climb runs
            HillClimber(LanguageModel(arpa), SearchConfig(length=4, rerank_k=0)).search(0, words)
    else:
        from naus.decoding.summarizer import Summarizer
        from naus.methods import CHARS, METHODS

        budget = {"chars": 50} if METHODS[task].budget == CHARS else {"length": 6}
        Summarizer.from_pretrained().summarize(COMPILE_NEWS, method=task, **budget)
    return time.perf_counter() - tick


def decode(args: argparse.Namespace) -> None:
    import json

    from naus.decoding.summarizer import CHUNK, Summarizer
    from naus.device import freed_memory_returned
    from naus.plumbing.files import batched, check_file, iter_lines
    from naus.plumbing.outputs import standard_output, write_json
    from naus.plumbing.provenance import file_record

    if args.provenance and (args.input == "-" or args.out == "-"):
        raise NausError("--provenance records the input's and the summaries' sha256: give --input FILE and --out FILE")
    freed_memory_returned()
    recorded = args.input != "-" and (args.provenance or args.timing)
    checkpoint = Summarizer.pretrained_path(args.checkpoint)
    made_from = {"input": file_record(args.input), "checkpoint": file_record(checkpoint)} if recorded else {}
    tick = time.perf_counter()
    summarizer = Summarizer.from_checkpoint(checkpoint, args.device, args.minilm_onnx, args.encoder)
    loaded = time.perf_counter() - tick
    if args.input == "-" and sys.stdin is None:
        raise NausError("standard input is closed: give the sentences (--input FILE, or a pipe)")
    options = dict(length=args.length, method=args.method, ratio=args.ratio, min_length=args.min_length,
                   beam_size=args.beam_size, raw=args.raw, chars=args.chars, restore=not args.keep_unk,
                   max_memory_mb=args.max_memory_mb, phrases=args.phrases, last_word=args.last_word,
                   adjacency=args.adjacency,
                   headlines=args.raw and not getattr(args, "evaluator_form", False))
    if args.states:
        from naus.student.frozen import States

        options["states"] = States.load(args.states)
    # a file or standard input read and answered a chunk at a time (a pipe that never ends costs one chunk's memory);
    # with its states (held whole already), at once
    lines = iter_lines(sys.stdin.buffer if args.input == "-" else check_file(args.input),
                       max_line_bytes=MAX_LINE_BYTES)
    chunks = [list(lines)] if args.states else batched(lines, CHUNK)
    streamed = standard_output() if args.out == "-" and not args.provenance else None
    written, timed, sentences, seconds, short = [], [], 0, 0.0, 0
    for chunk in chunks:
        log.info("decoding %s", count(len(chunk), "sentence"))
        results = summarizer.summarize(chunk, batch_size=args.batch_size, **options)
        sentences, seconds = sentences + len(chunk), seconds + summarizer.last_timing["seconds"]
        short += sum(1 for r in results if r.length < args.length) if args.length and args.chars is None else 0
        summaries = [json.dumps({"summary": r.summary, "length": r.length, "log_prob": round(r.log_prob, 4)})
                     if args.jsonl else r.summary for r in results]
        if streamed is not None:
            streamed.write("".join(line + "\n" for line in summaries))
            streamed.flush()
        else:
            written += summaries
        if args.timing:
            timed += chunk
    log.info("model loaded in %.2f s; %s decoded by %s in %.3f s (%.1f ms each, batch %d, %s)", loaded,
             count(sentences, "sentence"), summarizer.last_timing.get("method", "-"), seconds,
             1000 * seconds / max(sentences, 1), args.batch_size, summarizer.device)
    if short:  # a source of fewer than L words is summarised by all of them (or a student's fewer)
        log.warning("%d of %d summaries have fewer than %d words (the source has fewer, or the student wrote fewer)",
                    short, sentences, args.length)
    if streamed is None:
        _write_summaries(args.out, written, args.provenance, made_from)
    if args.timing:
        write_json(args.timing, {**_timing(summarizer, timed, options, args), **made_from})


MAX_LINE_BYTES = 4 << 20  # one sentence a line: a longer line is no sentence (`< /dev/zero` is refused here)


def _timing(summarizer, sentences: list[str], options: dict, args: argparse.Namespace) -> dict:
    from naus.decoding.timing import time_decoding

    return time_decoding(summarizer, sentences, options, args.batch_size, args.timing_passes, args.batch1_samples)


def _settings(stem: str, method: str, target: str, beam: str) -> dict:
    """A decoding's settings as `--decoding` gives them, as `Summarizer.summarize` takes them; refused unless its stem
    is the path a decoding of those settings is written to (`naus.pipeline.layout.decoded`)."""
    from naus.methods import METHODS
    from naus.settings import DecodeConfig

    if method not in METHODS:
        raise NausError(f"--decoding {stem}: {method!r} is not a method ({', '.join(METHODS)})")
    try:
        settings = {"method": method, "beam_size": int(beam), **layout.target_settings(target)}
    except ValueError:
        raise NausError(f"--decoding {stem}: {target!r} is not a target (10 words, r0.5 of the source, c75 "
                        f"characters) or {beam!r} not a beam") from None
    try:  # its ranges, checked before any student is loaded
        DecodeConfig(**{"length": None, **{k: v for k, v in settings.items() if k != "method"}})
    except NausError as err:
        raise NausError(f"--decoding {stem}: {err}") from None
    written = {os.path.basename(layout.decoded("", "", method, target, b)) for b in (None, beam)}
    if os.path.basename(stem) not in written:
        raise NausError(f"--decoding {stem}: a {method} decoding for {target} at beam {beam} is not written there "
                        "(naus.pipeline.layout.decoded)")
    return settings


def _decodings(args: argparse.Namespace, plan: list[tuple[str, dict, str, str, str | None]]):
    """Each decoding of `plan`, (stem, settings, student, sentences file, states file or None): (stem, its student, the
    sentences, the decoding options, what made it), each student loaded once and each file read and hashed once."""
    from naus.architectures import ARCHITECTURES
    from naus.decoding.summarizer import Summarizer
    from naus.plumbing.files import read_lines
    from naus.plumbing.provenance import file_record
    from naus.student.frozen import States

    records, loaded = {}, {}
    for checkpoint in dict.fromkeys(checkpoint for _, _, checkpoint, *_ in plan):
        records[checkpoint] = file_record(checkpoint)
        summarizer = Summarizer.from_checkpoint(checkpoint, args.device)
        frozen = ARCHITECTURES[summarizer.model.config.arch].frozen
        if getattr(args, "encoder", None) and summarizer.model.config.states_encoder:  # `time`: for those that need it
            summarizer.use_encoder(args.encoder)
        for stem, settings, source, states in ((s, o, src, st) for s, o, c, src, st in plan if c == checkpoint):
            if source not in loaded:
                loaded[source], records[source] = read_lines(source), file_record(source)
            options = dict(min_length=args.min_length, phrases=args.phrases, last_word=args.last_word,
                           adjacency=args.adjacency, raw=False, restore=True, **settings)
            if frozen:
                if not states:
                    raise NausError(f"{checkpoint}: a student on frozen states decodes with their file: give its "
                                    "states")
                if states not in loaded:
                    loaded[states], records[states] = States.load(states), file_record(states)
                options["states"] = loaded[states]
            made_from = {"input": records[source], "checkpoint": records[checkpoint]}
            yield stem, summarizer, loaded[source], options, made_from


def time_decodings(args: argparse.Namespace) -> None:
    """The times the tables show, every decoding timed in this one process: started once per decoding, Python,
    PyTorch and numba took longer to load than a demo decoding takes."""
    from naus.plumbing.outputs import refuse_overwriting, write_json

    wrong = next((given for given in args.decoding if len(given) not in (7, 8)), None)
    if wrong:
        raise NausError(f"--decoding {' '.join(wrong)}: give STEM METHOD TARGET BEAM CHECKPOINT SOURCE OUT and, for a "
                        "student on frozen states, STATES")
    refuse_overwriting([(f"--decoding {k}'s {part}", path) for k, given in enumerate(args.decoding, 1)
                        for part, path in zip(("CHECKPOINT", "SOURCE", "OUT", "STATES"), given[4:])],
                       {f"--decoding {k}'s OUT" for k in range(1, len(args.decoding) + 1)})
    outs = {given[0]: given[6] for given in args.decoding}
    plan = [(stem, _settings(stem, method, target, beam), checkpoint, source, rest[0] if rest else None)
            for stem, method, target, beam, checkpoint, source, _, *rest in args.decoding]
    for stem, summarizer, sentences, options, made_from in _decodings(args, plan):
        timing = _timing(summarizer, sentences, options, args)
        write_json(outs[stem], {**timing, **made_from})
        log.info("%s: %.2f ms a sentence (batch %d)", stem, 1000 * timing["seconds_per_sample"], args.batch_size)


def decode_all(args: argparse.Namespace) -> None:
    """Every decoding given, one after another in this one process, into one file (`naus.plumbing.provenance.BUNDLE`):
    the pipeline's decodings of a student, which `naus unbundle` writes out one by one."""
    from naus.plumbing.outputs import write_json

    plan = [(stem, _settings(stem, *settings), args.checkpoint, args.source, args.states)
            for stem, *settings in args.decoding]
    decodings = {}
    for stem, summarizer, sentences, options, made_from in _decodings(args, plan):
        summaries = [r.summary for r in summarizer.summarize(sentences, batch_size=args.batch_size, **options)]
        decodings[stem] = {**made_from, "summaries": summaries}
        log.info("%s: %s in %.2f s", stem, count(len(summaries), "sentence"), summarizer.last_timing["seconds"])
    write_json(args.out, {"decodings": decodings})


def unbundle(args: argparse.Namespace) -> None:
    """One decoding of a `naus decode-all` file, written as `naus decode --provenance` writes it."""
    from naus.plumbing.files import read_json
    from naus.plumbing.provenance import BUNDLE

    decodings = read_json(args.bundle, ("decodings",), shape=BUNDLE)["decodings"]
    if args.stem not in decodings:
        raise NausError(f"{args.bundle}: holds no decoding {args.stem} (it holds {', '.join(decodings) or 'none'})")
    made = decodings[args.stem]
    broken = next((i for i, line in enumerate(made["summaries"]) if line and line.splitlines() != [line]), None)
    if broken is not None:  # written out, it would be more lines than sources, every later summary one line off
        raise NausError(f"{args.bundle}: summary {broken + 1} of {args.stem} holds a line break: not a decoding")
    _write_summaries(args.out, made["summaries"], args.provenance, {k: made[k] for k in ("input", "checkpoint")})


def _write_summaries(path: str, lines: list[str], provenance: str | None, made_from: dict) -> None:
    """The summaries, and beside them what made them (`provenance`), written while the summaries are still a
    temporary file: a failure leaves the previous summaries and their provenance. One writer at a time: a second
    is refused, so summaries never sit beside another writer's provenance."""
    import hashlib

    from naus.plumbing.outputs import OutputLock, atomic_open, write_json

    content = "".join(line + "\n" for line in lines)
    with contextlib.ExitStack() as stack:
        if path != "-" and (not os.path.exists(path) or os.path.isfile(path)):  # a file (not /dev/stdout, a pipe)
            stack.enter_context(OutputLock(path))
        out = stack.enter_context(atomic_open(path))
        out.write(content)
        if provenance:
            summaries = {"path": path, "sha256": hashlib.sha256(content.encode()).hexdigest()}
            write_json(provenance, {**made_from, "summaries": summaries, "lines": len(lines)})
