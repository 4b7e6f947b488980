"""The students on frozen MiniLM states (`naus.student.frozen`): each copies source words, so none needs an output
layer over a vocabulary and only a thin top trains (a minute a student on a CPU core at gigaword-sample's size).

`CopyNAUS` is NAUS with a copy head; beside it, on the same states and the same kind of head, Table 3's three
encoder-decoders: NAR-CTC (`CopyNARCTC`), the autoregressive one (`CopyAR`: end of sequence or a source position,
one at a time) and the vanilla non-autoregressive one (`CopyNAR`: exactly L slots at once, no ε). Every head scores
source positions bilinearly, plus a learned bias for the offset from the position the slot is anchored at.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from naus.settings import ModelConfig
from naus.student.frozen import WIDTH
from naus.student.model import (ARCH_MARK, _alignable, _encoder_layers, _padded, arch_mark, beam_best, beam_start,
                                beam_step, cached_step, ctc_loss, decoder_layers, padding_mask, slot_anchors)

IGNORE = -100  # a padded target's index (cross entropy skips it)


def words_from_positions(logits: Tensor, words: Tensor, vocab_size: int, normalize: bool = True) -> Tensor:
    """Scores [B, U, 1 + T] of ε and source positions (`CopyNAUS.scores`) as log-probabilities (logits: `normalize`
    False) [B, U, vocab_size] of the words `words` [B, T] (id 0 is ε): a word's probability sums its positions'."""
    owner = F.one_hot(words.clamp(min=0), vocab_size).to(logits.dtype)  # [B, T positions, V]
    owner[:, :, 0] = 0.0
    top = logits.max(dim=-1, keepdim=True).values
    summed = (logits[..., 1:] - top).exp() @ owner  # each word's probability mass, relative to the top
    present = owner.sum(dim=1, keepdim=True) > 0
    merged = torch.where(present, summed.clamp(min=1e-30).log() + top, -math.inf)
    merged[..., 0] = logits[..., 0]
    return F.log_softmax(merged, dim=-1) if normalize else merged


def source_positions(source: list[int], target: list[int]) -> list[int] | None:
    """Where each target word stands in its source: the first place after the previous word's (the search keeps the
    source's order), else its first place; None when a word is not in the source (the pair cannot be learnt)."""
    positions, after = [], 0
    for word in target:
        found = next((k for k in range(after, len(source)) if source[k] == word), None)
        if found is None and word in source:
            found = source.index(word)
        if found is None:
            return None
        positions.append(found)
        after = found + 1
    return positions


class CopyHead(nn.Module):
    """What the students on frozen states share: the states projected to `d_model`, `n_layers` encoder layers over
    them, and the copy scores of each slot over the source positions."""

    REACH = 8

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.register_buffer(ARCH_MARK, arch_mark(config.arch))
        self.project = nn.Linear(WIDTH, config.d_model)
        self.norm = nn.LayerNorm(config.d_model)
        self.layers = _encoder_layers(config)
        self.query, self.key = nn.Linear(config.d_model, config.d_model), nn.Linear(config.d_model, config.d_model)
        self.offset = nn.Parameter(torch.zeros(2 * self.REACH + 1))  # no draw from the generator: the order holds
        self.dropout = nn.Dropout(config.dropout)

    def projected(self, states: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """The states projected [B, T, d] (dropout in training) and their padding mask [B, T]."""
        time = states.shape[1]
        if time > self.config.max_len:
            raise ValueError(f"sequence of {time} tokens exceeds the model's max_len {self.config.max_len}")
        return self.dropout(self.norm(self.project(states))), padding_mask(lengths, time)

    def copy_scores(self, x: Tensor, sources: Tensor, anchor: Tensor, padding: Tensor) -> Tensor:
        """Logits [B, U, T] of slot states `x` [B, U, d] over source states `sources` [B, T, d]: bilinear, plus the
        learned bias of the offset j − anchor within ±`REACH` (`anchor` [B or 1, U]); −∞ past a source's end."""
        copy = self.query(x) @ self.key(sources).transpose(1, 2) / math.sqrt(self.config.d_model)
        position = torch.arange(sources.shape[1], device=x.device)
        copy = copy + self.offset[(position[None, None, :] - anchor[..., None]).clamp(-self.REACH, self.REACH)
                                  + self.REACH]
        dtype = torch.promote_types(copy.dtype, torch.float32)  # fp32 at least, under bf16 autocast too
        return copy.to(dtype).masked_fill(padding[:, None, :], -math.inf)


class CopyNAUS(CopyHead):
    """NAUS on frozen MiniLM states with a copy head: slot i chooses ε or a source position j (anchored at i: a slot
    of an extractive summary mostly copies its own word); a word's probability sums its positions'. Any word of a
    new source can be kept. Written into a vocabulary (−∞ for words not in the source), it is what every CTC
    decoder reads."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.blank = nn.Linear(config.d_model, 1)

    def top(self, x: Tensor, padding: Tensor) -> tuple[Tensor, Tensor]:
        """What trains on the projected states [B, T, d]: each slot's state and each source position's (here alike)."""
        x = self.layers(x, src_key_padding_mask=padding)
        return x, x

    def scores(self, states: Tensor, lengths: Tensor) -> Tensor:
        """Logits [B, T, 1 + T]: ε, then each source position (−∞ past a source's end)."""
        x, padding = self.projected(states, lengths)
        x, sources = self.top(x, padding)
        copy = self.copy_scores(x, sources, torch.arange(x.shape[1], device=x.device)[None], padding)
        return torch.cat([self.blank(x).to(copy.dtype), copy], dim=-1)

    def forward(self, states: Tensor, lengths: Tensor, words: Tensor, vocab_size: int, normalize: bool = True):
        """Scores [B, T, vocab_size] of the source's words (`words_from_positions`)."""
        return words_from_positions(self.scores(states, lengths), words, vocab_size, normalize)

    def loss(self, tokens: Tensor, lengths: Tensor, targets: list[list[int]], blank: int = 0, smoothing: float = 0.1,
             states: Tensor | None = None) -> tuple[Tensor, int, int]:
        """CTC over ε and each source's own words (ids local to the source: a target word not in it is
        unlearnable, its pair left out); smoothing spreads over those words only."""
        local = torch.zeros_like(tokens)
        rows = []
        for b, target in enumerate(targets):
            source = tokens[b, : int(lengths[b])].tolist()
            first = {word: k + 1 for k, word in reversed(list(enumerate(source)))}
            local[b, : len(source)] = torch.tensor([first[w] for w in source], dtype=tokens.dtype)
            rows.append([first[w] for w in target] if all(w in first for w in target) else [])
        log_probs = self(states, lengths, local, tokens.shape[1] + 1)
        finite = torch.isfinite(log_probs)
        # PyTorch's CTC gives NaN gradients where a log-probability is −∞ (a word not in the source): a floor
        # whose gradient is zero leaves every path's score as it was
        loss, used, skipped = ctc_loss(log_probs.clamp(min=-1e4), lengths, rows, 0, 0.0)
        if smoothing > 0 and used:
            valid = (torch.arange(log_probs.shape[1], device=lengths.device)[None] < lengths[:, None]).float()
            mean = log_probs.masked_fill(~finite, 0.0).sum(-1) / finite.sum(-1).clamp(min=1)
            loss = (1 - smoothing) * loss + smoothing * (-(mean * valid).sum() / valid.sum())
        return loss, used, skipped

    def usable(self, lengths: list[int], targets: list[list[int]]) -> int:
        return len(_alignable(torch.tensor(lengths), targets))


class CopyNARCTC(CopyNAUS):
    """Table 3's NAR-CTC encoder-decoder on `CopyNAUS`'s frozen states and copy head: one decoder slot per source
    word (its projected state, as NAR-CTC's are its source's embeddings) attends to the encoder and copies from it."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.decoder = decoder_layers(config)

    def top(self, x: Tensor, padding: Tensor) -> tuple[Tensor, Tensor]:
        memory = self.layers(x, src_key_padding_mask=padding)
        return self.decoder(x, memory, tgt_key_padding_mask=padding, memory_key_padding_mask=padding), memory


def _position_loss(logits: Tensor, gold: Tensor, smoothing: float) -> Tensor:
    """Cross entropy of logits [B, U, C] (−∞ where a choice does not exist) against `gold` [B, U] (IGNORE at padded
    slots), label smoothing spread over each slot's existing choices."""
    log_probs = logits.log_softmax(dim=-1)
    finite, kept = torch.isfinite(log_probs), gold != IGNORE
    nll = -log_probs.clamp(min=-1e4).gather(-1, gold.clamp(min=0)[..., None])[..., 0]
    mean = log_probs.masked_fill(~finite, 0.0).sum(-1) / finite.sum(-1).clamp(min=1)
    loss = ((1 - smoothing) * nll - smoothing * mean) * kept
    return loss.sum() / kept.sum()


def _aligned(tokens: Tensor, lengths: Tensor, targets: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """The pairs whose every target word is in its source, and their words' source positions (`source_positions`)."""
    keep, found = [], []
    for b, target in enumerate(targets):
        positions = source_positions(tokens[b, : int(lengths[b])].tolist(), target) if target else None
        if positions is not None:
            keep.append(b)
            found.append(positions)
    return keep, found


class CopyNAR(CopyHead):
    """Table 3's vanilla NAR encoder-decoder on the frozen states: M = L slots filled at once, no ε. Slot j's query
    is the projected state of the source position it is anchored at (⌊j·S/M⌋, Gu et al. 2018's uniform copy) plus
    its slot's position; the decoder attends to the encoder; each slot copies one source position."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.slot_positions = nn.Embedding(config.max_len, config.d_model)
        self.decoder = decoder_layers(config)
        nn.init.normal_(self.slot_positions.weight, std=0.02)

    def scores(self, states: Tensor, lengths: Tensor, slots: Tensor) -> Tensor:
        """Logits [B, M, 1 + T]: ε (never: −∞), then each source position, for `slots` [B] slots a sample."""
        x, padding = self.projected(states, lengths)
        memory = self.layers(x, src_key_padding_mask=padding)
        anchor = slot_anchors(lengths, slots)
        queries = x.gather(1, anchor[..., None].expand(-1, -1, x.shape[-1]))
        queries = queries + self.slot_positions(torch.arange(anchor.shape[1], device=x.device))[None]
        y = self.decoder(self.dropout(queries), memory, tgt_key_padding_mask=padding_mask(slots, anchor.shape[1]),
                         memory_key_padding_mask=padding)
        copy = self.copy_scores(y, memory, anchor, padding)
        return torch.cat([torch.full_like(copy[..., :1], -math.inf), copy], dim=-1)

    def forward(self, states: Tensor, lengths: Tensor, words: Tensor, vocab_size: int, slots: Tensor,
                normalize: bool = True) -> Tensor:
        """Log-probabilities [B, M, vocab_size] of the source's words in each slot (`words_from_positions`)."""
        return words_from_positions(self.scores(states, lengths, slots), words, vocab_size, normalize)

    def loss(self, tokens: Tensor, lengths: Tensor, targets: list[list[int]], blank: int = 0, smoothing: float = 0.1,
             states: Tensor | None = None) -> tuple[Tensor, int, int]:
        """Cross entropy of each slot's source position (`source_positions`); a pair with a word not in its source,
        or none, is left out and counted."""
        keep, positions = _aligned(tokens, lengths, targets)
        if not keep:
            return self.offset.sum() * 0.0, 0, len(targets)
        index = torch.tensor(keep, device=tokens.device)
        kept_lengths = lengths.index_select(0, index)
        slots = torch.tensor([len(p) for p in positions], device=tokens.device)
        logits = self.scores(states.index_select(0, index), kept_lengths, slots)[..., 1:]
        gold = _padded(positions, IGNORE, tokens.device)
        return _position_loss(logits, gold, smoothing), len(keep), len(targets) - len(keep)

    def usable(self, lengths: list[int], targets: list[list[int]]) -> int:
        return sum(1 for t in targets if t)


class CopyAR(CopyHead):
    """Table 3's autoregressive encoder-decoder on the frozen states: step t reads the projected state of the position
    it copied at t − 1 (a learned start vector at t = 0) and chooses the end of the summary or a source position;
    its offsets are from the position copied before (a summary in source order steps forward)."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.slot_positions = nn.Embedding(config.max_len, config.d_model)
        self.decoder = decoder_layers(config)
        self.start = nn.Parameter(torch.zeros(config.d_model))
        self.end = nn.Linear(config.d_model, 1)
        nn.init.normal_(self.slot_positions.weight, std=0.02)

    def inputs(self, x: Tensor, previous: Tensor, first: int = 0) -> Tensor:
        """Decoder inputs [B, U, d] for the positions copied before each step, `previous` [B, U] (−1: the start),
        the steps numbered from `first`."""
        read = x.gather(1, previous.clamp(min=0)[..., None].expand(-1, -1, x.shape[-1]))
        read = torch.where(previous[..., None] < 0, self.start.to(read.dtype), read)
        steps = torch.arange(first, first + previous.shape[1], device=x.device)
        if first + previous.shape[1] > self.config.max_len:
            raise ValueError(f"a summary of {first + previous.shape[1]} steps exceeds the model's max_len "
                             f"{self.config.max_len}")
        return read + self.slot_positions(steps)[None]

    def choices(self, y: Tensor, memory: Tensor, previous: Tensor, barred: Tensor) -> Tensor:
        """Logits [B, U, 1 + T]: the end, then each source position (−∞ where `barred` [B, T])."""
        copy = self.copy_scores(y, memory, previous, barred)
        return torch.cat([self.end(y).to(copy.dtype), copy], dim=-1)

    def scores(self, states: Tensor, lengths: Tensor, previous: Tensor) -> Tensor:
        """Teacher-forced logits [B, U, 1 + T] after the positions `previous` [B, U] (−1 first)."""
        x, padding = self.projected(states, lengths)
        memory = self.layers(x, src_key_padding_mask=padding)
        time = previous.shape[1]
        causal = nn.Transformer.generate_square_subsequent_mask(time, device=x.device)
        y = self.decoder(self.dropout(self.inputs(x, previous)), memory, tgt_mask=causal, tgt_is_causal=True,
                         memory_key_padding_mask=padding)
        return self.choices(y, memory, previous, padding)

    def loss(self, tokens: Tensor, lengths: Tensor, targets: list[list[int]], blank: int = 0, smoothing: float = 0.1,
             states: Tensor | None = None) -> tuple[Tensor, int, int]:
        """Cross entropy of each word's source position (`source_positions`), then of the end; a pair with a word
        not in its source is left out and counted."""
        keep, positions = _aligned(tokens, lengths, targets)
        if not keep:
            return self.offset.sum() * 0.0, 0, len(targets)
        index = torch.tensor(keep, device=tokens.device)
        previous = _padded([[-1] + p for p in positions], -1, tokens.device)
        gold = _padded([[k + 1 for k in p] + [0] for p in positions], IGNORE, tokens.device)
        logits = self.scores(states.index_select(0, index), lengths.index_select(0, index), previous)
        return _position_loss(logits, gold, smoothing), len(keep), len(targets) - len(keep)

    def usable(self, lengths: list[int], targets: list[list[int]]) -> int:
        return len(targets)

    @torch.no_grad()
    def generate(self, states: Tensor, lengths: Tensor, words: Tensor, max_words: list[int], beam_size: int = 1,
                 eos: int = 0, banned: tuple[int, ...] = ()) -> list[tuple[list[int], float]]:
        """(words, log-probability) per sample, `words` [B, T] the ids of its source's words: greedy (beam 1) or beam
        search over the end and the source positions (none whose word is `banned`), each summary stopping at the end
        or L words. A finished beam extends by the end at no cost; each step runs the decoder on the newest
        position only (`cached_step`)."""
        batch, k, device = states.shape[0], beam_size, states.device
        x, padding = self.projected(states, lengths)
        memory = self.layers(x, src_key_padding_mask=padding)
        barred = padding | torch.isin(words, torch.tensor(banned, dtype=words.dtype, device=device))
        x, memory, padding, barred = (t.repeat_interleave(k, 0) for t in (x, memory, padding, barred))
        limit, scores, finished, caches = beam_start(max_words, k, memory, len(self.decoder.layers))
        previous = torch.full((batch * k, 1), -1, dtype=torch.long, device=device)
        chosen = torch.zeros((batch * k, 0), dtype=torch.long, device=device)
        for step in range(max(max_words, default=0)):
            y = cached_step(self.decoder, self.inputs(x, previous, step), caches, memory, padding)
            log_probs = self.choices(y, memory, previous, barred)[:, 0].float().log_softmax(dim=-1)
            # choice 0: the end; j + 1: source position j
            scores, rows, choice, finished = beam_step(scores, log_probs, finished | (step >= limit), 0)
            previous = torch.where(choice > 0, choice - 1, previous[rows, 0])[:, None]
            chosen = torch.cat([chosen[rows], choice[:, None]], dim=1)
            caches = [cache[rows] for cache in caches]
            if bool(finished.all()):
                break
        return [([int(words[b, j - 1]) for j in picked][: max_words[b]], score)
                for b, (picked, score) in enumerate(beam_best(scores, chosen, 0))]


class OnStates:
    """A copy encoder-decoder bound to one batch's frozen states, called as `naus.decoding.encoder_decoder` calls the
    encoder-decoders (their `tokens` here the batch's own word ids, `words` of `vocab_size`)."""

    def __init__(self, model: CopyAR | CopyNAR, states: Tensor, vocab_size: int):
        self.model, self.states, self.vocab_size = model, states, vocab_size

    def __call__(self, tokens: Tensor, lengths: Tensor, slots: Tensor) -> Tensor:
        return self.model(self.states, lengths, tokens, self.vocab_size, slots)

    def generate(self, tokens: Tensor, lengths: Tensor, max_words: list[int], beam_size: int = 1, eos: int = 0,
                 banned: tuple[int, ...] = ()) -> list[tuple[list[int], float]]:
        return self.model.generate(self.states, lengths, tokens, max_words, beam_size, eos, banned)
