"""The source-order decoder against brute force (every path of ε and source positions), and what it guarantees a
copy-head student's headlines: no source position twice, none out of order."""

import itertools
import math

import numpy as np
import pytest
import torch

from naus.decoding.source_order import source_order_batch
from tests.helpers import ROOT


def best_of_every_count(lp: np.ndarray, tied: list[bool] | None = None, adjacency: float = 0.0,
                        dangling: list[bool] | None = None) -> dict[int, tuple[float, list[int]]]:
    """{words: (score, positions)} of the best path of each word count whose positions (Γ merging the same position
    in adjacent slots) strictly increase, by enumerating every path: its log-probability plus `adjacency` for each
    word after its source neighbour; with `tied`, only paths that keep position k with k + 1 right after it; with
    `dangling`, only those that do not end on such a position."""
    time, best = lp.shape[0], {}
    tied, dangling = tied or [False] * time, dangling or [False] * time
    for path in itertools.product(range(-1, time), repeat=time):
        positions, previous = [], None
        for p in path:
            if p >= 0 and p != previous:
                positions.append(p)
            previous = p
        if positions != sorted(set(positions)):
            continue
        pairs = list(zip(positions, [*positions[1:], None]))
        if any(tied[a] and b != a + 1 for a, b in pairs) or any(tied[b - 1] and a != b - 1
                                                                  for a, b in zip([None, *positions], positions) if b):
            continue
        if positions and dangling[positions[-1]]:
            continue
        score = float(sum(lp[s, p + 1] for s, p in enumerate(path)))
        score += adjacency * sum(b == a + 1 for a, b in zip(positions, positions[1:]))
        if math.isfinite(score) and score > best.get(len(positions), (-math.inf,))[0]:
            best[len(positions)] = (score, positions)
    return best


def random_scores(gen: torch.Generator, time: int, barred: bool) -> torch.Tensor:
    logits = torch.randn(1, time, time + 1, generator=gen) * 2
    if barred:  # a punctuation position a headline may not emit
        logits[0, :, 1 + int(torch.randint(0, time, (1,), generator=gen))] = -math.inf
    return logits.log_softmax(-1)


@pytest.mark.parametrize("seed", range(8))
def test_exactly_l_words_in_order_equals_brute_force(seed):
    gen = torch.Generator().manual_seed(seed)
    for time in range(1, 5):
        lp = random_scores(gen, time, barred=seed % 2 == 0)
        best = best_of_every_count(lp[0].numpy())
        for length in range(1, 5):
            [(positions, path, score)] = source_order_batch(lp, torch.tensor([time]), targets=[length])
            words = max(k for k in best if k <= length)  # the most the positions admit
            assert len(positions) == words and positions == sorted(set(positions))
            assert score == pytest.approx(best[words][0], abs=1e-5)
            assert score == pytest.approx(sum(float(lp[0, s, p + 1]) for s, p in enumerate(path)), abs=1e-5)
            assert [p for s, p in enumerate(path) if p >= 0 and (s == 0 or path[s - 1] != p)] == positions


@pytest.mark.parametrize("seed", range(8))
def test_phrases_whole_no_dangling_end_and_the_adjacency_bonus_equal_brute_force(seed):
    """Phrases whole (a tied position kept only with its successor right after it, and its successor only after
    it), no summary ending on a barred position, and the bonus of adjacent words are constraints and a term of the
    exact program: its best path is brute force's."""
    gen = torch.Generator().manual_seed(200 + seed)
    adjacency = [0.0, 0.7, 2.5][seed % 3]
    for time in range(2, 5):
        lp = random_scores(gen, time, barred=seed % 2 == 0)
        tied = [bool(b) for b in torch.randint(0, 2, (time,), generator=gen).tolist()]
        tied[-1] = False  # the last position has no successor to keep
        dangling = [bool(b) for b in torch.randint(0, 2, (time,), generator=gen).tolist()] if seed > 3 else None
        best = best_of_every_count(lp[0].numpy(), tied, adjacency, dangling)
        for length in range(1, 5):
            [(positions, path, score)] = source_order_batch(lp, torch.tensor([time]), targets=[length],
                                                            tied=np.array([tied]), adjacency=adjacency,
                                                            dangling=None if dangling is None else np.array([dangling]))
            words = max(k for k in best if k <= length)
            assert len(positions) == words
            bonus = adjacency * sum(b == a + 1 for a, b in zip(positions, positions[1:]))
            assert score + bonus == pytest.approx(best[words][0], abs=1e-5)  # the score returned: the path's own
            for k in positions:
                assert not tied[k] or k + 1 in positions
                assert k == 0 or not tied[k - 1] or k - 1 in positions
            assert not (dangling and positions and dangling[positions[-1]])


def test_a_bad_adjacency_is_refused():
    lp = torch.zeros(1, 2, 3).log_softmax(-1)
    with pytest.raises(ValueError, match="adjacency"):
        source_order_batch(lp, torch.tensor([2]), targets=[1], adjacency=float("nan"))


@pytest.mark.parametrize("seed", range(6))
def test_within_a_budget_of_bytes_the_most_words_whose_best_path_fits_equals_brute_force(seed):
    gen = torch.Generator().manual_seed(100 + seed)
    for time in range(1, 5):
        lp = random_scores(gen, time, barred=seed % 2 == 1)
        widths = torch.randint(1, 4, (1, time), generator=gen).numpy()
        best = best_of_every_count(lp[0].numpy())
        for budget in range(0, 9):
            [(positions, _, score)] = source_order_batch(lp, torch.tensor([time]), budgets=[budget], widths=widths)
            fits = [k for k, (_, p) in best.items() if k == 0 or sum(widths[0, p]) + k - 1 <= budget]
            assert len(positions) == max(fits)
            assert score == pytest.approx(best[max(fits)][0], abs=1e-5)


def test_a_batch_decodes_each_sample_as_alone():
    gen = torch.Generator().manual_seed(7)
    lp = torch.randn(5, 9, 10, generator=gen).log_softmax(-1)
    lengths = torch.tensor([9, 3, 0, 6, 1])
    together = source_order_batch(lp, lengths, targets=[4, 2, 3, 4, 1])
    for i, (positions, path, score) in enumerate(together):
        t = int(lengths[i])
        alone = source_order_batch(lp[i : i + 1, :t, : t + 1].log_softmax(-1) if t else lp[i : i + 1, :0, :1],
                                   lengths[i : i + 1], targets=[[4, 2, 3, 4, 1][i]])[0]
        assert len(path) == t and positions == alone[0]


def test_one_of_targets_and_budgets():
    lp = torch.zeros(1, 2, 3)
    with pytest.raises(ValueError, match="one of them"):
        source_order_batch(lp, torch.tensor([2]))
    with pytest.raises(ValueError, match="non-negative"):
        source_order_batch(lp, torch.tensor([2]), targets=[-1])


@pytest.mark.parametrize("length", [8, 10, 13])
def test_the_bundled_students_headlines_keep_the_sources_words_and_order(length):
    """No headline word more often than its source has it, nor two out of the source's order: the positions the
    decoder chose, and the words as written."""
    from naus import Summarizer
    from naus.text import copy_key, source_tokens

    lines = (ROOT / "tests/data/news.txt").read_text().splitlines()
    summarizer = Summarizer.from_pretrained()
    for line, result in zip(lines, summarizer.summarize(lines, length=length)):
        assert result.length == min(length, len(source_tokens(line)))
        source = [copy_key(t).lower() for t in source_tokens(line)]
        at = 0
        for word in (copy_key(t).lower() for t in source_tokens(result.summary)):
            assert word in source[at:], (line, result.summary)
            at = source.index(word, at) + 1
