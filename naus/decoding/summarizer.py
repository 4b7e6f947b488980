"""`Summarizer`: a trained checkpoint plus a decoding method, for headlines from raw text.

Each architecture's methods and their functions are `naus.methods`'; CTC students are run once per
batch here and their scores handed to the method, the encoder-decoders are handed the model.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections import Counter
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
from naus.text import copy_key, headline, hosts, is_word, normal_token, source_tokens

log = logging.getLogger(__name__)


@dataclass
class Result:
    summary: str
    length: int
    log_prob: float


class Summarizer:
    def __init__(self, model, vocab, device: torch.device, minilm_onnx: str | Path | None = None):
        self.model, self.vocab, self.device = model.to(device).eval(), vocab, device
        self.minilm_onnx = None if minilm_onnx is None else Path(minilm_onnx)  # MiniLM for new text's frozen states
        self.word_bytes = np.array([len(token.encode()) for token in vocab.tokens])  # as written, for char-control
        self.last_timing: dict[str, float] = {}

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | None = None,
                        minilm_onnx: str | Path | None = None) -> "Summarizer":
        """A trained student. `minilm_onnx` (a file of `naus export-onnx`): new text's frozen states computed by
        it, about twice as fast as the fp32 MiniLM the students learned on; the teacher's 7-bit int8 model loses
        some quality, an 8-bit one (`--full-range`, exact on CPUs with VNNI) keeps it
        (results/benchmarks/student_states.json). The default gives the same bytes on any CPU."""
        device = pick_device(device)
        model, vocab = model_from_checkpoint(load_checkpoint(path, "cpu"), path)
        return cls(model, vocab, device, minilm_onnx)

    @classmethod
    def from_pretrained(cls, model: str | Path | None = None, device: str | None = None,
                        minilm_onnx: str | Path | None = None) -> "Summarizer":
        """The bundled Gigaword student (no argument: `naus/models/MODEL_CARD.md` says what it is) or another:
        a checkpoint, or the directory `naus train` wrote it to."""
        return cls.from_checkpoint(cls.pretrained_path(model), device, minilm_onnx)

    @staticmethod
    def pretrained_path(model: str | Path | None) -> Path:
        """The checkpoint `from_pretrained(model)` reads."""
        from naus.bundle import BUNDLED

        path = BUNDLED if model is None else Path(model)
        return path / "best.pt" if path.is_dir() else path

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
        max_memory_mb: int = DecodeConfig.max_memory_mb,
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
                     batch_size=batch_size, max_memory_mb=max_memory_mb)  # the command line's checks, types included
        arch = ARCHITECTURES[self.model.config.arch]
        method = self._method(method, chars)
        headlines = raw if headlines is None else headlines
        if headlines and not raw:
            raise NausError("headlines are written from raw text: summarize(..., raw=True) or headlines=False")
        started, forward = time.perf_counter(), 0.0  # tokenising and MiniLM's states (where computed here) count
        reads = 4 * self.model.config.max_len  # raw words tokenised: more than the student reads, however long a line
        heads = [s.split(None, reads) for s in sentences] if raw else []
        written = [source_tokens(" ".join(head[:reads])) for head in heads] if raw else None
        texts = [" ".join(map(normal_token, tokens)) for tokens in written] if raw else [
            " ".join(word for word in s.split() if word not in (BLANK, PAD)) for s in sentences]  # markers: no words
        encoded = self._encode(texts, [len(s.split()) if len(head) > reads else 0 for s, head in zip(sentences, heads)]
                               if raw else None)
        if arch.frozen:
            states = self._frozen_states(texts, states, raw)
        elif states is not None:
            raise NausError(f"a {arch.name} student reads no frozen states (they are for a naus-copy student)")
        results: list[Result | None] = [None] * len(texts)
        order = sorted((i for i in range(len(texts)) if encoded[i]), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            sources = [texts[i].split()[: len(encoded[i])] for i in rows]
            shown = [hosts(written[i][: len(encoded[i])]) for i in rows] if headlines else None
            if arch.frozen:
                keys = [list(map(copy_key, written[i][: len(encoded[i])])) for i in rows] if headlines else sources
                batch, seconds, vocab = self._copy_batch(keys, [states[i] for i in rows], length, ratio, min_length,
                                                         beam_size, chars, shown)
            else:
                (batch, seconds), vocab = self._batch([encoded[i] for i in rows], length, ratio, min_length, beam_size,
                                                      chars, [texts[i] for i in rows] if restore else None,
                                                      shown), self.vocab
            forward, batch.max_memory_mb = forward + seconds, max_memory_mb
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

            decoder = METHODS[method].decoder(arch.family)
            hyps = decoder(batch)
            if headlines and arch.ctc:
                held = [Counter(vocab.index.get(w, vocab.unk) for w in words if _NUMBER.search(w))
                        for words in (keys if arch.frozen else sources)]
                scores = batch.logits.clone()
                hyps = _as_often_as_the_source(batch, hyps, held, decoder)
            found = [render(k, hyp) for k, hyp in enumerate(hyps)]
            if headlines and chars is not None and arch.ctc:
                control = LENGTH_CONTROL.decoder(arch.family)

                def length_control(batch: Batch) -> list[Hypothesis]:  # as summarize(length=...) gives it
                    batch.logits = scores.clone()
                    return _as_often_as_the_source(batch, control(batch), held, control)

                found = _fullest(batch, found, render, chars, caps, length_control)
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

    def _encode(self, texts: list[str], words: list[int] | None = None) -> list[list[int]]:
        """Token ids of each text, cut to the student's positions (with a warning; `words`: each raw line's
        length, where its text was cut before tokenising)."""
        max_len = self.model.config.max_len
        encoded = [self.vocab.encode(t) for t in texts]
        sizes = [max(len(tokens), words[i] if words else 0) for i, tokens in enumerate(encoded)]
        cut = [i for i, tokens in enumerate(encoded) if len(tokens) > max_len]
        if cut:
            longest = max(cut, key=lambda i: sizes[i])
            log.warning("%d of %d sentences are longer than this student's %d positions and are read on their first "
                        "%d words (the longest: sentence %d, %d words)", len(cut), len(texts), max_len, max_len,
                        longest + 1, sizes[longest])
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

            cut = self.model.config.max_len
            return encoder(self.minilm_onnx).encode([" ".join(text.split()[:cut]) for text in texts])
        states.check_lines(texts, states.source, "states of raw text are made by `naus encode-states --raw`, "
                           "of tokenised text without it" if raw else "run `naus encode-states` on the input")
        return states

    def _copy_batch(self, sources: list[list[str]], states: list[np.ndarray], length, ratio, min_length, beam_size,
                    chars, shown: list[list[str]] | None) -> tuple[Batch, float, Vocab]:
        """A batch for a copy-head student: its scores over a vocabulary of this batch's own words (so no word is
        `<unk>`), that vocabulary, and the seconds of its forward. `shown`: each word as the headline writes it
        (`naus.text.hosts`), for headlines (no punctuation, a word's characters those written)."""
        vocab = Vocab(list(SPECIALS) + list(dict.fromkeys(w for words in sources for w in words if w not in SPECIALS)))
        lengths = torch.tensor([len(words) for words in sources])
        ids = torch.zeros((len(sources), int(lengths.max())), dtype=torch.long)  # 0, ε's id, is no position's word
        x = torch.zeros((len(sources), int(lengths.max()), WIDTH))
        for row, (words, rows) in enumerate(zip(sources, states)):
            ids[row, : len(words)] = torch.tensor([vocab.index[w] for w in words])
            x[row, : len(words)] = torch.from_numpy(rows[: len(words)].astype(np.float32))
        targets = [target_length(int(n), length, ratio, min_length) for n in lengths]
        word_chars = np.array([len(token.encode()) for token in vocab.tokens])
        batch = Batch(lengths.to(self.device), targets, beam_size, vocab.blank, chars=chars,
                      word_chars=_written_chars(word_chars, ids, shown), unk=vocab.unk, banned=(vocab.pad,))
        tick = time.perf_counter()
        batch.logits = self.model(x.to(self.device), batch.lengths, ids.to(self.device), len(vocab), normalize=False)
        self._normalized(batch, punctuation(vocab) if shown is not None else ())
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return batch, time.perf_counter() - tick, vocab

    def _batch(self, encoded: list[list[int]], length, ratio, min_length, beam_size, chars,
               texts: list[str] | None, shown: list[list[str]] | None) -> tuple[Batch, float]:
        """One batch as a decoding method reads it: a CTC student run on it, or the encoder-decoder and its
        input; and the seconds of the CTC student's forward. `texts`: the sources, when each `<unk>` counts as
        the source word it will be restored to. `shown` (headlines): each word as written, no punctuation emitted."""
        config, arch = self.model.config, ARCHITECTURES[self.model.config.arch]
        lengths = torch.tensor([len(tokens) for tokens in encoded])
        tokens = torch.full((len(encoded), int(lengths.max())), self.vocab.pad, dtype=torch.long)
        for row, ids in enumerate(encoded):
            tokens[row, : len(ids)] = torch.tensor(ids)
        targets = [target_length(int(n), length, ratio, min_length) for n in lengths]
        banned = self.punctuation if shown is not None else ()
        if not arch.ctc and max(targets) > config.max_len:
            raise NausError(f"a summary of {max(targets)} words is longer than this {arch.name} student's max_len "
                            f"{config.max_len} allows")
        batch = Batch(lengths.to(self.device), targets, beam_size, self.vocab.blank, chars=chars,
                      word_chars=_written_chars(self.word_bytes, tokens, shown), unk=self.vocab.unk, model=self.model,
                      tokens=tokens.to(self.device), banned=(self.vocab.pad, *banned))
        if texts is not None:
            batch.unk_chars = [[len(w.encode()) for w in words] for words in shown] if shown is not None else [
                [len(w.encode()) for w in text.split()[: config.max_len]] for text in texts]
        if not arch.ctc:
            return batch, 0.0
        tick = time.perf_counter()
        batch.logits = self.model(batch.tokens, batch.lengths, normalize=False)  # decoders normalise what they read
        self._normalized(batch, banned)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return batch, time.perf_counter() - tick


def _fullest(batch: Batch, found: list[Result], render, chars: int, caps: list[int], length_control) -> list[Result]:
    """Headlines within `chars` bytes as written: char-control's most probable summary is often far shorter than
    the budget (each word costs probability), so the longest length-controlled one that fits replaces it (the
    most probable of its length); a summary that still does not fit (a first word capitalised longer) is left
    empty."""
    found = [r if len(r.summary.encode()) <= chars else Result("", 0, 0.0) for r in found]
    for words in range(2, min(max(caps), (chars + 1) // 2) + 1):
        batch.targets = [min(words, cap) for cap in caps]
        for k, hyp in enumerate(length_control(batch)):
            result = render(k, hyp)
            if result.length > found[k].length and len(result.summary.encode()) <= chars:
                found[k] = result
    return found


REPEAT_PASSES = 4  # decodings again, at most, to keep each headline's numbers to the source's count
_NUMBER = re.compile(r"[\d#]")  # a number as a student reads it (digits, or masked as #)


def _as_often_as_the_source(batch: Batch, hyps: list[Hypothesis], held: list[Counter], decoder) -> list[Hypothesis]:
    """Headlines that use no number more often than their source holds it (`held`: each source's count of each
    number's token; no `25 hostages 25`; other words are left as decoded, as barring one makes a copy head fill its
    slots out of order): where one does, the number is kept in the runs of slots that give it the highest
    scores, as many as the source holds it, and barred from the sample's other slots, and the batch is decoded
    again (the samples without a surplus decode as before), at most `REPEAT_PASSES` times."""
    for _ in range(REPEAT_PASSES):
        surplus = False
        for k, hyp in enumerate(hyps):
            runs: dict[int, list[list[int]]] = {}
            previous = batch.blank
            for slot, token in enumerate(hyp.path):
                if token != batch.blank:
                    if token != previous:
                        runs.setdefault(token, []).append([])
                    runs[token][-1].append(slot)
                previous = token
            for token, emitted in runs.items():
                if len(emitted) > held[k][token] > 0:
                    scores = batch.logits[k, :, token]
                    best = sorted(emitted, key=lambda run: -float(scores[run].max()))[: held[k][token]]
                    kept = {slot for run in best for slot in run}
                    batch.logits[k, [s for s in range(len(hyp.path)) if s not in kept], token] = float("-inf")
                    surplus = True
        if not surplus:
            break
        hyps = decoder(batch)
    return hyps


def _written_chars(word_chars: np.ndarray, ids: torch.Tensor, shown: list[list[str]] | None) -> np.ndarray:
    """The characters (UTF-8 bytes) char-control counts for each token: as the headline writes it (`shown`: the
    most of the token's positions in the batch, its clitics included), else as the vocabulary holds it."""
    if shown is None:
        return word_chars
    written = word_chars.copy()
    for row, words in enumerate(shown):
        for token, word in zip(ids[row].tolist(), words):
            written[token] = max(written[token], len(word.encode()))
    return written


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
