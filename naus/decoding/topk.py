"""Each slot's best words on the CPU: a compiled top-k that reads each row once (a quarter of
`torch.topk`'s time), and the best words of each character length (char-control)."""

from __future__ import annotations

import numba
import numpy as np
import torch

from naus.decoding.common import NEG_INF
from naus.plumbing.signals import held


def best_words(lp: torch.Tensor, blank: int, scope: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each slot's `scope` most probable non-blank words, [N, T, K] each: the only ones extension
    (3) needs. One more than needed is taken and ε dropped (no copy of the whole vocabulary)."""
    if lp.device.type == "cpu":
        return top_k_slots(lp, scope, exclude=blank)
    return best_words_torch(lp, blank, scope)


def best_words_torch(lp: torch.Tensor, blank: int, scope: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`best_words` with `torch.topk`: on a GPU (and in the tensor reference of the tests)."""
    values, ids = lp.topk(min(scope + 1, lp.shape[-1]), dim=-1)
    first = torch.argsort((ids == blank).to(torch.int8), dim=-1, stable=True)[..., :scope]  # ε last
    return values.gather(-1, first), ids.gather(-1, first)


def top_k_slots(lp: torch.Tensor, k: int, exclude: int = -1) -> tuple[torch.Tensor, torch.Tensor]:
    """The k largest entries of each slot (last axis) of a CPU tensor, largest first, leaving out
    the column `exclude` (-1: none); what `torch.topk` gives, at about a quarter of its time
    (`_top_k_kernel`). Equal values may be ordered differently from `torch.topk`."""
    *outer, vocab = lp.shape
    rows = lp.detach().reshape(-1, vocab).float().contiguous().numpy()
    with held():
        values, ids = _top_k_kernel(rows, min(k, vocab - (0 <= exclude < vocab)), exclude, TOP_K_LANES)
    return torch.from_numpy(values).reshape(*outer, -1), torch.from_numpy(ids).reshape(*outer, -1)


TOP_K_LANES = 256  # `_top_k_kernel`'s: 128 to 512 time alike for V = 4,678 to 30,000 (1,024: 2x slower at 4,678)


@numba.njit(cache=True)
def _lane_maxima(row, lanes, out):
    """out[g] = the largest of row[g], row[g + lanes], ... over whole blocks of `lanes`: an element-wise
    max of contiguous blocks, which the compiler turns into vector instructions (a max reduction over
    one block it leaves scalar: three times slower)."""
    out[:] = row[:lanes]
    for j in range(1, row.shape[0] // lanes):
        block = row[j * lanes : (j + 1) * lanes]
        for g in range(lanes):
            x, m = block[g], out[g]
            out[g] = x if x > m else m


@numba.njit(cache=True)
def _top_k_kernel(rows, k, exclude, lanes):
    """Per row: the maxima of `lanes` interleaved lanes in one vectorised pass; an entry among the
    k + 1 largest is at least the (k + 1)-th largest lane maximum, so only lanes reaching it (and the
    entries past the last whole block) are searched. One read of the row, which is what bounds it."""
    count, vocab = rows.shape
    lanes = min(lanes, vocab)
    whole = vocab // lanes * lanes
    values = np.full((count, k), -np.inf, dtype=rows.dtype)
    ids = np.full((count, k), -1, dtype=np.int64)
    maxima = np.empty(lanes, dtype=rows.dtype)
    best = np.empty(k + 1, dtype=rows.dtype)  # the k + 1 largest lane maxima
    for r in range(count):
        row = rows[r]
        _lane_maxima(row, lanes, maxima)
        best[:] = -np.inf
        for g in range(lanes):
            m = maxima[g]
            if m > best[k]:
                i = k
                while i > 0 and best[i - 1] < m:
                    best[i] = best[i - 1]
                    i -= 1
                best[i] = m
        floor = best[k]  # each of the k largest is at least this: most entries fail one comparison
        for g in range(lanes + vocab - whole):  # the lanes that reach it, then the tail
            if g < lanes:
                if maxima[g] < floor:
                    continue
                start, stop, step = g, whole, lanes
            else:
                start, stop, step = whole + g - lanes, whole + g - lanes + 1, 1
            for p in range(start, stop, step):
                v = row[p]
                if v < floor or p == exclude or not (v > values[r, k - 1] or ids[r, k - 1] < 0):
                    continue
                i = k - 1
                while i > 0 and (values[r, i - 1] < v or ids[r, i - 1] < 0):
                    values[r, i] = values[r, i - 1]
                    ids[r, i] = ids[r, i - 1]
                    i -= 1
                values[r, i] = v
                ids[r, i] = p
    return values, ids


def grouped_top(lp: torch.Tensor, group: np.ndarray, groups: int, per: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The `per` largest entries of each slot within each group of words (`group[v]`, -1: none),
    largest first, as CPU tensors [N, T, groups·per]; missing ones -inf with id -1."""
    n, time, vocab = lp.shape
    if lp.device.type == "cpu":
        with held():
            values, ids = _grouped_top_kernel(lp.reshape(n * time, vocab).contiguous().numpy(), group, groups, per)
        return (torch.from_numpy(values).reshape(n, time, groups * per),
                torch.from_numpy(ids).reshape(n, time, groups * per))
    return _grouped_top_torch(lp, group, groups, per)


def _grouped_top_torch(lp: torch.Tensor, group: np.ndarray, groups: int, per: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`grouped_top` with one `torch.topk` per group: on a GPU (and checked against the kernel on the CPU)."""
    mask = torch.from_numpy(group).to(lp.device)
    parts = [lp.masked_fill(mask != g, NEG_INF).topk(min(per, lp.shape[-1]), dim=-1) for g in range(groups)]
    values = torch.cat([p.values for p in parts], dim=-1) if parts else lp[..., :0]
    ids = torch.cat([p.indices for p in parts], dim=-1) if parts else lp[..., :0].long()
    return values.cpu(), ids.masked_fill(values == NEG_INF, -1).cpu()


@numba.njit(cache=True)
def _grouped_top_kernel(rows, group, groups, per):
    """Per row, the `per` largest entries of each group of columns (`group[v]`, -1: none), largest first."""
    count, vocab = rows.shape
    values = np.full((count, groups * per), -np.inf, dtype=rows.dtype)
    ids = np.full((count, groups * per), -1, dtype=np.int64)
    threshold = np.empty(groups, dtype=rows.dtype)  # each group's smallest kept value: what a word must beat
    for r in range(count):
        threshold[:] = -np.inf
        row = rows[r]
        for v in range(vocab):
            g = group[v]
            if g < 0 or not row[v] > threshold[g]:
                continue
            x = row[v]
            last = g * per + per - 1
            i = last
            while i > g * per and (values[r, i - 1] < x or ids[r, i - 1] < 0):
                values[r, i] = values[r, i - 1]
                ids[r, i] = ids[r, i - 1]
                i -= 1
            values[r, i] = x
            ids[r, i] = v
            threshold[g] = values[r, last]
    return values, ids
