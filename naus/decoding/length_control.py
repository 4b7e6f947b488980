"""Length control: the most probable CTC path whose summary has exactly L words.

`length_control` is the dynamic program of Liu, Huang & Mou (2022, §2.3): cell B[s, t] holds
the best slot prefixes of s slots that reduce to t words, extended by (1) ε, (2) a repeat of
the last slot's word (merged) and (3) a new word w ≠ ε, w ≠ the last slot's word. Two exact
refinements make it both better and faster than the authors' version:

* Recombination. Two prefixes in one cell that end in the same token have the same futures,
  so only the better one is kept; the beam then holds B distinct *states*. With B at least the
  number of states (the vocabulary plus ε) the result equals brute force.
* Scope. Only the B+1 most probable words of a slot can enter a cell's top B through
  extension (3), so each slot costs O(V) once (a top-k) plus O(B²) per cell, not O(B·V).

Without merging repeats the future of a prefix depends on its word count alone, so one state
per cell is exact for any beam size (Theorem 1, part 1).

The slot loop is compiled with numba and reads only small tables (each slot's best words and ε)
gathered where the model ran, so one sentence costs about what greedy decoding costs. The tests
check it against a tensor version (`tests/reference.py`; same paths on untied scores, equal scores
may be broken another way).
"""

from __future__ import annotations

import numba
import numpy as np
import torch

from naus.decoding.common import (
    BEAM, Batch, Hypothesis, Rule, backtrace, cell_states, check_finished, check_targets, failures_raised, normalized,
    reduce_path, sample_tables, share_threads, slot_tables,
)
from naus.decoding.greedy import greedy_batch
from naus.decoding.topk import best_words
from naus.plumbing.signals import stoppable, stopped


def length_control(
    log_probs: torch.Tensor,
    length: int,
    beam_size: int = BEAM,
    blank: int = 0,
    merge_repeats: bool = True,
    force_length: bool = True,
) -> Hypothesis:
    """The most probable path (within the beam) that reduces to exactly `length` words.

    When the slots cannot hold `length` words, the longest reachable length is returned.
    With `force_length=False` a greedy output of at most `length` words is returned as it is.
    """
    lengths = torch.tensor([log_probs.shape[0]])
    return length_control_batch(
        log_probs[None], lengths, [length], beam_size, blank, merge_repeats, force_length
    )[0]


def length_control_batch(log_probs: torch.Tensor, lengths: torch.Tensor, targets: list[int], beam_size: int = BEAM,
                         blank: int = 0, merge_repeats: bool = True, force_length: bool = True,
                         log_norm: torch.Tensor | None = None) -> list[Hypothesis]:
    """`length_control` for [N, T, V] log-probabilities with valid slots `lengths` and per-sample targets.

    With `log_norm` [N, T], `log_probs` are logits and `log_norm` their log-sum-exp per slot: the
    log-probabilities are normalised only where the dynamic program reads them, so no [N, T, V]
    log-softmax is written (`normalized`). The slot loop is compiled (`_length_control_kernel`) and
    reads each slot's B + 1 best words and ε, and the log-probability of any word a state can end
    in: on the CPU from the array itself, from a GPU out of the [N, T, T·(B + 1)] table of those
    words gathered where the model ran. Results equal the batched tensor version in
    `tests/reference.py` (tested).
    """
    check_targets(beam_size, targets)
    lp, norm = normalized(log_probs, log_norm)
    n, time, vocab = lp.shape
    beam = beam_size if merge_repeats else 1
    word_lp, word_id = best_words(lp, blank, min(beam + 1, vocab - 1))
    tables = slot_tables(lp, norm, blank, word_lp, word_id)
    valid = lengths.cpu().numpy().astype(np.int64)
    share_threads(len(valid))
    cells = np.minimum(np.asarray(targets, dtype=np.int64), valid) + 1  # s slots hold at most s words: no more cells
    with stoppable() as stop, failures_raised():
        paths, scores = _length_control_batch_kernel(tables, valid, cells, Rule(beam, merge_repeats, blank), stop)
    check_finished(scores, valid)
    plain = None if force_length else greedy_batch(log_probs, lengths, blank, log_norm, merge_repeats)
    results = []
    for i in range(n):
        path = paths[i, : valid[i]].tolist()
        hyp = Hypothesis(reduce_path(path, blank, merge_repeats), path, float(scores[i]))
        results.append(plain[i] if plain and len(plain[i].tokens) <= targets[i] else hyp)  # plain: without force_length
    return results


@numba.njit(cache=True, parallel=True)
def _length_control_batch_kernel(tables, valid, cells, rule, stop):
    """`_length_control_kernel` for every sample of a batch, on the threads numba is given: [N, T] paths
    (ε past each sample's valid slots) and their log-probabilities."""
    paths = np.full(tables.blank_lp.shape, rule.blank, dtype=np.int64)
    scores = np.full(len(valid), np.nan)  # left NaN where a sample's kernel failed (`check_finished`)
    for i in numba.prange(len(valid)):
        if stopped(stop):  # the caller raises: the samples left are not started
            continue
        paths[i, : valid[i]], scores[i] = _length_control_kernel(sample_tables(tables, i), valid[i], cells[i], rule,
                                                                 stop)
    return paths, scores


@numba.njit(cache=True)
def _length_control_kernel(tables, valid, cells, rule, stop):
    """The slot loop for one sample (cells 0..target, float32 as the tensor version): the best path
    and its log-probability.

    `tables.word_lp`, `word_id` [T, K]: each slot's K best non-blank words; `rep_lp[s, columns[t, k]] −
    norm[s]`: slot s's log-probability of the word `word_id[t, k]` (for repeats). Candidates come in
    the tensor version's order (ε, repeats, new words); among equal scores the first wins.
    """
    beam, merge, blank = rule
    scope = tables.word_lp.shape[1]
    neg = np.float32(-np.inf)
    score, last, column, new_score, new_last, new_column, sources, parents, tokens, picked = cell_states(
        valid, cells, beam, blank)
    count = 1 + (beam if merge else 0) + scope
    c_score = np.empty(count, dtype=np.float32)
    c_last, c_column = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
    c_source, c_parent = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
    out = np.zeros(count, dtype=np.bool_)
    for s in range(valid):
        if stopped(stop):  # the caller raises: no result is used
            return np.full(valid, blank, dtype=np.int64), np.nan
        for cell in range(min(cells, s + 2)):  # s + 1 slots hold at most s + 1 words: the cells above stay empty
            _candidates(tables, rule, s, cell, score, last, column, (c_score, c_last, c_column, c_source, c_parent))
            if merge:
                _merge_states(c_last, c_score, out, beam, count, neg)
            for b in range(beam):  # the `beam` best, in order
                best = _next_best(c_score, out, count)
                finite = c_score[best] > neg
                new_score[cell, b] = c_score[best]
                new_last[cell, b] = c_last[best] if finite else blank
                new_column[cell, b] = c_column[best] if finite else -1
                sources[s, cell, b], parents[s, cell, b] = c_source[best], c_parent[best]
                tokens[s, cell, b] = c_last[best]
                picked[s, cell, b] = c_column[best]
            out[:] = False
        score, new_score = new_score, score
        last, new_last = new_last, last
        column, new_column = new_column, column
    cell = 0
    for t in range(cells):  # the longest reachable length up to the target
        if score[t, 0] > neg:
            cell = t
    return backtrace(tables, cell, tokens, picked, sources, parents)


@numba.njit(cache=True, inline="always")
def _candidates(tables, rule, s, cell, score, last, column, candidates):
    """Cell `cell`'s candidates at slot s, in the tensor version's order: (1) ε from the cell's best, (2) with
    `merge`, a repeat of each state's last word (same cell, same state), (3) each new word after the previous
    cell's best other word."""
    beam, merge, blank = rule
    blank_lp, word_lp, word_id, _, columns, rep_lp, norm = tables
    c_score, c_last, c_column, c_source, c_parent = candidates
    neg = np.float32(-np.inf)
    c_score[0] = score[cell, 0] + blank_lp[s]
    c_last[0], c_column[0], c_source[0], c_parent[0] = blank, -1, cell, 0
    n = 1
    if merge:
        for b in range(beam):
            word = last[cell, b]
            c_score[n] = neg if word == blank else score[cell, b] + (rep_lp[s, column[cell, b]] - norm[s])
            c_last[n], c_column[n], c_source[n], c_parent[n] = word, column[cell, b], cell, b
            n += 1
    for k in range(word_lp.shape[1]):
        word = word_id[s, k]
        previous = blank if cell == 0 else last[cell - 1, 0]
        clash = merge and previous == word
        parent = 1 if clash and beam > 1 else 0
        parent_score = neg if cell == 0 or (clash and beam == 1) else score[cell - 1, parent]
        c_score[n] = parent_score + word_lp[s, k]
        c_last[n], c_column[n], c_source[n], c_parent[n] = word, columns[s, k], cell - 1, parent
        n += 1


@numba.njit(cache=True, inline="always")
def _merge_states(c_last, c_score, out, beam, count, neg):
    """A repeat of w (candidates 1..beam) and a new w (the rest) reach one state: the better stays (the repeat on a
    tie), the other's score becomes −∞."""
    for b in range(1, 1 + beam):
        for a in range(1 + beam, count):
            if c_last[b] == c_last[a]:
                if c_score[a] > c_score[b]:
                    out[b] = True
                else:
                    out[a] = True
    for i in range(count):
        if out[i]:
            c_score[i] = neg
            out[i] = False


@numba.njit(cache=True, inline="always")
def _next_best(c_score, out, count):
    """The best candidate not yet taken (the first among equals), now taken."""
    best = -1
    for i in range(count):
        if not out[i] and (best < 0 or c_score[i] > c_score[best]):
            best = i
    out[best] = True
    return best


def decode(batch: Batch) -> list[Hypothesis]:
    """The `length-control` method: exactly L words (or the most the slots hold)."""
    return length_control_batch(batch.logits, batch.lengths, batch.targets, batch.beam_size, batch.blank,
                                log_norm=batch.log_norm)
