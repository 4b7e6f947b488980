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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

NEG_INF = float("-inf")


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


def _path_score(log_probs: torch.Tensor, path: list[int]) -> float:
    if not path:
        return 0.0
    index = torch.tensor(path, device=log_probs.device)
    return float(log_probs[torch.arange(len(path), device=log_probs.device), index].sum())


def greedy(log_probs: torch.Tensor, blank: int = 0, merge_repeats: bool = True) -> Hypothesis:
    """Most probable token per slot, then Γ."""
    path = log_probs.argmax(dim=-1).tolist()
    return Hypothesis(reduce_path(path, blank, merge_repeats), path, _path_score(log_probs, path))


def truncate(hypothesis: Hypothesis, length: int) -> Hypothesis:
    """The first `length` words (the path and its score describe the untruncated output)."""
    return Hypothesis(hypothesis.tokens[:length], hypothesis.path, hypothesis.log_prob)


def forced_alignment(log_probs: torch.Tensor, tokens: list[int], blank: int = 0) -> list[int]:
    """The most probable path whose Γ-reduction is `tokens` (Viterbi over the CTC lattice)."""
    time = log_probs.shape[0]
    labels = [blank]
    for token in tokens:
        labels += [token, blank]
    states = len(labels)
    lp = log_probs[:, labels].tolist()
    score = [[NEG_INF] * states for _ in range(time)]
    back = [[0] * states for _ in range(time)]
    score[0][0] = lp[0][0]
    if states > 1:
        score[0][1] = lp[0][1]
    for s in range(1, time):
        for j in range(states):
            options = [(score[s - 1][j], j)]
            if j >= 1:
                options.append((score[s - 1][j - 1], j - 1))
            if j >= 2 and labels[j] != blank and labels[j] != labels[j - 2]:
                options.append((score[s - 1][j - 2], j - 2))
            best, prev = max(options)
            score[s][j] = best + lp[s][j]
            back[s][j] = prev
    end = max(((score[-1][j], j) for j in range(max(states - 2, 0), states)))[1]
    path = [0] * time
    for s in range(time - 1, -1, -1):
        path[s] = labels[end]
        end = back[s][end]
    return path


def ctc_beam_search(log_probs: torch.Tensor, beam_size: int = 6, blank: int = 0) -> Hypothesis:
    """Prefix beam search summing over alignments; each slot considers its `beam_size` best words.

    Returns the prefix with the highest total probability; `.path` is its best alignment.
    """
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


def length_control(
    log_probs: torch.Tensor,
    length: int,
    beam_size: int = 6,
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


def length_control_batch(
    log_probs: torch.Tensor,
    lengths: torch.Tensor,
    targets: list[int],
    beam_size: int = 6,
    blank: int = 0,
    merge_repeats: bool = True,
    force_length: bool = True,
) -> list[Hypothesis]:
    """`length_control` for [N, T, V] log-probabilities with valid slots `lengths` and per-sample targets."""
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    if any(t < 0 for t in targets):
        raise ValueError("target lengths must be non-negative")
    lp = log_probs.detach().float()
    n, time, vocab = lp.shape
    lengths = lengths.to(lp.device)
    cells = max(targets) + 1
    beam = beam_size if merge_repeats else 1
    scope = min(beam + 1, vocab - 1)
    arange_n = torch.arange(n, device=lp.device)

    # Best non-blank words of every slot: the only ones extension (3) needs.
    masked = lp.clone()
    masked[:, :, blank] = NEG_INF
    word_lp, word_id = masked.topk(scope, dim=-1)  # [N, T, K]
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
        sample = lp[i, :valid]
        hyp = Hypothesis(reduce_path(path, blank, merge_repeats), path, _path_score(sample, path))
        if not force_length:
            plain = greedy(sample, blank, merge_repeats)
            if len(plain.tokens) <= targets[i]:
                hyp = plain
        results.append(hyp)
    return results


def greedy_batch(log_probs: torch.Tensor, lengths: torch.Tensor, blank: int = 0) -> list[Hypothesis]:
    """Greedy decoding of [N, T, V] log-probabilities with valid slots `lengths`."""
    best, ids = log_probs.max(dim=-1)
    ids, best = ids.cpu(), best.cpu()
    out = []
    for i in range(log_probs.shape[0]):
        valid = int(lengths[i])
        path = ids[i, :valid].tolist()
        out.append(Hypothesis(reduce_path(path, blank), path, float(best[i, :valid].sum())))
    return out
