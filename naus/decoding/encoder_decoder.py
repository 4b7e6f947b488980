"""The encoder-decoder students' decoders (Table 3): the autoregressive one generates word by word,
greedily or by beam search; the vanilla non-autoregressive one fills exactly L slots at once."""

from __future__ import annotations

import torch

from naus.decoding.common import Batch, Hypothesis


def fill_slots(batch: Batch) -> list[Hypothesis]:
    """The vanilla NAR student's `greedy`: the best non-special word in each of exactly L slots."""
    slots = torch.tensor(batch.targets, device=batch.tokens.device)
    log_probs = batch.model(batch.tokens, batch.lengths, slots)
    log_probs[..., [batch.blank, *batch.banned]] = float("-inf")
    best, words = (x.cpu() for x in log_probs.max(dim=-1))
    return [Hypothesis(words[i, :n].tolist(), words[i, :n].tolist(), float(best[i, :n].sum()))
            for i, n in enumerate(batch.targets)]


def generate_greedy(batch: Batch) -> list[Hypothesis]:
    """The AR student's `greedy`: one word at a time, the most probable."""
    return _generate(batch, 1)


def generate_beam(batch: Batch) -> list[Hypothesis]:
    """The AR student's `beam`: beam search over its words."""
    return _generate(batch, batch.beam_size)


def _generate(batch: Batch, width: int) -> list[Hypothesis]:
    generated = batch.model.generate(batch.tokens, batch.lengths, batch.targets, width, batch.blank, batch.banned)
    return [Hypothesis(words, words, log_prob) for words, log_prob in generated]
