"""The `naus` subcommands, one module per stage (`STAGES`, in the pipeline's order): each module's `register(sub)`
adds its commands and their options, and each command's handler is a call into the library. The options shared by
several commands, and the helpers that build them from the settings dataclasses (`naus.settings`), are here. Heavy
modules are imported inside each handler, so `naus --help` and the light steps stay fast."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from pathlib import Path

from naus.pipeline import layout


def positive(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return number


def non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be zero or more, got {value}")
    return number


def output_file(value: str) -> str:
    """A file to write: refused at once when it names a directory, before any work is done."""
    if value != "-" and Path(value).is_dir():
        raise argparse.ArgumentTypeError(f"{value}: is a directory, expected a file name")
    return value


def output_dir(writes):
    """An argparse type: a folder a command writes into, refused at once when it names a file. `writes`: the names
    at its top the command writes (a tuple, or a function giving them; None: any name), so that an input or another
    output inside one of them is refused (naus.cli) while the folder's other files may be read."""
    def folder(value: str) -> str:
        if Path(value).exists() and not Path(value).is_dir():
            raise argparse.ArgumentTypeError(f"{value}: is a file, expected a directory")
        return value

    folder.writes = writes
    return folder


def ranged(kind: type, **bounds):
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


IN = {"required": True}  # an input file
OUT = {"type": output_file, "required": True, "help": "the file to write (- writes standard output)"}
SENTENCES = {**IN, "help": "one tokenised sentence per line"}
LM = ("--lm", {**IN, "help": "the KenLM binary (`naus train-lm`)"})
BUILD, RESULTS = (layout.profile_dir(kind, layout.ANY_PROFILE) for kind in ("build", "results"))  # as help shows them
DEVICE = ("--device", {"help": "cpu, cuda, cuda:1, ... (default: cuda when available)"})
ONNX = ("--onnx", {"help": "run MiniLM in ONNX Runtime from this file (`naus export-onnx`); default: PyTorch"})
STATIC = ("--static", {"help": "static embedding table (needed when --gamma > 0)"})
ENCODER = ("--encoder", {"help": "the distilled encoder (`naus distil`) a student on frozen states learned on: "
                                 "new text's states computed by it (default: MiniLM)"})


def global_options(default) -> argparse.ArgumentParser:
    """-q and --threads, before a subcommand or after it (`default`: SUPPRESS after it, so that one given
    before stays when none is given after)."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("-q", "--quiet", action="store_true", default=False if default is None else default,
                         help="only warnings and errors")
    options.add_argument("--threads", type=positive, default=default,
                         help="CPU threads for PyTorch and BLAS (default: all)")
    return options


def add_settings(parser: argparse.ArgumentParser, settings: type, only: tuple[str, ...] = ()) -> None:
    """One option per field of a settings dataclass (`naus.settings.setting`), or per field in `only`:
    name, type, default, range and help come from the field, so a new hyperparameter is one line there."""
    from naus.settings import BOUNDS

    hints = typing.get_type_hints(settings)
    for spec in dataclasses.fields(settings):
        if "help" not in spec.metadata or (only and spec.name not in only):
            continue
        kind = next(t for t in typing.get_args(hints[spec.name]) or (hints[spec.name],) if t is not type(None))
        meta = spec.metadata
        parser.add_argument(f"--{spec.name.replace('_', '-')}",
                            type=ranged(kind, **{key: meta[key] for key in BOUNDS}), default=spec.default,
                            choices=meta["choices"],
                            help=meta["help"] if spec.default is None else f"{meta['help']} (default: %(default)s)")


def target(required: bool, default: int | None, chars: bool = False) -> tuple:
    """--length or --ratio, one of them: the summary length the same way for `search` and `decode`
    (and for decoding, --chars: a budget in characters)."""
    from naus.methods import CHAR_CONTROL
    from naus.settings import CHARS, LENGTH, RATIO

    options = [("--length", {"type": ranged(int, **LENGTH), "default": default, "help": "summary length L in words"}),
               ("--ratio", {"type": ranged(float, **RATIO),
                            "help": "L = floor(ratio * source length), 0 < ratio <= 1"})]
    if chars:
        options.append(("--chars", {"type": ranged(int, **CHARS),
                                    "help": f"at most N characters (UTF-8 bytes), whole words: the "
                                            f"{CHAR_CONTROL.name} method, its default"}))
    return ("one of", required, options)


# What a stopped command (Ctrl-C, SIGTERM) says it left: every output is written whole or not at all, unless the
# command keeps its finished work for a resume (`kept`).
NOTHING_KEPT = "no output was written (each is written whole or not at all): run the command again"


def command(sub, name: str, func, help: str, *options, settings: tuple = (), kept: str = NOTHING_KEPT,
            **defaults) -> argparse.ArgumentParser:
    """A subcommand from a table: (flags, argparse keywords) per option, ("one of", required, options)
    for exclusive ones, and the options generated from `settings` dataclasses (a dataclass, or a dataclass and
    the names of the fields wanted); `kept`: what a stop leaves (naus.cli says it)."""
    parser = sub.add_parser(name, help=help, description=help, parents=[global_options(argparse.SUPPRESS)])
    for option in options:
        group = parser
        if option[0] == "one of":
            group = parser.add_mutually_exclusive_group(required=option[1])
        for flags, keywords in option[2] if option[0] == "one of" else [option]:
            group.add_argument(*(flags if isinstance(flags, tuple) else (flags,)), **keywords)
    for entry in settings:
        add_settings(parser, *(entry if isinstance(entry, tuple) else (entry,)))
    outputs = {a.dest: getattr(a.type, "writes", ()) for a in parser._actions
               if a.type is output_file or hasattr(a.type, "writes")}  # a file's: () (itself)
    files = [a.dest for a in parser._actions if isinstance(a, argparse._StoreAction) and a.choices is None
             and (a.type is None or a.dest in outputs)]  # the options that may name files
    parser.set_defaults(func=func, kept=kept, outputs=outputs, files=files, **defaults)
    return parser


def settings_from(args: argparse.Namespace, settings: type, **given):
    """The settings dataclass from the parsed options `add_settings` made (plus `given` fields)."""
    names = {spec.name for spec in dataclasses.fields(settings)} - set(given)
    return settings(**given, **{name: getattr(args, name) for name in names if hasattr(args, name)})


def done(out: str, message: str) -> None:
    """What a command made, on standard output unless its output went there (`--out -`)."""
    print(message, file=sys.stderr if str(out) == "-" else sys.stdout)


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


STAGES = ("corpus", "search", "student", "decode", "scoring")  # the modules, in the pipeline's order
