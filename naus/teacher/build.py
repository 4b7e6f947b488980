"""A ready teacher in one call, as `naus search` builds it (`build_teacher`): the KenLM model, MiniLM for the
re-ranking (PyTorch, or an ONNX file; or a masked-LM encoder learned without pairs), the static table where γ > 0, and
the estimate that chooses the states to encode on their own; and a file's shard searched with it into a resumable
output (`search_file`)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Iterable

from naus import NausError
from naus.plumbing.files import check_file, read_lines, sha256sum
from naus.settings import (DEFAULT_PRESET, FIT_SENTENCES, FIT_STATES, LEARNED, TEACHER_PRESETS, SearchConfig,
                           check_learned_estimate)
from naus.teacher.lm import LanguageModel
from naus.teacher.masked_lm import MaskedLMEmbedder
from naus.teacher.search import Teacher, fit_estimate, label_shard
from naus.teacher.shards import ResumableOutput
from naus.teacher.similarity import ContextualEmbedder, LearnedEstimate, StaticEmbedder

log = logging.getLogger(__name__)


def build_teacher(lm: str | Path | LanguageModel, length: int | None = None, *, ratio: float | None = None,
                  preset: str = DEFAULT_PRESET, onnx: str | Path | None = None, estimate: str | Path | None = None,
                  fit_on: Iterable[str] = (), static: str | Path | None = None, device: str | None = None,
                  encoder: str | Path | None = None, **settings) -> Teacher:
    """The teacher `naus search` runs for `length` words (or `ratio` of each source's): SearchConfig's defaults,
    the named teacher's keys over them (`preset`, naus.settings.TEACHER_PRESETS), `settings` (its fields) over
    those. A learned estimate is read from `estimate` (`naus fit-estimate`'s file) or fitted here on the first
    FIT_SENTENCES of `fit_on` (half a minute a length on one core); `onnx` runs MiniLM from `naus export-onnx`'s
    file, else in PyTorch; `encoder` re-ranks by a masked-LM encoder's similarity instead (`naus pretrain-mlm`).
    Its `summarize([(index, sentence), ...])` gives each sentence's `Summary` (`.summary`, `.score`, ...)."""
    if preset not in TEACHER_PRESETS:
        raise NausError(f"preset {preset!r} is not one of {sorted(TEACHER_PRESETS)}")
    config = SearchConfig(length=None if ratio is not None else length, ratio=ratio,
                          **{**TEACHER_PRESETS[preset], **settings})
    return teacher_of(lm, config, onnx=onnx, estimate=estimate, fit_on=fit_on, static=static, device=device,
                      encoder=encoder)


def teacher_of(lm: str | Path | LanguageModel, config: SearchConfig, *, onnx: str | Path | None = None,
               estimate: str | Path | None = None, fit_on: Iterable[str] = (), static: str | Path | None = None,
               device: str | None = None, encoder: str | Path | None = None) -> Teacher:
    """`build_teacher` of a whole SearchConfig, as the command line resolved it (no preset under it)."""
    check_encoder(onnx, encoder)
    check_estimate(config, estimate)
    fit = config.estimator == LEARNED and estimate is None and config.rerank_k > 0
    sentences = [sentence for sentence, _ in zip(fit_on, range(FIT_SENTENCES))] if fit else []
    if fit and not sentences:
        raise NausError("a learned estimate chooses the states to encode: give estimate= (a file of `naus "
                        "fit-estimate`) or fit_on= (sentences to fit one on), or estimator='in-context'")
    teacher = Teacher(lm if isinstance(lm, LanguageModel) else LanguageModel(lm), config,
                      static=StaticEmbedder(static) if static else None,
                      contextual=None if config.rerank_k == 0 else MaskedLMEmbedder(encoder) if encoder
                      else ContextualEmbedder(device, onnx=onnx),
                      estimate=LearnedEstimate.load(estimate) if estimate else None)
    if fit:
        teacher.estimate, _ = fit_estimate(teacher, sentences, FIT_STATES)
    return teacher


def check_encoder(onnx, encoder) -> None:
    """MiniLM (PyTorch or ONNX) or a masked-LM encoder re-ranks, not both."""
    if encoder is not None and onnx is not None:
        raise NausError(f"{onnx}: an ONNX MiniLM and a masked-LM encoder ({encoder}): the re-ranking reads one")


def check_estimate(config: SearchConfig, estimate) -> None:
    """A learned estimate file goes with the learned estimator and a re-ranking it can choose states for."""
    if estimate is not None and config.estimator != LEARNED:
        raise NausError(f"--estimate is a learned estimate: the estimator must be {LEARNED!r} (--estimator "
                        f"{LEARNED}), not {config.estimator!r}; or drop it")
    if estimate is not None:
        check_learned_estimate(config.rerank_k)


def search_file(source: str | Path, lm: str | Path, out: str | Path, config: SearchConfig, *,
                shard: tuple[int, int] = (0, 1), limit: int = 0, batch: int = 64, onnx: str | Path | None = None,
                estimate: str | Path | None = None, static: str | Path | None = None, device: str | None = None,
                encoder: str | Path | None = None, restart: bool = False) -> tuple[int, float]:
    """`naus search`: the `shard` (i, n) of `source`'s first `limit` lines (0: all) searched by the teacher of
    `config` into `out` (JSON lines, appended `batch` at a time), resuming what an interrupted run left and refusing
    one made with other parameters (`restart` discards it). Returns how many sentences this run searched, and the
    seconds they took."""
    check_estimate(config, estimate)  # before any file is written
    check_encoder(onnx, encoder)
    fit = config.estimator == LEARNED and not estimate and config.rerank_k > 0  # on the input's first sentences
    sources = read_lines(source)
    language_model = LanguageModel(lm)
    total = min(len(sources), limit) if limit else len(sources)
    parameters = {  # files by content: a model rebuilt in place at the same size is another teacher
        "input": str(source), "input_sha256": sha256sum(source), "limit": limit, "lm": str(lm),
        "lm_sha256": language_model.sha256, "embedder": str(onnx or "torch"),
        "embedder_sha256": sha256sum(check_file(onnx, "ONNX model", "run `naus export-onnx` first"))
        if onnx and config.rerank_k > 0 else None, "static": str(static),
        "static_sha256": sha256sum(check_file(static, "static embedding table", "run the embed step first"))
        if static else None, "search": dataclasses.asdict(config),
    }
    if encoder and config.rerank_k > 0:  # only then: MiniLM's outputs keep the parameters they were made with
        parameters.update(encoder=str(encoder), encoder_sha256=sha256sum(
            check_file(encoder, "masked-LM encoder", "run `naus pretrain-mlm` first")))
    if estimate:  # only then: the in-context estimate's outputs keep the parameters they were made with
        parameters.update(estimate=str(estimate), estimate_sha256=sha256sum(
            check_file(estimate, "learned estimate", "run `naus fit-estimate` first")))
    elif fit:
        parameters.update(estimate=f"fitted on the input's first {FIT_SENTENCES} sentences, {FIT_STATES} states each")
    with ResumableOutput(out, total, shard, parameters, restart=restart) as output:
        if fit:
            log.info("fitting the learned estimate for L = %s on the input's first %d sentences (`naus fit-estimate` "
                     "makes one to pass to every shard as --estimate)", config.length, FIT_SENTENCES)
        teacher = teacher_of(language_model, config, onnx=onnx, estimate=estimate, fit_on=sources, static=static,
                             device=device, encoder=encoder)
        return label_shard(teacher, sources, output, batch, f"search {source} shard {shard[0]}/{shard[1]}")
