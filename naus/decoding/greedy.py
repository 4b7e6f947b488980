"""Greedy decoding: each slot's most probable token, then Γ; truncation keeps its first L words."""

from __future__ import annotations

import torch

from naus.decoding.common import Batch, Hypothesis, normalized, reduce_path
from naus.decoding.topk import top_k_slots


def greedy(log_probs: torch.Tensor, blank: int = 0, merge_repeats: bool = True) -> Hypothesis:
    """Most probable token per slot, then Γ."""
    return greedy_batch(log_probs[None], torch.tensor([log_probs.shape[0]]), blank, merge_repeats=merge_repeats)[0]


def truncate(hypothesis: Hypothesis, length: int) -> Hypothesis:
    """The first `length` words (the path and its score describe the untruncated output)."""
    return Hypothesis(hypothesis.tokens[:length], hypothesis.path, hypothesis.log_prob)


def greedy_batch(log_probs: torch.Tensor, lengths: torch.Tensor, blank: int = 0,
                 log_norm: torch.Tensor | None = None, merge_repeats: bool = True) -> list[Hypothesis]:
    """Greedy decoding of [N, T, V] log-probabilities (or logits with `log_norm`, as in
    `length_control_batch`) with valid slots `lengths`; on the CPU each slot's best word comes from
    `top_k_slots` (a third of `torch.max`'s time at V = 30,000; on ties it may pick another)."""
    lp, norm = normalized(log_probs, log_norm)
    if lp.device.type == "cpu":
        best, ids = (x[..., 0] for x in top_k_slots(lp, 1))
    else:
        best, ids = (x.cpu() for x in lp.max(dim=-1))
    best = (best - norm).double()
    out = []
    for i in range(lp.shape[0]):
        valid = int(lengths[i])
        path = ids[i, :valid].tolist()
        out.append(Hypothesis(reduce_path(path, blank, merge_repeats), path, float(best[i, :valid].sum())))
    return out


def decode(batch: Batch) -> list[Hypothesis]:
    """The `greedy` method of a CTC student."""
    return greedy_batch(batch.logits, batch.lengths, batch.blank, batch.log_norm)


def decode_truncated(batch: Batch) -> list[Hypothesis]:
    """The `truncate` method: greedy, then the first L words."""
    return [truncate(h, t) for h, t in zip(decode(batch), batch.targets)]
