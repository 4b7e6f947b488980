"""The shuttle's command line: `import-run` (a GPU run's archives checked whole, then brought in) and `run-paths`
(the files a GPU run reads or brings back, as shell globs, for gpu-node.sh). Errors as naus gives them: one line."""

from __future__ import annotations

import argparse
import sys

from naus import NausError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.lease", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    bring = sub.add_parser("import-run", help="check a GPU run's archives whole, then bring their files in "
                           "(histories, decodings, training times, logs; nothing else is moved or deleted; run from "
                           "the project's root)")
    bring.add_argument("--profile", required=True, help="the profile the run made (its files are under its build folder)")
    bring.add_argument("archives", nargs="+", help="gpu-run.tar.gz files, in order: a later one's files replace an "
                                                   "preceding one's")
    paths = sub.add_parser("run-paths", help="the files a GPU run reads or brings back, as shell globs from the "
                           "project's root (naus.pipeline.layout's names)")
    paths.add_argument("kind", choices=["build", "inputs", "words", "outputs"], help="which files: {%(choices)s}")
    paths.add_argument("--profile", required=True, help="the profile's name")
    args = parser.parse_args(argv)
    from scripts.lease.archive import import_run, run_paths

    try:
        if args.command == "import-run":
            import_run(args.archives, args.profile)
        else:
            print(" ".join(run_paths(args.profile)[args.kind]))
    except NausError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2  # as naus's own errors
    return 0


if __name__ == "__main__":
    sys.exit(main())
