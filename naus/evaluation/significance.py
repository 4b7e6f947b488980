"""Is one system better than another on the same test sentences, beyond chance? A paired
approximate randomization test (Noreen 1989; the usual test for ROUGE differences): under the
null hypothesis each sentence's pair of scores is as likely swapped, so the observed mean
difference is compared with those of random sign flips of the per-sentence differences. Students trained on
different search output share no run to pair: their seeds are compared by a permutation test."""

from __future__ import annotations

import itertools
import math

import numpy as np

from naus import NausError

RESAMPLES = 10_000  # random sign flips: a p-value of about 0.01 is known to ±0.001
SEED = 0  # the flips are seeded: the same p-value on every run


def paired_p_value(a: list[float] | np.ndarray, b: list[float] | np.ndarray, resamples: int = RESAMPLES,
                   seed: int = SEED) -> float:
    """Two-sided p-value of mean(a − b) ≠ 0 for paired per-sentence scores: (1 + the flips whose |mean|
    reaches the observed one) / (1 + flips). 1 when the two agree on every sentence."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or not len(a):
        raise NausError(f"paired scores must be two lists of one score per sentence, got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise NausError("paired scores hold NaN or infinite numbers: a score per sentence is a finite number")
    diff = a - b
    observed = abs(diff.mean())
    if not diff.any():
        return 1.0
    rng, reached, done = np.random.default_rng(seed), 0, 0
    tolerance = 1e-12 * np.abs(diff).max()  # float sums of the same terms in another order
    while done < resamples:
        chunk = min(1000, resamples - done)
        signs = rng.integers(0, 2, size=(chunk, len(diff)), dtype=np.int8) * 2 - 1
        reached += int((np.abs(signs @ diff) / len(diff) >= observed - tolerance).sum())
        done += chunk
    return (1 + reached) / (1 + resamples)


def seed_mean(runs: list[list[float]]) -> np.ndarray:
    """Per-sentence scores of a student averaged over its seeds: the system a table row reports."""
    if len({len(run) for run in runs}) > 1:
        raise NausError(f"seeds scored on different numbers of sentences ({', '.join(str(len(r)) for r in runs)}): "
                        "each seed's output has one line per test sentence")
    return np.asarray(runs, dtype=np.float64).mean(axis=0)


def two_level_interval(runs: np.ndarray, reference: np.ndarray, resamples: int,
                       seed: int = SEED) -> tuple[float, float]:
    """The 95% percentile interval of a student row's gain over a reference (its seeds' mean per-sentence score minus
    the reference's), resampling the seeds and the sentences together: each resample draws k seeds of the k and n
    sentences of the n, with replacement, so that the interval holds both the seeds' and the test set's spread.
    `runs`: seeds × sentences; `reference`: one score per sentence."""
    runs, reference = np.asarray(runs, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    if runs.ndim != 2 or runs.shape[1] != len(reference) or not runs.size:
        raise NausError(f"a two-level interval needs seeds × sentences scores and one per sentence, got {runs.shape} "
                        f"and {reference.shape}")
    k, n = runs.shape
    rng, gains = np.random.default_rng(seed), np.empty(resamples)
    for b in range(resamples):
        seeds, sentences = rng.integers(0, k, k), rng.integers(0, n, n)
        per_sentence = np.bincount(seeds, minlength=k) @ runs / k - reference  # the drawn seeds' mean, less theirs
        gains[b] = per_sentence[sentences].mean()
    return float(np.percentile(gains, 2.5)), float(np.percentile(gains, 97.5))


EXACT_SPLITS = 200_000  # up to this many splits of the pooled seeds every one is counted (10 against 10: 184,756)


def unpaired_p_value(a: list[float] | np.ndarray, b: list[float] | np.ndarray, resamples: int = RESAMPLES,
                     seed: int = SEED) -> float:
    """Two-sided p-value of mean(a) ≠ mean(b) for two independent samples, such as the seeds' total ROUGE of
    students trained on different search output (nothing pairs their runs): a permutation test over the ways of
    splitting the pooled values into groups of their sizes, every split counted where there are at most
    EXACT_SPLITS (the share whose |difference of means| reaches the observed one), else (1 + reached) / (1 +
    resamples) of seeded random splits."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or not len(a) or not len(b):
        raise NausError(f"unpaired scores must be two non-empty lists of numbers, got shapes {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise NausError("unpaired scores hold NaN or infinite numbers")
    pooled, size = np.concatenate([a, b]), len(a)
    tolerance = 1e-12 * max(float(np.abs(pooled).max()), 1.0)

    def reaching(firsts: np.ndarray) -> np.ndarray:
        """Whether each split (the indices of its first group) differs as much as the observed one."""
        sums = pooled[firsts].sum(axis=1)
        return np.abs(sums / size - (pooled.sum() - sums) / len(b)) >= abs(a.mean() - b.mean()) - tolerance

    if math.comb(len(pooled), size) <= EXACT_SPLITS:
        return float(reaching(np.array(list(itertools.combinations(range(len(pooled)), size)))).mean())
    orders = np.argsort(np.random.default_rng(seed).random((resamples, len(pooled))), axis=1)
    return (1 + int(reaching(orders[:, :size]).sum())) / (1 + resamples)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values, in their order: the k-th smallest times the number not
    yet passed, never below the one before, at most 1. Calling each adjusted p under α significant keeps the chance
    of any false claim in the family under α, where the p-values alone keep it per claim."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [1.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
