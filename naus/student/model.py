"""The students from scratch: NAUS and the three encoder–decoder alternatives of the paper's Table 3.

NAUS is an encoder-only Transformer with one output slot per source token, trained with CTC (Liu, Huang & Mou
2022, §2.2): the blank ε lets it emit fewer words than the source has slots. Table 3 asks whether that design
beats the usual ones, so the same search output also trains `ar` (an encoder–decoder decoded left to right, ε's id
its begin and end of sequence), `nar` (a decoder filling exactly L slots at once, no blank) and `nar-ctc` (one
decoder slot per source token, blank and CTC like NAUS). All share post-LayerNorm GELU layers, learned positions
and an output layer tied to the input embeddings, NAUS's vocabulary, and `loss(tokens, lengths, targets, blank,
smoothing)` for the training loop. The students on frozen MiniLM states are `naus.student.copy_head`'s.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from naus.settings import ModelConfig


ARCH_MARK = "arch_mark"  # a buffer naming the architecture, so that weights relabelled as another are refused


def arch_mark(arch: str) -> Tensor:
    return torch.tensor(list(arch.encode().ljust(32, b"\0")[:32]), dtype=torch.uint8)


def marked_arch(mark: Tensor) -> str:
    return bytes(mark.tolist()).rstrip(b"\0").decode("utf-8", "replace")


class Student(nn.Module):
    """What every student shares: source embeddings (tied to the output layer), learned positions,
    dropout, and embedding a padded batch of sources. Subclasses build their layers, then call
    `_init_embeddings` (so parameters are drawn in one fixed order: checkpoints and seeds stay comparable)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.register_buffer(ARCH_MARK, arch_mark(config.arch))  # in the checkpoint; checked where it is loaded
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.positions = nn.Embedding(config.max_len, config.d_model)
        self.scale = math.sqrt(config.d_model)
        self.dropout = nn.Dropout(config.dropout)

    def _init_embeddings(self) -> None:
        nn.init.normal_(self.embed.weight, std=self.config.d_model**-0.5)
        nn.init.normal_(self.positions.weight, std=0.02)

    def usable(self, lengths: list[int], targets: list[list[int]]) -> int:
        """How many (source length, target) pairs this student can learn from (every one, for AR)."""
        return len(targets)

    def _check(self, time: int) -> None:
        if time > self.config.max_len:
            raise ValueError(f"sequence of {time} tokens exceeds the model's max_len {self.config.max_len}")

    def embed_source(self, tokens: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """Embedded sources [B, T, d] (before dropout) and their padding mask [B, T]."""
        time = tokens.shape[1]
        self._check(time)
        x = self.embed(tokens) * self.scale + self.positions(torch.arange(time, device=tokens.device))[None]
        return x, padding_mask(lengths, time)

    def output(self, x: Tensor, normalize: bool = True) -> Tensor:
        """Log-probabilities over the vocabulary, through the tied embeddings (the logits with
        `normalize=False`: for decoders that normalise only the few words they read)."""
        logits = F.linear(x, self.embed.weight).float()
        return F.log_softmax(logits, dim=-1) if normalize else logits


def _encoder_layers(config: ModelConfig) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(config.d_model, config.n_heads, config.d_ff, config.dropout,
                                       activation="gelu", batch_first=True, norm_first=False)
    return nn.TransformerEncoder(layer, config.n_layers, enable_nested_tensor=False)


class NAUS(Student):
    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.layers = _encoder_layers(config)
        self._init_embeddings()

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor, normalize: bool = True) -> torch.Tensor:
        """Log-probabilities (or logits) [B, T, V] for source tokens [B, T] with valid lengths [B]."""
        x, padding = self.embed_source(tokens, lengths)
        return self.output(self.layers(self.dropout(x), src_key_padding_mask=padding), normalize)

    def loss(self, tokens: Tensor, lengths: Tensor, targets: list[list[int]], blank: int = 0,
             smoothing: float = 0.1) -> tuple[Tensor, int, int]:
        return ctc_loss(self(tokens, lengths), lengths, targets, blank, smoothing)

    def usable(self, lengths: list[int], targets: list[list[int]]) -> int:
        return len(_alignable(torch.tensor(lengths), targets))


def _alignable(lengths: Tensor, targets: list[list[int]]) -> list[int]:
    """The pairs CTC can align: a non-empty target that fits the slots (one more per repeated neighbour)."""
    needed = [len(t) + sum(a == b for a, b in zip(t, t[1:])) for t in targets]
    return [i for i, (n, t) in enumerate(zip(needed, targets)) if 0 < len(t) and n <= int(lengths[i])]


def ctc_loss(log_probs: Tensor, lengths: Tensor, targets: list[list[int]], blank: int = 0,
             smoothing: float = 0.1) -> tuple[Tensor, int, int]:
    """(1−ε)·CTC/|y| + ε·(mean −log p over the vocabulary at valid slots), averaged over alignable pairs. A pair
    whose target needs more slots than the source has (|y| plus one per repeated neighbour) cannot be aligned: it
    is left out and counted. Returns (loss, used, skipped)."""
    keep = _alignable(lengths, targets)
    skipped = len(targets) - len(keep)
    if not keep:
        return log_probs.sum() * 0.0, 0, skipped
    if skipped:  # copying [B, T, V] costs a few percent of a CPU step: only when a pair is left out
        index = torch.tensor(keep, device=log_probs.device)
        lp, ln = log_probs.index_select(0, index), lengths.index_select(0, index)
    else:
        lp, ln = log_probs, lengths
    flat = torch.tensor([tok for i in keep for tok in targets[i]], device=log_probs.device)
    target_lengths = torch.tensor([len(targets[i]) for i in keep], device=log_probs.device)
    nll = F.ctc_loss(lp.transpose(0, 1), flat, ln, target_lengths, blank=blank, reduction="none", zero_infinity=True)
    loss = (nll / target_lengths).mean()
    if smoothing > 0:
        valid = (torch.arange(lp.shape[1], device=lp.device)[None, :] < ln[:, None]).float()
        uniform = -(lp.mean(dim=-1) * valid).sum() / valid.sum()
        loss = (1 - smoothing) * loss + smoothing * uniform
    return loss, len(keep), skipped


def decoder_layers(config: ModelConfig) -> nn.TransformerDecoder:
    layer = nn.TransformerDecoderLayer(config.d_model, config.n_heads, dim_feedforward=config.d_ff,
                                       dropout=config.dropout, activation="gelu", batch_first=True)
    return nn.TransformerDecoder(layer, config.n_layers)


def cached_step(decoder: nn.TransformerDecoder, x: Tensor, caches: list[Tensor], memory: Tensor,
                padding: Tensor) -> Tensor:
    """The causal decoder's output [N, 1, d] at the newest position, input `x` [N, 1, d], given each layer's inputs
    at the positions before it (`caches`, extended in place): equal to the full decoder's last row, at the cost of
    one position (post-LN, as nn.TransformerDecoderLayer in eval mode)."""
    for i, layer in enumerate(decoder.layers):
        caches[i] = torch.cat([caches[i], x], dim=1)
        x = layer.norm1(x + layer.self_attn(x, caches[i], caches[i], need_weights=False)[0])
        x = layer.norm2(x + layer.multihead_attn(x, memory, memory, key_padding_mask=padding, need_weights=False)[0])
        x = layer.norm3(x + layer.linear2(layer.activation(layer.linear1(x))))
    return x


def beam_start(max_words: list[int], k: int, memory: Tensor, layers: int) -> tuple[Tensor, Tensor, Tensor, list]:
    """What a beam search of `k` beams a sample starts from (`memory` [B·k, T, d]): each beam's most words, the
    beams' scores [B, k] (one live a sample: all start equal), none finished, each decoder layer's empty cache."""
    rows, device = memory.shape[0], memory.device
    scores = torch.zeros(rows // k, k, device=device)
    scores[:, 1:] = -math.inf
    return (torch.tensor(max_words, device=device).repeat_interleave(k), scores,
            torch.zeros(rows, dtype=torch.bool, device=device), [memory.new_zeros(rows, 0, memory.shape[-1])] * layers)


def beam_step(scores: Tensor, log_probs: Tensor, done: Tensor, end: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One step of beam search: `scores` [B, k] of each sample's beams, `log_probs` [B·k, C] of their next choice,
    a `done` beam extending by `end` at no cost. The k best extensions' scores, the beams (rows) they extend, their
    choices, and which are finished."""
    batch, k = scores.shape
    log_probs[done] = -math.inf
    log_probs[done, end] = 0.0
    width = log_probs.shape[-1]
    scores, index = (scores.view(-1, 1) + log_probs).view(batch, k * width).topk(k, dim=-1)
    rows = (index // width + torch.arange(batch, device=scores.device)[:, None] * k).view(-1)
    choice = (index % width).view(-1)
    return scores, rows, choice, done[rows] | (choice == end)


def beam_best(scores: Tensor, chosen: Tensor, end: int) -> list[tuple[list[int], float]]:
    """Each sample's best beam (`scores` [B, k]; `chosen` [B·k, steps], its choices) up to its end, and its score."""
    best = scores.argmax(dim=-1)
    rows = [chosen[b * scores.shape[1] + int(best[b])].tolist() for b in range(scores.shape[0])]
    return [(row[: row.index(end)] if end in row else row, float(scores[b, best[b]])) for b, row in enumerate(rows)]


def padding_mask(lengths: torch.Tensor, time: int) -> torch.Tensor:
    return torch.arange(time, device=lengths.device)[None, :] >= lengths[:, None]


class EncoderDecoder(Student):
    """Shared parts of Table 3's students: an encoder as NAUS's and a decoder that cross-attends to it."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.target_positions = nn.Embedding(config.max_len, config.d_model)
        self.encoder = _encoder_layers(config)
        self.decoder = decoder_layers(config)
        self._init_embeddings()
        nn.init.normal_(self.target_positions.weight, std=0.02)

    def encode(self, tokens: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Encoder states [B, T, d] and the source padding mask [B, T]."""
        x, padding = self.embed_source(tokens, lengths)
        return self.encoder(self.dropout(x), src_key_padding_mask=padding), padding

    def decode(self, queries: torch.Tensor, query_padding: torch.Tensor | None, memory: torch.Tensor,
               memory_padding: torch.Tensor, causal: bool = False, normalize: bool = True) -> torch.Tensor:
        """Log-probabilities (or logits) [B, U, V] for decoder inputs [B, U, d] (embeddings without positions)."""
        time = queries.shape[1]
        self._check(time)
        x = queries + self.target_positions(torch.arange(time, device=queries.device))[None]
        mask = nn.Transformer.generate_square_subsequent_mask(time, device=x.device) if causal else None
        x = self.decoder(self.dropout(x), memory, tgt_mask=mask, tgt_is_causal=causal,
                         tgt_key_padding_mask=query_padding, memory_key_padding_mask=memory_padding)
        return self.output(x, normalize)


def _cross_entropy(log_probs: torch.Tensor, gold: torch.Tensor, ignore: int, smoothing: float) -> torch.Tensor:
    """Mean token-level cross entropy with label smoothing, the usual loss of Table 3's AR and NAR students."""
    return F.nll_loss(log_probs.transpose(1, 2), gold, ignore_index=ignore) * (1 - smoothing) + smoothing * (
        -(log_probs.mean(-1) * (gold != ignore)).sum() / (gold != ignore).sum()
    )


def _padded(rows: list[list[int]], pad: int, device: torch.device) -> torch.Tensor:
    out = torch.full((len(rows), max(map(len, rows))), pad, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out.to(device)


class ARStudent(EncoderDecoder):
    """A standard encoder–decoder: p(y_t | y_<t, x), generation stops at end of sequence or L words."""

    def forward(self, tokens: Tensor, lengths: Tensor, previous: Tensor) -> Tensor:
        """Teacher-forced log-probabilities [B, U, V] for decoder inputs `previous` [B, U]."""
        memory, padding = self.encode(tokens, lengths)
        return self.decode(self.embed(previous) * self.scale, None, memory, padding, causal=True)

    def loss(self, tokens: Tensor, lengths: Tensor, targets: list[list[int]], blank: int = 0,
             smoothing: float = 0.1) -> tuple[Tensor, int, int]:
        ignore = -100
        previous = _padded([[blank] + t for t in targets], blank, tokens.device)
        gold = _padded([t + [blank] for t in targets], ignore, tokens.device)
        return _cross_entropy(self(tokens, lengths, previous), gold, ignore, smoothing), len(targets), 0

    @torch.no_grad()
    def generate(self, tokens: Tensor, lengths: Tensor, max_words: list[int], beam_size: int = 1, eos: int = 0,
                 banned: tuple[int, ...] = ()) -> list[tuple[list[int], float]]:
        """(words, log-probability) per sample: greedy (beam 1) or beam search, each stopping at ε or L words.

        Beams are kept per sample as rows of one batch; a finished beam only extends by ε at no
        cost, so its score stays fixed while the others run on. Each step runs the decoder on the
        newest word only, attending to the cached layer inputs of the positions before it.
        """
        batch, device = tokens.shape[0], tokens.device
        memory, padding = self.encode(tokens, lengths)
        k = beam_size
        memory, padding = memory.repeat_interleave(k, 0), padding.repeat_interleave(k, 0)
        limit, scores, finished, caches = beam_start(max_words, k, memory, len(self.decoder.layers))
        sequences = torch.full((batch * k, 1), eos, dtype=torch.long, device=device)
        for step in range(max(max_words)):
            self._check(step + 1)
            log_probs = self.step(sequences[:, -1], step, caches, memory, padding)
            if banned:
                log_probs[:, list(banned)] = -math.inf
            scores, rows, words, finished = beam_step(scores, log_probs, finished | (step >= limit), eos)
            sequences = torch.cat([sequences[rows], words[:, None]], dim=1)
            caches = [cache[rows] for cache in caches]
            if bool(finished.all()):
                break
        return [(words[:limit], score) for (words, score), limit in zip(beam_best(scores, sequences[:, 1:], eos),
                                                                         max_words)]

    def step(self, words: Tensor, position: int, caches: list[Tensor], memory: Tensor, padding: Tensor) -> Tensor:
        """Log-probabilities [N, V] of the word after `words` [N] at `position` (`cached_step`)."""
        x = self.embed(words)[:, None] * self.scale + self.target_positions.weight[position]
        x = cached_step(self.decoder, x, caches, memory, padding)
        return F.log_softmax(F.linear(x[:, 0], self.embed.weight).float(), dim=-1)


def slot_anchors(lengths: Tensor, slots: Tensor) -> Tensor:
    """[B, max slots]: slot j of M reads source position ⌊j·S/M⌋ (Gu et al. 2018's uniform copy)."""
    j = torch.arange(int(slots.max()), device=lengths.device)[None, :]
    anchor = (j * lengths[:, None]).div(slots.clamp(min=1)[:, None], rounding_mode="floor")
    return anchor.clamp(max=int(lengths.max()) - 1).clamp(min=0)


def uniform_copy(embedded: torch.Tensor, lengths: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
    """Decoder inputs [B, max slots, d]: each slot's anchor's embedding (`slot_anchors`)."""
    index = slot_anchors(lengths, slots).clamp(max=embedded.shape[1] - 1)
    return embedded.gather(1, index[..., None].expand(-1, -1, embedded.shape[-1]))


class NARStudent(EncoderDecoder):
    """Vanilla non-autoregressive encoder–decoder: M decoder slots, one word each, all at once (M = L)."""

    def forward(self, tokens: Tensor, lengths: Tensor, slots: Tensor) -> Tensor:
        memory, padding = self.encode(tokens, lengths)
        queries = uniform_copy(self.embed(tokens) * self.scale, lengths, slots)
        return self.decode(queries, padding_mask(slots, queries.shape[1]), memory, padding)

    def usable(self, lengths: list[int], targets: list[list[int]]) -> int:
        return sum(1 for t in targets if t)

    def loss(self, tokens: Tensor, lengths: Tensor, targets: list[list[int]], blank: int = 0,
             smoothing: float = 0.1) -> tuple[Tensor, int, int]:
        keep = [i for i, t in enumerate(targets) if t]
        if not keep:
            return self.embed.weight.sum() * 0.0, 0, len(targets)
        index = torch.tensor(keep, device=tokens.device)
        kept = [targets[i] for i in keep]
        slots = torch.tensor([len(t) for t in kept], device=tokens.device)
        ignore = -100
        log_probs = self(tokens.index_select(0, index), lengths.index_select(0, index), slots)
        loss = _cross_entropy(log_probs, _padded(kept, ignore, tokens.device), ignore, smoothing)
        return loss, len(keep), len(targets) - len(keep)


class NARCTCStudent(EncoderDecoder):
    """Non-autoregressive encoder–decoder with one decoder slot per source token, blank and CTC (as NAUS)."""

    def forward(self, tokens: Tensor, lengths: Tensor, normalize: bool = True) -> Tensor:
        memory, padding = self.encode(tokens, lengths)
        return self.decode(self.embed(tokens) * self.scale, padding, memory, padding, normalize=normalize)

    loss, usable = NAUS.loss, NAUS.usable  # CTC on the decoder's slots, exactly as NAUS on its encoder's


class MiniLMNAUS(NAUS):
    """NAUS whose encoder starts from all-MiniLM-L6-v2 (BERT's post-LN GELU layers, whose parameters map
    one to one onto `nn.TransformerEncoderLayer`'s). Our word vocabulary is kept, so slots, CTC and every
    decoder stay NAUS's: a word's embedding starts as the mean of MiniLM's WordPiece embeddings of its
    pieces, positions and layers as MiniLM's, the output layer tied to the word embeddings as NAUS's.
    BERT adds a token-type vector and normalises the embedded input; it does not scale it."""

    LAYER_NORM_EPS = 1e-12  # BERT's (MiniLM's config.json), not PyTorch's 1e-5: set when built, so checkpoints agree

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.token_type = nn.Parameter(torch.zeros(config.d_model))
        self.embed_norm = nn.LayerNorm(config.d_model)
        for module in self.modules():
            if isinstance(module, nn.LayerNorm):
                module.eps = self.LAYER_NORM_EPS

    def embed_source(self, tokens: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        time = tokens.shape[1]
        self._check(time)
        x = self.embed(tokens) + self.positions(torch.arange(time, device=tokens.device))[None] + self.token_type
        return self.embed_norm(x), padding_mask(lengths, time)

    @torch.no_grad()
    def start_from_minilm(self, words: list[str], weights: dict[str, Tensor], pieces) -> None:
        """Copy MiniLM's weights in (`weights`: its safetensors state; `pieces(word)`: the word's WordPiece ids)."""
        table = weights["embeddings.word_embeddings.weight"].float()
        self.embed.weight.copy_(torch.stack([table[ids].mean(0) for ids in map(pieces, words)]))
        self.positions.weight.copy_(weights["embeddings.position_embeddings.weight"][: self.config.max_len])
        self.token_type.copy_(weights["embeddings.token_type_embeddings.weight"][0])
        self.embed_norm.weight.copy_(weights["embeddings.LayerNorm.weight"])
        self.embed_norm.bias.copy_(weights["embeddings.LayerNorm.bias"])
        for i, layer in enumerate(self.layers.layers):
            bert = lambda name: weights[f"encoder.layer.{i}.{name}"]  # noqa: E731
            for part in ("weight", "bias"):
                getattr(layer.self_attn, f"in_proj_{part}").copy_(
                    torch.cat([bert(f"attention.self.{qkv}.{part}") for qkv in ("query", "key", "value")]))
                for ours, theirs in ((layer.self_attn.out_proj, "attention.output.dense"),
                                     (layer.norm1, "attention.output.LayerNorm"), (layer.linear1, "intermediate.dense"),
                                     (layer.linear2, "output.dense"), (layer.norm2, "output.LayerNorm")):
                    getattr(ours, part).copy_(bert(f"{theirs}.{part}"))
