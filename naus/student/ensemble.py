"""Seed ensembles: CTC students of one recipe decoded as one model, each slot's distribution the mean of theirs.

The seeds of a recipe share their vocabulary, their settings and (on frozen states) the MiniLM states, so the mean
costs one thin top per member; every decoder reads it as it reads one student's scores. An ensemble is one
checkpoint file (`naus.student.checkpoint.save_ensemble`): the members' weights beside one vocabulary and one
model_config.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from naus import NausError
from naus.student.copy_head import CopyNAUS, words_from_positions


class Ensemble(nn.Module):
    """The mean of the members' probabilities, as log-probabilities [B, T, V]: a decoder given them as logits
    normalises to the same numbers (log-probabilities are their own logits)."""

    def __init__(self, members: list[nn.Module]):
        super().__init__()
        if not members:
            raise NausError("an ensemble needs at least one member")
        self.members = nn.ModuleList(members)
        self.config = members[0].config

    def forward(self, *inputs, normalize: bool = True) -> Tensor:
        if isinstance(self.members[0], CopyNAUS):  # the mean over positions, written into words once
            states, lengths, words, vocab_size = inputs
            return words_from_positions(self.scores(states, lengths), words, vocab_size)
        return _mean([member(*inputs, normalize=True) for member in self.members])

    def scores(self, states: Tensor, lengths: Tensor) -> Tensor:
        """Copy heads' members: the mean of their probabilities of ε and each source position (`CopyNAUS.scores`),
        as log-probabilities."""
        return _mean([member.scores(states, lengths).log_softmax(dim=-1) for member in self.members])


def _mean(log_probs: list[Tensor]) -> Tensor:
    """The mean of the members' probabilities, from and as log-probabilities."""
    return torch.logsumexp(torch.stack(log_probs), dim=0) - math.log(len(log_probs))
