"""The source-order decoder against brute force (every path of ε and source positions), and what it guarantees a
copy-head student's headlines: no source position twice, none out of order."""

import itertools
import math

import numpy as np
import pytest
import torch

from naus.decoding.source_order import source_order_batch
from tests.helpers import ROOT


def best_of_every_count(lp: np.ndarray) -> dict[int, tuple[float, list[int]]]:
    """{words: (log-probability, positions)} of the most probable path of each word count whose positions
    (Γ merging the same position in adjacent slots) strictly increase, by enumerating every path."""
    time, best = lp.shape[0], {}
    for path in itertools.product(range(-1, time), repeat=time):
        positions, previous = [], None
        for p in path:
            if p >= 0 and p != previous:
                positions.append(p)
            previous = p
        if positions != sorted(set(positions)):
            continue
        score = float(sum(lp[s, p + 1] for s, p in enumerate(path)))
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
