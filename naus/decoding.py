"""Decoding CTC outputs: greedy (+ truncation), prefix beam search, and length control.

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

The slot loops of length control, prefix beam search and forced alignment are compiled with
numba and read only small tables (each slot's best words and ε) gathered where the model ran,
so one sentence costs about what greedy decoding costs. The tests check them against tensor and
dictionary versions (`tests/reference.py`; same paths on untied scores, equal scores may be
broken another way).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Iterator

import numba
import numpy as np
import torch

from naus import NausError
from naus.settings import DecodeConfig
from naus.signals import held, stoppable, stopped

NEG_INF = float("-inf")
BEAM = DecodeConfig.beam_size


@dataclass
class Hypothesis:
    tokens: list[int]  # the reduced summary
    path: list[int] = field(default_factory=list)  # one id per valid slot
    log_prob: float = 0.0  # sum of log_probs[s, path[s]]


def reduce_path(path: list[int], blank: int = 0, merge_repeats: bool = True) -> list[int]:
    """Γ: merge repeated neighbours, then drop ε (Γ′ when merge_repeats is False: drop ε only)."""
    out, previous = [], None
    for token in path:
        if token != blank and not (merge_repeats and token == previous):
            out.append(token)
        previous = token
    return out


def word_slots(path: list[int], blank: int = 0) -> list[int]:
    """The slot where each word of Γ(path) starts (its first slot after ε or another token)."""
    return [s for s, token in enumerate(path) if token != blank and (s == 0 or path[s - 1] != token)]


def _share_threads(samples: int) -> None:
    """The batch kernels' `prange` runs on the threads torch was given (`--threads`), no more than the batch's
    samples: a one-thread job stays one, and a batch of one wakes no worker. Numba's pool itself is as large
    as NUMBA_NUM_THREADS when numba is imported (`naus --threads` sets it): the idle workers of a larger pool
    spin, keeping another core busy."""
    numba.set_num_threads(max(1, min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS, samples)))


def greedy(log_probs: torch.Tensor, blank: int = 0, merge_repeats: bool = True) -> Hypothesis:
    """Most probable token per slot, then Γ."""
    return greedy_batch(log_probs[None], torch.tensor([log_probs.shape[0]]), blank, merge_repeats=merge_repeats)[0]


def truncate(hypothesis: Hypothesis, length: int) -> Hypothesis:
    """The first `length` words (the path and its score describe the untruncated output)."""
    return Hypothesis(hypothesis.tokens[:length], hypothesis.path, hypothesis.log_prob)


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
    lp, norm = _normalized(log_probs, log_norm)
    top_words, table, where = _candidate_table(lp, min(beam_size + 1, lp.shape[-1]), blank,
                                               gather=lp.device.type != "cpu")
    table, where, top, norm = (x.cpu().numpy() for x in (table, where, top_words, norm))
    valid = lengths.cpu().numpy().astype(np.int64)
    _share_threads(len(valid))
    with stoppable() as stop, _failures_raised():
        paths, sizes, words, scores = _beam_batch_kernel(table, where, top, norm, valid, beam_size, blank, stop)
    _check_finished(scores, valid)
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
    return top_words, table, torch.arange(columns.shape[1]).expand(n, -1)


@numba.njit(cache=True, parallel=True)
def _beam_batch_kernel(table, where, top_words, norm, valid, beam_size, blank, stop):
    """`_beam_kernel` and the best prefix's alignment for every sample: paths [N, T], prefix sizes [N],
    prefixes [N, T] and the paths' log-probabilities [N]."""
    n, time, ranks = top_words.shape
    paths = np.full((n, time), blank, dtype=np.int64)
    words = np.full((n, time), blank, dtype=np.int64)
    sizes = np.zeros(n, dtype=np.int64)
    scores = np.full(n, np.nan)  # left NaN where a sample's kernel failed (`_check_finished`)
    for i in numba.prange(n):
        if valid[i] == 0:
            scores[i] = 0.0  # the empty path
            continue
        if stopped(stop):  # the caller raises: the samples left are not started
            continue
        best = _beam_kernel(table[i], where[i], norm[i], top_words[i, : valid[i]], beam_size, blank, stop)
        labels = np.full(2 * len(best) + 1, blank, dtype=np.int64)
        label_column = np.full(2 * len(best) + 1, where.shape[1] - 1, dtype=np.int64)  # each label's candidate (ε: last)
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
def _add_mass(node, ends_blank, ends_word, nodes, blank_mass, word_mass, count):
    """`_accumulate` on the arrays of the next slot's prefixes; returns the new count."""
    for i in range(count):
        if nodes[i] == node:
            blank_mass[i] = _logaddexp_kernel(blank_mass[i], ends_blank)
            word_mass[i] = _logaddexp_kernel(word_mass[i], ends_word)
            return count
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
    token = np.full(capacity, -1, dtype=np.int64)
    token_column = np.full(capacity, -1, dtype=np.int64)
    size = np.zeros(capacity, dtype=np.int64)
    nodes_used = 1  # node 0: the empty prefix
    child = dict()
    child[(np.int64(-1), np.int64(-1))] = np.int64(0)  # types the dictionary
    beams = np.zeros(1, dtype=np.int64)
    beam_blank = np.zeros(1)
    beam_word = np.full(1, -np.inf)
    width = beam_size * (beam_size + 2)
    nodes, blank_mass, word_mass = np.empty(width, np.int64), np.empty(width), np.empty(width)
    candidates = np.empty(ranks, dtype=np.int64)  # columns of the slot's best non-blank words
    for s in range(time):
        if stopped(stop):  # the caller raises: no result is used
            return np.empty(0, dtype=np.int64)
        row, shift = table[s], norm[s]
        k = 0
        for r in range(ranks):
            if top_words[s, r] != blank and k < beam_size:
                candidates[k] = s * ranks + r
                k += 1
        count = 0
        for j in range(beams.shape[0]):
            prefix, p_b, p_nb = beams[j], beam_blank[j], beam_word[j]
            total = _logaddexp_kernel(p_b, p_nb)
            count = _add_mass(prefix, total + (row[where[eps]] - shift), -np.inf, nodes, blank_mass, word_mass, count)
            if size[prefix] > 0:
                repeat = row[where[token_column[prefix]]] - shift
                count = _add_mass(prefix, -np.inf, p_nb + repeat, nodes, blank_mass, word_mass, count)
            for c in range(k):
                column = candidates[c]
                w = top_words.flat[column]
                key = (prefix, w)
                if key in child:
                    extended = child[key]
                else:
                    extended = nodes_used
                    parent[extended], token[extended], size[extended] = prefix, w, size[prefix] + 1
                    token_column[extended] = column
                    child[key] = extended
                    nodes_used += 1
                before = p_b if size[prefix] > 0 and w == token[prefix] else total  # a repeat needs an ε between
                count = _add_mass(extended, -np.inf, before + (row[where[column]] - shift), nodes, blank_mass, word_mass,
                                  count)
        totals = np.empty(count)
        for i in range(count):
            totals[i] = -_logaddexp_kernel(blank_mass[i], word_mass[i])
        ranked = np.argsort(totals, kind="mergesort")[:beam_size]  # stable, as Python's sorted
        beams, beam_blank, beam_word = nodes[ranked].copy(), blank_mass[ranked].copy(), word_mass[ranked].copy()
    best = 0
    for j in range(1, beams.shape[0]):  # the first of the most probable, as Python's max
        if _logaddexp_kernel(beam_blank[j], beam_word[j]) > _logaddexp_kernel(beam_blank[best], beam_word[best]):
            best = j
    node = beams[best]
    out = np.empty(size[node], dtype=np.int64)
    for i in range(size[node] - 1, -1, -1):
        out[i] = token[node]
        node = parent[node]
    return out


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
    log-softmax is written (`_normalized`). The slot loop is compiled (`_length_control_kernel`) and
    reads each slot's B + 1 best words and ε, and the log-probability of any word a state can end
    in: on the CPU from the array itself, from a GPU out of the [N, T, T·(B + 1)] table of those
    words gathered where the model ran. Results equal the batched tensor version in
    `tests/reference.py` (tested).
    """
    _check_length_control(beam_size, targets)
    lp, norm = _normalized(log_probs, log_norm)
    n, time, vocab = lp.shape
    beam = beam_size if merge_repeats else 1
    scope = min(beam + 1, vocab - 1)
    word_lp, word_id = _best_words(lp, blank, scope)
    rep_lp, columns = _repeat_table(lp, word_id, gather=lp.device.type != "cpu")
    blank_lp, word_lp = lp[:, :, blank].cpu() - norm, word_lp.cpu() - norm[..., None]
    blank_lp, word_lp, word_id, columns, rep_lp, norm = (
        x.cpu().numpy() for x in (blank_lp, word_lp, word_id, columns, rep_lp, norm))
    valid = lengths.cpu().numpy().astype(np.int64)
    _share_threads(len(valid))
    cells = np.minimum(np.asarray(targets, dtype=np.int64), valid) + 1  # s slots hold at most s words: no more cells
    with stoppable() as stop, _failures_raised():
        paths, scores = _length_control_batch_kernel(valid, cells, beam, merge_repeats, blank, blank_lp, word_lp, word_id,
                                                     columns, rep_lp, norm, stop)
    _check_finished(scores, valid)
    plain = None if force_length else greedy_batch(log_probs, lengths, blank, log_norm, merge_repeats)
    results = []
    for i in range(n):
        path = paths[i, : valid[i]].tolist()
        hyp = Hypothesis(reduce_path(path, blank, merge_repeats), path, float(scores[i]))
        results.append(plain[i] if plain and len(plain[i].tokens) <= targets[i] else hyp)  # plain: without force_length
    return results


def slot_log_norm(logits: torch.Tensor) -> torch.Tensor:
    """Each slot's log-sum-exp [N, T]: what turns logits [N, T, V] into log-probabilities. On a CPU one
    sample at a time: a batch-sized temporary cost more in page faults than the exponentials (log-softmax
    of [64, 35, 4,678] took 25 ms, this 13 ms, on a 2-core Intel Xeon); on a GPU one call."""
    if logits.device.type != "cpu":
        return logits.logsumexp(dim=-1)
    return torch.stack([sample.logsumexp(dim=-1) for sample in logits]) if len(logits) else logits[..., 0]


def _normalized(log_probs: torch.Tensor, log_norm: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """The decoders' scores and what each slot's must lose to be a log-probability (on the CPU): `log_norm`
    for logits, zero for log-probabilities (which are their own logits: x − 0 is x, the same bits)."""
    lp = log_probs.detach().float()
    if log_norm is None:
        return lp, torch.zeros(lp.shape[:2])
    return lp, log_norm.detach().float().cpu()


@numba.njit(cache=True, parallel=True)
def _length_control_batch_kernel(valid, cells, beam, merge, blank, blank_lp, word_lp, word_id, columns, rep_lp, norm,
                                 stop):
    """`_length_control_kernel` for every sample of a batch, on the threads numba is given: [N, T] paths
    (ε past each sample's valid slots) and their log-probabilities."""
    paths = np.full(blank_lp.shape, blank, dtype=np.int64)
    scores = np.full(len(valid), np.nan)  # left NaN where a sample's kernel failed (`_check_finished`)
    for i in numba.prange(len(valid)):
        if stopped(stop):  # the caller raises: the samples left are not started
            continue
        paths[i, : valid[i]], scores[i] = _length_control_kernel(valid[i], cells[i], beam, merge, blank, blank_lp[i],
                                                                 word_lp[i], word_id[i], columns[i], rep_lp[i], norm[i],
                                                                 stop)
    return paths, scores


@contextlib.contextmanager
def _failures_raised() -> Iterator[None]:
    """A compiled kernel that failed is an error in one line: an allocation that failed inside numba's
    `prange` comes back as a SystemError whose cause is the MemoryError (or not at all: `_check_finished`)."""
    try:
        yield
    except (MemoryError, SystemError) as err:
        cause = err.__cause__ if isinstance(err.__cause__, MemoryError) else err
        raise NausError(f"the decoder failed ({type(cause).__name__}: {cause}): a smaller beam, batch or "
                        "target needs less memory") from None


def _check_finished(scores: np.ndarray, valid: np.ndarray) -> None:
    """A batch kernel leaves a sample's score NaN when its kernel did not finish: an exception inside
    numba's `prange` (an allocation that failed, say) is dropped there, so it is raised here."""
    failed = np.flatnonzero(np.isnan(scores) & (valid > 0))
    if len(failed):
        raise NausError(f"the decoder failed on {len(failed)} of {len(valid)} samples of a batch (the first: row "
                        f"{failed[0]} of {valid[failed[0]]} slots): out of memory, or a non-finite model output")


def _check_length_control(beam_size: int, targets: list[int]) -> None:
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    if any(t < 0 for t in targets):
        raise ValueError("target lengths must be non-negative")


def _best_words(lp: torch.Tensor, blank: int, scope: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each slot's `scope` most probable non-blank words, [N, T, K] each: the only ones extension
    (3) needs. One more than needed is taken and ε dropped (no copy of the whole vocabulary)."""
    if lp.device.type == "cpu":
        return top_k_slots(lp, scope, exclude=blank)
    return _best_words_torch(lp, blank, scope)


def _best_words_torch(lp: torch.Tensor, blank: int, scope: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`_best_words` with `torch.topk`: on a GPU (and in the tensor reference of the tests)."""
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


@numba.njit(cache=True)
def _length_control_kernel(valid, cells, beam, merge, blank, blank_lp, word_lp, word_id, columns, rep_lp, norm, stop):
    """The slot loop for one sample (cells 0..target, float32 as the tensor version): the best path
    and its log-probability.

    `word_lp`, `word_id` [T, K]: each slot's K best non-blank words; `rep_lp[s, columns[t, k]] −
    norm[s]`: slot s's log-probability of the word `word_id[t, k]` (for repeats). Candidates come in
    the tensor version's order (ε, repeats, new words); among equal scores the earlier wins.
    """
    scope = word_lp.shape[1]
    neg = np.float32(-np.inf)
    score = np.full((cells, beam), neg, dtype=np.float32)
    score[0, 0] = 0.0
    last = np.full((cells, beam), blank, dtype=np.int64)
    column = np.full((cells, beam), -1, dtype=np.int64)  # where `last` sits among rep_lp's columns
    new_score, new_last, new_column = score.copy(), last.copy(), column.copy()
    offsets = np.zeros((valid, cells, beam), dtype=np.int64)
    parents = np.zeros((valid, cells, beam), dtype=np.int64)
    tokens = np.full((valid, cells, beam), blank, dtype=np.int64)
    picked = np.full((valid, cells, beam), -1, dtype=np.int64)  # the state's column (ε: -1), for the path's score
    count = 1 + (beam if merge else 0) + scope
    c_score = np.empty(count, dtype=np.float32)
    c_last, c_column = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
    c_off, c_parent = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
    out = np.zeros(count, dtype=np.bool_)
    for s in range(valid):
        if stopped(stop):  # the caller raises: no result is used
            return np.full(valid, blank, dtype=np.int64), np.nan
        for cell in range(min(cells, s + 2)):  # s + 1 slots hold at most s + 1 words: the cells above stay empty
            # (1) ε from the cell's best
            c_score[0] = score[cell, 0] + blank_lp[s]
            c_last[0], c_column[0], c_off[0], c_parent[0] = blank, -1, 0, 0
            n = 1
            if merge:  # (2) repeat the last word: same cell, same state
                for b in range(beam):
                    word = last[cell, b]
                    c_score[n] = neg if word == blank else score[cell, b] + (rep_lp[s, column[cell, b]] - norm[s])
                    c_last[n], c_column[n], c_off[n], c_parent[n] = word, column[cell, b], 0, b
                    n += 1
            for k in range(scope):  # (3) a new word after the previous cell's best other word
                word = word_id[s, k]
                previous = blank if cell == 0 else last[cell - 1, 0]
                clash = merge and previous == word
                parent = 1 if clash and beam > 1 else 0
                if cell == 0 or (clash and beam == 1):
                    parent_score = neg
                else:
                    parent_score = score[cell - 1, parent]
                c_score[n] = parent_score + word_lp[s, k]
                c_last[n], c_column[n], c_off[n], c_parent[n] = word, columns[s, k], 1, parent
                n += 1
            if merge:  # a repeat of w and a new w reach one state: the better stays (the repeat on a tie)
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
            for b in range(beam):  # the `beam` best, in order
                best = -1
                for i in range(count):
                    if not out[i] and (best < 0 or c_score[i] > c_score[best]):
                        best = i
                out[best] = True
                finite = c_score[best] > neg
                new_score[cell, b] = c_score[best]
                new_last[cell, b] = c_last[best] if finite else blank
                new_column[cell, b] = c_column[best] if finite else -1
                offsets[s, cell, b], parents[s, cell, b], tokens[s, cell, b] = c_off[best], c_parent[best], c_last[best]
                picked[s, cell, b] = c_column[best]
            out[:] = False
        score, new_score = new_score, score
        last, new_last = new_last, last
        column, new_column = new_column, column
    cell = 0
    for t in range(cells):  # the longest reachable length up to the target
        if score[t, 0] > neg:
            cell = t
    path = np.empty(valid, dtype=np.int64)
    total = 0.0
    b = 0
    for s in range(valid - 1, -1, -1):
        path[s] = tokens[s, cell, b]
        where = picked[s, cell, b]
        total += blank_lp[s] if where < 0 else rep_lp[s, where] - norm[s]
        cell, b = cell - offsets[s, cell, b], parents[s, cell, b]
    return path, total


def greedy_batch(log_probs: torch.Tensor, lengths: torch.Tensor, blank: int = 0,
                 log_norm: torch.Tensor | None = None, merge_repeats: bool = True) -> list[Hypothesis]:
    """Greedy decoding of [N, T, V] log-probabilities (or logits with `log_norm`, as in
    `length_control_batch`) with valid slots `lengths`; on the CPU each slot's best word comes from
    `top_k_slots` (a third of `torch.max`'s time at V = 30,000; on ties it may pick another)."""
    lp, norm = _normalized(log_probs, log_norm)
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


def char_control_batch(log_probs: torch.Tensor, lengths: torch.Tensor, budgets: list[int], word_chars: np.ndarray,
                       beam_size: int = BEAM, blank: int = 0, unk: int = -1,
                       unk_chars: list[list[int]] | None = None, log_norm: torch.Tensor | None = None) -> list[Hypothesis]:
    """The most probable CTC path (within the beam) whose summary, its words joined by single spaces,
    has at most `budgets[i]` characters: length control in characters (NACC, Liu et al. 2022).

    `word_chars[v]` is the characters (bytes, for DUC's rule) token v takes as written; with
    `unk_chars`, token `unk` at slot s of sample i takes `unk_chars[i][s]` instead (the source word
    it stands for in raw text). The dynamic program of `length_control` runs over cells of
    characters used (0, or the words' characters plus one space between each two), with the same
    recombination (one prefix per cell and last token) and beam of B states per cell; so:

    * With B at least the vocabulary size (every token and ε a distinct state), the result is the
      exact maximum of the path probability over all paths whose summary fits the budget.
    * For any B, a slot's new words are taken from the B + 1 most probable words of each character
      length (no other can enter a cell's best B: the B + 1 above it, less at most one that repeats
      the parent's word, share its parent cell and beat it), so the result is what the same beam
      search over every word gives (tested against both on tiny vocabularies).

    With `log_norm`, `log_probs` are logits, as in `length_control_batch`.
    """
    _check_length_control(beam_size, budgets)
    lp, norm = _normalized(log_probs, log_norm)
    n, time, vocab = lp.shape
    chars = np.asarray(word_chars, dtype=np.int64)
    if chars.shape != (vocab,):
        raise ValueError(f"word_chars holds {chars.shape[0]} lengths for a vocabulary of {vocab}")
    slot_unk = np.full((n, time), int(chars[unk]) if 0 <= unk < vocab else -1, dtype=np.int64)
    if unk_chars is not None:
        for i, row in enumerate(unk_chars):
            slot_unk[i, : len(row)] = np.asarray(row, dtype=np.int64)[:time]
    valid = lengths.cpu().numpy().astype(np.int64)
    # no summary of s slots is longer than s of the longest words and the spaces between: a larger budget
    # gives the same path, and would only widen the table (a cell per character)
    longest = max(int(chars.max(initial=0)), int(slot_unk.max(initial=0)))
    cells = np.minimum(np.asarray(budgets, dtype=np.int64), valid * (longest + 1)) + 1
    word_lp, word_id, word_len, starts = _words_by_length(lp, chars, slot_unk, int(cells.max(initial=1)) - 1, blank, unk,
                                                          beam_size + 1)
    rep_lp, columns = _repeat_table(lp, word_id, gather=lp.device.type != "cpu")
    blank_lp, word_lp = lp[:, :, blank].cpu() - norm, word_lp.cpu() - norm[..., None]
    blank_lp, word_lp, word_id, word_len, columns, rep_lp, norm = (
        x.cpu().numpy() for x in (blank_lp, word_lp, word_id, word_len, columns, rep_lp, norm))
    _share_threads(len(valid))
    with stoppable() as stop, _failures_raised():
        paths, scores = _char_control_batch_kernel(valid, cells, beam_size, blank, blank_lp, word_lp, word_id, word_len,
                                                   starts, columns, rep_lp, norm, stop)
    _check_finished(scores, valid)
    return [Hypothesis(reduce_path(path, blank), path, float(score))
            for path, score in zip((paths[i, : valid[i]].tolist() for i in range(n)), scores)]


@numba.njit(cache=True, parallel=True)
def _char_control_batch_kernel(valid, cells, beam, blank, blank_lp, word_lp, word_id, word_len, starts, columns, rep_lp,
                               norm, stop):
    """`_char_control_kernel` for every sample of a batch, on the threads numba is given: [N, T] paths
    and their log-probabilities."""
    paths = np.full(blank_lp.shape, blank, dtype=np.int64)
    scores = np.full(len(valid), np.nan)  # left NaN where a sample's kernel failed (`_check_finished`)
    for i in numba.prange(len(valid)):
        if stopped(stop):  # the caller raises: the samples left are not started
            continue
        paths[i, : valid[i]], scores[i] = _char_control_kernel(valid[i], cells[i], beam, blank, blank_lp[i], word_lp[i],
                                                               word_id[i], word_len[i], starts, columns[i], rep_lp[i],
                                                               norm[i], stop)
    return paths, scores


def _repeat_table(lp: torch.Tensor, word_id: torch.Tensor, gather: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Where the repeats read a slot's log-probability of a candidate word [N, T, K]: `rep_lp[i, s,
    columns[i, t, k]]`. On the CPU the log-probabilities themselves (a word's column is its id); from
    a GPU only the columns a state can end in, [N, T, T·K]."""
    if not gather:
        return lp, word_id.clamp(min=0)
    n, time, scope = word_id.shape
    seen = word_id.clamp(min=0).to(lp.device).reshape(n, 1, time * scope).expand(n, time, time * scope)
    return lp.gather(2, seen), torch.arange(time * scope).reshape(1, time, scope).expand(n, -1, -1)


def _words_by_length(lp: torch.Tensor, chars: np.ndarray, slot_unk: np.ndarray, budget: int, blank: int, unk: int,
                     per: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, np.ndarray]:
    """Each slot's `per` most probable words of every character length up to `budget` (groups of
    `per` columns, best first; missing ones -inf and id -1), then `unk` alone in a last column with
    its per-slot length: [N, T, K] log-probabilities, ids and lengths, and each group's first column."""
    vocab = lp.shape[-1]
    special = np.zeros(vocab, dtype=bool)
    special[[x for x in (blank, unk) if 0 <= x < vocab]] = True
    usable = ~special & (chars >= 1) & (chars <= budget)
    sizes = np.flatnonzero(np.bincount(chars[usable], minlength=1))
    group_of_size = np.full(budget + 2, -1, dtype=np.int64)
    group_of_size[sizes] = np.arange(len(sizes))
    group = np.where(usable, group_of_size[np.clip(chars, 0, budget + 1)], -1)
    values, ids = _grouped_top(lp, group, len(sizes), per)
    lengths = torch.from_numpy(np.where(ids.numpy() >= 0, chars[ids.numpy().clip(0)], 0))
    if 0 <= unk < vocab:
        unk_len = torch.from_numpy(slot_unk)
        fits = (unk_len >= 1) & (unk_len <= budget)
        values = torch.cat([values, lp[:, :, unk].cpu().masked_fill(~fits, NEG_INF)[..., None]], dim=-1)
        ids = torch.cat([ids, torch.where(fits, unk, -1)[..., None]], dim=-1)
        lengths = torch.cat([lengths, unk_len.masked_fill(~fits, 0)[..., None]], dim=-1)
    starts = list(range(0, per * len(sizes) + 1, per))
    starts += [ids.shape[-1]] if ids.shape[-1] > starts[-1] else []
    return values, ids, lengths, np.array(starts, dtype=np.int64)


def _grouped_top(lp: torch.Tensor, group: np.ndarray, groups: int, per: int) -> tuple[torch.Tensor, torch.Tensor]:
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
    """`_grouped_top` with one `torch.topk` per group: on a GPU (and checked against the kernel on the CPU)."""
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


@numba.njit(cache=True)
def _char_control_kernel(valid, cells, beam, blank, blank_lp, word_lp, word_id, word_len, starts, columns, rep_lp,
                         norm, stop):
    """The slot loop for one sample over cells of characters used 0..budget: the best path and its
    log-probability.

    `word_lp`, `word_id`, `word_len` [T, K]: each slot's candidate words (groups of one length,
    best first, from `starts`); `rep_lp[s, columns[t, k]] − norm[s]`: slot s's log-probability of
    the word in column k of slot t, for the repeats.

    Each cell keeps its `beam` best states (prefixes with distinct last tokens), best first.
    Candidates come as in `_length_control_kernel` (ε, repeats, new words); a state met twice
    keeps the better. New words come in groups of one length, best first, and the groups by their
    best word, so a group stops at the first word whose score cannot enter the cell's beam, and the
    groups at the first whose best word could not even after the best cell below.
    """
    neg = np.float32(-np.inf)
    score = np.full((cells, beam), neg, dtype=np.float32)
    score[0, 0] = 0.0
    last = np.full((cells, beam), blank, dtype=np.int64)
    column = np.full((cells, beam), -1, dtype=np.int64)
    new_score, new_last, new_column = score.copy(), last.copy(), column.copy()
    sources = np.zeros((valid, cells, beam), dtype=np.int64)  # the cell each state came from
    parents = np.zeros((valid, cells, beam), dtype=np.int64)
    tokens = np.full((valid, cells, beam), blank, dtype=np.int64)
    picked = np.full((valid, cells, beam), -1, dtype=np.int64)  # the state's column (ε: -1), for the path's score
    groups = starts.shape[0] - 1
    heads = np.empty(groups, dtype=np.float32)
    for s in range(valid):
        if stopped(stop):  # the caller raises: no result is used
            return np.full(valid, blank, dtype=np.int64), np.nan
        new_score[:] = neg
        new_last[:] = blank
        new_column[:] = -1
        for g in range(groups):  # each group's best word; groups are tried best head first
            heads[g] = word_lp[s, starts[g]] if word_id[s, starts[g]] >= 0 else neg
        order = np.argsort(-heads, kind="mergesort")
        best_before = neg  # the best score of the cells below this one: every new word's source is one
        for cell in range(cells):
            worst = beam - 1  # a candidate must beat new_score[cell, worst] (a state already there, too)
            value = score[cell, 0] + blank_lp[s]  # (1) ε from the cell's best
            if value > new_score[cell, worst]:
                _offer(value, blank, -1, cell, 0, s, cell, new_score, new_last, new_column, sources, parents)
            for b in range(beam):  # (2) repeat the last word: same cell, same state
                word = last[cell, b]
                if word != blank:
                    value = score[cell, b] + (rep_lp[s, column[cell, b]] - norm[s])
                    if value > new_score[cell, worst]:
                        _offer(value, word, column[cell, b], cell, b, s, cell, new_score, new_last, new_column,
                               sources, parents)
            for g in order:  # (3) a new word after the best other word of the cell it extends
                if best_before + heads[g] <= new_score[cell, worst]:
                    break  # no word of this group or a later one can enter the beam
                for k in range(starts[g], starts[g + 1]):
                    word, size = word_id[s, k], word_len[s, k]
                    if word < 0:
                        break
                    source = 0 if cell == size else cell - size - 1  # a space before every word but the first
                    if source < 0 or (source == 0 and cell != size) or score[source, 0] == neg:
                        break  # a group's words share their length, so their source cell (unk: a group of one)
                    if score[source, 0] + word_lp[s, k] <= new_score[cell, worst]:
                        break  # nothing later in this group can enter the beam
                    parent = 1 if last[source, 0] == word else 0
                    if parent >= beam:
                        continue
                    value = score[source, parent] + word_lp[s, k]
                    if value > new_score[cell, worst]:
                        _offer(value, word, columns[s, k], source, parent, s, cell, new_score, new_last, new_column,
                               sources, parents)
            for b in range(beam):
                tokens[s, cell, b] = new_last[cell, b]
                picked[s, cell, b] = new_column[cell, b]
            best_before = max(best_before, score[cell, 0])
        score, new_score = new_score, score
        last, new_last = new_last, last
        column, new_column = new_column, column
    cell = 0
    for c in range(cells):  # the most probable end; on a tie the longer summary
        if score[c, 0] >= score[cell, 0] and score[c, 0] > neg:
            cell = c
    path = np.empty(valid, dtype=np.int64)
    total = 0.0
    b = 0
    for s in range(valid - 1, -1, -1):
        path[s] = tokens[s, cell, b]
        where = picked[s, cell, b]
        total += blank_lp[s] if where < 0 else rep_lp[s, where] - norm[s]
        cell, b = sources[s, cell, b], parents[s, cell, b]
    return path, total


@numba.njit(cache=True, inline="always")  # called per candidate: a call costs more than its work
def _offer(value, word, column, source, parent, s, cell, score, last, columns, sources, parents):
    """Put a state into cell `cell`'s beam (best first) unless the beam holds it with a score at least
    as good; the caller has checked that `value` beats the beam's last."""
    beam = score.shape[1]
    at = beam - 1  # the slot to free: the same state's, else the last
    for i in range(beam):
        if score[cell, i] > -np.inf and last[cell, i] == word:
            if score[cell, i] >= value:
                return
            at = i
            break
    i = at
    while i > 0 and score[cell, i - 1] < value:  # worse states move down
        score[cell, i], last[cell, i], columns[cell, i] = score[cell, i - 1], last[cell, i - 1], columns[cell, i - 1]
        sources[s, cell, i], parents[s, cell, i] = sources[s, cell, i - 1], parents[s, cell, i - 1]
        i -= 1
    score[cell, i], last[cell, i], columns[cell, i] = value, word, column
    sources[s, cell, i], parents[s, cell, i] = source, parent
