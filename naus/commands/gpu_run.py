"""A GPU run's files: what it reads and brings back, and its results taken in (scripts/gpu-node.sh)."""

from __future__ import annotations

import argparse

from naus.commands import BUILD, IN, command


def register(sub) -> None:
    command(sub, "import-run", import_run, "check a GPU run's archives whole, then bring their files in (histories, "
            "decodings, training times, logs; nothing else is moved or deleted; run from the project's root)",
            ("--profile", {**IN, "help": f"the profile the run made (its files are under {BUILD}/)"}),
            ("archives", {"nargs": "+", "help": "gpu-run.tar.gz files, in order: a later one's files replace an "
                                                "preceding one's"}))
    command(sub, "run-paths", run_paths, "the files a GPU run reads or brings back, as shell globs from the "
            "project's root (naus.layout's names, for scripts/gpu-node.sh)",
            ("kind", {"choices": ["build", "inputs", "words", "outputs"], "help": "which files: {%(choices)s}"}),
            ("--profile", {**IN, "help": "the profile's name"}))


def import_run(args: argparse.Namespace) -> None:
    from naus.archive import import_run as bring_in

    bring_in(args.archives, args.profile)


def run_paths(args: argparse.Namespace) -> None:
    from naus.archive import run_paths as paths

    print(" ".join(paths(args.profile)[args.kind]))
