"""A student from files in one call, as `naus train` trains it: the vocabulary its architecture reads, MiniLM's shape
for a student that starts from it, the pairs (and frozen states) checked, then `naus.student.train.train`."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from naus import NausError
from naus.architectures import ARCHITECTURES
from naus.plumbing.files import iter_parallel
from naus.plumbing.provenance import file_record
from naus.settings import ModelConfig, TrainConfig
from naus.student.train import load_pairs, train
from naus.student.vocab import Vocab

log = logging.getLogger(__name__)
PathLike = str | Path


def train_student(train_source: PathLike, train_target: PathLike, out: PathLike, arch: str = "naus", *,
                  model: dict | None = None, config: TrainConfig | None = None, dev_source: PathLike | None = None,
                  dev_target: PathLike | None = None, train_states: PathLike | None = None,
                  dev_states: PathLike | None = None, fraction: float = 1.0, resume: bool = False,
                  restart: bool = False, timing: PathLike | None = None) -> dict:
    """Train a student of `arch` (naus.architectures) on a search output (`train_source` → `train_target`, one
    sentence a line) into `out` (`best.pt`, `last.pt`, `history.json`), choosing by dev loss when `dev_source`
    and `dev_target` are given; `model` holds ModelConfig fields other than the vocabulary's size, `config` the
    training settings. A student on frozen states (naus-copy) reads `naus encode-states`'s files of the sources
    (`train_states`, `dev_states`) and copies their words: its vocabulary is every word of its sources; any other
    keeps the words seen `config.min_count` times. Returns the run's history."""
    config = config or TrainConfig()
    if arch not in ARCHITECTURES:
        raise NausError(f"arch must be one of {sorted(ARCHITECTURES)}, got {arch!r}")
    frozen = ARCHITECTURES[arch].frozen
    if frozen != bool(train_states) or bool(dev_states) != (frozen and bool(dev_source)):
        raise NausError("--train-states, and --dev-states with --dev-source, are given for a student on frozen states "
                        f"(`naus encode-states`; naus-copy) and only for one: not for --arch {arch}")
    sources = [train_source] + ([dev_source] if frozen and dev_source else [])
    # a student on frozen states copies words, its ids only tell them apart: every word of its sources, no <unk>
    vocab = Vocab.build((line for path in sources for line, in iter_parallel(path)), 1 if frozen else config.min_count)
    model_config = ModelConfig(**{**(model or {}), "vocab_size": len(vocab), "arch": arch})
    asked = model_config.to_dict()  # the settings the report compares with the configuration
    if ARCHITECTURES[arch].pretrained:
        from naus.student.pretrained import minilm_shape

        model_config = dataclasses.replace(model_config, **minilm_shape(model_config.max_len))
        log.info("%s: the shape of all-MiniLM-L6-v2 (%d layers x %d, %d heads), not --d-model and the like",
                 arch, model_config.n_layers, model_config.d_model, model_config.n_heads)
    pairs = load_pairs(train_source, train_target, vocab, model_config.max_len, train_states).head(fraction)
    dev = load_pairs(dev_source, dev_target, vocab, model_config.max_len, dev_states) if dev_source else None
    if frozen:  # the student decodes from its encoder's states only
        if dev is not None and dev.states.encoder != pairs.states.encoder:
            raise NausError(f"{dev_states}: states of another encoder than {train_states}'s (one made with `naus "
                            "encode-states --encoder`, one without it, or with another file)")
        model_config = dataclasses.replace(model_config, states_encoder=pairs.states.encoder)
    log.info("training on %d pairs, vocabulary of %d words", len(pairs), len(vocab))
    named = {"train_source": train_source, "train_target": train_target, "dev_source": dev_source,
             "dev_target": dev_target, "train_states": train_states, "dev_states": dev_states}
    inputs = {name: file_record(path) for name, path in named.items() if path}
    return train(pairs, dev, vocab, model_config, config, out, resume=resume, restart=restart, timing=timing,
                 made_from={"inputs": inputs, "settings": {"model": asked, "train": dataclasses.asdict(config)}})
