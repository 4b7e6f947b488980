"""Headlines in the source's order: the exact decoder of a copy-head student's scores over source *positions*.

A copy head (`CopyNAUS.scores`) gives each slot a distribution over ε and the source's positions. Summed into word
types (what the other CTC decoders read) a word can come back, or come back out of order. Here a path is a sequence
of ε and positions, CTC's Γ merges the same position in adjacent slots, and a summary is admitted only when its
positions strictly increase: a subsequence of the source, as the teacher's labels are.

The dynamic program is exact (no beam). After slot s a prefix is summarised by its word count c, its last
position j and whether slot s emitted j (a repeat of j then merges) or ε (then j may not come back). A new word at
position k extends the best prefix of any j < k with one word fewer, a running maximum over j: O(T · cells) a
slot, and one pass gives the most probable path of every word count at once.

* In words (`targets`): the most probable path of exactly L words (or of the most the positions admit).
* In bytes (`budgets`): the most words whose most probable path, its words joined by single spaces, fits the
  budget. (The most probable path *within* the budget is shorter, each word costing probability; the path with
  the most words that fit fills them with the shortest: `of a to in the`.)

Two things a reader of headlines asks for are constraints of the same program, not edits after it:

* Phrases whole (`tied`: position k may only be followed by k + 1, as the words of a number with its unit or a
  name, `naus.text.phrases`): a word inside a phrase extends only the state of the word before it, a word that
  needs its successor extends nothing else, and no summary ends on one. A phrase is kept whole or not at all.
* Contiguous spans (`adjacency`): each word that directly follows its source neighbour adds that many nats to the
  path's score, so of two nearly equal summaries the one of fewer, longer spans wins (the returned score stays
  the path's log-probability).
* No dangling end (`dangling`: positions a summary may not end on, its function words): the final state is chosen
  among the others only.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import torch

from naus import NausError
from naus.decoding.common import Batch, Hypothesis, check_targets, failures_raised, share_threads
from naus.plumbing.signals import stoppable, stopped


def source_order_batch(position_lp: torch.Tensor, lengths: torch.Tensor, targets: list[int] | None = None,
                       budgets: list[int] | None = None, widths: np.ndarray | None = None,
                       tied: np.ndarray | None = None, adjacency: float = 0.0,
                       dangling: np.ndarray | None = None) -> list[tuple[list[int], list[int], float]]:
    """Each sample's summary as source positions (strictly increasing), its path and the path's log-probability:
    [N, T, 1 + T] log-probabilities of ε and each position (−∞ where barred), valid slots `lengths`; either
    `targets` (words) or `budgets` (bytes, with `widths` [N, T]: each position's bytes as written). `tied` [N, T]:
    position k is kept only with k + 1 after it (phrases whole); `adjacency`: the bonus of a word after its source
    neighbour; `dangling` [N, T]: positions no summary ends on. The path has one entry per valid slot, the position
    it emits or −1 for ε."""
    n, time = position_lp.shape[:2]
    if (targets is None) == (budgets is None):
        raise ValueError("give targets (words) or budgets (bytes), one of them")
    lp = position_lp.detach().cpu().float().numpy()
    valid = lengths.cpu().numpy().astype(np.int64)
    check_targets(1, targets if budgets is None else budgets)
    if budgets is None:
        cells = np.minimum(np.asarray(targets, dtype=np.int64), valid) + 1
        width, budget = np.zeros((n, time), dtype=np.int64), np.full(n, -1, dtype=np.int64)  # no byte is counted
    else:  # a word takes two bytes at least, with its space
        cells = np.minimum(np.asarray(budgets, dtype=np.int64) // 2 + 1, valid) + 1
        width, budget = np.asarray(widths, dtype=np.int64)[:, :time], np.asarray(budgets, dtype=np.int64)
    if not math.isfinite(adjacency) or adjacency < 0:
        raise ValueError(f"adjacency must be a finite number of at least 0, got {adjacency}")
    ties = np.zeros((n, time + 1), dtype=np.bool_)  # by state index: position k's is k + 1
    if tied is not None:
        ties[:, 1:] = np.asarray(tied, dtype=np.bool_)[:, :time]
    ends = ~ties  # a summary may end after a phrase, not inside one
    if dangling is not None:
        ends[:, 1:] &= ~np.asarray(dangling, dtype=np.bool_)[:, :time]
    share_threads(n)
    with stoppable() as stop, failures_raised():
        positions, paths, scores = _batch_kernel(lp, width, valid, cells, budget, ties, ends, float(adjacency), stop)
    if np.isnan(scores[valid > 0]).any():
        raise NausError("the source-order decoder failed on a sample (out of memory, or a non-finite model output)")
    return [(positions[i][positions[i] >= 0].tolist(), paths[i, : valid[i]].tolist(), float(scores[i]))
            for i in range(n)]


@numba.njit(cache=True, parallel=True)
def _batch_kernel(lp, width, valid, cells, budget, ties, ends, adjacency, stop):
    n, time = lp.shape[0], lp.shape[1]
    positions = np.full((n, time), -1, dtype=np.int64)
    paths = np.full((n, time), -1, dtype=np.int64)
    scores = np.full(n, np.nan)
    for i in numba.prange(n):
        if stopped(stop):  # the caller raises: the samples left are not started
            continue
        t = valid[i]
        if t == 0:
            scores[i] = 0.0
            continue
        positions[i, :t], paths[i, :t], scores[i] = _kernel(lp[i, :t, : t + 1], width[i, :t], cells[i], budget[i],
                                                            ties[i, : t + 1], ends[i, : t + 1], adjacency, stop)
    return positions, paths, scores


@numba.njit(cache=True)
def _kernel(lp, width, cells, budget, ties, ends, adjacency, stop):
    """One sample: the positions (−1 padded) and path (−1 for ε) of the most probable path of the most words that
    fits `budget` bytes (−1: any), and its log-probability.

    State arrays [cells, 1 + T], position index k + 1 for source position k and 0 for the empty prefix: `word`
    ends with slot s emitting the position, `gap` with ε after it. Back-pointers per slot: a word's −1 (a merged
    repeat) or 2·parent + (1 if the parent state was a word); ε's 1 if it follows a word. `ties[k]`: index k is
    followed by k + 1 only; `ends[k]`: a summary may end at index k. The running maximum holds the free parents
    before k − 1; index k − 1, the neighbour (its bonus), is weighed apart.
    """
    time = lp.shape[0]
    neg = -np.inf
    word = np.full((cells, time + 1), neg)
    gap = np.full((cells, time + 1), neg)
    gap[0, 0] = 0.0
    new_word, new_gap = word.copy(), gap.copy()
    word_from = np.zeros((time, cells, time + 1), dtype=np.int64)
    gap_from = np.zeros((time, cells, time + 1), dtype=np.int8)
    for s in range(time):
        if stopped(stop):
            return np.full(time, -1, dtype=np.int64), np.full(time, -1, dtype=np.int64), np.nan
        blank = lp[s, 0]
        for c in range(cells):
            for k in range(time + 1):
                e, g = word[c, k], gap[c, k]
                new_gap[c, k] = (e if e > g else g) + blank
                gap_from[s, c, k] = 1 if e > g else 0
        new_word[0, :] = neg
        for c in range(1, cells):
            running, where = neg, 0  # the best free parent with c − 1 words among indices before k − 1
            for k in range(1, time + 1):
                j = k - 1  # the neighbour: a word's bonus, the only parent of a phrase's next word
                e, g = word[c - 1, j], gap[c - 1, j]
                near, near_from = (e, 2 * j + 1) if e >= g else (g, 2 * j)
                if j > 0:
                    near += adjacency
                if ties[j]:
                    parent, parent_from = near, near_from
                elif near > running:
                    parent, parent_from = near, near_from
                else:
                    parent, parent_from = running, where
                merged = word[c, k] + lp[s, k]
                fresh = parent + lp[s, k]
                if merged >= fresh:
                    new_word[c, k], word_from[s, c, k] = merged, -1
                else:
                    new_word[c, k], word_from[s, c, k] = fresh, parent_from
                if not ties[j]:  # index j joins the parents of the words after k
                    if e > running:
                        running, where = e, 2 * j + 1
                    if g > running:
                        running, where = g, 2 * j
        word, new_word = new_word, word
        gap, new_gap = new_gap, gap
    positions = np.full(time, -1, dtype=np.int64)
    path = np.full(time, -1, dtype=np.int64)
    for words in range(cells - 1, -1, -1):  # the most words whose best path fits
        top, end = _best_end(word, gap, words, ends)
        if top == neg:
            continue
        positions[:] = -1
        total = _backtrace(lp, word_from, gap_from, words, end, positions, path)
        used = words - 1 if words else 0  # the spaces
        for c in range(words):
            used += width[positions[c]]
        if budget < 0 or used <= budget:
            return positions, path, total
    return np.full(time, -1, dtype=np.int64), path, 0.0  # no word fits: the path of ε (no summary)


@numba.njit(cache=True, inline="always")
def _best_end(word, gap, words, ends):
    """The best final state with `words` words (a word's 2·k + 1, a gap's 2·k; the first among equals) at an index a
    summary may end at (no phrase cut, no word that dangles), its score."""
    top, end = -np.inf, 0
    for k in range(word.shape[1]):
        if not ends[k]:
            continue
        if word[words, k] > top:
            top, end = word[words, k], 2 * k + 1
        if gap[words, k] > top:
            top, end = gap[words, k], 2 * k
    return top, end


@numba.njit(cache=True)
def _backtrace(lp, word_from, gap_from, words, end, positions, path):
    """Fill `positions` and `path` with the best path ending in state `end` (2·k + is a word) of `words` words;
    its log-probability."""
    c, k, is_word = words, end // 2, end % 2 == 1
    total = 0.0
    for s in range(lp.shape[0] - 1, -1, -1):
        if is_word:
            path[s] = k - 1
            total += lp[s, k]
            back = word_from[s, c, k]
            if back >= 0:  # slot s starts word c: its parent has one word fewer
                positions[c - 1] = k - 1
                c -= 1
                k, is_word = back // 2, back % 2 == 1
        else:
            path[s] = -1
            total += lp[s, 0]
            is_word = gap_from[s, c, k] == 1
    return total


def _position_scores(batch: Batch) -> torch.Tensor:
    """The batch's copy-head scores [N, T, 1 + T] as log-probabilities (barred positions −∞)."""
    if batch.positions is None:
        raise NausError("source-order decoding reads a copy-head student's scores over source positions "
                        "(a naus-copy or nar-ctc-copy student)")
    return batch.positions.float().log_softmax(dim=-1).cpu()


def _hypotheses(batch: Batch, found) -> list[Hypothesis]:
    """Each sample's summary in vocabulary ids, as the other decoders give it, its positions kept (the path's ids
    per slot: two adjacent positions of one word are two words, though Γ over ids would merge them)."""
    ids = batch.source_ids.cpu().numpy()
    return [Hypothesis([int(ids[i, p]) for p in positions], [batch.blank if p < 0 else int(ids[i, p]) for p in path],
                       score, positions) for i, (positions, path, score) in enumerate(found)]


def decode(batch: Batch) -> list[Hypothesis]:
    """The `source-order` method: exactly L words at strictly increasing source positions."""
    return _hypotheses(batch, source_order_batch(_position_scores(batch), batch.lengths, targets=batch.targets,
                                                 tied=batch.tied, adjacency=batch.adjacency, dangling=batch.dangling))


def decode_chars(batch: Batch) -> list[Hypothesis]:
    """The `source-order-chars` method: the most words whose most probable path in the source's order fits the
    budget of bytes."""
    ids = batch.source_ids.cpu().numpy()
    widths = np.asarray(batch.word_chars)[ids]
    return _hypotheses(batch, source_order_batch(_position_scores(batch), batch.lengths,
                                                 budgets=[batch.chars] * len(ids), widths=widths, tied=batch.tied,
                                                 adjacency=batch.adjacency, dangling=batch.dangling))
