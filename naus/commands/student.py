"""The students: training one, making one model of several seeds, the frozen MiniLM states they read."""

from __future__ import annotations

import argparse
import dataclasses
import logging
from pathlib import Path

from naus.pipeline import layout
from naus.pipeline.bundle import PROFILE
from naus.commands import (BUILD, IN, OUT, RESULTS, SENTENCES, command, count, done, output_dir, output_file, ranged,
                           settings_from)
from naus.student.distil import EPOCHS, FFN, LAYERS_FROM, LR

log = logging.getLogger(__name__)


def register(sub) -> None:
    from naus.architectures import ARCHITECTURES
    from naus.settings import ModelConfig, TrainConfig

    command(sub, "train", train, "train a NAUS student with CTC (or a Table 3 student) on search output",
            ("--train-source", {**IN, "help": "the training sources, one tokenised sentence per line"}),
            ("--train-target", {**IN, "help": "search output, one summary per line"}),
            ("--arch", {"choices": list(ARCHITECTURES), "metavar": "ARCH",
                        "help": "the student (default: naus on a GPU; without one, given --train-states, "
                                "naus-copy, which trains on them in minutes): "
                                + "; ".join(f"{name}: {arch.about}" for name, arch in ARCHITECTURES.items())}),
            ("--dev-source", {"help": "the dev split's sources, one per line"}),
            ("--dev-target", {"help": "search output on the dev split (model selection stays unsupervised)"}),
            ("--train-states", {"help": "the training sources' frozen MiniLM states (`naus encode-states`; for "
                                        "a student on frozen states, naus-copy)"}),
            ("--dev-states", {"help": "the dev sources' frozen states, likewise"}),
            ("--fraction", {"type": ranged(float, above=0, maximum=1), "default": 1.0,
                            "help": "train on the first fraction of the pairs, 0 < fraction <= 1"}),
            ("--resume", {"action": "store_true", "help": "continue from OUT/last.pt when it exists"}),
            ("--restart", {"action": "store_true", "help": "with --resume: set OUT/last.pt aside (OUT/last.stale.pt) "
                                                           "and start over when it was made with other data or "
                                                           "settings, instead of refusing"}),
            ("--out", {"type": output_dir((*layout.STUDENT_NAMES, layout.STALE_LAST)), "required": True,
                       "help": "directory for last.pt, best.pt, history.json"}),
            ("--timing", {"type": output_file, "help": "write the training time and device to this JSON file"}),
            settings=(ModelConfig, TrainConfig),
            kept="the last checkpoint is kept: the same command with --resume goes on from it")
    command(sub, "ensemble", ensemble, "one checkpoint of several seeds' students, decoded as the mean of their "
            "probabilities", ("--members", {**IN, "nargs": "+", "help": "the students' best.pt"}),
            ("--out", {**OUT, "help": "the checkpoint to write"}))
    command(sub, "encode-states", encode_states, "frozen MiniLM states of every word (naus-copy)",
            ("--input", {**IN, "help": "one tokenised sentence per line (with --raw: raw text)"}), ("--out", OUT),
            ("--raw", {"action": "store_true", "help": "normalise each line first, as naus summarize reads it"}),
            ("--encoder", {"help": "compute them with this distilled encoder (`naus distil`), or as each word's vector "
                                   "from this table (`naus word-vectors`: learned without sentence pairs) beside a "
                                   "code of its position (default: MiniLM)"}))
    command(sub, "distil", distil, "a smaller MiniLM for the students' frozen states, trained to give MiniLM's states "
            "to these sentences (the pool's sources; no title)",
            ("--input", SENTENCES), ("--out", OUT),
            ("--layers-from", {"type": ranged(int, minimum=0), "nargs": "+", "default": list(LAYERS_FROM),
                               "help": "the MiniLM layers it starts from (default: %(default)s)"}),
            ("--ffn", {"type": ranged(int, minimum=1), "default": FFN,
                       "help": "its feed-forward width (MiniLM's: 1536; default: %(default)s)"}),
            ("--epochs", {"type": ranged(int, minimum=1), "default": EPOCHS, "help": "default: %(default)s"}),
            ("--lr", {"type": ranged(float, above=0), "default": LR, "help": "default: %(default)s"}))
    command(sub, "ship", ship, "a profile's students as files `Summarizer.from_pretrained` loads, and a README of "
            "what each learned from and how it was chosen",
            ("--students", {**IN, "nargs": "+", "help": "the students' best.pt (train/L8/best.pt, ...)"}),
            ("--stats", {**IN, "help": f"{BUILD}/{layout.DATA_STATS}"}),
            ("--metrics", {"help": f"{RESULTS}/{layout.METRICS}, where the profile has a labelled test set"}),
            ("--profile", {"default": "", "help": "the profile's name, for the README"}),
            ("--out", {"type": output_dir((*(f"L{n}.pt" for n in range(1, 257)), "README.md")), "required": True,
                       "help": f"{RESULTS}/{layout.SHIPPED}"}))
    command(sub, "bundle", bundle, "remake the bundled student (naus/models: `from_pretrained()`) and its model card "
            "from gigaword-sample's student and committed results",
            ("--build", {"type": Path, "default": Path(layout.profile_dir("build", PROFILE)),
                         "help": "the profile's build (default: %(default)s)"}),
            ("--results", {"type": Path, "default": Path(layout.profile_dir("results", PROFILE)),
                           "help": "its committed results, whose scores the card gives (default: %(default)s)"}))


def train(args: argparse.Namespace) -> None:
    from naus.settings import ModelConfig, TrainConfig
    from naus.student.build import train_student

    model = {spec.name: getattr(args, spec.name) for spec in dataclasses.fields(ModelConfig)
             if spec.name not in ("vocab_size", "arch") and hasattr(args, spec.name)}
    train_student(args.train_source, args.train_target, args.out, args.arch or default_arch(args), model=model,
                  config=settings_from(args, TrainConfig), dev_source=args.dev_source, dev_target=args.dev_target,
                  train_states=args.train_states, dev_states=args.dev_states, fraction=args.fraction,
                  resume=args.resume, restart=args.restart, timing=args.timing)


def default_arch(args: argparse.Namespace) -> str:
    """The paper's `naus` where a GPU trains its whole encoder; without one, given frozen states, `naus-copy`, whose
    thin top trains on them in minutes (the paper's 19.2M-parameter `naus` at 100k steps takes days on a CPU: said,
    where it is what there is to train)."""
    from naus.architectures import CPU_ARCHS
    from naus.device import pick_device

    if pick_device(args.device).type == "cuda":
        return "naus"
    if args.train_states:
        log.info("no GPU: training %s on the frozen states given (--arch names another)", CPU_ARCHS[0])
        return CPU_ARCHS[0]
    log.warning("no GPU: training naus, its whole encoder, on the CPU (days at the paper's size); %s trains in "
                "minutes on frozen states (`naus encode-states`, then --train-states and --dev-states)", CPU_ARCHS[0])
    return "naus"


def ensemble(args: argparse.Namespace) -> None:
    from naus.student.checkpoint import save_ensemble

    save_ensemble(args.members, args.out)
    done(args.out, f"{args.out}: an ensemble of {count(len(args.members), 'student')}")


def encode_states(args: argparse.Namespace) -> None:
    from naus.student.frozen import encode_file

    encode_file(args.input, args.out, raw=args.raw, top=args.encoder)


def distil(args: argparse.Namespace) -> None:
    from naus.plumbing.files import read_lines
    from naus.student.distil import distil

    record = distil(read_lines(args.input), args.out, tuple(args.layers_from), args.ffn, args.epochs, args.lr)
    done(args.out, f"{args.out}: {len(args.layers_from)} layers distilled on {record['sentences']} sentences, "
                   f"mean squared error {record['last_epoch_mse']} in the last epoch")


def ship(args: argparse.Namespace) -> None:
    from naus.pipeline.bundle import ship as write

    made = write([Path(p) for p in args.students], Path(args.out), Path(args.stats),
                 Path(args.metrics) if args.metrics else None, args.profile)
    done(args.out, f"{count(len(made) - 1, 'student')} and their README -> {args.out}")


def bundle(args: argparse.Namespace) -> None:
    from naus.pipeline.bundle import make_bundle

    make_bundle(args.build, args.results)
