"""Length control in characters (NACC, Liu, Zhang & Mou, NeurIPS 2022): the most probable CTC path
whose summary, its words joined by single spaces, fits a budget of characters."""

from __future__ import annotations

import numba
import numpy as np
import torch

from naus import NausError
from naus.decoding.common import (
    BEAM, NEG_INF, Batch, Hypothesis, Rule, backtrace, cell_states, check_finished, check_targets, failures_raised,
    normalized, reduce_path, sample_tables, share_threads, slot_tables,
)
from naus.decoding.topk import grouped_top
from naus.plumbing.signals import stoppable, stopped


def char_control_batch(log_probs: torch.Tensor, lengths: torch.Tensor, budgets: list[int], word_chars: np.ndarray,
                       beam_size: int = BEAM, blank: int = 0, unk: int = -1,
                       unk_chars: list[list[int]] | None = None,
                       log_norm: torch.Tensor | None = None, max_memory_mb: int | None = None) -> list[Hypothesis]:
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

    With `log_norm`, `log_probs` are logits, as in `length_control_batch`. With `max_memory_mb`, a batch whose
    tables (slots x cells x B states of each sample decoded at once) would take more is refused.
    """
    check_targets(beam_size, budgets)
    lp, norm = normalized(log_probs, log_norm)
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
    if max_memory_mb is not None:
        _check_memory(valid, cells, beam_size, max_memory_mb)
    word_lp, word_id, word_len, starts = _words_by_length(lp, chars, slot_unk, int(cells.max(initial=1)) - 1, blank,
                                                          unk, beam_size + 1)
    tables = slot_tables(lp, norm, blank, word_lp, word_id, word_len)
    share_threads(len(valid))
    with stoppable() as stop, failures_raised():
        paths, scores = _char_control_batch_kernel(tables, starts, valid, cells, Rule(beam_size, True, blank), stop)
    check_finished(scores, valid)
    return [Hypothesis(reduce_path(path, blank), path, float(score))
            for path, score in zip((paths[i, : valid[i]].tolist() for i in range(n)), scores)]


STATE_BYTES = 4 * 8  # a state's back-pointers: its source cell, parent, token and column (int64 each)


def _check_memory(valid: np.ndarray, cells: np.ndarray, beam_size: int, max_memory_mb: int) -> None:
    """Refuse, in one line, tables that would not fit: the largest samples', as many as run at once."""
    sizes = np.sort(valid * cells * beam_size * STATE_BYTES)[::-1]
    need = int(sizes[: max(1, numba.get_num_threads())].sum())
    if need > max_memory_mb * 2**20:
        raise NausError(f"char-control within {int(cells.max()) - 1} characters at beam {beam_size} over "
                        f"{int(valid.max())} slots needs about {need / 2**20:,.0f} MB of tables, over max_memory_mb "
                        f"{max_memory_mb}: lower the budget (--chars) or the beam (--beam-size)")


@numba.njit(cache=True, parallel=True)
def _char_control_batch_kernel(tables, starts, valid, cells, rule, stop):
    """`_char_control_kernel` for every sample of a batch, on the threads numba is given: [N, T] paths
    and their log-probabilities."""
    paths = np.full(tables.blank_lp.shape, rule.blank, dtype=np.int64)
    scores = np.full(len(valid), np.nan)  # left NaN where a sample's kernel failed (`check_finished`)
    for i in numba.prange(len(valid)):
        if stopped(stop):  # the caller raises: the samples left are not started
            continue
        paths[i, : valid[i]], scores[i] = _char_control_kernel(sample_tables(tables, i), starts, valid[i], cells[i],
                                                               rule, stop)
    return paths, scores


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
    values, ids = grouped_top(lp, group, len(sizes), per)
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


@numba.njit(cache=True)
def _char_control_kernel(tables, starts, valid, cells, rule, stop):
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
    beam, _, blank = rule
    blank_lp, word_lp, word_id, word_len, columns, rep_lp, norm = tables
    neg = np.float32(-np.inf)
    score, last, column, new_score, new_last, new_column, sources, parents, tokens, picked = cell_states(
        valid, cells, beam, blank)
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
                _offer(value, blank, -1, cell, 0, s, cell, (new_score, new_last, new_column), (sources, parents))
            for b in range(beam):  # (2) repeat the last word: same cell, same state
                word = last[cell, b]
                if word != blank:
                    value = score[cell, b] + (rep_lp[s, column[cell, b]] - norm[s])
                    if value > new_score[cell, worst]:
                        _offer(value, word, column[cell, b], cell, b, s, cell, (new_score, new_last, new_column),
                               (sources, parents))
            for g in order:  # (3) a new word after the best other word of the cell it extends
                if best_before + heads[g] <= new_score[cell, worst]:
                    break  # no word of this group or a later one can enter the beam
                _offer_group(tables, starts[g], starts[g + 1], s, cell, score, last, (new_score, new_last, new_column),
                             (sources, parents))
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
    return backtrace(tables, cell, tokens, picked, sources, parents)


@numba.njit(cache=True, inline="always")
def _offer_group(tables, first, end, s, cell, score, last, beams, back):
    """Offer cell `cell` the new words of one group (one length, best first: columns first..end of slot s), each
    after the best other word of the cell it extends, until one cannot enter the beam."""
    _, word_lp, word_id, word_len, columns, _, _ = tables
    neg, beam, worst = np.float32(-np.inf), score.shape[1], score.shape[1] - 1
    new_score = beams[0]
    for k in range(first, end):
        word, size = word_id[s, k], word_len[s, k]
        if word < 0:
            return
        source = 0 if cell == size else cell - size - 1  # a space before every word but the first
        if source < 0 or (source == 0 and cell != size) or score[source, 0] == neg:
            return  # a group's words share their length, so their source cell (unk: a group of one)
        if score[source, 0] + word_lp[s, k] <= new_score[cell, worst]:
            return  # nothing later in this group can enter the beam
        parent = 1 if last[source, 0] == word else 0
        if parent >= beam:
            continue
        value = score[source, parent] + word_lp[s, k]
        if value > new_score[cell, worst]:
            _offer(value, word, columns[s, k], source, parent, s, cell, beams, back)


@numba.njit(cache=True, inline="always")  # called per candidate: a call costs more than its work
def _offer(value, word, column, source, parent, s, cell, beams, back):
    """Put a state into cell `cell`'s beam (best first) unless the beam holds it with a score at least
    as good; the caller has checked that `value` beats the beam's last. `beams`: the next slot's
    (score, last word, its column) per cell and state; `back`: where each state came from."""
    score, last, columns = beams
    sources, parents = back
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


def decode(batch: Batch) -> list[Hypothesis]:
    """The `char-control` method: at most `batch.chars` characters, whole words."""
    return char_control_batch(batch.logits, batch.lengths, [batch.chars] * len(batch.targets), batch.word_chars,
                              batch.beam_size, batch.blank, batch.unk, batch.unk_chars, batch.log_norm,
                              batch.max_memory_mb)


def written_chars(word_chars: np.ndarray, ids: torch.Tensor, shown: list[list[str]] | None) -> np.ndarray:
    """The characters (UTF-8 bytes) char-control counts for each token: as the headline writes it (`shown`: the
    most of the token's positions in the batch, its clitics included), else as the vocabulary holds it."""
    if shown is None:
        return word_chars
    written = word_chars.copy()
    for row, words in enumerate(shown):
        for token, word in zip(ids[row].tolist(), words):
            written[token] = max(written[token], len(word.encode()))
    return written
