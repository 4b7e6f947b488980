"""Reference implementations the compiled production code is checked (and timed) against:
plain and slow, written for the reader. The tests import them; so do the benchmarks."""

from __future__ import annotations

import math

import numpy as np
import torch

from naus.decoding import NEG_INF, Hypothesis, forced_alignment, greedy, reduce_path
from naus.decoding.common import check_targets
from naus.decoding.topk import best_words_torch
from naus.teacher.search import Candidates, HillClimber, _top_k


def ctc_beam_search_python(log_probs: torch.Tensor, beam_size: int = 6, blank: int = 0) -> Hypothesis:
    """`ctc_beam_search` with Python dictionaries of prefix tuples: the reference the compiled
    kernel is tested and timed against."""
    lp = log_probs.double()
    beams: dict[tuple, tuple[float, float]] = {(): (0.0, NEG_INF)}  # prefix -> (ends in ε, ends in word)
    top_words = lp.topk(min(beam_size + 1, lp.shape[1]), dim=-1).indices.tolist()
    rows = lp.tolist()
    for s, row in enumerate(rows):
        candidates = [w for w in top_words[s] if w != blank][:beam_size]
        nxt: dict[tuple, list[float]] = {}
        for prefix, (p_b, p_nb) in beams.items():
            total = _logaddexp(p_b, p_nb)
            _accumulate(nxt, prefix, total + row[blank], NEG_INF)
            if prefix:
                _accumulate(nxt, prefix, NEG_INF, p_nb + row[prefix[-1]])
            for w in candidates:
                if prefix and w == prefix[-1]:
                    _accumulate(nxt, prefix + (w,), NEG_INF, p_b + row[w])
                else:
                    _accumulate(nxt, prefix + (w,), NEG_INF, total + row[w])
        ranked = sorted(nxt.items(), key=lambda kv: -_logaddexp(*kv[1]))[:beam_size]
        beams = {prefix: (b, nb) for prefix, (b, nb) in ranked}
    best = list(max(beams.items(), key=lambda kv: _logaddexp(*kv[1]))[0])
    path = forced_alignment(log_probs, best, blank) if log_probs.shape[0] else []
    return Hypothesis(best, path, _path_score(log_probs, path))


def _path_score(log_probs: torch.Tensor, path: list[int]) -> float:
    """The path's log-probability: each slot's of its token, summed by torch."""
    if not path:
        return 0.0
    index = torch.tensor(path, device=log_probs.device)
    return float(log_probs[torch.arange(len(path), device=log_probs.device), index].sum())


def _accumulate(table: dict[tuple, list[float]], prefix: tuple, ends_blank: float, ends_word: float) -> None:
    """Add probability mass (log space) to a prefix's two ways of ending."""
    cur = table.setdefault(prefix, [NEG_INF, NEG_INF])
    cur[0] = _logaddexp(cur[0], ends_blank)
    cur[1] = _logaddexp(cur[1], ends_word)


def _logaddexp(a: float, b: float) -> float:
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


def length_control_tensors(log_probs: torch.Tensor, lengths: torch.Tensor, targets: list[int], beam_size: int = 6,
                           blank: int = 0, merge_repeats: bool = True, force_length: bool = True) -> list[Hypothesis]:
    """`length_control_batch` as batched tensor operations, a Python loop over slots (~30 small
    operations each): the reference the compiled kernel is tested and timed against."""
    check_targets(beam_size, targets)
    lp = log_probs.detach().float()
    n, time, vocab = lp.shape
    lengths = lengths.to(lp.device)
    cells = max(targets) + 1
    beam = beam_size if merge_repeats else 1
    scope = min(beam + 1, vocab - 1)
    arange_n = torch.arange(n, device=lp.device)

    word_lp, word_id = best_words_torch(lp, blank, scope)
    blank_lp = lp[:, :, blank]  # [N, T]

    score = torch.full((n, cells, beam), NEG_INF, device=lp.device)
    score[:, 0, 0] = 0.0
    last = torch.full((n, cells, beam), blank, dtype=torch.long, device=lp.device)
    history = []  # per slot: (parent cell offset, parent beam, emitted token) for each [N, cells, beam]
    # Constant pieces of the candidate lists, built once (the loop below is the hot path).
    dev = lp.device
    blank_col = torch.full((n, cells, 1), blank, dtype=torch.long, device=dev)
    zero_col = torch.zeros((n, cells, 1), dtype=torch.long, device=dev)
    neg_row = torch.full((n, 1, beam), NEG_INF, device=dev)
    blank_row = torch.full((n, 1, beam), blank, dtype=torch.long, device=dev)
    neg_beam = torch.full((n, cells, beam), NEG_INF, device=dev)
    beam_idx = torch.arange(beam, device=dev).expand(n, cells, beam)
    zero_beam = torch.zeros((n, cells, beam), dtype=torch.long, device=dev)
    one_scope = torch.ones((n, cells, scope), dtype=torch.long, device=dev)
    zero_scope = torch.zeros((n, cells, scope), dtype=torch.long, device=dev)
    active_at = [(s < lengths)[:, None, None] for s in range(time)]

    for s in range(time):
        active = active_at[s]
        # (1) ε from the same cell: only the cell's best matters (all land in state "ends in ε").
        eps = (score[:, :, :1] + blank_lp[:, s, None, None], blank_col, zero_col, zero_col, blank_col)
        # (2) repeat the last word (merged: same cell, same state).
        if merge_repeats:
            rep_lp = lp[arange_n[:, None, None], s, last]
            rep_score = torch.where(last == blank, neg_beam, score + rep_lp)
            rep = (rep_score, last, zero_beam, beam_idx, last)
        # (3) a new word from the cell before: parent = that cell's best beam whose last word differs.
        prev_score = torch.cat([neg_row, score[:, :-1]], dim=1)  # [N, C, B]
        prev_last = torch.cat([blank_row, last[:, :-1]], dim=1)
        words = word_id[:, s, None, :].expand(n, cells, scope)  # [N, C, K]
        if merge_repeats and beam > 1:
            clash = prev_last[:, :, :1] == words  # the best parent ends in this word: use the second best
            parent = clash.long()
            parent_score = torch.where(clash, prev_score[:, :, 1:2], prev_score[:, :, :1])
        else:
            clash = (prev_last[:, :, :1] == words) if merge_repeats else torch.zeros_like(words, dtype=torch.bool)
            parent = zero_scope
            parent_score = prev_score[:, :, :1].masked_fill(clash, NEG_INF)
        adv_score = parent_score + word_lp[:, s, None, :]
        adv = (adv_score, words, one_scope, parent, words)

        parts = [eps, rep, adv] if merge_repeats else [eps, adv]
        cand_score, cand_last, cand_off, cand_parent, cand_tok = (torch.cat(x, dim=2) for x in zip(*parts))
        if merge_repeats:
            # A repeat of word c and a new word c reach the same state: keep the better.
            r0, r1 = 1, 1 + beam
            rep_last, adv_last = cand_last[:, :, r0:r1], cand_last[:, :, r1:]
            same = rep_last[:, :, :, None] == adv_last[:, :, None, :]  # [N, C, B, K]
            rep_s, adv_s = cand_score[:, :, r0:r1], cand_score[:, :, r1:]
            rep_loses = (same & (adv_s[:, :, None, :] > rep_s[:, :, :, None])).any(dim=3)
            adv_loses = (same & (rep_s[:, :, :, None] >= adv_s[:, :, None, :])).any(dim=2)
            cand_score = cand_score.clone()
            cand_score[:, :, r0:r1] = rep_s.masked_fill(rep_loses, NEG_INF)
            cand_score[:, :, r1:] = adv_s.masked_fill(adv_loses, NEG_INF)
        top_score, top = cand_score.topk(beam, dim=2)
        new_last, new_off, new_parent, new_tok = (x.gather(2, top) for x in (cand_last, cand_off, cand_parent, cand_tok))
        new_last = torch.where(top_score == NEG_INF, torch.full_like(new_last, blank), new_last)
        score = torch.where(active, top_score, score)
        last = torch.where(active, new_last, last)
        history.append((new_off, new_parent, new_tok))

    results = []
    reachable_cells = (score[:, :, 0] > NEG_INF).cpu().tolist()
    # [N, T, cells, beam] as nested lists: backtracking is then plain Python indexing.
    offsets, parents, tokens = (torch.stack(column, dim=1).cpu().tolist() for column in zip(*history))
    for i in range(n):
        valid = int(lengths[i])
        reachable = [t for t in range(min(targets[i], cells - 1) + 1) if reachable_cells[i][t]]
        cell = reachable[-1] if reachable else 0
        b, path = 0, []
        for s in range(valid - 1, -1, -1):
            path.append(tokens[i][s][cell][b])
            cell, b = cell - offsets[i][s][cell][b], parents[i][s][cell][b]
        path.reverse()
        hyp = Hypothesis(reduce_path(path, blank, merge_repeats), path, _path_score(lp[i, :valid], path))
        plain = None if force_length else greedy(lp[i, :valid], blank, merge_repeats)
        results.append(plain if plain and len(plain.tokens) <= targets[i] else hyp)
    return results


def climb_arrays(climber: HillClimber, index: int, words: list[str], keep: int = 1,
                 trace: list[np.ndarray] | None = None) -> Candidates:
    """`HillClimber.search` with the walk in NumPy arrays, all restarts a step at a time (3x slower than
    the compiled kernel): the reference it is tested and timed against. `trace` receives each
    restart's score after each step."""
    length = climber.config.target_length(len(words))
    steps, restarts = climber.config.budget(len(words), length)
    if len(words) <= length or math.comb(len(words), length) <= steps * restarts:
        return climber.search(index, words, keep)  # no walk: the source itself, or every subset scored
    score = climber._scorer(words, length)
    rng = np.random.default_rng([climber.config.seed, index])
    rows = np.arange(restarts)
    masks = np.zeros((restarts, len(words)), dtype=bool)
    np.put_along_axis(masks, rng.random((restarts, len(words))).argsort(axis=1)[:, :length], True, axis=1)
    order = np.argsort(~masks, axis=1, kind="stable")
    current, *extra = score(order[:, :length], masks)
    seen_masks, seen = [masks.copy()], [(current, *extra)]
    for _ in range(steps):
        out = order[rows, rng.integers(0, length, restarts)]
        into = order[rows, length + rng.integers(0, len(words) - length, restarts)]
        proposal = masks.copy()
        proposal[rows, out], proposal[rows, into] = False, True
        proposal_order = np.argsort(~proposal, axis=1, kind="stable")
        objective, *proposal_extra = score(proposal_order[:, :length], proposal)
        seen_masks.append(proposal)
        seen.append((objective, *proposal_extra))
        accept = objective >= current
        masks[accept], order[accept] = proposal[accept], proposal_order[accept]
        current = np.where(accept, objective, current)
        if trace is not None:
            trace.append(current.copy())
    all_masks = np.concatenate(seen_masks)
    objective, log_prob, slor, sim = [None if c[0] is None else np.concatenate(c) for c in zip(*seen)]
    keys = np.packbits(all_masks, axis=1)
    keys = np.ascontiguousarray(keys).view(np.dtype((np.void, keys.shape[1]))).ravel()
    _, first = np.unique(keys, return_index=True)
    top = first[_top_k(objective[first], keep)]
    return Candidates(
        words, np.argsort(~all_masks[top], axis=1, kind="stable")[:, :length], objective[top], log_prob[top],
        slor[top], None if sim is None else sim[top], len(all_masks),
    )


def char_control_python(log_probs: torch.Tensor, budget: int, word_chars: list[int], beam_size: int = 6,
                        blank: int = 0) -> list[int]:
    """`char_control_batch`'s beam search for one sample, over every word of every slot (no
    selection of words by length): cells of characters used, each holding its `beam_size` best
    (score, last token, path), distinct by last token. Scores are assumed untied."""
    lp = log_probs.double().tolist()
    words = [w for w in range(len(word_chars)) if w != blank and 1 <= word_chars[w] <= budget]
    cells: list[list[tuple[float, int, list[int]]]] = [[(0.0, blank, [])]] + [[] for _ in range(budget)]
    for s, row in enumerate(lp):
        new: list[list[tuple[float, int, list[int]]]] = [[] for _ in range(budget + 1)]
        order = sorted(words, key=lambda w: (word_chars[w], -row[w], w))
        for cell in range(budget + 1):
            offers = []
            if cells[cell]:
                score, _, path = cells[cell][0]
                offers.append((score + row[blank], blank, path + [blank]))
            offers += [(score + row[word], word, path + [word]) for score, word, path in cells[cell] if word != blank]
            for word in order:
                size = word_chars[word]
                source = 0 if cell == size else cell - size - 1
                if source < 0 or (source == 0 and cell != size):
                    continue
                parents = [state for state in cells[source] if state[1] != word]
                if parents:
                    score, _, path = parents[0]
                    offers.append((score + row[word], word, path + [word]))
            kept: dict[int, tuple[float, int, list[int]]] = {}
            for offer in offers:  # the better per state
                if offer[1] not in kept or offer[0] > kept[offer[1]][0]:
                    kept[offer[1]] = offer
            new[cell] = sorted(kept.values(), key=lambda state: -state[0])[:beam_size]
        cells = new
    ends = [(cell[0][0], c) for c, cell in enumerate(cells) if cell]
    best = max(ends, key=lambda end: (end[0], end[1]))[1]
    return cells[best][0][2]


def objective_python(log_prob: float, slor: float, length: int, fluency: str, gamma: float, cosine: float) -> float:
    """The teacher's objective as the paper writes it: ln(fluency · sim^γ), fluency SLOR or 1/perplexity
    = P^(1/(L+1)), sim = (cos + 1) / 2 (at most 1: γ > 0 only weighs it)."""
    value = slor if fluency == "slor" else math.log(math.exp(log_prob) ** (1 / (length + 1)))
    return value + (gamma * math.log(max((cosine + 1) / 2, 1e-12)) if gamma > 0 else 0.0)
