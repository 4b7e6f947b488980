"""The paired randomization test and the seeds' permutation test on constructed cases whose answer is known."""

import itertools

import numpy as np
import pytest

from naus import NausError
from naus.evaluation.significance import holm, paired_p_value, seed_mean, two_level_interval, unpaired_p_value


def exact_p(diff):
    """Every sign flip enumerated: the exact two-sided p-value of the sign-flip test."""
    observed = abs(np.mean(diff))
    flips = [abs(np.mean(np.array(s) * diff)) >= observed - 1e-12 for s in itertools.product((-1, 1), repeat=len(diff))]
    return sum(flips) / len(flips)


@pytest.mark.parametrize("diff", [[1.0, 2.0, 3.0], [0.5, -0.1, 0.2, 0.3, -0.4, 0.9], [1.0, -1.0, 2.0, 0.0, 0.5]])
def test_the_p_value_approaches_the_exact_sign_flip_test(diff):
    b = np.zeros(len(diff))
    p = paired_p_value(np.array(diff), b, resamples=100_000)
    assert p == pytest.approx(exact_p(np.array(diff)), abs=0.01)  # 100,000 flips: sd of the estimate < 0.002


def test_a_system_better_on_every_sentence_is_significant_and_equal_systems_are_not():
    rng = np.random.default_rng(1)
    b = rng.uniform(0, 1, 300)
    assert paired_p_value(b + 0.05, b) < 0.001   # better on every one of 300 sentences
    assert paired_p_value(b, b) == 1.0
    noise = rng.normal(0, 0.2, 300)
    assert paired_p_value(b + noise - noise.mean(), b) > 0.9   # the same mean: no evidence either way


def test_the_test_is_two_sided_seeded_and_checks_its_input():
    rng = np.random.default_rng(2)
    a, b = rng.uniform(0, 1, 50), rng.uniform(0, 1, 50)
    assert paired_p_value(a, b) == paired_p_value(b, a) == paired_p_value(a, b)
    with pytest.raises(NausError, match="one score per sentence"):
        paired_p_value([1.0, 2.0], [1.0])


def test_seeds_are_averaged_per_sentence():
    assert seed_mean([[1.0, 2.0], [3.0, 4.0]]).tolist() == [2.0, 3.0]


def split_p(a, b):
    """Every assignment of the pooled values to groups of a's and b's sizes, by brute force over the labellings."""
    pooled, observed = list(a) + list(b), abs(np.mean(a) - np.mean(b))
    splits = [(np.mean([pooled[i] for i in first]), np.mean([pooled[i] for i in range(len(pooled)) if i not in first]))
              for first in itertools.combinations(range(len(pooled)), len(a))]
    return sum(abs(x - y) >= observed - 1e-12 for x, y in splits) / len(splits)


@pytest.mark.parametrize("a, b", [([1.0, 2.0], [3.0, 4.0]), ([0.3, 0.9, 0.1], [0.5, 0.7]),
                                  ([2.0, 2.5, 1.0, 3.0], [1.5, 0.5, 1.0, 0.2, 2.2])])
def test_the_seeds_permutation_test_counts_every_split(a, b):
    assert unpaired_p_value(a, b) == pytest.approx(split_p(a, b))
    assert unpaired_p_value([1.0, 2.0], [3.0, 4.0]) == pytest.approx(2 / 6)  # only the two extreme splits reach it


def test_ten_seeds_apart_reach_the_smallest_p_and_many_seeds_are_sampled():
    low, high = np.arange(10.0), np.arange(10.0) + 100
    assert unpaired_p_value(low, high) == pytest.approx(2 / 184_756)  # C(20, 10) splits, the two extreme ones
    assert unpaired_p_value(low, low) == 1.0
    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 1, 30), rng.normal(0, 1, 30)   # C(60, 30) splits: sampled, seeded
    assert unpaired_p_value(a, b) == pytest.approx(unpaired_p_value(b, a), abs=0.02) and unpaired_p_value(a, b) > 0.05
    assert unpaired_p_value(a + 10, b) == pytest.approx(1 / 10_001)
    with pytest.raises(NausError, match="non-empty"):
        unpaired_p_value([], [1.0])


def test_holm_against_its_definition():
    """Holm's adjustment: statsmodels' textbook case, and on random families the rule it stands for: the k-th
    smallest p rejected at α exactly when every smaller one is, each against α / (m − rank)."""
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = rng.random(int(rng.integers(1, 8))) ** 3
        adjusted, order = holm(list(p)), np.argsort(p, kind="stable")
        for alpha in (0.01, 0.05, 0.2):
            passed = 0
            while passed < len(p) and p[order[passed]] <= alpha / (len(p) - passed):
                passed += 1
            assert sorted(i for i in range(len(p)) if adjusted[i] <= alpha) == sorted(order[:passed].tolist())
    assert holm([]) == [] and holm([0.5, 0.9]) == [1.0, 1.0]


def test_the_two_level_interval_is_its_definition_resampling_seeds_and_sentences_together():
    """Each resample draws k seeds and n sentences with replacement; the vectorised statistic against the literal one
    (the drawn seeds' scores on the drawn sentences, less the reference's), the same draws."""
    rng = np.random.default_rng(3)
    runs, reference = rng.normal(30, 5, (4, 25)), rng.normal(27, 5, 25)
    low, high = two_level_interval(runs, reference, resamples=200, seed=1)
    draws, gains = np.random.default_rng(1), []
    for _ in range(200):
        seeds, sentences = draws.integers(0, 4, 4), draws.integers(0, 25, 25)
        gains.append(runs[seeds][:, sentences].mean() - reference[sentences].mean())
    assert (low, high) == pytest.approx((np.percentile(gains, 2.5), np.percentile(gains, 97.5)), abs=1e-9)


def test_the_test_sets_spread_widens_the_interval_and_no_spread_gives_a_point():
    """Seeds that agree leave the sentences' spread, which the seeds-only interval misses; a gain the same on every
    sentence and seed has no spread at all."""
    rng = np.random.default_rng(0)
    reference = rng.normal(27, 8, 300)
    agreeing = np.tile(reference + 2 + rng.normal(0, 8, 300), (5, 1))
    low, high = two_level_interval(agreeing, reference, resamples=500)
    assert high - low > 1.0 and low < agreeing.mean() - reference.mean() < high
    assert two_level_interval(np.tile(reference + 2, (3, 1)), reference, resamples=100) == pytest.approx((2, 2))
    with pytest.raises(NausError, match="seeds × sentences"):
        two_level_interval(np.ones(5), np.ones(5), resamples=10)

# -- hostile and careless input (the review rounds): each test names the input it spoils and what it did before --

def test_paired_p_value_refuses_nan_scores():
    from naus.evaluation.significance import paired_p_value

    with pytest.raises(NausError, match="NaN or infinite"):
        paired_p_value([1.0, float("nan"), 3.0], [1.0, 2.0, 2.0])
