"""CTC prefix beam search: the most probable prefix summed over its alignments, each slot extending
the beam by its best words (the compiled slot loop keeps prefixes as nodes of a trie)."""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np
import torch

from naus.decoding.align import _align_kernel
from naus.decoding.common import BEAM, Batch, Hypothesis, check_finished, failures_raised, normalized, share_threads
from naus.decoding.greedy import truncate
from naus.decoding.topk import top_k_slots
from naus.plumbing.signals import stoppable, stopped

# What the kernel reads: `table[i, s, where[i, c]] − norm[i, s]` is slot s's log-probability of candidate c
# of sample i (c < T·K: the word top_words[i].flat[c]; the last c: ε).
BeamTables = namedtuple("BeamTables", "table where top_words norm")


def ctc_beam_search(log_probs: torch.Tensor, beam_size: int = BEAM, blank: int = 0) -> Hypothesis:
    """Prefix beam search summing over alignments; each slot considers its `beam_size` best words.

    Returns the prefix with the highest total probability; `.path` is its best alignment. The
    slot loop is compiled (`_beam_kernel`, prefixes as nodes of a trie) and reads only the
    log-probabilities of each slot's best words and ε, gathered where the model ran; it equals
    the dictionary version in `tests/reference.py` (tested).
    """
    return ctc_beam_search_batch(log_probs[None], torch.tensor([log_probs.shape[0]]), beam_size, blank)[0]


def ctc_beam_search_batch(log_probs: torch.Tensor, lengths: torch.Tensor, beam_size: int = BEAM, blank: int = 0,
                          log_norm: torch.Tensor | None = None) -> list[Hypothesis]:
    """`ctc_beam_search` of each of [N, T, V] log-probabilities (or logits with `log_norm`, as in
    `length_control_batch`) with valid slots `lengths`: the samples searched in parallel, each reading
    only its slots' best words and ε (on the CPU from the array itself, from a GPU out of a table of
    those words gathered where the model ran and brought over at once), each best prefix aligned
    from the same values (every word of it is one of some slot's best)."""
    lp, norm = normalized(log_probs, log_norm)
    top_words, table, where = _candidate_table(lp, min(beam_size + 1, lp.shape[-1]), blank,
                                               gather=lp.device.type != "cpu")
    tables = BeamTables(*(x.cpu().numpy() for x in (table, where, top_words, norm)))
    valid = lengths.cpu().numpy().astype(np.int64)
    share_threads(len(valid))
    with stoppable() as stop, failures_raised():
        paths, sizes, words, scores = _beam_batch_kernel(tables, valid, beam_size, blank, stop)
    check_finished(scores, valid)
    return [Hypothesis(words[i, : sizes[i]].tolist(), paths[i, : valid[i]].tolist(), float(scores[i]))
            for i in range(len(valid))]


def _candidate_table(lp: torch.Tensor, ranks: int, blank: int, gather: bool) -> tuple[torch.Tensor, ...]:
    """Each slot's `ranks` best words [N, T, K], and where beam search reads a slot's log-probability of
    candidate c (c < T·K: the word top_words[i].flat[c]; c = T·K: ε): `table[i, s, where[i, c]]`. On the
    CPU the array itself (where: the word ids); from a GPU those T·K + 1 columns gathered, [N, T, T·K + 1]."""
    n, time, _ = lp.shape
    top_words = top_k_slots(lp, ranks)[1] if lp.device.type == "cpu" else lp.topk(ranks, dim=-1).indices
    columns = torch.cat([top_words.reshape(n, -1), torch.full((n, 1), blank, device=lp.device)], dim=1)
    if not gather:
        return top_words, lp, columns
    table = lp.gather(2, columns[:, None, :].expand(n, time, -1))
    return top_words, table, torch.arange(columns.shape[1]).repeat(n, 1)  # contiguous, as on the CPU: one kernel


@numba.njit(cache=True, parallel=True)
def _beam_batch_kernel(tables, valid, beam_size, blank, stop):
    """`_beam_kernel` and the best prefix's alignment for every sample: paths [N, T], prefix sizes [N],
    prefixes [N, T] and the paths' log-probabilities [N]."""
    table, where, top_words, norm = tables
    n, time, ranks = top_words.shape
    paths = np.full((n, time), blank, dtype=np.int64)
    words = np.full((n, time), blank, dtype=np.int64)
    sizes = np.zeros(n, dtype=np.int64)
    scores = np.full(n, np.nan)  # left NaN where a sample's kernel failed (`check_finished`)
    for i in numba.prange(n):
        if valid[i] == 0:
            scores[i] = 0.0  # the empty path
            continue
        if stopped(stop):  # the caller raises: the samples left are not started
            continue
        best = _beam_kernel(table[i], where[i], norm[i], top_words[i, : valid[i]], beam_size, blank, stop)
        labels = np.full(2 * len(best) + 1, blank, dtype=np.int64)
        # each label's candidate (ε: last)
        label_column = np.full(2 * len(best) + 1, where.shape[1] - 1, dtype=np.int64)
        flat = top_words[i].ravel()
        for j in range(len(best)):
            labels[2 * j + 1] = best[j]
            for c in range(flat.shape[0]):
                if flat[c] == best[j]:
                    label_column[2 * j + 1] = c
                    break
        lattice = np.empty((valid[i], len(labels)))
        for s in range(valid[i]):
            for j in range(len(labels)):
                lattice[s, j] = table[i, s, where[i, label_column[j]]] - norm[i, s]
        paths[i, : valid[i]], scores[i] = _align_kernel(lattice, labels, blank)
        sizes[i] = len(best)
        words[i, : len(best)] = best
    return paths, sizes, words, scores


@numba.njit(cache=True)
def _logaddexp_kernel(a: float, b: float) -> float:
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


@numba.njit(cache=True)
def _add_mass(node, ends_blank, ends_word, nodes, blank_mass, word_mass, count, position):
    """`_accumulate` on the arrays of the next slot's prefixes (`position`: a prefix's entry, so that a slot
    costs its beam² extensions, not their square); returns the new count."""
    if node in position:
        i = position[node]
        blank_mass[i] = _logaddexp_kernel(blank_mass[i], ends_blank)
        word_mass[i] = _logaddexp_kernel(word_mass[i], ends_word)
        return count
    position[node] = count
    nodes[count] = node
    blank_mass[count] = _logaddexp_kernel(-np.inf, ends_blank)
    word_mass[count] = _logaddexp_kernel(-np.inf, ends_word)
    return count + 1


@numba.njit(cache=True)
def _beam_kernel(table, where, norm, top_words, beam_size, blank, stop):
    """`ctc_beam_search_python`'s slot loop: the same candidates, sums and stable ranking.

    `table[s, where[c]] − norm[s]`: slot s's log-probability of the word top_words.flat[c] (c's last
    value: ε). A
    prefix is a trie node (parent, last word, that word's column, length), so extending one is
    an integer and equal prefixes are one node; `child` maps (parent, word) to the node.
    """
    time, ranks = top_words.shape
    eps = where.shape[0] - 1
    capacity = 1 + time * beam_size * beam_size
    parent = np.full(capacity, -1, dtype=np.int64)
    token, token_column = parent.copy(), parent.copy()
    size = np.zeros(capacity, dtype=np.int64)
    nodes_used = 1  # node 0: the empty prefix
    stride = top_words.max() + 1  # (parent, word) as one integer key: prefix · stride + word
    child = {np.int64(-1): np.int64(0)}  # typed
    beams = np.zeros(1, dtype=np.int64)
    beam_blank = np.zeros(1)
    beam_word = np.full(1, -np.inf)
    width = beam_size * (beam_size + 2)
    nodes, blank_mass, word_mass = np.empty(width, np.int64), np.empty(width), np.empty(width)
    candidates = np.empty(ranks, dtype=np.int64)  # columns of the slot's best non-blank words
    position = {np.int64(-1): np.int64(-1)}  # typed; emptied for each slot
    for s in range(time):
        position.clear()
        if stopped(stop):  # the caller raises: no result is used
            return np.empty(0, dtype=np.int64)
        row, shift = table[s], norm[s]
        k = _candidates(top_words, s, blank, beam_size, candidates)
        count = 0
        for j in range(beams.shape[0]):
            prefix, p_b, p_nb = beams[j], beam_blank[j], beam_word[j]
            total = _logaddexp_kernel(p_b, p_nb)
            count = _add_mass(prefix, total + (row[where[eps]] - shift), -np.inf, nodes, blank_mass, word_mass, count,
                              position)
            if size[prefix] > 0:
                repeat = row[where[token_column[prefix]]] - shift
                count = _add_mass(prefix, -np.inf, p_nb + repeat, nodes, blank_mass, word_mass, count, position)
            for c in range(k):
                column = candidates[c]
                w = top_words.flat[column]
                key = prefix * stride + w
                if key in child:
                    extended = child[key]
                else:
                    extended = nodes_used
                    parent[extended], token[extended], size[extended] = prefix, w, size[prefix] + 1
                    token_column[extended] = column
                    child[key] = extended
                    nodes_used += 1
                before = p_b if size[prefix] > 0 and w == token[prefix] else total  # a repeat needs an ε between
                count = _add_mass(extended, -np.inf, before + (row[where[column]] - shift), nodes, blank_mass,
                                  word_mass, count, position)
        totals = np.empty(count)
        for i in range(count):
            totals[i] = -_logaddexp_kernel(blank_mass[i], word_mass[i])
        ranked = np.argsort(totals, kind="mergesort")[:beam_size]  # stable, as Python's sorted
        beams, beam_blank, beam_word = nodes[ranked].copy(), blank_mass[ranked].copy(), word_mass[ranked].copy()
    return _best_prefix(beams, beam_blank, beam_word, size, token, parent)


@numba.njit(cache=True, inline="always")
def _candidates(top_words, s, blank, beam_size, candidates):
    """Slot s's best `beam_size` non-blank words, as columns of `top_words` in `candidates`; how many."""
    ranks, k = top_words.shape[1], 0
    for r in range(ranks):
        if top_words[s, r] != blank and k < beam_size:
            candidates[k] = s * ranks + r
            k += 1
    return k


@numba.njit(cache=True, inline="always")
def _best_prefix(beams, beam_blank, beam_word, size, token, parent):
    """The words of the first of the most probable prefixes (as Python's max), read up the trie."""
    best = 0
    for j in range(1, beams.shape[0]):
        if _logaddexp_kernel(beam_blank[j], beam_word[j]) > _logaddexp_kernel(beam_blank[best], beam_word[best]):
            best = j
    node = beams[best]
    out = np.empty(size[node], dtype=np.int64)
    for i in range(size[node] - 1, -1, -1):
        out[i] = token[node]
        node = parent[node]
    return out


def decode_truncated(batch: Batch) -> list[Hypothesis]:
    """The `beam` method of a CTC student: prefix beam search, then the first L words."""
    hyps = ctc_beam_search_batch(batch.logits, batch.lengths, batch.beam_size, batch.blank, batch.log_norm)
    return [truncate(h, t) for h, t in zip(hyps, batch.targets)]
