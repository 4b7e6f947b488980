"""A ready teacher in one call, as `naus search` builds it: the KenLM model, MiniLM for the re-ranking (PyTorch, or
an ONNX file), the static table where γ > 0, and the estimate that chooses the states MiniLM encodes on their own."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from naus import NausError
from naus.settings import DEFAULT_PRESET, FIT_SENTENCES, FIT_STATES, LEARNED, TEACHER_PRESETS, SearchConfig
from naus.teacher.lm import LanguageModel
from naus.teacher.search import Teacher, fit_estimate
from naus.teacher.similarity import ContextualEmbedder, LearnedEstimate, StaticEmbedder


def build_teacher(lm: str | Path | LanguageModel, length: int | None = None, *, ratio: float | None = None,
                  preset: str = DEFAULT_PRESET, onnx: str | Path | None = None, estimate: str | Path | None = None,
                  fit_on: Iterable[str] = (), static: str | Path | None = None, device: str | None = None,
                  **settings) -> Teacher:
    """The teacher `naus search` runs for `length` words (or `ratio` of each source's): SearchConfig's defaults,
    the named teacher's keys over them (`preset`, naus.settings.TEACHER_PRESETS), `settings` (its fields) over
    those. A learned estimate is read from `estimate` (`naus fit-estimate`'s file) or fitted here on the first FIT_SENTENCES of
    `fit_on` (half a minute a length on one core); `onnx` runs MiniLM from `naus export-onnx`'s file, else in PyTorch.
    Its `summarize([(index, sentence), ...])` gives each sentence's `Summary` (`.summary`, `.score`, ...)."""
    if preset not in TEACHER_PRESETS:
        raise NausError(f"preset {preset!r} is not one of {sorted(TEACHER_PRESETS)}")
    config = SearchConfig(length=None if ratio is not None else length, ratio=ratio,
                          **{**TEACHER_PRESETS[preset], **settings})
    estimator = config.estimator
    if estimate is not None and estimator != LEARNED:
        raise NausError(f"a learned estimate is given: the estimator must be {LEARNED!r}, not {estimator!r}")
    fit = estimator == LEARNED and estimate is None and config.rerank_k > 0
    sentences = [sentence for sentence, _ in zip(fit_on, range(FIT_SENTENCES))] if fit else []
    if fit and not sentences:
        raise NausError("a learned estimate chooses the states to encode: give estimate= (a file of `naus "
                        "fit-estimate`) or fit_on= (sentences to fit one on), or estimator='in-context'")
    teacher = Teacher(lm if isinstance(lm, LanguageModel) else LanguageModel(lm), config,
                      static=StaticEmbedder(static) if static else None,
                      contextual=ContextualEmbedder(device, onnx=onnx) if config.rerank_k > 0 else None,
                      estimate=LearnedEstimate.load(estimate) if estimate else None)
    if fit:
        teacher.estimate, _ = fit_estimate(teacher, sentences, FIT_STATES)
    return teacher
