"""Word vectors learned here from unlabelled text alone: the pair-free stand-in for all-MiniLM-L6-v2, which its
authors trained on sentence pairs, Google's sentence compressions among them (`naus.architectures.MINILM_PAIRS`).

Positive pointwise mutual information of words within a window of each other, its context counts smoothed
(Levy, Goldberg & Dagan 2015), reduced to `WIDTH` dimensions by a randomized truncated SVD (Halko et al. 2011) with
a fixed seed. The table (`build_word_vectors`) has the format of the MiniLM static table (words, unit vectors, idf),
so the teacher's static similarity reads it as it is; `word_states` gives a student's frozen states from it: each
word's vector beside a sinusoidal code of its position, the order a static vector alone does not carry
(`naus.student.frozen.WordStates`; `naus encode-states --encoder TABLE`).
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import numpy as np

from naus import NausError
from naus.plumbing.outputs import atomic_open
from naus.student.frozen import POSITIONS, WIDTH as STATE_WIDTH, WordStates
from naus.teacher.similarity import idf_weights

log = logging.getLogger(__name__)
WIDTH = STATE_WIDTH - POSITIONS  # the vectors' dimensions: beside the position code, a student's frozen states
WINDOW = 4  # words on each side that count as context, each weighted 1 / distance
SMOOTHING = 0.75  # the context distribution's exponent (Levy et al.: 0.75 helps rare contexts less)
MIN_COUNT = 2  # rarer words get no vector
OVERSAMPLE, POWER_STEPS, SEED = 20, 4, 0  # the randomized SVD's extra dimensions, power iterations and seed
QUANTUM = 2.0**-16  # vectors rounded to multiples of this: another BLAS's last bits do not change the file


def vocabulary(lines: list[list[str]], min_count: int = MIN_COUNT) -> list[str]:
    """Words seen at least `min_count` times, most frequent first (ties in code-point order)."""
    counts = Counter(word for line in lines for word in line)
    return [w for w, c in sorted(counts.items(), key=lambda item: (-item[1], item[0])) if c >= min_count]


def cooccurrences(lines: list[list[str]], index: dict[str, int], window: int = WINDOW) -> tuple[np.ndarray, ...]:
    """(rows, cols, weights) of the symmetric co-occurrence matrix: each ordered pair of known words at distance
    d ≤ `window` within a line adds 1 / d. Lines are joined with `window` gaps, so no pair crosses one."""
    gap = [-1] * window
    ids = np.array([i for line in lines for i in [index.get(w, -1) for w in line] + gap], dtype=np.int64)
    size = len(index)
    keys, weights = [], []
    for distance in range(1, window + 1):
        left, right = ids[:-distance], ids[distance:]
        known = (left >= 0) & (right >= 0)
        pairs = left[known] * size + right[known]
        keys += [pairs, right[known] * size + left[known]]
        weights += [np.full(2 * len(pairs), 1.0 / distance)]
    keys = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    unique, inverse = np.unique(keys, return_inverse=True)
    summed = np.bincount(inverse, weights=np.concatenate(weights) if weights else None, minlength=len(unique))
    return unique // size, unique % size, summed


def ppmi(rows: np.ndarray, cols: np.ndarray, counts: np.ndarray, size: int,
         smoothing: float = SMOOTHING) -> tuple[np.ndarray, ...]:
    """max(0, log P(w, c) / (P(w) P_α(c))) on the pairs seen, P_α the context counts raised to `smoothing`."""
    word = np.bincount(rows, weights=counts, minlength=size)
    context = np.bincount(cols, weights=counts, minlength=size) ** smoothing
    values = np.log(counts * context.sum() / (word[rows] * context[cols]))
    keep = values > 0
    return rows[keep], cols[keep], values[keep]


def truncated_svd(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, size: int, rank: int,
                  seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """The `rank` leading left singular vectors and values of the sparse size x size matrix, by a randomized range
    finder with power iterations; each vector's sign fixed (its largest entry positive)."""
    import torch

    matrix = torch.sparse_coo_tensor(np.vstack([rows, cols]), values, (size, size), dtype=torch.float64,
                                     check_invariants=True).coalesce()
    transposed = matrix.t().coalesce()
    width = min(size, rank + OVERSAMPLE)
    probe = torch.from_numpy(np.random.default_rng(seed).standard_normal((size, width)))
    basis = torch.linalg.qr(torch.sparse.mm(matrix, probe)).Q
    for _ in range(POWER_STEPS):
        basis = torch.linalg.qr(torch.sparse.mm(matrix, torch.linalg.qr(torch.sparse.mm(transposed, basis)).Q)).Q
    small = torch.sparse.mm(transposed, basis).t()  # basisᵀ · matrix, [width, size]
    left, singular, _ = torch.linalg.svd(small, full_matrices=False)
    vectors = (basis @ left)[:, :rank].numpy()
    signs = np.sign(vectors[np.abs(vectors).argmax(axis=0), np.arange(vectors.shape[1])])
    return vectors * np.where(signs == 0, 1.0, signs), singular[:rank].numpy()


def train_word_vectors(lines: list[str], width: int = WIDTH, window: int = WINDOW,
                       min_count: int = MIN_COUNT) -> tuple[list[str], np.ndarray]:
    """Each known word's unit vector (rows of U·√Σ of the PPMI matrix), rounded to `QUANTUM`."""
    split = [line.split() for line in lines]
    words = vocabulary(split, min_count)
    if len(words) <= width:
        raise NausError(f"word vectors: {len(words)} words seen {min_count} times or more, fewer than the {width} "
                        "dimensions asked for (give more text)")
    index = {w: i for i, w in enumerate(words)}
    rows, cols, values = ppmi(*cooccurrences(split, index, window), len(words))
    log.info("word vectors: %d words, %d positive PMI entries, SVD to %d dimensions", len(words), len(values), width)
    vectors, singular = truncated_svd(rows, cols, values, len(words), width)
    vectors = vectors * np.sqrt(singular)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms > 0, norms, 1.0)
    return words, (np.round(vectors / QUANTUM) * QUANTUM).astype(np.float32)


def build_word_vectors(lines: list[str], out: str | Path, width: int = WIDTH) -> int:
    """The static table of word vectors trained on `lines` (words, vectors, idf over the same lines): the format
    `StaticEmbedder` reads. Returns how many words it holds."""
    words, vectors = train_word_vectors(lines, width)
    with atomic_open(out, "wb") as handle:
        np.savez(handle, words=np.array(words), vectors=vectors, idf=idf_weights(words, lines))
    return len(words)


def word_states(lines: list[str], table: str | Path):
    """The frozen states of `lines` from a word-vector table (`naus.student.frozen.WordStates`)."""
    return WordStates(table).encode(lines)
