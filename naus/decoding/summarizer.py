"""`Summarizer`: a trained checkpoint plus a decoding method, for headlines from raw text.

Each architecture's methods and their functions are `naus.methods`'; CTC students are run once per
batch here and their scores handed to the method, the encoder-decoders are handed the model.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import torch

from naus import NausError
from naus.architectures import ARCHITECTURES
from naus.student.checkpoint import load_checkpoint, model_from_checkpoint
from naus.decoding import Batch, Hypothesis, slot_log_norm, word_slots
from naus.device import pick_device
from naus.methods import CHAR_CONTROL, CHARS, LENGTH_CONTROL, METHODS
from naus.settings import DecodeConfig, target_length
from naus.student.frozen import WIDTH, States
from naus.student.vocab import BLANK, PAD, SPECIALS, Vocab
from naus.text import headline, is_word, normal_token, source_tokens

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
        sentences: Iterable[str],
        length: int | None = None,
        method: str | None = None,
        ratio: float | None = None,
        min_length: int = DecodeConfig.min_length,
        beam_size: int = DecodeConfig.beam_size,
        batch_size: int = DecodeConfig.batch_size,
        raw: bool = True,
        chars: int | None = None,
        restore: bool = True,
        states: States | None = None,
        headlines: bool | None = None,
    ) -> list[Result]:
        """One summary per sentence; `raw=True` tokenises as the training data was (not for the
        Gigaword evaluation, whose inputs and references are already tokenised); `restore` gives each
        `<unk>` back its source word (`restore_unknown`), else summaries keep `<unk>` as decoded.
        `chars` is the budget of `char-control`: at most that many characters (UTF-8 bytes), the
        summary as returned (a restored `<unk>` counted as its source word). Any iterable of strings
        (a generator too) is read once. A student on frozen states (`naus-copy`) reads `states`, the sentences'
        as `naus encode-states` made them, or computes them here. `headlines` (the default for raw text): no
        punctuation chosen, so L counts words a reader counts, and each summary written as its source wrote its
        words (`naus.text.headline`: case, digits); else the evaluator's form (lower case, digits as #)."""
        sentences = sentences if isinstance(sentences, str) else list(sentences)
        _check_arguments(sentences, method, states)
        given = [name for name, value in (("length", length), ("ratio", ratio), ("chars", chars)) if value is not None]
        if len(given) > 1:  # the command line's --length, --ratio and --chars exclude each other
            raise NausError(f"give one of length, ratio and chars, not {' and '.join(given)}")
        length = DecodeConfig.length if length is None and ratio is None else length  # char-control's reads it too
        DecodeConfig(length=length, ratio=ratio, chars=chars, min_length=min_length, beam_size=beam_size,
                     batch_size=batch_size)  # the command line's checks, types included
        arch = ARCHITECTURES[self.model.config.arch]
        method = self._method(method, chars)
        headlines = raw if headlines is None else headlines
        if headlines and not raw:
            raise NausError("headlines are written from raw text: summarize(..., raw=True) or headlines=False")
        written = [source_tokens(s) for s in sentences] if raw else None
        texts = [" ".join(map(normal_token, tokens)) for tokens in written] if raw else [
            " ".join(word for word in s.split() if word not in (BLANK, PAD)) for s in sentences]  # markers: no words
        encoded = self._encode(texts)
        started, forward = time.perf_counter(), 0.0  # MiniLM's states, where computed here, are decoding time
        if arch.frozen:
            states = self._frozen_states(texts, states, raw)
        elif states is not None:
            raise NausError(f"a {arch.name} student reads no frozen states (they are for a naus-copy student)")
        results: list[Result | None] = [None] * len(texts)
        order = sorted((i for i in range(len(texts)) if encoded[i]), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            sources = [texts[i].split()[: len(encoded[i])] for i in rows]
            if arch.frozen:
                batch, seconds, vocab = self._copy_batch(sources, [states[i] for i in rows], length, ratio, min_length,
                                                         beam_size, chars, headlines)
            else:
                (batch, seconds), vocab = self._batch([encoded[i] for i in rows], length, ratio, min_length, beam_size,
                                                      chars, [texts[i] for i in rows] if restore else None,
                                                      headlines), self.vocab
            forward += seconds
            caps = [max(1, sum(map(is_word, words))) for words in sources]  # a headline's most words: the source's
            if headlines:
                batch.targets = [min(t, cap) for t, cap in zip(batch.targets, caps)]

            def render(k: int, hyp: Hypothesis) -> Result:
                words = [vocab.tokens[t] for t in hyp.tokens]
                if restore and not arch.frozen:
                    words = restore_unknown(words, hyp, sources[k], self.vocab, arch.ctc)
                summary = " ".join(words)
                return Result(headline(summary, written[rows[k]]) if headlines else summary, len(hyp.tokens),
                              hyp.log_prob)

            found = [render(k, hyp) for k, hyp in enumerate(METHODS[method].decoder(arch.family)(batch))]
            if headlines and chars is not None and arch.ctc:
                found = _fullest(batch, found, render, chars, caps, LENGTH_CONTROL.decoder(arch.family))
            for i, result in zip(rows, found):
                results[i] = result
        self.last_timing = {"seconds": time.perf_counter() - started, "forward_seconds": forward,
                            "samples": len(order), "method": method}
        return [r if r is not None else Result("", 0, 0.0) for r in results]

    def _method(self, method: str | None, chars: int | None) -> str:
        """The method asked for, or the architecture's default (char-control with a budget in characters)."""
        arch = self.model.config.arch
        methods = ARCHITECTURES[arch].methods
        method = method or (CHAR_CONTROL.name if chars is not None else methods[0])
        if method not in methods:
            raise NausError(f"{'an' if arch[0] in 'aeiou' else 'a'} {arch} model decodes with {' or '.join(methods)}, "
                            f"not {method!r}")
        if METHODS[method].budget == CHARS and chars is None:
            raise NausError(f"{method} needs a budget in characters (--chars N)")
        if METHODS[method].budget != CHARS and chars is not None:
            raise NausError(f"a budget in characters (--chars) is for {CHAR_CONTROL.name}, not {method}")
        return method

    def _encode(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, cut to the student's positions (with a warning)."""
        max_len = self.model.config.max_len
        encoded = [self.vocab.encode(t) for t in texts]
        cut = [i for i, tokens in enumerate(encoded) if len(tokens) > max_len]
        if cut:
            longest = max(cut, key=lambda i: len(encoded[i]))
            log.warning("%d of %d sentences are longer than this student's %d positions and are read on their first "
                        "%d words (the longest: sentence %d, %d words)", len(cut), len(texts), max_len, max_len,
                        longest + 1, len(encoded[longest]))
        return [tokens[:max_len] for tokens in encoded]

    @functools.cached_property
    def punctuation(self) -> tuple[int, ...]:
        """The ids of the student's tokens that are punctuation alone (what a headline leaves out)."""
        return punctuation(self.vocab)

    @staticmethod
    def _normalized(batch: Batch, banned: tuple[int, ...]) -> None:
        """A CTC student's scores as its decoders read them, the `banned` tokens given none."""
        if banned:
            batch.logits[..., list(banned)] = float("-inf")
        batch.log_norm = slot_log_norm(batch.logits)

    def _frozen_states(self, texts: list[str], states: States | None, raw: bool) -> States:
        """The sentences' frozen states: those given, checked to be theirs, or computed now."""
        if states is None:  # of each line's first words the student reads: a 1 MB line costs no gigabytes
            from naus.student.frozen import encoder

            return encoder().encode([" ".join(text.split()[: self.model.config.max_len]) for text in texts])
        states.check_lines(texts, states.source, "states of raw text are made by `naus encode-states --raw`, "
                           "of tokenised text without it" if raw else "run `naus encode-states` on the input")
        return states

    def _copy_batch(self, sources: list[list[str]], states: list[np.ndarray], length, ratio, min_length, beam_size,
                    chars, headlines: bool) -> tuple[Batch, float, Vocab]:
        """A batch for a copy-head student: its scores over a vocabulary of this batch's own words (so no word is
        `<unk>`), that vocabulary, and the seconds of its forward."""
        vocab = Vocab(list(SPECIALS) + list(dict.fromkeys(w for words in sources for w in words if w not in SPECIALS)))
        lengths = torch.tensor([len(words) for words in sources])
        ids = torch.zeros((len(sources), int(lengths.max())), dtype=torch.long)  # 0, ε's id, is no position's word
        x = torch.zeros((len(sources), int(lengths.max()), WIDTH))
        for row, (words, rows) in enumerate(zip(sources, states)):
            ids[row, : len(words)] = torch.tensor([vocab.index[w] for w in words])
            x[row, : len(words)] = torch.from_numpy(rows[: len(words)].astype(np.float32))
        targets = [target_length(int(n), length, ratio, min_length) for n in lengths]
        batch = Batch(lengths.to(self.device), targets, beam_size, vocab.blank, chars=chars,
                      word_chars=np.array([len(token.encode()) for token in vocab.tokens]), unk=vocab.unk,
                      banned=(vocab.pad,))
        tick = time.perf_counter()
        batch.logits = self.model(x.to(self.device), batch.lengths, ids.to(self.device), len(vocab), normalize=False)
        self._normalized(batch, punctuation(vocab) if headlines else ())
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return batch, time.perf_counter() - tick, vocab

    def _batch(self, encoded: list[list[int]], length, ratio, min_length, beam_size, chars,
               texts: list[str] | None, headlines: bool) -> tuple[Batch, float]:
        """One batch as a decoding method reads it: a CTC student run on it, or the encoder-decoder and its
        input; and the seconds of the CTC student's forward. `texts`: the sources, when each `<unk>` counts as
        the source word it will be restored to. `headlines`: no punctuation emitted."""
        config, arch = self.model.config, ARCHITECTURES[self.model.config.arch]
        lengths = torch.tensor([len(tokens) for tokens in encoded])
        tokens = torch.full((len(encoded), int(lengths.max())), self.vocab.pad, dtype=torch.long)
        for row, ids in enumerate(encoded):
            tokens[row, : len(ids)] = torch.tensor(ids)
        targets = [target_length(int(n), length, ratio, min_length) for n in lengths]
        banned = self.punctuation if headlines else ()
        if not arch.ctc and max(targets) > config.max_len:
            raise NausError(f"a summary of {max(targets)} words is longer than this {arch.name} student's max_len "
                            f"{config.max_len} allows")
        batch = Batch(lengths.to(self.device), targets, beam_size, self.vocab.blank, chars=chars,
                      word_chars=self.word_bytes, unk=self.vocab.unk, model=self.model,
                      tokens=tokens.to(self.device), banned=(self.vocab.pad, *banned))
        if texts is not None:
            batch.unk_chars = [[len(w.encode()) for w in text.split()[: config.max_len]] for text in texts]
        if not arch.ctc:
            return batch, 0.0
        tick = time.perf_counter()
        batch.logits = self.model(batch.tokens, batch.lengths, normalize=False)  # decoders normalise what they read
        self._normalized(batch, banned)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return batch, time.perf_counter() - tick


def _fullest(batch: Batch, found: list[Result], render, chars: int, caps: list[int], length_control) -> list[Result]:
    """Headlines within `chars` bytes: char-control's most probable summary is often far shorter than the budget
    (each word costs probability), so the longest length-controlled one that fits replaces it (the most
    probable of its length); where no longer one fits, char-control's stays (empty where no word fits)."""
    for words in range(2, min(max(caps), (chars + 1) // 2) + 1):
        batch.targets = [min(words, cap) for cap in caps]
        for k, hyp in enumerate(length_control(batch)):
            result = render(k, hyp)
            if result.length > found[k].length and len(result.summary.encode()) <= chars:
                found[k] = result
    return found


def punctuation(vocab: Vocab) -> tuple[int, ...]:
    """The ids of a vocabulary's tokens that are punctuation alone (`naus.text.is_word`)."""
    return tuple(i for i, token in enumerate(vocab.tokens) if i >= len(SPECIALS) and not is_word(token))


def _check_arguments(sentences, method, states) -> None:
    """The API's types, refused in one line (the command line's are checked by argparse)."""
    if isinstance(sentences, str) or not all(isinstance(s, str) for s in sentences):
        kind = "a string" if isinstance(sentences, str) else next(type(s).__name__ for s in sentences
                                                                    if not isinstance(s, str))
        raise TypeError(f"sentences must be a list of strings, got {kind}")
    if method is not None and not isinstance(method, str):
        raise TypeError(f"method must be a string, got {type(method).__name__}")
    if states is not None and not isinstance(states, States):
        raise TypeError(f"states must be States (naus.student.frozen.States.load(path) reads a file), "
                        f"got {type(states).__name__}")


def restore_unknown(words: list[str], hyp: Hypothesis, source: list[str], vocab, aligned: bool) -> list[str]:
    """`<unk>` in a summary is a source word the vocabulary lacks: for a CTC student,
    whose slot i reads source word i (`aligned`), the word under the slot that emitted it; otherwise
    the next out-of-vocabulary source word in order (an `<unk>` stays only when none is left)."""
    if vocab.tokens[vocab.unk] not in words:
        return words
    if aligned:
        slots = word_slots(hyp.path, vocab.blank)
        return [source[slot] if token == vocab.unk else word for word, token, slot in zip(words, hyp.tokens, slots)]
    unknown = iter([w for w in source if w not in vocab.index])
    return [next(unknown, word) if token == vocab.unk else word for word, token in zip(words, hyp.tokens)]
