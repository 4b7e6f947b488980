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
from naus.student.folder import BEST
from naus.architectures import ARCHITECTURES
from naus.student.checkpoint import load_checkpoint, model_from_checkpoint
from naus.decoding import Batch, Hypothesis, slot_log_norm, word_slots
from naus.decoding.char_control import written_chars
from naus.device import pick_device
from naus.models import BUNDLED, BUNDLED_ENCODER
from naus.methods import CHAR_CONTROL, CHARS, LENGTH_CONTROL, METHODS, WORDS, default_method
from naus.settings import DecodeConfig, target_length
from naus.student.copy_head import OnStates
from naus.student.frozen import WIDTH, States
from naus.student.vocab import BLANK, PAD, SPECIALS, Vocab
from naus.text import clean, copy_key, dangles, headline, hosts, is_word, normal_token, phrase_ties, source_tokens

log = logging.getLogger(__name__)


@dataclass
class Result:
    summary: str
    length: int
    log_prob: float


class Summarizer:
    def __init__(self, model, vocab, device: torch.device, minilm_onnx: str | Path | None = None,
                 encoder: str | Path | None = None):
        self.model, self.vocab, self.device = model.to(device).eval(), vocab, device
        self.minilm_onnx = None if minilm_onnx is None else Path(minilm_onnx)  # MiniLM for new text's frozen states
        self.encoder: Path | None = None  # or the distilled one the student learned on
        if encoder is not None:
            self.use_encoder(encoder)
        self.word_bytes = np.array([len(token.encode()) for token in vocab.tokens])  # as written, for char-control
        self.last_timing: dict[str, float] = {}

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | None = None, minilm_onnx: str | Path | None = None,
                        encoder: str | Path | None = None) -> "Summarizer":
        """A trained student. `minilm_onnx` (a file of `naus export-onnx`): new text's frozen states computed by
        it, about twice as fast as the fp32 MiniLM the students learned on; the teacher's 7-bit int8 model loses
        some quality, an 8-bit one (`--full-range`, exact on CPUs with VNNI) keeps it
        (results/benchmarks/student_states.json). The default gives the same bytes on any CPU. `encoder`: the
        distilled encoder (`naus distil`) whose states the student learned on, for one that did."""
        device = pick_device(device)
        model, vocab = model_from_checkpoint(load_checkpoint(path, "cpu"), path)
        if encoder is None and Path(path).resolve() == BUNDLED and model.config.states_encoder:
            encoder = BUNDLED_ENCODER  # shipped beside it
        try:
            return cls(model, vocab, device, minilm_onnx, encoder)
        except NausError as err:
            raise NausError(f"{path}: {err}") from None

    @classmethod
    def from_pretrained(cls, model: str | Path | None = None, device: str | None = None,
                        minilm_onnx: str | Path | None = None, encoder: str | Path | None = None) -> "Summarizer":
        """The bundled Gigaword student (no argument: `naus/models/MODEL_CARD.md` says what it is) or another:
        a checkpoint, or the directory `naus train` wrote it to."""
        return cls.from_checkpoint(cls.pretrained_path(model), device, minilm_onnx, encoder)

    def use_encoder(self, encoder: str | Path) -> None:
        """Compute new text's states with this encoder file (a distilled MiniLM, `naus distil`, or word vectors,
        `naus word-vectors`), refused unless it is the one the student learned on."""
        from naus.student.frozen import identity

        encoder, learned = Path(encoder), self.model.config.states_encoder
        if not ARCHITECTURES[self.model.config.arch].frozen:
            raise NausError(f"{encoder}: an encoder file, for a student on frozen states; this one is "
                            f"{self.model.config.arch}")
        if self.minilm_onnx is not None:
            raise NausError(f"{self.minilm_onnx}: an ONNX MiniLM, for a student on MiniLM's states, not with an "
                            f"encoder file ({encoder})")
        given = identity(encoder)
        if given != learned:
            raise NausError(f"{encoder}: not the encoder whose states the student learned on (SHA-256 "
                            f"{given[:16]}..., the student's {learned[:16] + '...' if learned else 'MiniLM'})")
        self.encoder = encoder

    @staticmethod
    def pretrained_path(model: str | Path | None) -> Path:
        """The checkpoint `from_pretrained(model)` reads."""
        path = BUNDLED if model is None else Path(model)
        return path / BEST if path.is_dir() else path

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
        phrases: str = DecodeConfig.phrases,
        last_word: str = DecodeConfig.last_word,
        adjacency: float = DecodeConfig.adjacency,
        raw: bool = True,
        chars: int | None = None,
        restore: bool = True,
        states: States | None = None,
        headlines: bool | None = None,
    ) -> list[Result]:
        """One summary per sentence; `raw=True` tokenises as the training data was (not for the
        Gigaword evaluation, whose inputs and references are already tokenised); `restore` gives each
        `<unk>` back its source word (`restore_unknown`), else summaries keep `<unk>` as decoded.
        `chars`: at most that many characters (UTF-8 bytes), the summary as returned (a restored `<unk>` counted as
        its source word). A copy-head student decodes in the source's order by default (`naus.decoding.source_order`:
        no source word twice, none out of order), others by length control (`naus.methods`). Any iterable of strings
        (a generator too) is read once. A student on frozen states (`naus-copy`) reads `states`, the sentences'
        as `naus encode-states` made them, or computes them here. `headlines` (the default for raw text): no
        punctuation chosen, so L counts words a reader counts, and each summary written as its source wrote its
        words (`naus.text.headline`: case, digits); else the evaluator's form (lower case, digits as #).
        `phrases`, `last_word`, `adjacency`: what the source-order decoder keeps whole, may end a summary on, and the
        bonus of each pair of words adjacent in the source (`DecodeConfig`: its defaults were chosen on dev)."""
        _check_arguments(sentences, method, states)
        given = [name for name, value in (("length", length), ("ratio", ratio), ("chars", chars)) if value is not None]
        if len(given) > 1:  # the command line's --length, --ratio and --chars exclude each other
            raise NausError(f"give one of length, ratio and chars, not {' and '.join(given)}")
        length = DecodeConfig.length if length is None and ratio is None else length  # char-control's reads it too
        decoding = DecodeConfig(length=length, ratio=ratio, chars=chars, min_length=min_length, beam_size=beam_size,
                                batch_size=batch_size, max_memory_mb=max_memory_mb, phrases=phrases,
                                last_word=last_word, adjacency=adjacency)  # the command line's checks, types included
        method = self._method(method, chars)
        headlines = raw if headlines is None else headlines
        if headlines and not raw:
            raise NausError("headlines are written from raw text: summarize(..., raw=True) or headlines=False")
        if states is not None and not ARCHITECTURES[self.model.config.arch].frozen:
            raise NausError(f"a {self.model.config.arch} student reads no frozen states (they are for a naus-copy "
                            "student)")
        started, forward, samples, results = time.perf_counter(), 0.0, 0, []
        # given states are the whole text's, held already: read with it whole; else a chunk at a time
        for offset, chunk in _chunks(sentences, None if states is not None else CHUNK):
            found, seconds, summarised = self._summarize_chunk(chunk, offset, states, method, decoding, raw, restore,
                                                               headlines)
            results += found
            forward, samples = forward + seconds, samples + summarised
        self.last_timing = {"seconds": time.perf_counter() - started, "forward_seconds": forward,
                            "samples": samples, "method": method}
        return results

    def _summarize_chunk(self, sentences: list[str], offset: int, states: States | None, method: str,
                         decoding: DecodeConfig, raw: bool, restore: bool,
                         headlines: bool) -> tuple[list[Result], float, int]:
        """`summarize` of sentences `offset`, `offset + 1`, ...: their results, the seconds of the student's forward
        passes, and how many were summarised (a blank sentence costs nothing: its summary is empty)."""
        texts, written, cut = self._read(sentences, raw)
        encoded = self._encode(texts, cut, offset)
        order = sorted((i for i in range(len(texts)) if encoded[i]), key=lambda i: len(encoded[i]))
        frozen = ARCHITECTURES[self.model.config.arch].frozen
        if frozen:
            states = self._frozen_states(texts, states, raw, order)
        results, forward = [Result("", 0, 0.0) for _ in texts], 0.0  # an empty sentence's
        for start in range(0, len(order), decoding.batch_size):
            rows = order[start : start + decoding.batch_size]
            read = [(texts[i], written[i] if raw else None, encoded[i], states[i] if frozen else None) for i in rows]
            found, seconds = self._summarize_batch(read, method, decoding, restore, headlines)
            forward += seconds
            for i, result in zip(rows, found):
                results[i] = result
        return results, forward, len(order)

    def _summarize_batch(self, read: list[tuple], method: str, decoding: DecodeConfig, restore: bool,
                         headlines: bool) -> tuple[list[Result], float]:
        """One batch's results and the seconds of the student's forward: `read` holds each sentence's text, tokens as
        written (raw text), token ids and frozen states (a copy head's)."""
        arch, chars = ARCHITECTURES[self.model.config.arch], decoding.chars
        sources = [text.split()[: len(ids)] for text, _, ids, _ in read]
        shown = [hosts(written[: len(ids)]) for _, written, ids, _ in read] if headlines else None
        if arch.frozen:
            keys = [list(map(copy_key, written[: len(ids)])) for _, written, ids, _ in read] if headlines else sources
            batch, seconds, vocab = self._copy_batch(keys, [states for *_, states in read], method, shown, decoding)
            if METHODS[method].reads_positions:
                read_tokens = [(written or text.split())[: len(ids)] for text, written, ids, _ in read]
                batch.tied, batch.dangling = _ties(read_tokens, batch, decoding.phrases, decoding.last_word)
                batch.adjacency = decoding.adjacency
        else:
            (batch, seconds), vocab = self._batch([ids for _, _, ids, _ in read], decoding,
                                                  [text for text, *_ in read] if restore else None, shown), self.vocab
        caps = [max(1, sum(map(is_word, words))) for words in sources]  # a headline's most words: the source's
        if headlines:
            batch.targets = [min(t, cap) for t, cap in zip(batch.targets, caps)]

        def render(k: int, hyp: Hypothesis) -> Result:
            words = [vocab.tokens[t] for t in hyp.tokens]
            if restore and not arch.frozen:
                words = restore_unknown(words, hyp, sources[k], self.vocab, arch.ctc)
            summary = " ".join(words)
            return Result(headline(summary, read[k][1], hyp.positions) if headlines else summary, len(hyp.tokens),
                          hyp.log_prob)

        found = [render(k, hyp) for k, hyp in enumerate(METHODS[method].decoder(arch.family)(batch))]
        if headlines and METHODS[method] is CHAR_CONTROL:
            found = _fullest(batch, found, render, chars, caps, LENGTH_CONTROL.decoder(arch.family))
        if headlines and chars is not None:  # a word written longer than the student counted it does not fit
            found = [r if len(r.summary.encode()) <= chars else Result("", 0, 0.0) for r in found]
        return found, seconds

    def _method(self, method: str | None, chars: int | None) -> str:
        """The method asked for, or the architecture's default (char-control with a budget in characters)."""
        arch = self.model.config.arch
        methods = ARCHITECTURES[arch].methods
        method = method or default_method(ARCHITECTURES[arch].family, CHARS if chars is not None else WORDS)
        if method not in methods:
            raise NausError(f"{'an' if arch[0] in 'aeiou' else 'a'} {arch} model decodes with {' or '.join(methods)}, "
                            f"not {method!r}")
        if METHODS[method].budget == CHARS and chars is None:
            raise NausError(f"{method} needs a budget in characters (--chars N)")
        if METHODS[method].budget != CHARS and chars is not None:
            budgeted = " or ".join(m for m in methods if METHODS[m].budget == CHARS)
            raise NausError(f"a budget in characters (--chars) is for {budgeted}, not {method}")
        return method

    def _read(self, sentences: list[str], raw: bool) -> tuple[list[str], list[list[str]] | None, list[int] | None]:
        """Each sentence as the student reads it (normal tokens; of raw text, its first words only: a 1 MB line
        costs no gigabytes), of raw text its tokens as written and the length of each line that was cut (else 0)."""
        if not raw:  # the markers are no words
            return [" ".join(word for word in s.split() if word not in (BLANK, PAD)) for s in sentences], None, None
        reads = 4 * self.model.config.max_len  # raw words tokenised: more than the student reads, however long
        heads = [s.split(None, reads) for s in sentences]
        written = [source_tokens(" ".join(head[:reads])) for head in heads]
        return ([" ".join(map(normal_token, tokens)) for tokens in written], written,
                [len(s.split()) if len(head) > reads else 0 for s, head in zip(sentences, heads)])

    def _encode(self, texts: list[str], words: list[int] | None = None, offset: int = 0) -> list[list[int]]:
        """Token ids of each text, cut to the student's positions (with a warning naming sentence `offset` + its
        index; `words`: each raw line's length, where its text was cut before tokenising)."""
        max_len = self.model.config.max_len
        encoded = [self.vocab.encode(t) for t in texts]
        sizes = [max(len(tokens), words[i] if words else 0) for i, tokens in enumerate(encoded)]
        cut = [i for i, tokens in enumerate(encoded) if len(tokens) > max_len]
        if cut:
            longest = max(cut, key=lambda i: sizes[i])
            log.warning("%d of %d sentences are longer than this student's %d positions and are read on their first "
                        "%d words (the longest: sentence %d, %d words)", len(cut), len(texts), max_len, max_len,
                        offset + longest + 1, sizes[longest])
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

    def _frozen_states(self, texts: list[str], states: States | None, raw: bool, rows: list[int]) -> States | dict:
        """The sentences' frozen states: those given, checked to be theirs, or computed now for `rows` (a blank
        sentence's are never computed)."""
        learned = self.model.config.states_encoder  # the encoder file it learned on ("": MiniLM)
        if states is None:  # of each line's first words the student reads: a 1 MB line costs no gigabytes
            from naus.student.frozen import encoder

            cut = self.model.config.max_len
            if learned and self.encoder is None:
                raise NausError(f"a student on the states of an encoder file (SHA-256 {learned[:16]}...: a distilled "
                                "MiniLM or word vectors): give its file (--encoder) or the states (--states)")
            if not rows:
                return {}
            computed = encoder(self.minilm_onnx, self.encoder).encode([" ".join(texts[i].split()[:cut]) for i in rows])
            return {i: computed[k] for k, i in enumerate(rows)}
        if states.encoder != learned:
            raise NausError(f"{states.source}: states of {'an encoder file' if states.encoder else 'MiniLM'}, "
                            f"but the student learned on {'an encoder file' if learned else 'MiniLM'}'s"
                            f"{' (another one)' if states.encoder and learned else ''}: make them with its "
                            f"encoder (`naus encode-states{' --encoder' if learned else ''}`)")
        states.check_lines(texts, states.source, "states of raw text are made by `naus encode-states --raw`, "
                           "of tokenised text without it" if raw else "run `naus encode-states` on the input")
        return states

    def _copy_batch(self, sources: list[list[str]], states: list[np.ndarray], method: str,
                    shown: list[list[str]] | None, decoding: DecodeConfig) -> tuple[Batch, float, Vocab]:
        """A batch for a copy-head student: its scores over a vocabulary of this batch's own words (so no word is
        `<unk>`), or over source positions for a method that reads them (`source_order`); that vocabulary, and
        the seconds of its forward. `shown`: each word as the headline writes it (`naus.text.hosts`), for
        headlines (no punctuation, a word's characters those written)."""
        vocab = Vocab(list(SPECIALS) + list(dict.fromkeys(w for words in sources for w in words if w not in SPECIALS)))
        lengths = torch.tensor([len(words) for words in sources])
        ids = torch.zeros((len(sources), int(lengths.max())), dtype=torch.long)  # 0, ε's id, is no position's word
        x = torch.zeros((len(sources), int(lengths.max()), WIDTH))
        for row, (words, rows) in enumerate(zip(sources, states)):
            ids[row, : len(words)] = torch.tensor([vocab.index[w] for w in words])
            x[row, : len(words)] = torch.from_numpy(rows[: len(words)].astype(np.float32))
        banned = punctuation(vocab) if shown is not None else ()
        if not ARCHITECTURES[self.model.config.arch].ctc:  # an encoder-decoder generates from the states it is bound to
            return self._new_batch(lengths, vocab, ids, shown, decoding, model=OnStates(self.model, x.to(self.device),
                                   len(vocab)), tokens=ids.to(self.device), banned=(vocab.pad, *banned)), 0.0, vocab
        batch = self._new_batch(lengths, vocab, ids, shown, decoding)
        tick = time.perf_counter()
        x, lengths = x.to(self.device), batch.lengths
        if METHODS[method].reads_positions:  # never the words' sums
            batch.positions, batch.source_ids = self.model.scores(x, lengths), ids
            batch.positions[..., 1:].masked_fill_(torch.isin(ids, torch.tensor(banned, dtype=ids.dtype))[:, None]
                                                  .to(self.device), float("-inf"))
        else:
            batch.logits = self.model(x, lengths, ids.to(self.device), len(vocab), normalize=False)
            self._normalized(batch, banned)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return batch, time.perf_counter() - tick, vocab

    def _new_batch(self, lengths: torch.Tensor, vocab: Vocab, ids: torch.Tensor, shown: list[list[str]] | None,
                   decoding: DecodeConfig, **fields) -> Batch:
        """A batch's targets and budgets for sources of `lengths` tokens `ids` [N, T] of `vocab`."""
        targets = [target_length(int(n), decoding.length, decoding.ratio, decoding.min_length) for n in lengths]
        word_chars = self.word_bytes if vocab is self.vocab else np.array([len(t.encode()) for t in vocab.tokens])
        fields.setdefault("banned", (vocab.pad,))
        return Batch(lengths.to(self.device), targets, decoding.beam_size, vocab.blank, chars=decoding.chars,
                     word_chars=written_chars(word_chars, ids, shown), unk=vocab.unk,
                     max_memory_mb=decoding.max_memory_mb, **fields)

    def _batch(self, encoded: list[list[int]], decoding: DecodeConfig, texts: list[str] | None,
               shown: list[list[str]] | None) -> tuple[Batch, float]:
        """One batch as a decoding method reads it: a CTC student run on it, or the encoder-decoder and its
        input; and the seconds of the CTC student's forward. `texts`: the sources, when each `<unk>` counts as
        the source word it will be restored to. `shown` (headlines): each word as written, no punctuation emitted."""
        config, arch = self.model.config, ARCHITECTURES[self.model.config.arch]
        lengths = torch.tensor([len(tokens) for tokens in encoded])
        tokens = torch.full((len(encoded), int(lengths.max())), self.vocab.pad, dtype=torch.long)
        for row, ids in enumerate(encoded):
            tokens[row, : len(ids)] = torch.tensor(ids)
        banned = self.punctuation if shown is not None else ()
        batch = self._new_batch(lengths, self.vocab, tokens, shown, decoding, model=self.model,
                                tokens=tokens.to(self.device), banned=(self.vocab.pad, *banned))
        if not arch.ctc and max(batch.targets) > config.max_len:
            raise NausError(f"a summary of {max(batch.targets)} words is longer than this {arch.name} student's "
                            f"max_len {config.max_len} allows")
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


CHUNK = 1024  # sentences summarised at a time: a file or an iterable of any length costs one chunk's states


def _ties(sources: list[list[str]], batch: Batch, phrases: str,
          last_word: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """[N, T] each: the source positions the source-order decoder keeps only with the next (`naus.text.phrase_ties`,
    on the tokens as written where the source is raw text: case shows names; None when phrases are split), and
    those a summary may not end on (`naus.text.dangles`; None when any word may end one)."""
    shape = (len(sources), int(batch.lengths.max()))
    tied = np.zeros(shape, dtype=np.bool_) if phrases == "whole" else None
    dangling = np.zeros(shape, dtype=np.bool_) if last_word == "content" else None
    for row, tokens in enumerate(sources):
        if tied is not None:
            tied[row, : len(tokens)] = phrase_ties(tokens)
        if dangling is not None:
            dangling[row, : len(tokens)] = [dangles(t) for t in tokens]
    return tied, dangling


def _check_arguments(sentences, method, states) -> None:
    """The API's arguments, refused in one line naming what was given (the command line's are checked by argparse)."""
    if isinstance(sentences, (str, bytes, bytearray)) or not isinstance(sentences, Iterable):
        hint = ": one sentence is [text]" if isinstance(sentences, str) else ""
        raise TypeError(f"sentences must be an iterable of strings (a list of str), got {type(sentences).__name__}"
                        f"{hint}")
    if method is not None and not isinstance(method, str):
        raise TypeError(f"method must be a string, got {type(method).__name__}")
    if states is not None and not isinstance(states, States):
        raise TypeError(f"states must be States (naus.student.frozen.States.load(path) reads a file), "
                        f"got {type(states).__name__}")


def _chunks(sentences: Iterable[str], size: int | None):
    """(offset, sentences) `size` at a time (None: all at once), each as naus reads raw text (`naus.text.clean`); a
    sentence that is not a string is refused naming its index."""
    chunk, offset = [], 0
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, str):
            hint = " (decode bytes first: text.decode('utf-8'))" if isinstance(sentence, bytes) else ""
            raise TypeError(f"sentences must be strings, got {type(sentence).__name__} at sentences[{i}]{hint}")
        try:
            chunk.append(clean(sentence))
        except NausError as err:
            raise ValueError(f"sentences[{i}] holds {err}") from None
        if len(chunk) == size:
            yield offset, chunk
            chunk, offset = [], i + 1
    if chunk or not offset:
        yield offset, chunk


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
