"""`Summarizer`: a trained checkpoint plus a decoding method, for headlines from raw text.

CTC students (NAUS, nar-ctc) decode with any of CTC_METHODS; the vanilla NAR student fills its L
slots at once (`greedy`); the AR student generates left to right (`greedy` or `beam`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from naus import NausError
import numpy as np

from naus.decoding import (
    Hypothesis, char_control_batch, ctc_beam_search_batch, greedy_batch, length_control_batch, slot_log_norm, truncate,
    word_slots,
)
from naus.architectures import ARCHITECTURES, CHAR_METHOD
from naus.text import normalize
from naus.device import pick_device
from naus.settings import DecodeConfig, target_length
from naus.checkpoint import load_checkpoint, model_from_checkpoint

log = logging.getLogger(__name__)


@dataclass
class Result:
    summary: str
    length: int
    log_prob: float


class Summarizer:
    def __init__(self, model, vocab, device: torch.device):
        self.model, self.vocab, self.device = model.to(device).eval(), vocab, device
        self.word_bytes = np.array([len(token.encode()) for token in vocab.tokens])  # as written, for char-control
        self.last_timing: dict[str, float] = {}

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | None = None) -> "Summarizer":
        device = pick_device(device)
        model, vocab = model_from_checkpoint(load_checkpoint(path, "cpu"), path)
        return cls(model, vocab, device)

    @torch.no_grad()
    def summarize(
        self,
        sentences: list[str],
        length: int | None = DecodeConfig.length,
        method: str | None = None,
        ratio: float | None = None,
        min_length: int = DecodeConfig.min_length,
        beam_size: int = DecodeConfig.beam_size,
        batch_size: int = DecodeConfig.batch_size,
        raw: bool = True,
        chars: int | None = None,
    ) -> list[Result]:
        """One summary per sentence; `raw=True` tokenises as the training data was and gives each
        `<unk>` back its source word (`restore_unknown`); without it (the Gigaword evaluation,
        whose inputs and references are already tokenised) summaries keep `<unk>` as decoded.
        `chars` is the budget of `char-control`: at most that many characters (UTF-8 bytes), the
        summary as returned (a raw text's `<unk>` counted as its source word)."""
        if isinstance(sentences, str) or not all(isinstance(s, str) for s in sentences):
            kind = "a string" if isinstance(sentences, str) else next(type(s).__name__ for s in sentences
                                                                        if not isinstance(s, str))
            raise TypeError(f"sentences must be a list of strings, got {kind}")
        if method is not None and not isinstance(method, str):
            raise TypeError(f"method must be a string, got {type(method).__name__}")
        DecodeConfig(length=length, ratio=ratio, chars=chars, min_length=min_length, beam_size=beam_size,
                     batch_size=batch_size)  # the command line's checks, types included
        arch = self.model.config.arch
        methods = ARCHITECTURES[arch].methods
        method = method or (CHAR_METHOD if chars is not None else methods[0])
        if method not in methods:
            raise NausError(f"a {arch} model decodes with {' or '.join(methods)}, not {method!r}")
        if method == CHAR_METHOD and chars is None:
            raise NausError(f"{CHAR_METHOD} needs a budget in characters (--chars N)")
        if method != CHAR_METHOD and chars is not None:
            raise NausError(f"a budget in characters (--chars) is for {CHAR_METHOD}, not {method}")
        texts = [normalize(s) if raw else " ".join(s.split()) for s in sentences]
        max_len = self.model.config.max_len
        encoded = [self.vocab.encode(t) for t in texts]
        cut = [i for i, tokens in enumerate(encoded) if len(tokens) > max_len]
        if cut:
            longest = max(cut, key=lambda i: len(encoded[i]))
            log.warning("%d of %d sentences are longer than this student's %d positions and are read on their first "
                        "%d words (the longest: sentence %d, %d words)", len(cut), len(texts), max_len, max_len,
                        longest + 1, len(encoded[longest]))
            encoded = [tokens[:max_len] for tokens in encoded]
        results: list[Result | None] = [None] * len(texts)
        order = sorted((i for i in range(len(texts)) if encoded[i]), key=lambda i: len(encoded[i]))
        started, forward = time.perf_counter(), 0.0
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            lengths = torch.tensor([len(encoded[i]) for i in batch])
            tokens = torch.full((len(batch), int(lengths.max())), self.vocab.pad, dtype=torch.long)
            for row, i in enumerate(batch):
                tokens[row, : lengths[row]] = torch.tensor(encoded[i])
            targets = [target_length(int(n), length, ratio, min_length) for n in lengths]
            if not ARCHITECTURES[arch].ctc and max(targets) > max_len:
                raise NausError(f"a summary of {max(targets)} words is longer than this {arch} student's max_len "
                                f"{max_len} allows")
            tokens, lengths = tokens.to(self.device), lengths.to(self.device)
            if ARCHITECTURES[arch].ctc:
                tick = time.perf_counter()
                logits = self.model(tokens, lengths, normalize=False)  # the decoders normalise what they read
                log_norm = slot_log_norm(logits)
                if self.device.type == "cuda":
                    torch.cuda.synchronize()
                forward += time.perf_counter() - tick
                if method == CHAR_METHOD:
                    slots = [[len(w.encode()) for w in texts[i].split()[:max_len]] for i in batch] if raw else None
                    hyps = char_control_batch(logits, lengths, [chars] * len(batch), self.word_bytes, beam_size,
                                              self.vocab.blank, self.vocab.unk, slots, log_norm)
                else:
                    hyps = self._decode(logits, log_norm, lengths, targets, method, beam_size)
            elif arch == "nar":
                hyps = self._fill_slots(tokens, lengths, targets)
            else:
                banned = (self.vocab.pad,)
                width = beam_size if method == "beam" else 1
                generated = self.model.generate(tokens, lengths, targets, width, self.vocab.blank, banned)
                hyps = [Hypothesis(words, words, log_prob) for words, log_prob in generated]
            for i, hyp in zip(batch, hyps):
                words = [self.vocab.tokens[t] for t in hyp.tokens]
                if raw:
                    words = restore_unknown(words, hyp, texts[i].split()[:max_len], self.vocab, ARCHITECTURES[arch].ctc)
                results[i] = Result(" ".join(words), len(hyp.tokens), hyp.log_prob)
        total = time.perf_counter() - started
        self.last_timing = {"seconds": total, "forward_seconds": forward, "samples": len(order), "method": method}
        return [r if r is not None else Result("", 0, 0.0) for r in results]

    def _fill_slots(self, tokens, lengths, targets) -> list[Hypothesis]:
        """Vanilla NAR: the best non-special word in each of exactly L slots."""
        slots = torch.tensor(targets, device=tokens.device)
        log_probs = self.model(tokens, lengths, slots)
        log_probs[..., [self.vocab.blank, self.vocab.pad]] = float("-inf")
        best, words = (x.cpu() for x in log_probs.max(dim=-1))
        return [Hypothesis(words[i, :n].tolist(), words[i, :n].tolist(), float(best[i, :n].sum()))
                for i, n in enumerate(targets)]

    def _decode(self, logits, log_norm, lengths, targets, method, beam_size) -> list[Hypothesis]:
        blank = self.vocab.blank
        if method == "length-control":
            return length_control_batch(logits, lengths, targets, beam_size, blank, log_norm=log_norm)
        if method == "beam":
            hyps = ctc_beam_search_batch(logits, lengths, beam_size, blank, log_norm)
            return [truncate(h, t) for h, t in zip(hyps, targets)]
        hyps = greedy_batch(logits, lengths, blank, log_norm)
        if method == "truncate":
            hyps = [truncate(h, t) for h, t in zip(hyps, targets)]
        return hyps


def restore_unknown(words: list[str], hyp: Hypothesis, source: list[str], vocab, aligned: bool) -> list[str]:
    """`<unk>` in a summary of raw text is a source word the vocabulary lacks: for a CTC student,
    whose slot i reads source word i (`aligned`), the word under the slot that emitted it; otherwise
    the next out-of-vocabulary source word in order (an `<unk>` stays only when none is left)."""
    if vocab.tokens[vocab.unk] not in words:
        return words
    if aligned:
        slots = word_slots(hyp.path, vocab.blank)
        return [source[slot] if token == vocab.unk else word for word, token, slot in zip(words, hyp.tokens, slots)]
    unknown = iter([w for w in source if w not in vocab.index])
    return [next(unknown, word) if token == vocab.unk else word for word, token in zip(words, hyp.tokens)]
