"""Seed ensembles: CTC students of one recipe decoded as one model, each slot's distribution the mean of theirs.

The seeds of a recipe share their vocabulary, their settings and (on frozen states) the MiniLM states, so the mean
costs one thin top per member; every decoder reads it as it reads one student's scores. An ensemble is one
checkpoint file (`save_ensemble`): the members' weights beside one vocabulary and one model_config.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import Tensor, nn

from naus import NausError
from naus.architectures import ARCHITECTURES
from naus.provenance import file_record


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
        stacked = torch.stack([member(*inputs, normalize=True) for member in self.members])
        return torch.logsumexp(stacked, dim=0) - math.log(len(self.members))


def save_ensemble(members: list[str | Path], out: str | Path) -> None:
    """One checkpoint of `members` (students' best.pt): refused unless they are CTC students of one architecture,
    one vocabulary and one model_config, as the seeds of one recipe are."""
    from naus.student.checkpoint import FORMAT, load_checkpoint, save_checkpoint

    if not members:
        raise NausError("an ensemble needs at least one member")
    payloads = [load_checkpoint(path) for path in members]
    first = payloads[0]
    arch = first["model_config"].get("arch") if isinstance(first["model_config"], dict) else None
    if arch not in ARCHITECTURES or not ARCHITECTURES[arch].ctc:
        raise NausError(f"{members[0]}: an ensemble is of CTC students, not of {arch!r}")
    for path, payload in zip(members[1:], payloads[1:]):
        for key in ("model_config", "vocab"):
            if payload[key] != first[key]:
                raise NausError(f"{path}: its {key} is not {members[0]}'s: an ensemble's members are seeds of one "
                                "recipe")
        if isinstance(payload["model"], list):
            raise NausError(f"{path}: is an ensemble itself; give its members")
    save_checkpoint(out, {"format": FORMAT, "vocab": first["vocab"], "model_config": first["model_config"],
                          "model": [payload["model"] for payload in payloads],
                          "made_from": {"members": [file_record(path) for path in members]}})
