"""Forced alignment: the most probable CTC path that reduces to given words (Viterbi)."""

from __future__ import annotations

import numba
import numpy as np
import torch

from naus.plumbing.signals import held


def forced_alignment(log_probs: torch.Tensor, tokens: list[int], blank: int = 0) -> list[int]:
    """The most probable path whose Γ-reduction is `tokens` (Viterbi over the CTC lattice)."""
    labels = [blank]
    for token in tokens:
        labels += [token, blank]
    if log_probs.shape[0] == 0:
        return []
    lattice = log_probs.detach()[:, labels].double().cpu().numpy()
    with held():
        return _align_kernel(lattice, np.array(labels, dtype=np.int64), blank)[0].tolist()


@numba.njit(cache=True)
def _align_kernel(lattice, labels, blank):
    """Viterbi over the label lattice [T, 2·|tokens| + 1]: the path and its score; among equal scores the
    higher label wins."""
    time, states = lattice.shape
    score = np.full((time, states), -np.inf)
    back = np.zeros((time, states), dtype=np.int64)
    score[0, 0] = lattice[0, 0]
    if states > 1:
        score[0, 1] = lattice[0, 1]
    for s in range(1, time):
        for j in range(states):
            best, previous = score[s - 1, j], j
            if j >= 1 and score[s - 1, j - 1] > best:
                best, previous = score[s - 1, j - 1], j - 1
            if j >= 2 and labels[j] != blank and labels[j] != labels[j - 2] and score[s - 1, j - 2] > best:
                best, previous = score[s - 1, j - 2], j - 2
            score[s, j] = best + lattice[s, j]
            back[s, j] = previous
    end = max(states - 2, 0)
    for j in range(end + 1, states):
        if score[time - 1, j] >= score[time - 1, end]:
            end = j
    total = score[time - 1, end]
    path = np.empty(time, dtype=np.int64)
    for s in range(time - 1, -1, -1):
        path[s] = labels[end]
        end = back[s, end]
    return path, total
