"""NAUS: an encoder-only Transformer with one output slot per source token, trained with CTC.

Post-LayerNorm layers, GELU, learned positions, and output projection tied to the input
embeddings (Liu, Huang & Mou 2022, §2.2). The blank ε lets the model emit fewer words than
the source has slots.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class ModelConfig:
    vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    n_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 256

    def to_dict(self) -> dict:
        return asdict(self)


class NAUS(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.positions = nn.Embedding(config.max_len, config.d_model)
        self.scale = math.sqrt(config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        layer = nn.TransformerEncoderLayer(
            config.d_model, config.n_heads, config.d_ff, config.dropout,
            activation="gelu", batch_first=True, norm_first=False,
        )
        self.layers = nn.TransformerEncoder(layer, config.n_layers, enable_nested_tensor=False)
        nn.init.normal_(self.embed.weight, std=config.d_model**-0.5)
        nn.init.normal_(self.positions.weight, std=0.02)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Log-probabilities [B, T, V] for source tokens [B, T] with valid lengths [B]."""
        batch, time = tokens.shape
        if time > self.config.max_len:
            raise ValueError(f"source of {time} tokens exceeds the model's max_len {self.config.max_len}")
        padding = torch.arange(time, device=tokens.device)[None, :] >= lengths[:, None]
        x = self.embed(tokens) * self.scale + self.positions(torch.arange(time, device=tokens.device))[None]
        x = self.layers(self.dropout(x), src_key_padding_mask=padding)
        logits = F.linear(x, self.embed.weight)
        return F.log_softmax(logits.float(), dim=-1)


def ctc_loss(
    log_probs: torch.Tensor,
    lengths: torch.Tensor,
    targets: list[list[int]],
    blank: int = 0,
    smoothing: float = 0.1,
) -> tuple[torch.Tensor, int, int]:
    """(1−ε)·CTC/|y| + ε·(mean −log p over the vocabulary at valid slots), averaged over alignable pairs.

    A pair whose target needs more slots than the source has (|y| plus one per repeated
    neighbour) cannot be aligned: it is left out and counted. Returns (loss, used, skipped).
    """
    needed = [len(t) + sum(a == b for a, b in zip(t, t[1:])) for t in targets]
    keep = [i for i, (n, t) in enumerate(zip(needed, targets)) if 0 < len(t) and n <= int(lengths[i])]
    skipped = len(targets) - len(keep)
    if not keep:
        return log_probs.sum() * 0.0, 0, skipped
    index = torch.tensor(keep, device=log_probs.device)
    lp, ln = log_probs.index_select(0, index), lengths.index_select(0, index)
    flat = torch.tensor([tok for i in keep for tok in targets[i]], device=log_probs.device)
    target_lengths = torch.tensor([len(targets[i]) for i in keep], device=log_probs.device)
    nll = F.ctc_loss(lp.transpose(0, 1), flat, ln, target_lengths, blank=blank, reduction="none", zero_infinity=True)
    loss = (nll / target_lengths).mean()
    if smoothing > 0:
        valid = (torch.arange(lp.shape[1], device=lp.device)[None, :] < ln[:, None]).float()
        uniform = -(lp.mean(dim=-1) * valid).sum() / valid.sum()
        loss = (1 - smoothing) * loss + smoothing * uniform
    return loss, len(keep), skipped
