"""Is one system better than another on the same test sentences, beyond chance? A paired
approximate randomization test (Noreen 1989; the usual test for ROUGE differences): under the
null hypothesis each sentence's pair of scores is as likely swapped, so the observed mean
difference is compared with those of random sign flips of the per-sentence differences."""

from __future__ import annotations

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
