"""The paired randomization test on constructed cases whose answer is known."""

import itertools

import numpy as np
import pytest

from naus import NausError
from naus.evaluation.significance import paired_p_value, seed_mean


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
