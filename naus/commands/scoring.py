"""Scores, baselines, peers' outputs, the report, and the small file tools the rules use."""

from __future__ import annotations

import argparse
from pathlib import Path

from naus import NausError
from naus.pipeline import layout
from naus.commands import (BUILD, IN, OUT, RESULTS, SENTENCES, command, done, non_negative, output_dir, output_file,
                           positive)


def json_object(value: str) -> dict:
    from naus.plumbing.files import parse_json

    try:
        parsed = parse_json(value.encode("utf-8", "surrogateescape"), "the argument")
    except NausError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return parsed


CONFIG = ("--config", {"type": json_object, **IN, "help": "the profile's configuration with its defaults filled in, "
                                                          "as JSON (the workflow passes it)"})


def register(sub) -> None:
    command(sub, "evaluate", evaluate, "ROUGE of a hypothesis file against one or more reference files",
            ("--hyp", {**IN, "help": "the summaries, one per line"}),
            ("--ref", {"nargs": "+", **IN, "help": "the reference files, each line for line with --hyp"}),
            ("--metric", {"choices": ["f1", "recall"], "default": "f1",
                          "help": "f1 (Gigaword) or recall (DUC2004) (default: %(default)s)"}),
            ("--max-bytes", {"type": positive, "help": "cut each hypothesis to this many UTF-8 bytes (DUC: 75)"}),
            ("--backend", {"choices": ["python", "perl"], "default": "python",
                           "help": "rouge-score (default) or the perl ROUGE-1.5.5 the paper used"}),
            ("--lines", {"help": "score hypothesis line k against reference line index[k] of this file (one 0-based "
                                 "line per hypothesis: an output released on part of a collection, SEQ³'s)"}),
            ("--json", {"action": "store_true", "help": "print the scores as JSON"}),
            ("--out", {"type": output_file, "help": "also write the scores to this JSON file"}))
    command(sub, "reorder", reorder, "put line k of a file at line index[k] (published outputs)",
            ("--input", {**IN, "help": "the released output, in its authors' order"}),
            ("--index", {**IN, "help": "one 0-based target line per input line, or a JSON list after # comments"}),
            ("--out", OUT))
    command(sub, "peer", peer, "check a peer's released output (naus.data.peers: its sha256, a line per "
            "source) and copy it for rescoring",
            ("--peer", {**IN, "help": "a key of naus.data.peers.PEERS (msrp)"}),
            ("--collection", {"choices": ["test", "duc"], **IN, "help": "test (Gigaword) or duc (DUC2004)"}),
            ("--length", {"type": positive, **IN, "help": "the summary length its release is filed under"}),
            ("--input", {**IN, "help": "the released output"}),
            ("--source", {**IN, "help": "the collection's inputs, a line each"}),
            ("--index", {"help": "the file putting the output's lines in the collection's order, where the peer "
                                 "released them in its own"}), ("--out", OUT))
    command(sub, "digits", digits, "mask digits as # (Gigaword convention), or restore them in summaries",
            ("--input", {**IN, "help": "one sentence or summary per line"}),
            ("--restore-from", {"help": "the unmasked sources, line by line: restore instead of mask"}),
            ("--out", OUT))
    command(sub, "report", report, "tables, figures and README of a profile's results", CONFIG,
            ("--metrics", {**IN, "help": f"{RESULTS}/{layout.METRICS}"}), ("--build", {**IN, "help": BUILD}),
            ("--released", {"nargs": "*", "default": [], "help": "the released outputs the evaluation rescored (the "
                                                                 "authors' and the peers'): their sha256 among the "
                                                                 "fingerprints' inputs"}),
            ("--out", {"type": output_dir(layout.REPORT_NAMES), "required": True, "help": RESULTS}))
    command(sub, "mark-stale", mark_stale, "compare a profile's results with its configuration again and rewrite "
            "their captions' STALE sentence (results that cannot be made again here)", CONFIG,
            ("--results", {**IN, "help": RESULTS}))
    command(sub, "head", head, "the first N lines of a file (0: all), written atomically",
            ("--input", {**IN, "help": "the file to read"}),
            ("--lines", {"type": non_negative, **IN, "help": "N lines (0: all)"}), ("--out", OUT))
    command(sub, "lead", lead, "the Lead-L baseline: the first L words of each line", ("--input", SENTENCES),
            ("--length", {"type": non_negative, **IN, "help": "L words (0: the whole line)"}), ("--out", OUT))


def evaluate(args: argparse.Namespace) -> None:
    import json

    from naus.evaluation.evaluate import evaluate_files
    from naus.plumbing.outputs import write_json

    scores = evaluate_files(args.hyp, args.ref, args.metric, args.max_bytes, args.backend, args.lines)
    if args.out:
        write_json(args.out, scores)
    print(json.dumps(scores) if args.json else " ".join(f"{k}={v}" for k, v in scores.items()))


def reorder(args: argparse.Namespace) -> None:
    from naus.evaluation.released import reordered
    from naus.plumbing.files import read_lines
    from naus.plumbing.outputs import write_lines

    write_lines(args.out, reordered(read_lines(args.input), args.index))


def peer(args: argparse.Namespace) -> None:
    from naus.data.peers import check_output
    from naus.plumbing.outputs import write_lines

    write_lines(args.out, check_output(args.peer, args.collection, args.length, args.input, args.source, args.index))


def digits(args: argparse.Namespace) -> None:
    from naus.plumbing.files import read_lines, read_parallel
    from naus.plumbing.outputs import write_lines
    from naus.text import mask_digits, restore_digits

    if args.restore_from:
        summaries, sources = read_parallel(args.input, args.restore_from)
        write_lines(args.out, [restore_digits(s, src) for s, src in zip(summaries, sources)])
    else:
        write_lines(args.out, [mask_digits(line) for line in read_lines(args.input)])


def report(args: argparse.Namespace) -> None:
    from naus.report import build_report
    from naus.pipeline.tables import spec

    try:
        declared = spec(args.config)
    except NausError as err:
        raise NausError(f"--config: {err}") from None
    build_report(Path(args.metrics), Path(args.build), Path(args.out), declared, [Path(p) for p in args.released])


def mark_stale(args: argparse.Namespace) -> None:
    from naus.pipeline.fingerprints import refresh
    from naus.pipeline.schema import resolved

    marks = refresh(Path(args.results), resolved(args.config, "--config"))
    print(f"{args.results}: " + ("; ".join(marks) if marks else "made with this configuration's settings"))


def head(args: argparse.Namespace) -> None:
    from naus.plumbing.files import read_lines
    from naus.plumbing.outputs import write_lines

    lines = read_lines(args.input)
    written = write_lines(args.out, lines[: args.lines] if args.lines else lines)
    done(args.out, f"{written} of {len(lines)} lines -> {args.out}")


def lead(args: argparse.Namespace) -> None:
    from naus.evaluation.evaluate import lead as first_words
    from naus.plumbing.files import read_lines
    from naus.plumbing.outputs import write_lines

    write_lines(args.out, first_words(read_lines(args.input), args.length))
