"""The `naus` command line: one subcommand per pipeline step (`naus.commands`, a module per stage); Snakemake rules
call these."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import platform
import re
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from naus import NausError, __version__
from naus.commands import STAGES, global_options
from naus.plumbing.outputs import refuse_overwriting

log = logging.getLogger("naus.cli")


def build_parser() -> argparse.ArgumentParser:
    """The command line: global options, then one subcommand per step, in the pipeline's order."""
    parser = argparse.ArgumentParser(prog="naus", description=__doc__, parents=[global_options(None)])
    parser.add_argument("--version", action="version", version=f"naus {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, help="the steps, in the pipeline's order")
    for stage in STAGES:
        importlib.import_module(f"naus.commands.{stage}").register(sub)
    return parser


def _check_paths(args: argparse.Namespace) -> None:
    """Before anything is written: no output may be one of the command's inputs or another of its outputs, nor lie
    inside a folder an output option writes into, among the names (or paths, `.raw/naus`) it writes there
    (`naus.commands.output_dir`)."""
    def paths(value) -> list[str]:
        values = value if isinstance(value, (list, tuple)) else [value]
        return [str(v) for v in values if isinstance(v, (str, Path)) and str(v) not in ("", "-")]

    named = [(dest, path) for dest in args.files for path in paths(getattr(args, dest))]
    refuse_overwriting([(_option(dest), path) for dest, path in named], {_option(dest) for dest in args.outputs})
    for dest, writes in args.outputs.items():
        writes = writes() if callable(writes) else writes
        for folder in paths(getattr(args, dest)) if writes != () else []:
            for other, other_path in named:
                inside = os.path.relpath(os.path.realpath(other_path), os.path.realpath(folder)).split(os.sep)
                names = (inside[0],) if writes is None else writes
                written = next((w for w in names if inside[: len(w.split("/"))] == w.split("/")), None)
                if other != dest and inside[0] != ".." and written:
                    raise NausError(f"{other_path}: given as {_option(other)}, inside {folder}, which "
                                    f"{_option(dest)} writes ({written}); an output may not overwrite an input or "
                                    "another output")


def _spool_pipes(args: argparse.Namespace, cleanup: contextlib.ExitStack) -> None:
    """Each input given as a pipe (`--train-source <(...)`) copied once into a temporary folder (removed by `cleanup`)
    and read from there: a command may read an input twice (a vocabulary, then the pairs; a checksum), which a pipe
    cannot give it."""
    spool = None
    for dest in (dest for dest in args.files if dest not in args.outputs):
        value = getattr(args, dest)
        values = value if isinstance(value, list) else [value]
        for k, path in enumerate(values):
            if isinstance(path, (str, Path)) and str(path) not in ("", "-") and Path(path).is_fifo():
                spool = spool or Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="naus-pipes-")))
                copy = spool / f"{dest}-{k}"
                with open(path, "rb") as pipe, open(copy, "wb") as out:
                    shutil.copyfileobj(pipe, out)
                log.info("%s: a pipe, read once into %s", path, copy)
                values[k] = str(copy)
        if values is not value:
            setattr(args, dest, values[0])


def _option(dest: str) -> str:
    return dest if dest == "parts" else "--" + dest.replace("_", "-")


# The settings that pin torch's, oneDNN's and MKL's kernels to the AVX2 ones (`portable_cpu_kernels`).
PORTABLE_KERNELS = (("ATEN_CPU_CAPABILITY", "avx2"), ("ONEDNN_MAX_CPU_ISA", "AVX2"), ("MKL_CBWR", "AVX2"))


def portable_cpu_kernels() -> None:
    """The CPU kernels an AVX2 machine runs, on any x86-64 machine, so that a student has the same bytes with or
    without AVX-512: torch's, oneDNN's and MKL's AVX-512 code sums in another order (MKL, torch's matrix products,
    heeds only its own MKL_CBWR, and only on Intel CPUs: elsewhere it runs its AUTO branch); every x86-64 CPU of the
    last decade has AVX2. `benchmarks/portable_fingerprints.py` checks the bytes: equal on AMD CPUs with and without
    AVX-512, not between them and an Intel Xeon. Set before torch loads; a user's settings win."""
    if platform.machine().lower() in ("x86_64", "amd64"):
        for variable, value in PORTABLE_KERNELS:
            os.environ.setdefault(variable, value)


def limit_threads(threads: int) -> None:
    """Every native thread pool of a process started after this to `threads`: NUMBA_NUM_THREADS because numba
    starts that many OpenMP workers and idle ones spin beside a one-thread job; OPENBLAS_NUM_THREADS because
    numpy's small products run slower on threads a second job on the machine needs."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(threads)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' bars (loading MiniLM): naus says its own
    portable_cpu_kernels()
    if args.threads:
        limit_threads(args.threads)
    # naus's own progress at INFO; other libraries' warnings only (onnxruntime's quantizer logs dozens of lines)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("naus").setLevel(logging.WARNING if args.quiet else logging.INFO)
    _RECEIVED.clear()
    sys.unraisablehook = _unraisable
    for stop in (signal.SIGINT, signal.SIGTERM):  # a scheduler's stop takes the same path as Ctrl-C
        signal.signal(stop, _interrupt)
    try:
        _check_paths(args)
        with contextlib.ExitStack() as cleanup:
            _spool_pipes(args, cleanup)
            args.func(args)
    except NausError as err:
        message = str(err)
    except UnicodeEncodeError as err:  # a standard output whose encoding (PYTHONIOENCODING=ascii) lacks a character
        stream = getattr(sys.stdout, "encoding", None) or "its encoding"
        message = (f"standard output cannot write {err.object[err.start:err.end]!a} ({stream}): set "
                   "PYTHONIOENCODING=utf-8 or write to a file (--out FILE)")
    except BrokenPipeError:  # the reader closed the pipe (`naus ... | head -1`): its interest ended, as cat's does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to flush at exit
        return 128 + signal.SIGPIPE
    except OSError as err:  # a file the checks above could not foresee (permissions, a full disk, ...)
        message = f"{err.filename}: {err.strerror}" if err.filename else str(err)
    except (MemoryError, RuntimeError) as err:  # PyTorch's allocators raise RuntimeError
        if isinstance(err, RuntimeError) and not re.search(r"can't allocate memory|out of memory", str(err)):
            raise
        said = str(err).strip().splitlines()
        message = (f"out of memory{f' ({said[0][-120:]})' if said else ''}: a smaller --batch-size (or --max-tokens, "
                   "for training) needs less")
    except KeyboardInterrupt as stop:  # compiled kernels hold signals back (naus.plumbing.signals): a safe point
        return _stopped(stop.args[0] if stop.args else "SIGINT", args.kept, argv)
    else:  # a stop raised where Python swallows exceptions (a weakref callback, a __del__) still ends the command
        return _stopped(_RECEIVED[-1], args.kept, argv) if _RECEIVED else 0
    print(f"naus: error: {message}", file=sys.stderr)
    return 2


_RECEIVED: list[str] = []  # the stops this process was sent: one raised inside a callback is otherwise lost


def _interrupt(signum: int, frame) -> None:
    _RECEIVED.append(signal.Signals(signum).name)
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _unraisable(unraisable) -> None:
    """A stop raised where Python cannot raise it (a __del__, a weakref callback) is said once, by `_stopped`, not
    as "Exception ignored in ..."; anything else as Python says it."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _stopped(name: str, kept: str, argv: list[str] | None) -> int:
    """The exit status of a stopped command (128 + the signal's number), its outputs closed before; `kept`: what
    the command says its stop left."""
    for stopping in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C would break the exit handlers (torch's)
        signal.signal(stopping, signal.SIG_IGN)
    print(f"naus: error: stopped by {name}; {kept}", file=sys.stderr)
    if argv is None:  # the process's own command line: end now, every output closed above; the interpreter's
        logging.shutdown()  # teardown (torch's, numba's) would cost seconds after a stop
        for stream in (sys.stdout, sys.stderr):  # None where closed (`>&-`)
            if stream is not None:
                stream.flush()
        os._exit(128 + int(getattr(signal, name)))
    return 128 + int(getattr(signal, name))


if __name__ == "__main__":
    sys.exit(main())
