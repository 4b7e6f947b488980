"""The teacher: searching (a shard of) a file, fitting the learned estimate, merging the shards."""

from __future__ import annotations

import argparse
import dataclasses

from naus.commands import DEVICE, LM, ONNX, OUT, SENTENCES, STATIC, command, done, non_negative, output_file, \
    positive, ranged, settings_from, target


ENCODER = ("--encoder", {"help": "re-rank by a masked-LM encoder's similarity instead of MiniLM's (`naus "
                                 "pretrain-mlm`: learned without sentence pairs)"})


def shard(value: str) -> tuple[int, int]:
    try:
        index, shards = (int(x) for x in value.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected i/n, got {value!r}") from None
    if not 0 <= index < shards:
        raise argparse.ArgumentTypeError(f"expected 0 <= i < n, got {value!r}")
    return index, shards


def register(sub) -> None:
    from naus.settings import FIT_SENTENCES, FIT_STATES, SearchConfig

    command(sub, "search", search, "the search teacher over (a shard of) a file of sentences",
            ("--input", SENTENCES), LM, target(True, None),
            ("--min-length", {"type": positive, "default": SearchConfig.min_length,
                              "help": "the shortest summary a --ratio gives (default: %(default)s)"}),
            STATIC, ONNX, ENCODER,
            ("--estimate", {"help": "a learned estimate of this length (`naus fit-estimate`), fitted once for every "
                                    f"shard (without it, one is fitted on the input's first {FIT_SENTENCES} "
                                    "sentences)"}),
            ("--shard", {"type": shard, "default": (0, 1), "help": "i/n: the i-th of n contiguous blocks"}),
            ("--limit", {"type": non_negative, "default": 0, "help": "only the first N sentences (0: all)"}),
            ("--batch", {"type": positive, "default": 64,
                         "help": "sentences per flush of the output and progress line"}),
            DEVICE, ("--out", OUT),
            ("--timing", {"type": output_file, "help": "write the sentences searched by this run and their seconds "
                                                       "to this JSON file"}),
            ("--restart", {"action": "store_true", "help": "discard a partial output made with other parameters "
                                                           "instead of refusing"}),
            settings=(SearchConfig,), kept="the records searched so far are kept: the same command goes on from them")
    command(sub, "fit-estimate", fit_estimate, "fit the learned estimate of one length on a file's first "
            "sentences (their states encoded on their own; no titles)", ("--input", SENTENCES), LM,
            ("--length", {"type": positive, "required": True, "help": "summary length L in words"}), ONNX, ENCODER,
            STATIC,
            ("--sentences", {"type": positive, "default": FIT_SENTENCES, "help": "fit on the first N sentences"}),
            ("--states", {"type": ranged(int, minimum=2), "default": FIT_STATES,
                          "help": "states per sentence encoded on their own: half the best by the in-context "
                                  "estimate, half drawn from the rest"}),
            DEVICE, ("--out", OUT), settings=(SearchConfig,))
    command(sub, "merge", merge, "merge shard outputs (JSON lines) in index order",
            ("parts", {"nargs": "+", "help": "the shards' JSON lines files"}),
            ("--field", {"default": "summary", "help": "the field --text writes (default: %(default)s)"}),
            ("--out", {**OUT, "help": "merged JSON lines"}), ("--text", {**OUT, "help": "one summary per line"}))


def search(args: argparse.Namespace) -> None:
    from naus.plumbing.outputs import write_json
    from naus.settings import SearchConfig
    from naus.teacher.build import search_file

    config = settings_from(args, SearchConfig, length=None if args.ratio else args.length, ratio=args.ratio,
                           min_length=args.min_length)
    searched, seconds = search_file(args.input, args.lm, args.out, config, shard=args.shard, limit=args.limit,
                                    batch=args.batch, onnx=args.onnx, estimate=args.estimate, static=args.static,
                                    device=args.device, encoder=args.encoder, restart=args.restart)
    if args.timing:  # its own file: the records stay byte-identical from run to run
        write_json(args.timing, {"sentences": searched, "seconds": round(seconds, 3)})


def fit_estimate(args: argparse.Namespace) -> None:
    from naus.plumbing.files import read_lines
    from naus.settings import IN_CONTEXT, SearchConfig, check_learned_estimate
    from naus.teacher.build import teacher_of
    from naus.teacher.search import fit_estimate as fit

    config = settings_from(args, SearchConfig, length=args.length)
    check_learned_estimate(config.rerank_k)
    sources = read_lines(args.input)[: args.sentences]
    teacher = teacher_of(args.lm, dataclasses.replace(config, estimator=IN_CONTEXT),  # it corrects that estimate
                         onnx=args.onnx, static=args.static, device=args.device, encoder=args.encoder)
    estimate, states = fit(teacher, sources, args.states)
    estimate.save(args.out)
    done(args.out, f"learned estimate for L = {args.length} from {states} states of {len(sources)} sentences "
                   f"-> {args.out}")


def merge(args: argparse.Namespace) -> None:
    from naus.teacher.shards import merge_shards

    records = merge_shards(args.parts, args.out, args.text, args.field)
    done(args.out, f"merged {len(args.parts)} shards, {records} records -> {args.out}")
